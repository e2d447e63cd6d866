"""The written answers that wait for an instructor are listed by student, with their points and the text as it was
graded; one whose autograded notebook is gone says how to see it."""

from __future__ import annotations

import json

import pytest
from scratch_course import ASSIGNMENT, CELLS, cell, gradebook, graded, write_course
from suite_layers import NBGRADER_MISSING

pytest.importorskip("nbgrader", reason=NBGRADER_MISSING)

from transformer_course.grading.context import GradingContext  # noqa: E402
from transformer_course.grading.course import Course  # noqa: E402
from transformer_course.grading.pending import PendingAnswer, pending_answers  # noqa: E402

pytestmark = pytest.mark.needs_nbgrader


@pytest.fixture(scope="module")
def context(tmp_path_factory) -> GradingContext:
    course = Course(write_course(tmp_path_factory.mktemp("course")))
    context = GradingContext.of(course, ASSIGNMENT, f"sqlite:///{course.root / 'gradebook.db'}")
    with gradebook(context.db_url) as book:
        graded(book, "waits", {"core": 4.0, "written": None, "bonus": 0.0})
        graded(book, "lost-notebook", {"core": 4.0, "written": None, "bonus": 0.0})
        graded(book, "scored", {"core": 4.0, "written": 2.0, "bonus": 0.0})
    folder = course.autograded_directory / "waits" / ASSIGNMENT
    folder.mkdir(parents=True)
    notebook = {"cells": [cell("written", *CELLS["written"], source="Because the scores grow with d_k.")]}
    (folder / "notebook.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    return context


def test_each_waiting_answer_is_listed_with_its_points_and_text(context):
    answers = pending_answers(context)
    assert answers[-1] == PendingAnswer("waits", "notebook", "written", 2.0, "Because the scores grow with d_k.")


def test_an_answer_whose_autograded_notebook_is_gone_says_how_to_see_it(context):
    (lost,) = [answer for answer in pending_answers(context) if answer.student_id == "lost-notebook"]
    assert lost.text == "(not in autograded/: grade it again to see it)"


def test_a_scored_answer_does_not_wait(context):
    assert "scored" not in {answer.student_id for answer in pending_answers(context)}
