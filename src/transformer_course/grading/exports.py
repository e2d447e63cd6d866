"""Grades an LMS imports: Canvas's gradebook CSV and Moodle's grade import CSV, from the class's rows, as each
importer reads them.

    transformer-course grades 01-attention --format canvas --roster roster.csv --canvas-export export.csv

* **Canvas** (Grades → Import), as ``app/models/gradebook_importer.rb`` reads a file: the header
  ``Student,ID,SIS User ID,SIS Login ID,Section``, then the assignment's column, and a "Points Possible" row under the
  header (which sets the assignment's points). Each row is matched by ``ID`` (the roster's ``lms_id``), else by
  ``SIS User ID`` or ``SIS Login ID``, else by name. The column is matched to an assignment by the id in its
  title's parentheses (``Week 1: Attention (4821)``), else by the exact title; any other title is offered as a
  *new* assignment. So the column is taken from a Canvas gradebook export (Grades → Export) where one is given
  (:func:`canvas_column`), else ``--column``, else the assignment's name, with a warning that Canvas will offer to
  create it. A blank cell where Canvas holds a grade is a change (``no_change_to_value?``), not "no change".
* **Moodle** (Grades → Import → CSV file), as ``grade/import/csv/classes/load_data.php`` reads a file:
  ``Full name,Email address,ID number``, the assignment's grade, and ``Feedback``; map "ID number" (or "Email
  address") to the user field of the same name, the grade column to the assignment's grade item, and the
  feedback column to its feedback. A row whose user Moodle cannot find aborts the *whole* import
  (``check_user_exists``); an empty cell or ``-`` is imported as "no grade", clearing the grade the item had
  (``update_grade_item``, then ``grade_import_commit``); a grade above 100 (or the site's ``gradepointmax`` with
  "Unlimited grades" on) aborts the import (``insert_grade_record``); and the gradebook bounds a grade to the
  item's maximum unless the site's "Unlimited grades" is on (``grade_item::bounded_grade``).

So both files hold the roster's students only (the others are named in a note), and a learner whose written
answers are not graded yet gets no row at all — no zero for an answer nobody has read, and no blank that clears a
grade — and is named. The bonus is extra credit: a score may exceed the points possible, which Canvas takes and
Moodle bounds unless "Unlimited grades" is on; Moodle's notes say so, with the maximum to set on the grade item.
Fields a spreadsheet would run are neutralised as in ``grades.csv``.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

from .errors import CourseError
from .grade_row import GradeRow, spreadsheet_safe
from .roster import Student, comparable_name
from .status import Status

CANVAS_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
MOODLE_COLUMNS = ["Full name", "Email address", "ID number"]
# Columns of a Canvas gradebook export that are not assignments (gradebook_importer.rb's reserved and read-only ones).
CANVAS_NOT_ASSIGNMENTS = re.compile(
    r"(Student|LastName|FirstName|ID|SIS User ID|SIS Login ID|Section|Integration ID|Root Account"
    r"|(Unposted )?(Current|Final|Override) (Score|Points|Grade|Status).*|.*\(read only\)|Notes)"
)
CANVAS_ASSIGNMENT = re.compile(r"(?P<title>.*?)\s*\((?P<id>\d+)\)")


def lms_grade(row: GradeRow) -> str:
    """The grade an LMS gets: the score."""
    return "" if row.score is None else f"{row.score:g}"


def exported_rows(rows: list[GradeRow], roster: dict[str, Student]) -> tuple[list[GradeRow], list[str]]:
    """The rows an LMS file holds — the roster's students (everyone, without a roster) whose grade is ready — and a
    note naming the others."""
    notes, kept = [], rows
    if roster:
        others = [row.student_id for row in rows if row.student_id not in roster]
        kept = [row for row in rows if row.student_id in roster]
        if others:
            notes.append(f"not exported, not on the roster: {', '.join(others)}")
    waiting = [row.student_id for row in kept if row.score is None or row.pending_manual_points]
    if waiting:
        notes.append(
            f"no row for {', '.join(waiting)}: written answers not graded yet (the LMS keeps the grade it has); "
            "`transformer-course pending` lists them"
        )
    return [row for row in kept if row.student_id not in waiting], notes


def write_canvas(rows: list[GradeRow], roster: dict[str, Student], column: str, path: Path) -> list[str]:
    """Canvas's gradebook import CSV: a row per student, with the "Points Possible" row first; the notes to print."""
    rows, notes = exported_rows(rows, roster)
    maximum = next((row.max_score for row in rows if row.max_score is not None), None)
    with _writer(path, [*CANVAS_COLUMNS, column]) as writer:
        writer.writerow(["Points Possible", "", "", "", "", "" if maximum is None else f"{maximum:g}"])
        for row in rows:
            student = roster.get(row.student_id, Student(row.student_id))
            fields = [student.name or row.student_id, student.lms_id, row.student_id, student.email, student.section]
            writer.writerow([*fields, lms_grade(row)])
    return notes


