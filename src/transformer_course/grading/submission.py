"""One student's submission for one assignment: the record that every step of the chain fills in.

A :class:`Submission` starts as the student's id and the assignment, and each step of
:mod:`transformer_course.grading.autograde` writes its own part of it, in this order:

=============  ==================================================================================
step           fills in
=============  ==================================================================================
intake         ``notebooks`` (rebuilt), ``kept`` (as handed in), ``folder``, ``submitted_at``,
               ``restored_cells``, ``restored_metadata``, ``learner_cells``,
               ``library_implementations``; ``status`` and ``message`` when it cannot be
               graded at all; a ``finding`` for each choice it made for the learner
class list     ``extension_days``, ``submitted_at`` from the LMS, ``due`` from the command line,
               ``lms_files``, the roster's and the LMS's findings (before anything is graded, so that
               the gradebook, the run record and the learner's page all have them)
restore        ``status`` ``tests_restored`` and its ``message``, when test cells or nbgrader's
               metadata had to be given back; ``written_answers`` and a finding for a manual
               score given to another version of an answer; ``seconds["gradebook"]``
run            ``status`` and ``message`` when something went wrong while it ran (the
               :class:`~transformer_course.grading.status.Problem`); ``seconds`` by step; the
               findings of its hidden tests
review         ``findings``: what the instructor should look at (the score stands), first
record         ``seconds["gradebook"]`` (the grades go to the gradebook, not here)
feedback       ``seconds["feedback"]``; a ``message`` when the page could not be written
report         ``score``, ``max_score``, ``pending_manual_points``, ``bonus_score``,
               ``late_by``, ``penalty``, from the gradebook
=============  ==================================================================================

Its first fields are the columns of ``grades.csv``
(:data:`transformer_course.grading.report.CSV_COLUMNS`), in their order; the run record
(:mod:`transformer_course.grading.run_record`) keeps its status, message, findings, times, LMS files and written
answers between runs, and the gradebook every point. Only the run itself leaves the grader's process, as a
:class:`~transformer_course.grading.sandboxed_run.SubmissionRun`, and comes back as a
:class:`~transformer_course.grading.sandboxed_run.RunOutcome` that the grader writes in here.
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
    score: float | None = None
    max_score: float | None = None
    status: Status = Status.GRADED
    message: str = ""
    findings: list[str] = field(default_factory=list)
    pending_manual_points: float | None = None
    bonus_score: float | None = None
    submitted_at: datetime | None = None  # from nbgrader's timestamp.txt or the LMS's times file
    late_by: float | None = None  # hours past the due date (extension included); 0 when on time
    penalty: float | None = None  # points the late policy took from score
    extension_days: float = field(default=0.0, repr=False)  # the roster's, kept in the run record (not in the CSV)
    due: datetime | None = field(default=None, repr=False)  # given on the command line (None: grading.yml's)
    lms_files: list[str] = field(default_factory=list, repr=False)  # the LMS download's names of the files graded
    written_answers: dict[str, WrittenAnswer] = field(default_factory=dict, repr=False)  # by grade_id
    seconds: dict[str, float] = field(default_factory=dict, repr=False)  # by step, for benchmarks (not in the CSV)

    # What intake took in, for the steps before the run record; none of it is in the CSV.
    notebooks: dict[str, dict] = field(default_factory=dict, repr=False)  # rebuilt, by file name
    kept: dict[str, bytes] = field(default_factory=dict, repr=False)  # the files as handed in, by name
    folder: Path | None = field(default=None, repr=False)  # where they were read
    restored_cells: tuple[str, ...] = field(default=(), repr=False)  # test cells nbgrader will restore
    restored_metadata: tuple[str, ...] = field(default=(), repr=False)  # cells whose nbgrader metadata was given back
    learner_cells: list[tuple[str, str]] = field(default_factory=list, repr=False)  # (label, source), for the review
    library_implementations: list[str] = field(default_factory=list, repr=False)  # what the review looks for

    @classmethod
    def nothing_handed_in(cls, student_id: str, assignment: str, max_score: float | None = None) -> Submission:
        """The row of a student on the roster who handed nothing in: ``missing``, with score 0, so that an LMS does
        not read it as "not graded yet"."""
        return cls(student_id, assignment, 0.0, max_score, Status.MISSING, "nothing was handed in")

    @property
    def review(self) -> str:
        """The findings as the CSV's ``review`` column gives them."""
        return "; ".join(self.findings)

    def end(self, status: Status, message: str) -> Submission:
        """Say how the submission ended: ``status`` and ``message`` in its row."""
        self.status, self.message = status, message
        return self
