"""Releasing learner notebooks: exercises/ is exactly what `release` makes, and gives nothing away."""

from __future__ import annotations

import json
import re

import pytest
from grading_support import (
    REPOSITORY,
    answer_cell_ids,
    assignments,
    exercise_notebook,
    notebook_name,
    solution_notebook,
)

from transformer_course.grading.course import Course
from transformer_course.grading.release import SETUP_CELL_ID, package_requirement, release

pytestmark = pytest.mark.needs_nbgrader

ASSIGNMENTS = assignments()
SOLUTION_BLOCK = re.compile(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", re.DOTALL)


def test_every_assignment_has_one_solution_notebook():
    assert ASSIGNMENTS, "solutions/ holds no assignment"
    for assignment in ASSIGNMENTS:
        assert len(Course(REPOSITORY).source_notebooks(assignment)) == 1, assignment


@pytest.mark.slow
def test_release_reproduces_the_committed_exercises(course):
    release(course)
    for assignment in ASSIGNMENTS:
        name = notebook_name(assignment)
        released = (course.release_directory / assignment / name).read_bytes()
        committed = (REPOSITORY / "exercises" / assignment / name).read_bytes()
        assert released == committed, (
            f"exercises/{assignment}/{name} is stale: run `transformer-course release {assignment}`"
        )


def test_exercises_have_no_other_files():
    for path in (REPOSITORY / "exercises").rglob("*"):
        if path.is_file():
            assert path.parent.name in ASSIGNMENTS and path.name == notebook_name(path.parent.name), path


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_exercise_contains_no_solution_markers_or_hidden_tests(assignment):
    text = (REPOSITORY / "exercises" / assignment / notebook_name(assignment)).read_text(encoding="utf-8")
    for marker in ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"):
        assert marker not in text


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_exercise_answer_cells_hold_stubs_not_solution_code(assignment):
    solution = {cell["id"]: "".join(cell["source"]) for cell in solution_notebook(assignment)["cells"]}
    exercise = exercise_notebook(assignment)
    for cell in exercise["cells"]:
        if cell["id"] not in answer_cell_ids(exercise):
            continue
        source = "".join(cell["source"])
        assert "raise NotImplementedError()" in source or "YOUR ANSWER HERE" in source, cell["id"]
        for block in SOLUTION_BLOCK.findall(solution[cell["id"]]):
            for line in block.strip().splitlines():
                if len(line.strip()) > 20:
                    assert line.strip() not in source, f"solution line leaked into {cell['id']}: {line.strip()}"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_exercise_outputs_are_cleared(assignment):
    for cell in exercise_notebook(assignment)["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None, cell["id"]


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_exercise_starts_with_the_setup_cell_from_the_book_config(assignment):
    first = exercise_notebook(assignment)["cells"][0]
    assert first["id"] == SETUP_CELL_ID
    source = "".join(first["source"])
    assert package_requirement(Course(REPOSITORY)) in source and "google.colab" in source
    assert "default_device()" in source


def test_solution_notebooks_are_committed_without_outputs():
    for assignment in ASSIGNMENTS:
        for cell in solution_notebook(assignment)["cells"]:
            if cell["cell_type"] == "code":
                assert cell["outputs"] == [], f"{assignment}: {cell['id']}"


def test_releasing_an_unknown_assignment_names_the_known_ones(course):
    with pytest.raises(RuntimeError, match="unknown assignment 'no-such-assignment'.*01-attention"):
        release(course, ["no-such-assignment"])


def test_exercise_notebooks_are_valid_json_with_kernelspec():
    for assignment in ASSIGNMENTS:
        notebook = json.loads(
            (REPOSITORY / "exercises" / assignment / notebook_name(assignment)).read_text(encoding="utf-8")
        )
        assert notebook["metadata"]["kernelspec"]["name"] == "python3"
