"""A student's row of ``grades.csv``: the one record of a grade that every reader of grades reads.

:class:`GradeRow` is frozen and holds exactly ``grades.csv``'s columns, in their order (:data:`CSV_COLUMNS`, as
README documents them). :func:`transformer_course.grading.report.class_rows` makes every row, from the gradebook and
the run record; :func:`write_csv` writes them, and the LMSs' files (:mod:`.exports`), the commands' output
(:mod:`.terminal`) and the learner's feedback page (:mod:`.feedback`) read the same rows, so that they all give one
score. The work of grading a submission is another record, :class:`~transformer_course.grading.submission.Submission`.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, fields
from datetime import datetime
from pathlib import Path

from .status import Status


@dataclass(frozen=True)
class GradeRow:
    """One student's grade for one assignment (README, "Exercises and grading", gives each column's meaning).

    Attributes:
        score: every point earned, bonus included, less the late penalty (None: no grade, see ``status``).
        max_score: the core's maximum (the bonus is extra credit: ``score`` may exceed it).
        review: the findings an instructor should look at, joined by ``"; "``.
        pending_manual_points: the points of written answers nobody has graded yet.
        bonus_score: the bonus part of ``score``.
        submitted_at: when it was handed in (UTC), if known.
        late_by: hours past the due date, the extension included (0 when on time; None: not known).
        penalty: the points the late policy took from ``score``.
    """

    student_id: str
    assignment: str
    score: float | None
    max_score: float | None
    status: Status
    message: str = ""
    review: str = ""
    pending_manual_points: float | None = None
    bonus_score: float | None = None
    submitted_at: datetime | None = None
    late_by: float | None = None
    penalty: float | None = None


CSV_COLUMNS = [column.name for column in fields(GradeRow)]


def write_csv(rows: list[GradeRow], path: Path) -> None:
    """Write ``path``: a header of :data:`CSV_COLUMNS` (``student_id, assignment, score, max_score, status,
    message, review, pending_manual_points, bonus_score, submitted_at, late_by, penalty``, as README documents
    them) and one line per row. A text field that a spreadsheet would read as a formula (see
    :func:`spreadsheet_safe`) is written with a leading ``'``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(CSV_COLUMNS)
        for row in rows:
            values = {column: getattr(row, column) for column in CSV_COLUMNS}
            values["submitted_at"] = row.submitted_at.isoformat() if row.submitted_at else None
            writer.writerow([spreadsheet_safe(values[column]) for column in CSV_COLUMNS])


def spreadsheet_safe(value):
    """OWASP's rule against CSV injection: a text field that a spreadsheet would read as a formula (starting
    with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return) is prefixed with an apostrophe."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value
