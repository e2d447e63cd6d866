"""A learner who works in the Chinese notebook is graded as one who works in the English one: its code, tests and
answer cells are the English notebook's, byte for byte, so the same work gets the same grade, and the notebook
as released gets no review flag."""

from __future__ import annotations

import json

import pytest
from grading_support import (
    CLASS_LIMITS,
    REPOSITORY,
    exercise_notebook,
    grade,
    notebook_name,
    partly_done_notebook,
    write_submissions,
)

from transformer_course.grading.course import Course
from transformer_course.grading.notebook_translation import read_catalog, translated_notebook

pytestmark = [pytest.mark.needs_nbgrader, pytest.mark.needs_bwrap]  # grade in the sandbox

ASSIGNMENT = "01-attention"
LANGUAGE = "zh_CN"


def _chinese(notebook: dict) -> dict:
    """``notebook`` as a learner of the Chinese notebook would have it: its instructions in Chinese."""
    name = notebook_name(ASSIGNMENT).removesuffix(".ipynb")
    catalog = Course(REPOSITORY).notebook_catalogs(ASSIGNMENT, name)[LANGUAGE]
    return translated_notebook(notebook, read_catalog(catalog))


@pytest.fixture(scope="module")
def graded(course, tmp_path_factory) -> dict:
    chinese_release = json.loads(
        (REPOSITORY / "exercises" / ASSIGNMENT / LANGUAGE / notebook_name(ASSIGNMENT)).read_text()
    )
    submissions = {
        "partly-done-en": partly_done_notebook(ASSIGNMENT),
        "partly-done-zh": _chinese(partly_done_notebook(ASSIGNMENT)),
        "untouched-zh": chinese_release,
    }
    assert _chinese(exercise_notebook(ASSIGNMENT)) == chinese_release, "the committed Chinese notebook is stale"
    directory = write_submissions(tmp_path_factory.mktemp("chinese-class"), ASSIGNMENT, submissions)
    return grade(course, ASSIGNMENT, directory, limits=CLASS_LIMITS)


def test_the_same_work_in_chinese_gets_the_english_grade(graded):
    english, chinese = graded["partly-done-en"], graded["partly-done-zh"]
    assert chinese.status == english.status == "graded", chinese.message
    assert 0 < chinese.score == english.score, f"Chinese {chinese.score}, English {english.score}"


def test_the_chinese_notebook_as_released_scores_zero_with_no_repair_or_review(graded):
    result = graded["untouched-zh"]
    assert (result.status, result.score, result.review) == ("graded", 0, ""), (result.message, result.review)
