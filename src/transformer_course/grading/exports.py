"""Grades an LMS imports: Canvas's gradebook CSV and Moodle's grade import CSV, from the class's rows.

    transformer-course grades 01-attention --format canvas --roster roster.csv --out canvas.csv

* **Canvas** (Grades → Import): the header ``Student,ID,SIS User ID,SIS Login ID,Section``, then one
  column for the assignment, and a "Points Possible" row under the header. Canvas matches each row by
  ``ID`` (the roster's ``lms_id``) or ``SIS User ID`` (the student id).
* **Moodle** (Grades → Import → CSV file): ``Full name,Email address,ID number``, the assignment's
  grade, and ``Feedback``; on Moodle's import page, map "ID number" (or "Email address") to the user
  field of the same name and the grade column to the assignment's grade item, and the feedback column
  to its feedback.

The bonus is extra credit: a score may exceed the points possible. A learner whose written answers
are not graded yet gets no grade (the cell is left empty, which both LMSs import as "no change"),
and the command says who, so that no zero stands for an answer nobody has read. Fields a spreadsheet
would run are neutralised as in ``grades.csv``.
"""

from __future__ import annotations

import csv
from pathlib import Path

from .report import spreadsheet_safe
from .roster import Student
from .status import Status
from .submission import Submission

FORMATS = ("csv", "canvas", "moodle")
CANVAS_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
MOODLE_COLUMNS = ["Full name", "Email address", "ID number"]


def lms_grade(row: Submission) -> str:
    """The grade an LMS gets: the score, or nothing while written answers wait for an instructor."""
    if row.score is None or row.pending_manual_points:
        return ""
    return f"{row.score:g}"


def write_canvas(rows: list[Submission], roster: dict[str, Student], column: str, path: Path) -> None:
    """Canvas's gradebook import CSV: a row per student, with the "Points Possible" row first."""
    maximum = next((row.max_score for row in rows if row.max_score is not None), "")
    with _writer(path, [*CANVAS_COLUMNS, column]) as writer:
        writer.writerow(["Points Possible", "", "", "", "", f"{maximum:g}" if maximum != "" else ""])
        for row in rows:
            student = roster.get(row.student_id, Student(row.student_id))
            fields = [student.name or row.student_id, student.lms_id, row.student_id, student.email, student.section]
            writer.writerow([*fields, lms_grade(row)])


def write_moodle(rows: list[Submission], roster: dict[str, Student], column: str, path: Path) -> None:
    """Moodle's grade import CSV: the learner's identifiers, the grade and a feedback line."""
    with _writer(path, [*MOODLE_COLUMNS, column, "Feedback"]) as writer:
        for row in rows:
            student = roster.get(row.student_id, Student(row.student_id))
            writer.writerow([student.name, student.email, row.student_id, lms_grade(row), feedback_line(row)])


def feedback_line(row: Submission) -> str:
    """What the learner reads beside the grade in the LMS."""
    if row.status == Status.MISSING:
        return "Nothing was handed in."
    parts = [f"{row.score:g} of {row.max_score:g}"] if row.score is not None and row.max_score is not None else []
    if row.bonus_score:
        parts.append(f"bonus {row.bonus_score:g}")
    if row.pending_manual_points:
        parts.append(f"{row.pending_manual_points:g} points of written answers not graded yet")
    return "; ".join(parts)


class _writer:
    """A CSV writer whose every field is neutralised against spreadsheet formulas."""

    def __init__(self, path: Path, header: list[str]):
        self.path, self.header = Path(path), header

    def __enter__(self):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.file = open(self.path, "w", newline="", encoding="utf-8")
        self.csv = csv.writer(self.file)
        self.csv.writerow(self.header)
        return self

    def writerow(self, fields: list) -> None:
        self.csv.writerow([spreadsheet_safe(field) for field in fields])

    def __exit__(self, *exception) -> None:
        self.file.close()
