"""Autograding each assignment as a class: solutions score full marks, untouched exercises zero, partial
work in between, and every graded notebook gets a feedback page."""

from __future__ import annotations

import pytest
from grading_support import (
    CLASS_LIMITS,
    REPOSITORY,
    assignments,
    exercise_notebook,
    full_marks,
    grade,
    max_score,
    partly_done_notebook,
    solution_notebook,
    write_submissions,
)

from transformer_course.grading.course import Course

pytestmark = [pytest.mark.needs_nbgrader, pytest.mark.needs_bwrap]  # grade in the sandbox

ASSIGNMENTS = assignments()
FIRST = "01-attention"


@pytest.fixture(scope="module", params=ASSIGNMENTS)
def assignment(request) -> str:
    return request.param


@pytest.fixture(scope="module")
def graded_class(course, tmp_path_factory, assignment) -> dict:
    """A solution, an untouched exercise and a partly done one, graded together once per assignment."""
    submissions = write_submissions(
        tmp_path_factory.mktemp(f"class-{assignment}"),
        assignment,
        {
            "solution": solution_notebook(assignment),
            "untouched": exercise_notebook(assignment),
            "partly-done": partly_done_notebook(assignment),
        },
    )
    return grade(course, assignment, submissions, limits=CLASS_LIMITS)


def test_solution_scores_full_marks(graded_class, assignment):
    result = graded_class["solution"]
    expected = full_marks(assignment)
    assert result.status == "graded", result.message
    assert expected > 0 and result.score == expected, (
        f"{result.score} of {result.max_score}, expected {expected} (the test cells' points)"
    )


def test_max_score_is_the_core_and_the_bonus_is_extra_credit(graded_class, assignment):
    result = graded_class["solution"]
    bonus = set(Course(REPOSITORY).policy(assignment).bonus)
    cells = [cell["metadata"].get("nbgrader", {}) for cell in solution_notebook(assignment)["cells"]]
    graded = [cell for cell in cells if cell.get("grade")]
    core = max_score(assignment)
    # the bonus a solution earns before an instructor grades its written answers: the bonus test cells'
    bonus_in_tests = sum(cell["points"] for cell in graded if cell["grade_id"] in bonus and not cell.get("solution"))
    assert (result.max_score, result.bonus_score) == (core, bonus_in_tests), (
        f"max_score {result.max_score}, bonus_score {result.bonus_score}; expected {core} and {bonus_in_tests}"
    )


def test_untouched_exercise_scores_zero(graded_class):
    result = graded_class["untouched"]
    assert result.status == "graded", result.message
    assert result.score == 0, f"{result.score} of {result.max_score}"


def test_the_released_exercise_itself_raises_no_review_flag(graded_class):
    result = graded_class["untouched"]
    assert result.review == "", f"the untouched exercise was flagged: {result.review}"


def test_partly_done_exercise_scores_in_between(graded_class):
    result = graded_class["partly-done"]
    assert result.status == "graded", result.message
    assert 0 < result.score < result.max_score, f"{result.score} of {result.max_score}"


def test_feedback_html_is_written_for_each_graded_submission(course, graded_class, assignment):
    for student in graded_class:
        assert any((course.feedback_directory / student / assignment).glob("*.html")), student
