"""One bug costs its own part, everywhere: for each graded part of an assignment, a submission whose answer cells
of that part do not even parse (a SyntaxError, so that nothing they should define exists) loses that part's
points and no other. The grader puts a correct answer to a failed part in the learner's place before the later
parts run, so their visible and hidden tests see working earlier functions.

Each assignment's submissions are graded together in one autograde run (the final project's each train for
minutes, so it is left to tests/grading/test_assignments_teach.py's defects)."""

from __future__ import annotations

import pytest
from grading_support import CLASS_LIMITS, full_marks, grade, solution_notebook, write_submissions

pytestmark = [pytest.mark.needs_nbgrader, pytest.mark.needs_bwrap]  # grade in the sandbox

ASSIGNMENTS = [
    "01-attention",
    "02-multi-head-attention",
    "03-positional-encoding",
    "04-masks",
    "05-residuals-layernorm",
    "06-complexity",
]
BROKEN = "def broken(:  # a cell that does not parse\n"


def _nbgrader(cell: dict) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def parts(notebook: dict) -> dict[str, tuple[list[str], float]]:
    """grade_id of each graded test cell -> (the answer cells of its part, its points), in notebook order."""
    found, answers = {}, []
    for cell in notebook["cells"]:
        if cell["cell_type"] != "code":
            continue
        if _nbgrader(cell).get("grade"):
            found[_nbgrader(cell)["grade_id"]] = (answers, _nbgrader(cell).get("points", 0))
            answers = []
        elif _nbgrader(cell).get("solution"):
            answers.append(_nbgrader(cell)["grade_id"])
    return {grade_id: part for grade_id, part in found.items() if part[0]}


def broken_in(notebook: dict, answer_cells: list[str]) -> dict:
    """The solution with ``answer_cells`` replaced by a cell that does not parse."""
    cells = [
        {**cell, "source": BROKEN} if _nbgrader(cell).get("grade_id") in answer_cells else cell
        for cell in notebook["cells"]
    ]
    return {**notebook, "cells": cells}


@pytest.fixture(scope="module", params=ASSIGNMENTS)
def graded(request, course, tmp_path_factory):
    assignment = request.param
    solution = solution_notebook(assignment)
    submissions = {test: broken_in(solution, answers) for test, (answers, _) in parts(solution).items()}
    folder = write_submissions(tmp_path_factory.mktemp(f"one-bug-{assignment}"), assignment, submissions)
    return assignment, grade(course, assignment, folder, limits=CLASS_LIMITS, jobs=2)


def test_a_part_that_does_not_parse_costs_its_own_points_only(graded):
    assignment, results = graded
    wrong = {}
    for test, (_, points) in parts(solution_notebook(assignment)).items():
        result = results[test]
        expected = full_marks(assignment) - points
        if result.status != "graded" or result.score != expected:
            wrong[test] = f"{result.score} ({result.status}), expected {expected}"
    assert not wrong, f"{assignment}: a broken part cost more than its own points: {wrong}"


def test_each_part_but_the_last_has_a_correct_answer_to_put_in_its_place():
    from transformer_course.grading.context import reference_answers

    for assignment in [*ASSIGNMENTS, "07-final-project"]:
        solution = solution_notebook(assignment)
        graded_parts = list(parts(solution))
        assert set(reference_answers(solution)) == set(graded_parts[:-1]), assignment
