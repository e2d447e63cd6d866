"""How a submission's grading ended: the statuses of ``grades.csv``, and what a run that went wrong tells.

Every step says how a submission ended with a :class:`Status`, never with a string of its own; README's
status table is this enum's (``tests/grading/test_readme_tables.py`` holds them equal). A run that went
wrong carries a :class:`Problem` (a status and the message for the row) as data, from the cell where it
happened to the row, so that no step reads a status back out of what was written into a cell.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Status(StrEnum):
    """A submission's status in ``grades.csv``; its value is the CSV's word, :attr:`meaning` README's."""

    meaning: str

    def __new__(cls, value: str, meaning: str) -> Status:
        member = str.__new__(cls, value)
        member._value_ = value
        member.meaning = meaning
        return member

    GRADED = "graded", "graded normally"
    TESTS_RESTORED = (
        "tests_restored",
        "test cells had been edited, deleted or retyped, or cells had lost their nbgrader metadata; graded with the "
        "originals",
    )
    TIMEOUT = (
        "timeout",
        "a cell ran past its time limit and was interrupted, or the notebook ran past its own; the rest was graded",
    )
    KERNEL_DIED = "kernel_died", "the kernel exited or crashed; the points earned before that count"
    MEMORY_LIMIT = "memory_limit", "the submission's processes together ran out of the memory limit"
    KERNEL_NOT_STARTED = (
        "kernel_not_started",
        "the kernel could not start in the sandbox: the grading machine's fault, not the submission's; three in a "
        "row stop the run",
    )
    INVALID_NOTEBOOK = (
        "invalid_notebook",
        "not graded: the file is not a Jupyter notebook (in an LMS's download: a zipped notebook, another kind of "
        "file, or a file damaged in the download)",
    )
    WRONG_ASSIGNMENT = "wrong_assignment", "not graded: the notebook is another assignment's"
    MISSING = "missing", "not graded: nothing was handed in"
    INVALID_STUDENT_ID = "invalid_student_id", "not graded: the folder's name is not a student id"
    REFUSED = (
        "refused",
        "not graded: a symbolic link, a folder, a FIFO or device, or a file over 20 MB where the notebook should be "
        "(never followed or read); a notebook with more than three times the released notebook's cells (plus 200) "
        "or four times its Markdown (plus 200,000 characters)",
    )
    ERROR = "error", "the grader could not grade the notebook; the message says which step failed and why"
    NOT_GRADED = "not_graded", "not graded: the run stopped before this submission (see the error it ended with)"


# The statuses of submissions that nbgrader graded (possibly with failing cells): their points are the gradebook's.
GRADED_STATUSES = (
    Status.GRADED,
    Status.TESTS_RESTORED,
    Status.TIMEOUT,
    Status.MEMORY_LIMIT,
    Status.KERNEL_DIED,
    Status.KERNEL_NOT_STARTED,
)

# What a run can go wrong with, the worst first: a submission's status is the worst of its notebooks'.
WORST_FIRST = (Status.KERNEL_NOT_STARTED, Status.MEMORY_LIMIT, Status.KERNEL_DIED, Status.TIMEOUT)


@dataclass(frozen=True)
class Problem:
    """What went wrong while a notebook ran: the submission's status and its row's message."""

    status: Status
    message: str


def worst(problems: list[Problem]) -> Problem | None:
    """The first of ``problems`` (in the order they happened) with the worst status (:data:`WORST_FIRST`), or None."""
    for status in WORST_FIRST:
        for problem in problems:
            if problem.status == status:
                return problem
    return None
