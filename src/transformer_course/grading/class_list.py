"""What the class list and the LMS say of a class: the step of :mod:`transformer_course.grading.autograde` between
intake and grading, and the ``missing`` rows after it.

:class:`ClassList` holds the roster (:mod:`transformer_course.grading.roster`), what an LMS's download said
(:class:`~transformer_course.grading.lms.Unpacked`: the files taken, the late marks, the learners whose files hold
nothing gradable), the submission times an LMS gave (:mod:`transformer_course.grading.submission_times`) and a due
date given on the command line. Before anything is graded, :meth:`ClassList.apply` writes what they say into each
submission — its time, extension and due date, the LMS's files, a late mark without a time, a folder of someone not
on the roster — so that the gradebook, the run record, the learner's page and ``grades.csv`` all have it. After the
run, :meth:`ClassList.never_graded` gives a ``missing`` row to each student on the roster whom no run has graded,
this one or an earlier one: a partial regrade keeps everyone else's row as it was.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from .context import GradingContext
from .lms import Unpacked
from .report import graded_before
from .roster import Student
from .run_record import RunRecord
from .submission import Submission

LATE_WITHOUT_A_TIME = "the LMS marked this submission late; no time was given, so no late penalty was charged"


@dataclass(frozen=True)
class ClassList:
    """The roster, an LMS's download, the LMS's submission times (by student id) and a due date given for this run."""

    roster: dict[str, Student] | None = None
    download: Unpacked | None = None
    times: dict[str, datetime] = field(default_factory=dict)
    due: datetime | None = None

    def unreadable(self, assignment: str) -> list[Submission]:
        """A submission for each learner whose download holds nothing gradable, ended with the status that says why."""
        problems = {} if self.download is None else self.download.problems
        return [
            Submission(student_id, assignment).end(problem.status, problem.message)
            for student_id, problem in sorted(problems.items())
        ]

    def apply(self, submission: Submission) -> Submission:
        """``submission`` with what the class list and the LMS say of it (see the module docstring)."""
        student_id = submission.student_id
        if self.roster is not None and student_id not in self.roster:
            submission.findings.append(f"{student_id} is not on the roster")
        if self.roster is not None and student_id in self.roster:
            submission.extension_days = self.roster[student_id].extension_days
        submission.submitted_at = self.times.get(student_id, submission.submitted_at)
        submission.due = self.due
        if self.download is not None:
            submission.lms_files = list(self.download.students.get(student_id, []))
            if student_id in self.download.late and submission.submitted_at is None:
                submission.findings.append(LATE_WITHOUT_A_TIME)
        return submission

    def never_graded(self, context: GradingContext, graded: list[Submission]) -> list[Submission]:
        """A ``missing`` submission (its row's score is 0), kept in the run record, for each student on the roster
        whom neither this run (``graded``) nor an earlier one graded."""
        if self.roster is None:
            return []
        known = {submission.student_id for submission in graded} | graded_before(context)
        missing = []
        for student_id in (student for student in self.roster if student not in known):
            submission = Submission.nothing_handed_in(student_id, context.assignment)
            submission.extension_days, submission.due = self.roster[student_id].extension_days, self.due
            missing.append(submission)
        if missing:
            RunRecord.read(context.course.root, context.assignment).keep(*missing)
        return missing
