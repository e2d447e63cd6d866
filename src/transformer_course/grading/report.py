"""The class's grades: one row per student, from the gradebook and the grader's record of each student's last run.

Two homes, one job each:

* **the gradebook** (nbgrader's) holds every point: the grader's verdicts, the scores an instructor
  gave the written answers in formgrader, their comments, and which answers still wait for one;
* **the run record** (:mod:`transformer_course.grading.run_record`, beside the gradebook) holds what the
  gradebook cannot: each student's status, message and review findings from the last run that graded them,
  when they handed in, and what the similarity report found.

:func:`class_rows` joins them into rows (a :class:`~transformer_course.grading.submission.Submission` each),
and :func:`write_csv` writes ``grades.csv``. Nothing here runs a notebook, so ``transformer-course grades``
rewrites the CSV after an instructor has graded the written answers, and regrading some students keeps everyone
else's row. The learner's feedback page reads its student's row from here too (:func:`student_row`), so that the
page, ``grades.csv`` and the LMS's file give one score.

Points: ``score`` is every point earned, bonus included, less the late penalty; ``max_score`` is the core's
maximum, so that bonus is extra credit (``score`` may exceed it); ``bonus_score`` is the bonus part of
``score``; ``pending_manual_points`` are the points of written answers nobody has graded yet.
Which cells are bonus is the assignment's ``grading.yml`` (``bonus:``); the due date is ``due`` given here, else the
one given to the run that graded the student, else ``grading.yml``'s.
"""

from __future__ import annotations

import csv
from datetime import datetime
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry

from .context import GradingContext
from .lateness import LatePolicy, late_by
from .run_record import StudentRecord, read_records
from .status import GRADED_STATUSES, Status
from .submission import Submission

CSV_COLUMNS = [
    *("student_id", "assignment", "score", "max_score", "status", "message", "review"),
    *("pending_manual_points", "bonus_score", "submitted_at", "late_by", "penalty"),
]


def graded_before(context: GradingContext) -> set[str]:
    """The students the run record or the gradebook knows for the assignment: each was in some earlier run."""
    with Gradebook(context.db_url, course_id=context.course.course_id) as gradebook:
        in_gradebook = {submission.student.id for submission in gradebook.assignment_submissions(context.assignment)}
    return set(read_records(context.course.root, context.assignment)) | in_gradebook


def class_rows(context: GradingContext, due: datetime | None = None, only: str | None = None) -> list[Submission]:
    """One row per student the run record or the gradebook knows for the assignment (or ``only`` that student),
    sorted by student id, with every point read from the gradebook and lateness charged as ``grading.yml`` says
    (see the module docstring for the due date)."""
    course, assignment = context.course, context.assignment
    policy, bonus = context.facts.policy, context.facts.bonus
    records = read_records(course.root, assignment)
    with Gradebook(context.db_url, course_id=course.course_id) as gradebook:
        try:
            notebooks = gradebook.find_assignment(assignment).notebooks
        except MissingEntry:
            notebooks = []
        core_maximum = sum(
            cell.max_score for notebook in notebooks for cell in notebook.grade_cells if cell.name not in bonus
        )
        in_gradebook = {submission.student.id for submission in gradebook.assignment_submissions(assignment)}
        rows = []
        for student_id in sorted(set(records) | in_gradebook):
            if only is not None and student_id != only:
                continue
            kept = records.get(student_id, StudentRecord(Status.GRADED))
            row = Submission(
                student_id,
                assignment,
                max_score=core_maximum,
                status=kept.status,
                message=kept.message,
                findings=kept.findings + kept.similarity,
                submitted_at=kept.submitted_at,
            )
            row.extension_days, row.due, row.lms_files = kept.extension_days, kept.due, kept.lms_files
            if row.status in GRADED_STATUSES and student_id in in_gradebook:
                _add_points(row, gradebook.find_submission(assignment, student_id), bonus)
                _charge_lateness(row, due or kept.due or policy.due, policy.late_policy)
            elif row.status == Status.MISSING:
                row.score = 0.0  # nothing handed in earns nothing, and an LMS must not read it as "not graded"
            rows.append(row)
    return rows


def student_row(context: GradingContext, student_id: str) -> Submission | None:
    """``student_id``'s row of :func:`class_rows`, or None where neither the run record nor the gradebook has one."""
    rows = class_rows(context, only=student_id)
    return rows[0] if rows else None


def _charge_lateness(row: Submission, due: datetime | None, policy: LatePolicy) -> None:
    """``late_by`` (hours) and ``penalty`` of a graded row, the penalty taken from its score."""
    lateness = late_by(row.submitted_at, due, row.extension_days)
    if lateness is None:
        return
    row.late_by = round(max(lateness.total_seconds(), 0.0) / 3600, 2)
    row.penalty = round(policy.penalty(row.score, row.max_score, lateness), 4)
    row.score -= row.penalty


def _add_points(row: Submission, submission, bonus: set[str]) -> None:
    """Fill a row's score, bonus and pending points from its submission in the gradebook."""
    grades = [grade for notebook in submission.notebooks for grade in notebook.grades]
    row.score = sum(grade.score or 0.0 for grade in grades)
    row.bonus_score = sum(grade.score or 0.0 for grade in grades if grade.name in bonus)
    row.pending_manual_points = sum((grade.max_score for grade in grades if grade.needs_manual_grade), 0.0)


def write_csv(results: list[Submission], path: Path) -> None:
    """Write ``path``: a header of :data:`CSV_COLUMNS` (``student_id, assignment, score, max_score, status,
    message, review, pending_manual_points, bonus_score, submitted_at, late_by, penalty``, as README documents
    them) and one row per result. A text field that a spreadsheet would read as a formula (see
    :func:`spreadsheet_safe`) is written with a leading ``'``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as file:
        writer = csv.DictWriter(file, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        for result in results:
            row = {column: getattr(result, column) for column in CSV_COLUMNS}
            row["submitted_at"] = result.submitted_at.isoformat() if result.submitted_at else None
            writer.writerow({column: spreadsheet_safe(value) for column, value in row.items()})


def spreadsheet_safe(value):
    """OWASP's rule against CSV injection: a text field that a spreadsheet would read as a formula (starting
    with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return) is prefixed with an apostrophe."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value
