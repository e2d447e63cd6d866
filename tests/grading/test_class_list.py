"""What the class list and the LMS say of each submission, written in before anything is graded: the roster's
extension, the LMS's time over nbgrader's, a late mark without a time, a folder of someone not on the roster, and a
learner whose download held nothing gradable."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from suite_layers import NBGRADER_MISSING

pytest.importorskip("nbgrader", reason=NBGRADER_MISSING)

from transformer_course.grading.class_list import LATE_WITHOUT_A_TIME, ClassList  # noqa: E402
from transformer_course.grading.lms import Unpacked  # noqa: E402
from transformer_course.grading.roster import Student  # noqa: E402
from transformer_course.grading.status import Problem, Status  # noqa: E402
from transformer_course.grading.submission import Submission  # noqa: E402

pytestmark = pytest.mark.needs_nbgrader

ASSIGNMENT = "01-attention"
NBGRADERS_TIME = datetime(2026, 11, 20, 9, tzinfo=UTC)
LMS_TIME = datetime(2026, 11, 21, 9, tzinfo=UTC)
ROSTER = {"s001": Student("s001", extension_days=2.0), "s002": Student("s002")}


def _taken_in(student_id: str) -> Submission:
    return Submission(student_id, ASSIGNMENT, submitted_at=NBGRADERS_TIME)


def test_the_rosters_extension_and_the_due_date_given_are_written_in():
    due = datetime(2026, 11, 20, tzinfo=UTC)
    submission = ClassList(ROSTER, due=due).apply(_taken_in("s001"))
    assert (submission.extension_days, submission.due, submission.findings) == (2.0, due, [])


def test_a_folder_of_someone_not_on_the_roster_is_graded_and_said():
    submission = ClassList(ROSTER).apply(_taken_in("s999"))
    assert submission.findings == ["s999 is not on the roster"] and submission.status is None


def test_the_lms_time_wins_over_the_one_the_learner_wrote():
    assert ClassList(times={"s001": LMS_TIME}).apply(_taken_in("s001")).submitted_at == LMS_TIME
    assert ClassList(times={"s002": LMS_TIME}).apply(_taken_in("s001")).submitted_at == NBGRADERS_TIME


def test_a_late_mark_without_a_time_is_said_and_charged_nothing():
    download = Unpacked(students={"s001": ["doejane_LATE_1_2_attention.ipynb"]}, late={"s001"})
    submission = ClassList(ROSTER, download).apply(Submission("s001", ASSIGNMENT))
    assert submission.findings == [LATE_WITHOUT_A_TIME]
    assert submission.lms_files == ["doejane_LATE_1_2_attention.ipynb"]


def test_a_late_mark_with_a_time_is_charged_by_the_time_alone():
    download = Unpacked(students={"s001": ["doejane_LATE_1_2_attention.ipynb"]}, late={"s001"})
    assert ClassList(ROSTER, download).apply(_taken_in("s001")).findings == []


def test_a_learner_whose_download_holds_nothing_gradable_is_ended_with_why():
    problem = Problem(Status.INVALID_NOTEBOOK, "handed in attention.zip: no Jupyter notebook")
    (submission,) = ClassList(ROSTER, Unpacked(problems={"s002": problem})).unreadable(ASSIGNMENT)
    assert (submission.student_id, submission.status, submission.message) == ("s002", problem.status, problem.message)


def test_without_a_roster_nobody_is_missing():
    assert ClassList().never_graded(context=None, graded=[]) == []
