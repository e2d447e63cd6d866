"""How the class's runs stop when the fault is the grader's: a kernel that cannot start, submission after submission,
stops the run past the limit and says what to do, where one that started in between begins the count again. The
class graded through every step is in stories/test_one_grader_for_the_class.py."""

from __future__ import annotations

import pytest
from suite_layers import NBGRADER_MISSING

pytest.importorskip("nbgrader", reason=NBGRADER_MISSING)  # the steps restore and record with nbgrader's

from transformer_course.grading.class_grading import STOP_AFTER_FAILED_STARTS, FailedStarts
from transformer_course.grading.status import Status
from transformer_course.grading.submission import Submission

pytestmark = pytest.mark.needs_nbgrader


def _ended(status: Status) -> Submission:
    return Submission("s001", "01-attention", status, "the runner ended at once")


def test_kernels_that_cannot_start_in_a_row_stop_the_run_at_the_limit_saying_what_to_do():
    failed = FailedStarts()
    for _ in range(STOP_AFTER_FAILED_STARTS - 1):
        failed.count(_ended(Status.KERNEL_NOT_STARTED))
    assert failed.stopped is None
    failed.count(_ended(Status.KERNEL_NOT_STARTED))
    assert failed.stopped is not None
    assert f"for {STOP_AFTER_FAILED_STARTS} submissions in a row (the runner ended at once)" in failed.stopped
    assert "transformer-course self-test" in failed.stopped and "--no-sandbox" in failed.stopped


def test_a_kernel_that_started_in_between_begins_the_count_again():
    failed = FailedStarts()
    for status in [Status.KERNEL_NOT_STARTED] * (STOP_AFTER_FAILED_STARTS - 1) + [Status.GRADED]:
        failed.count(_ended(status))
    for _ in range(STOP_AFTER_FAILED_STARTS - 1):
        failed.count(_ended(Status.KERNEL_NOT_STARTED))
    assert failed.stopped is None
