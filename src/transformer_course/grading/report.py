"""The class's grades: one row per student, from the gradebook and the grader's record of each student's last run.

Two homes, one job each:

* **the gradebook** (nbgrader's) holds every point: the grader's verdicts, the scores an instructor
  gave the written answers in formgrader, their comments, and which answers still wait for one;
* **the run record** (:mod:`transformer_course.grading.run_record`, beside the gradebook) holds what the
  gradebook cannot: each student's status, message and review findings from the last run that graded them,
  when they handed in, and what the similarity report found.

:func:`class_rows` joins them into rows, the one place a
:class:`~transformer_course.grading.grade_row.GradeRow` is made, which ``grades.csv``, the LMSs' files and the
commands' output read. Nothing here runs a notebook, so ``transformer-course grades`` rewrites the CSV after an
instructor has graded the written answers, and regrading some students keeps everyone else's row. The learner's
feedback page reads its student's row from here too (:func:`student_row`), so that the page, ``grades.csv`` and the
LMS's file give one score.

Points: ``score`` is every point earned, bonus included, less the late penalty; ``max_score`` is the core's
maximum, so that bonus is extra credit (``score`` may exceed it); ``bonus_score`` is the bonus part of
``score``; ``pending_manual_points`` are the points of written answers nobody has graded yet.
Which cells are bonus is the assignment's ``grading.yml`` (``bonus:``); the due date is ``due`` given here, else the
one given to the run that graded the student, else ``grading.yml``'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

from nbgrader.api import Gradebook, MissingEntry

from .context import GradingContext
from .grade_row import GradeRow
from .lateness import LatePolicy, late_by
from .roster import Student
from .run_record import StudentRecord, read_records
from .status import GRADED_STATUSES, Status


def graded_before(context: GradingContext) -> set[str]:
    """The students the run record or the gradebook knows for the assignment: each was in some earlier run."""
    with Gradebook(context.db_url, course_id=context.course.course_id) as gradebook:
        in_gradebook = {submission.student.id for submission in gradebook.assignment_submissions(context.assignment)}
    return set(read_records(context.course.root, context.assignment)) | in_gradebook


def class_rows(
    context: GradingContext,
    due: datetime | None = None,
    only: str | None = None,
    roster: dict[str, Student] | None = None,
) -> list[GradeRow]:
    """One row per student the run record or the gradebook knows for the assignment (or ``only`` that student),
    with every point read from the gradebook and lateness charged as ``grading.yml`` says (see the module docstring
    for the due date), and a ``missing`` row, score 0, for each student of ``roster`` that neither knows; sorted by
    student id."""
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
            points = None
            if kept.status in GRADED_STATUSES and student_id in in_gradebook:
                points = _points(gradebook.find_submission(assignment, student_id), bonus)
            lateness = _Lateness(due or kept.due or policy.due, policy.late_policy)
            rows.append(_row(student_id, assignment, core_maximum, kept, points, lateness))
    known = {row.student_id for row in rows}
    maximum = core_maximum if rows else None  # a class nobody was graded in has no maximum to give yet
    rows += [_nothing_handed_in(student, assignment, maximum) for student in roster or {} if student not in known]
    return sorted(rows, key=lambda row: row.student_id)


def student_row(context: GradingContext, student_id: str) -> GradeRow | None:
    """``student_id``'s row of :func:`class_rows`, or None where neither the run record nor the gradebook has one."""
    rows = class_rows(context, only=student_id)
    return rows[0] if rows else None


class _Points(NamedTuple):
    """What a submission earned, as the gradebook holds it."""

    score: float  # every point, bonus included
    bonus: float  # the bonus cells' part of it
    pending: float  # the points of written answers nobody has graded yet


@dataclass(frozen=True)
class _Lateness:
    """When the assignment was due for a student (before their extension), and what lateness costs."""

    due: datetime | None
    policy: LatePolicy


def _points(submission, bonus: frozenset[str]) -> _Points:
    """A student's points from their submission in the gradebook."""
    grades = [grade for notebook in submission.notebooks for grade in notebook.grades]
    return _Points(
        sum(grade.score or 0.0 for grade in grades),
        sum(grade.score or 0.0 for grade in grades if grade.name in bonus),
        sum((grade.max_score for grade in grades if grade.needs_manual_grade), 0.0),
    )


def _row(
    student_id: str,
    assignment: str,
    maximum: float | None,
    kept: StudentRecord,
    points: _Points | None,
    lateness: _Lateness | None,
) -> GradeRow:
    """A student's row: what the run record ``kept``, with their ``points`` (None where they have none to count) and
    the late penalty taken from them."""
    score = bonus = pending = late_hours = penalty = None
    if points is not None and lateness is not None:
        score, bonus, pending = points
        late = late_by(kept.submitted_at, lateness.due, kept.extension_days)
        if late is not None:
            late_hours = round(max(late.total_seconds(), 0.0) / 3600, 2)
            penalty = round(lateness.policy.penalty(score, maximum, late), 4)
            score -= penalty
    elif kept.status == Status.MISSING:
        score = 0.0  # nothing handed in earns nothing, and an LMS must not read it as "not graded"
    return GradeRow(
        student_id,
        assignment,
        score,
        maximum,
        kept.status,
        kept.message,
        "; ".join(kept.findings + kept.similarity),
        pending_manual_points=pending,
        bonus_score=bonus,
        submitted_at=kept.submitted_at,
        late_by=late_hours,
        penalty=penalty,
    )


def _nothing_handed_in(student_id: str, assignment: str, maximum: float | None) -> GradeRow:
    """The row of a student on the roster whom no run has graded: ``missing``, score 0."""
    return _row(student_id, assignment, maximum, StudentRecord(Status.MISSING, "nothing was handed in"), None, None)