def write_moodle(rows: list[GradeRow], roster: dict[str, Student], column: str, path: Path) -> list[str]:
    """Moodle's grade import CSV: the learner's identifiers, the grade and a feedback line; the notes to print."""
    rows, notes = exported_rows(rows, roster)
    with _writer(path, [*MOODLE_COLUMNS, column, "Feedback"]) as writer:
        for row in rows:
            student = roster.get(row.student_id, Student(row.student_id))
            writer.writerow([student.name, student.email, row.student_id, lms_grade(row), feedback_line(row)])
    maximum = next((row.max_score for row in rows if row.max_score is not None), None)
    if maximum is not None:
        above = [row.student_id for row in rows if row.score is not None and row.score > maximum]
        notes.append(
            f"Moodle: set the grade item's maximum grade to {maximum:g}"
            + (
                f"; {', '.join(above)} scored above it with the bonus, which Moodle bounds to {maximum:g} unless "
                'the site\'s "Unlimited grades" is on (Site administration → Grades → General settings)'
                if above
                else ""
            )
        )
    return notes


def feedback_line(row: GradeRow) -> str:
    """What the learner reads beside the grade in the LMS."""
    if row.status == Status.MISSING:
        return "Nothing was handed in."
    parts = [f"{row.score:g} of {row.max_score:g}"] if row.score is not None and row.max_score is not None else []
    if row.bonus_score:
        parts.append(f"bonus {row.bonus_score:g}")
    if row.penalty:
        parts.append(f"late penalty {row.penalty:g}")
    if row.pending_manual_points:
        parts.append(f"{row.pending_manual_points:g} points of written answers not graded yet")
    return "; ".join(parts)


def canvas_column(export: Path, assignment: str, wanted: str | None) -> str:
    """The assignment's column in a Canvas gradebook export (its title with Canvas's id), found by ``wanted`` (part
    of the title) or by the assignment's name.

    Raises:
        CourseError: the export cannot be read, or no single assignment column matches (the columns are listed).
    """
    try:
        with open(export, newline="", encoding="utf-8-sig") as file:
            header = next(csv.reader(file), [])
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise CourseError(f"the Canvas export {export} cannot be read: {error}") from None
    columns = [name.strip() for name in header if not CANVAS_NOT_ASSIGNMENTS.fullmatch(name.strip())]
    assignments = [name for name in columns if CANVAS_ASSIGNMENT.fullmatch(name)]
    key = comparable_name(wanted or assignment.split("-", 1)[-1])
    found = [name for name in assignments if key and key in comparable_name(CANVAS_ASSIGNMENT.fullmatch(name)["title"])]
    if len(found) != 1:
        how = f"--column {wanted!r}" if wanted else f"the name {assignment!r}"
        raise CourseError(
            f"{len(found) or 'no'} assignment columns of the Canvas export {export} match {how}; "
            f"its assignments: {', '.join(assignments) or 'none'} (give --column with part of one's title)"
        )
    return found[0]


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
