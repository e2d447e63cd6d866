"""The work record of one submission: no status until a step ends it, and what intake gave back said once."""

from __future__ import annotations

from transformer_course.grading.status import Status
from transformer_course.grading.submission import Submission


def test_a_new_submission_has_no_status_until_a_step_ends_it():
    submission = Submission("alice", "01-attention")
    assert submission.status is None
    assert submission.end(Status.TIMEOUT, "cell 3 was interrupted") is submission
    assert (submission.status, submission.message) == (Status.TIMEOUT, "cell 3 was interrupted")


def test_a_student_who_handed_nothing_in_is_ended_missing():
    submission = Submission.nothing_handed_in("bob", "01-attention")
    assert (submission.status, submission.message) == (Status.MISSING, "nothing was handed in")


def test_what_intake_gave_back_is_one_message():
    submission = Submission("alice", "01-attention", restored_cells=("test-a",), restored_metadata=("softmax",))
    assert submission.repairs == (
        "gave back the nbgrader metadata of cells softmax; restored the original test cells test-a"
    )
    assert Submission("bob", "01-attention").repairs == ""
