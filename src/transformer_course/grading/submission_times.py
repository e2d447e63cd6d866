"""Submission times as the LMSs give them, read as they come: ``autograde --times FILE [--times-zone ZONE]``.

Three forms are read, told apart by what the file holds:

* **the course's own CSV**: a column naming the learner — ``student_id``, ``lms_id``, ``email``, or ``student``
  (any of the three) — and ``time``, ISO 8601 with its zone (``2026-11-20T23:59:00+01:00``, ``…Z``) or as
  nbgrader writes it (``2026-11-20 22:59:00.000000 UTC``). A time without a zone is refused, unless
  ``--times-zone`` (an IANA name: ``Europe/Berlin``) says where it was written.
* **Moodle's grading worksheet** (the assignment's "View all submissions" → "Download grading worksheet", with
  the "Offline grading worksheet" feedback type on): its ``Identifier`` (``Participant 48213``: the participant
  id, the roster's ``lms_id``), ``Email address`` and ``Last modified (submission)``, which Moodle writes with
  ``userdate()`` in its English ``strftimedaydatetime`` (``Friday, 20 November 2026, 11:59 PM``) and in the time
  zone of whoever downloaded it, which the file does not say: ``--times-zone`` must; ``-`` where nothing was
  handed in. (Moodle's ``mod/assign/gradingtable.php``, ``col_timesubmitted``; the worksheet's columns are those
  ``mod/assign/feedback/offline/importgradeslib.php`` reads back.)
* **Canvas's submissions**, as its REST API lists them (``GET /api/v1/courses/:course_id/assignments/
  :assignment_id/submissions``, saved as JSON): ``user_id`` (the roster's ``lms_id``) and ``submitted_at`` (ISO 8601,
  UTC; ``null`` where nothing was handed in). Canvas's gradebook export has no submission times, and its
  "Download Submissions" only the ``_LATE`` mark.

Each key is looked up on the roster (student id, LMS id, email; without a roster it is a student id): a key that
names nobody is a warning, its time unused. These times are the LMS's, which the learner does not control; they win
over nbgrader's ``timestamp.txt``, which the learner's own ``nbgrader submit`` writes.
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from pathlib import Path

from dateutil import tz
from dateutil.parser import isoparse

from .lateness import LatenessError, parse_submission_time
from .roster import Student

COURSE_FORMAT = "a CSV of student_id (or lms_id, email, student) and time, e.g. s1234567,2026-11-20T23:59:00+01:00"
KEY_COLUMNS = ("student_id", "lms_id", "email", "student")
MOODLE_ID, MOODLE_EMAIL, MOODLE_TIME = "Identifier", "Email address", "Last modified (submission)"
MOODLE_PARTICIPANT = re.compile(r"\D*(?P<id>\d+)")  # "Participant 48213", in the worksheet's language
MOODLE_DATE = "%A, %d %B %Y, %I:%M %p"  # Moodle's English strftimedaydatetime, as userdate() writes it


@dataclass
class SubmissionTimes:
    """What a times file gave: student id → submission time (UTC), and one warning per key that names nobody."""

    times: dict[str, datetime] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def read_submission_times(path: Path, roster: dict[str, Student] | None, zone: str | None = None) -> SubmissionTimes:
    """The submission times in ``path`` (any of the module docstring's forms), by student id.

    Raises:
        LatenessError: the file cannot be read, is none of the forms, or holds a time that cannot be used (the
            message names the line and the form expected).
    """
    where = tz.gettz(zone) if zone else None
    if zone and where is None:
        raise LatenessError(f"--times-zone {zone!r} is not a time zone (an IANA name, such as Europe/Berlin)")
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise LatenessError(f"the times file {path} cannot be read: {error}") from None
    keyed = _canvas_api(text, path) if text.lstrip().startswith("[") else _csv(text, path, where)
    found = SubmissionTimes()
    lookup = _lookup(roster)
    for keys, moment in keyed:
        student = next((lookup[key] for key in keys if key in lookup), None)
        if roster is None:
            student = keys[0]
        if student is None:
            found.warnings.append(f"the times file names {' or '.join(keys)}, who is on no roster row: time not used")
        else:
            found.times[student] = moment
    return found


def _lookup(roster: dict[str, Student] | None) -> dict[str, str]:
    """Every roster key (student id, LMS id, email, case-folded) → the student id."""
    lookup = {}
    for student in (roster or {}).values():
        for key in (student.student_id, student.lms_id, student.email.casefold()):
            if key:
                lookup.setdefault(key, student.student_id)
    return lookup


def _csv(text: str, path: Path, zone: tzinfo | None) -> list[tuple[tuple[str, ...], datetime]]:
    try:
        rows = list(csv.DictReader(text.splitlines()))
    except csv.Error as error:
        raise LatenessError(f"the times file {path} cannot be read as CSV: {error}") from None
    header = list(rows[0]) if rows else []
    if MOODLE_ID in header and MOODLE_TIME in header:
        return _moodle_worksheet(rows, path, zone)
    key_column = next((column for column in KEY_COLUMNS if column in header), None)
    if key_column is None or "time" not in header:
        raise LatenessError(
            f"the times file {path} is none of the forms read (its columns: {', '.join(header) or 'none'}): "
            f"{COURSE_FORMAT}; or Moodle's grading worksheet; or Canvas's submissions as JSON"
        )
    keyed = []
    for line, row in enumerate(rows, start=2):
        key = (row.get(key_column) or "").strip()
        if not key:
            raise LatenessError(f"{path}, line {line}: no {key_column}: {COURSE_FORMAT}")
        try:
            moment = _moment(row.get("time") or "", zone)
        except ValueError as error:
            raise LatenessError(f"{path}, line {line}: {error}: {COURSE_FORMAT}") from None
        keyed.append(((key, key.casefold()) if key_column in ("email", "student") else (key,), moment))
    return keyed


def _moment(text: str, zone: tzinfo | None) -> datetime:
    """A time as the course's CSV gives it (see the module docstring), in UTC."""
    text = text.strip()
    if len(text.split()) == 3:  # nbgrader's "2026-11-20 22:59:00.000000 UTC", its zone named
        return parse_submission_time(text)
    try:
        moment = isoparse(text.replace(" ", "T", 1))
    except (ValueError, OverflowError):
        raise ValueError(f"{text[:64]!r} is not a date and time") from None
    if moment.tzinfo is None:
        if zone is None:
            raise ValueError(f"{text} has no time zone (give it, e.g. +01:00, or name one with --times-zone)")
        moment = moment.replace(tzinfo=zone)
    return moment.astimezone(UTC)


def _moodle_worksheet(rows: list[dict], path: Path, zone: tzinfo | None) -> list[tuple[tuple[str, ...], datetime]]:
    if zone is None:
        raise LatenessError(
            f"{path} is Moodle's grading worksheet, whose times carry no zone: give the time zone of the Moodle "
            "account that downloaded it, e.g. --times-zone Europe/Berlin"
        )
    keyed = []
    for line, row in enumerate(rows, start=2):
        text = (row.get(MOODLE_TIME) or "").strip()
        participant = MOODLE_PARTICIPANT.fullmatch((row.get(MOODLE_ID) or "").strip())
        if text in ("", "-") or participant is None:
            continue  # nothing handed in
        try:
            moment = datetime.strptime(text, MOODLE_DATE).replace(tzinfo=zone).astimezone(UTC)
        except ValueError:
            raise LatenessError(
                f"{path}, line {line}: {MOODLE_TIME} {text!r} is not Moodle's English date "
                "(Friday, 20 November 2026, 11:59 PM): download the worksheet with Moodle's language set to English"
            ) from None
        keys = (participant["id"], (row.get(MOODLE_EMAIL) or "").strip().casefold())
        keyed.append((tuple(key for key in keys if key), moment))
    return keyed


def _canvas_api(text: str, path: Path) -> list[tuple[tuple[str, ...], datetime]]:
    try:
        submissions = json.loads(text)
    except ValueError as error:
        raise LatenessError(f"the times file {path} is not JSON: {error}") from None
    keyed = []
    for index, submission in enumerate(submissions if isinstance(submissions, list) else [None]):
        if not isinstance(submission, dict) or "user_id" not in submission:
            raise LatenessError(
                f"{path}: item {index + 1} is not a Canvas submission (user_id, submitted_at), as "
                "GET /api/v1/courses/:course_id/assignments/:assignment_id/submissions lists them"
            )
        if submission.get("submitted_at"):
            try:
                moment = isoparse(str(submission["submitted_at"])).astimezone(UTC)
            except (ValueError, OverflowError):
                raise LatenessError(f"{path}: item {index + 1}'s submitted_at is not a time") from None
            keyed.append(((str(submission["user_id"]),), moment))
    return keyed
