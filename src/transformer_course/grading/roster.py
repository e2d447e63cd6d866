"""The class list: who should hand in, how the LMS knows them, and their extensions.

    student_id,name,email,lms_id,section,extension
    s1234567,Jane Doe,jane@uni.edu,48213,A,
    s7654321,李雷,lei@uni.edu,48214,B,2

``student_id`` is required and follows the course's id rule (it becomes folder names, nbgrader's
student and a column of every export); every other column is optional. ``name`` may be in any
script: it is matched, never used as a path. ``lms_id`` is the learner's id in the LMS (Canvas's
user id, Moodle's participant id), which the LMS puts in the names of its downloads; ``extension``
is days added to the due date (0 to :data:`MAX_EXTENSION_DAYS`; ``nan``, infinity and the like are refused
when the roster is read, before anything is graded).

With a roster, every student on it gets a row of ``grades.csv`` (``missing``, with score 0, when
nothing was handed in), and a folder whose id is not on it is graded and flagged in ``review``.
A roster that cannot be read is one :class:`RosterError`, naming the file and the line.
"""

from __future__ import annotations

import csv
import math
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from .errors import CourseError
from .student_ids import STUDENT_ID_HELP, is_student_id

COLUMNS = ("student_id", "name", "email", "lms_id", "section", "extension")
MAX_EXTENSION_DAYS = 365  # a longer one is a typing mistake, not an extension


class RosterError(CourseError):
    """The roster cannot be read: the message names the file, the line and what is wrong."""


@dataclass(frozen=True)
class Student:
    student_id: str
    name: str = ""
    email: str = ""
    lms_id: str = ""
    section: str = ""
    extension_days: float = 0.0


def read_roster(path: Path) -> dict[str, Student]:
    """student id → :class:`Student`, in the roster's order."""
    path = Path(path)
    try:
        with open(path, newline="", encoding="utf-8-sig") as file:
            rows = list(csv.DictReader(file))
            header = rows and list(rows[0]) or []
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise RosterError(f"the roster {path} cannot be read: {error}") from None
    if "student_id" not in header:
        raise RosterError(f"the roster {path} has no student_id column (its columns: {', '.join(header) or 'none'})")
    unknown = [column for column in header if column not in COLUMNS]
    if unknown:
        raise RosterError(
            f"the roster {path} has columns it does not know: {', '.join(unknown)} (known: {', '.join(COLUMNS)})"
        )
    students: dict[str, Student] = {}
    for line, row in enumerate(rows, start=2):
        student_id = (row.get("student_id") or "").strip()
        if not is_student_id(student_id):
            raise RosterError(f"{path}, line {line}: {student_id!r} is not a student id: {STUDENT_ID_HELP}")
        if student_id in students:
            raise RosterError(f"{path}, line {line}: the student id {student_id} is on the roster twice")
        extension = _extension_days(row.get("extension") or "")
        if extension is None:
            raise RosterError(
                f"{path}, line {line}: extension {row['extension']!r} is not a number of days from 0 to "
                f"{MAX_EXTENSION_DAYS}"
            )
        text = {column: " ".join((row.get(column) or "").split()) for column in ("name", "email", "lms_id", "section")}
        students[student_id] = Student(student_id, extension_days=extension, **text)
    return students


def _extension_days(text: str) -> float | None:
    """Days of an extension (blank: none), or None where ``text`` is no number of days a due date can move by."""
    try:
        days = float(text.strip() or 0)
    except ValueError:
        return None
    return days if math.isfinite(days) and 0 <= days <= MAX_EXTENSION_DAYS else None


def comparable_name(name: str) -> str:
    """A name as two downloads may spell it: Unicode-normalised, case-folded, without spaces or punctuation."""
    folded = unicodedata.normalize("NFKC", name).casefold()
    return "".join(character for character in folded if character.isalnum())
