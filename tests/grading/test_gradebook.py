"""Which scores of the gradebook the grader trusts: its verdicts, and the manual scores an instructor saved; a manual
score nobody saved is removed, and one given to another version of a written answer can be cleared to wait again."""

from __future__ import annotations

import pytest
from scratch_course import ASSIGNMENT, gradebook, graded
from suite_layers import NBGRADER_MISSING

pytest.importorskip("nbgrader", reason=NBGRADER_MISSING)

from transformer_course.grading.gradebook import (  # noqa: E402
    clear_manual_scores,
    remove_unreviewed_manual_scores,
    reviewed_manual_scores,
)
from transformer_course.grading.written_answers import ManualScore  # noqa: E402

pytestmark = pytest.mark.needs_nbgrader


@pytest.fixture(scope="module")
def db_url(tmp_path_factory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('gradebook') / 'gradebook.db'}"
    with gradebook(url) as book:
        graded(book, "saved", {"core": 4.0, "written": 1.5, "bonus": 0.0})
        graded(book, "planted", {"core": 4.0, "written": 2.0, "bonus": 0.0}, reviewed=False)
        graded(book, "to-clear", {"core": 4.0, "written": 2.0, "bonus": 0.0})
        book.find_comment("written", "notebook", ASSIGNMENT, "saved").manual_comment = "Clear."
        book.db.commit()
    return url


def test_a_score_an_instructor_saved_is_read_with_its_comment(db_url):
    scores = reviewed_manual_scores(db_url, "test", ASSIGNMENT, "saved")
    assert scores == {"notebook/written": ManualScore(1.5, "Clear.")}


def test_a_manual_score_nobody_saved_is_removed_and_said(db_url):
    removed = remove_unreviewed_manual_scores(db_url, "test", ASSIGNMENT, "planted")
    assert removed == ["written: removed a manual score of 2 that no instructor saved"]
    assert reviewed_manual_scores(db_url, "test", ASSIGNMENT, "planted") == {}


def test_a_saved_score_is_not_removed(db_url):
    assert remove_unreviewed_manual_scores(db_url, "test", ASSIGNMENT, "saved") == []


def test_a_cleared_score_waits_for_grading_again(db_url):
    clear_manual_scores(db_url, "test", ASSIGNMENT, "to-clear", ["notebook/written"])
    assert reviewed_manual_scores(db_url, "test", ASSIGNMENT, "to-clear") == {}


def test_a_student_the_gradebook_does_not_know_has_no_scores(db_url):
    assert reviewed_manual_scores(db_url, "test", ASSIGNMENT, "nobody") == {}
    assert remove_unreviewed_manual_scores(db_url, "test", ASSIGNMENT, "nobody") == []
