"""One student's submission for one assignment while it is graded: the work record the steps of the chain fill in.

A :class:`Submission` starts as the student's id and the assignment, with no status: a step *ends* it
(:meth:`Submission.end`) when it knows how the grading went, intake when it cannot be graded at all, the grading
step when its run is recorded. Each step of :mod:`transformer_course.grading.autograde` (its docstring has them in
order) writes its own fields, named below with the step that fills each. Only the run itself leaves the grader's
process, as a :class:`~transformer_course.grading.submission_run.SubmissionRun`, and comes back as a
:class:`~transformer_course.grading.submission_run.RunOutcome` that the grader writes in here.

What outlives the run is kept elsewhere: the points in the gradebook, the status, message, findings, times, LMS files
and written answers in the run record (:mod:`transformer_course.grading.run_record`), from which
:func:`transformer_course.grading.report.class_rows` makes the student's
:class:`~transformer_course.grading.grade_row.GradeRow`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from .status import Status
from .written_answers import WrittenAnswer


@dataclass
class Submission:
    """One student's submission for one assignment, as the steps fill it in (see the module docstring)."""

    student_id: str
    assignment: str
    status: Status | None = None  # None until a step ends the submission
    message: str = ""
    findings: list[str] = field(default_factory=list)  # for the instructor's review, from every step

    # Intake: what was handed in, read as data.
    notebooks: dict[str, dict] = field(default_factory=dict, repr=False)  # rebuilt, by file name
    kept: dict[str, bytes] = field(default_factory=dict, repr=False)  # the files as handed in, by name
    folder: Path | None = field(default=None, repr=False)  # where they were read
    restored_cells: tuple[str, ...] = field(default=(), repr=False)  # test cells nbgrader will restore
    restored_metadata: tuple[str, ...] = field(default=(), repr=False)  # cells whose nbgrader metadata was given back
    learner_cells: list[tuple[str, str]] = field(default_factory=list, repr=False)  # (label, source), for the review
    library_implementations: list[str] = field(default_factory=list, repr=False)  # what the review looks for
    submitted_at: datetime | None = None  # nbgrader's timestamp.txt, or (the class list) the LMS's time

    # The class list: what the roster, the LMS and the command line say of it.
    extension_days: float = field(default=0.0, repr=False)  # the roster's
    due: datetime | None = field(default=None, repr=False)  # given on the command line (None: an earlier run's)
    lms_files: list[str] = field(default_factory=list, repr=False)  # the LMS download's names of the files graded

    # Grading: the written answers' versions (restore), and seconds by step (restore, run, record, feedback).
    written_answers: dict[str, WrittenAnswer] = field(default_factory=dict, repr=False)  # by grade_id
    seconds: dict[str, float] = field(default_factory=dict, repr=False)

    @classmethod
    def nothing_handed_in(cls, student_id: str, assignment: str) -> Submission:
        """A student on the roster who handed nothing in: ended ``missing`` (their row's score is 0, so that an LMS
        does not read it as "not graded yet")."""
        return cls(student_id, assignment).end(Status.MISSING, "nothing was handed in")

    @property
    def repairs(self) -> str:
        """What intake gave back for nbgrader to restore (the message of ``tests_restored``), or ``""``."""
        repairs = []
        if self.restored_metadata:
            repairs.append(f"gave back the nbgrader metadata of cells {', '.join(self.restored_metadata)}")
        if self.restored_cells:
            repairs.append(f"restored the original test cells {', '.join(self.restored_cells)}")
        return "; ".join(repairs)

    def end(self, status: Status, message: str) -> Submission:
        """Say how the submission ended: ``status`` and ``message`` in its row."""
        self.status, self.message = status, message
        return self
