"""The run record: what the gradebook cannot hold about each student's last grading, kept between runs.

``grading_records/<assignment>.json`` in the course root, beside the gradebook, holds one :class:`StudentRecord` per
student: the status, message and review findings of the last run that graded them, when they handed in (and the due
date given on the command line, if one was), their extension, the LMS's name of the file graded, what
:mod:`transformer_course.grading.similarity` found (kept until the next ``similarity`` run, whatever ``autograde``
does meanwhile), and the written answers' versions
(:class:`~transformer_course.grading.written_answers.WrittenAnswer`).

A :class:`RunRecord` reads the file once and writes it whole, atomically
(:func:`transformer_course.atomic_files.write_text_atomically`), whenever a student's entry changes: once per
student graded, so that a run that is interrupted keeps what it graded. Each entry carries the :data:`VERSION` of its
layout, and :meth:`StudentRecord.from_json` reads every layout written before.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from ..atomic_files import write_text_atomically
from .errors import CourseError
from .status import Status
from .submission import Submission
from .written_answers import WrittenAnswer

# The layout of an entry, counted up whenever it changes; StudentRecord.from_json reads every one.
#   1  (no "version"): status, message, findings or one "review" text, submitted_at, extension_days
#   2  "version" itself; findings always a list; similarity, due, lms_files, written_answers and recorded_at
VERSION = 2
RECORDS_DIRECTORY = "grading_records"


class RunRecordError(CourseError):
    """A run record that cannot be read: the message names the file and what is wrong with it."""


@dataclass
class StudentRecord:
    """One student's entry in the run record (see the module docstring)."""

    status: Status
    message: str = ""
    findings: list[str] = field(default_factory=list)
    similarity: list[str] = field(default_factory=list)
    submitted_at: datetime | None = None
    due: datetime | None = None  # the due date last given on the command line for them (None: grading.yml's)
    extension_days: float = 0.0
    lms_files: list[str] = field(default_factory=list)  # the download's names of the files graded
    written_answers: dict[str, WrittenAnswer] = field(default_factory=dict)  # by grade_id
    recorded_at: str = ""

    def to_json(self) -> dict:
        value = asdict(self)
        value.update(status=str(self.status), submitted_at=_time(self.submitted_at), due=_time(self.due))
        return {"version": VERSION, **value}

    @classmethod
    def from_json(cls, value: dict) -> StudentRecord:
        """An entry of any layout (see :data:`VERSION`).

        Raises:
            ValueError: the entry is of a layout newer than this package reads, or not an entry at all.
        """
        version = value.get("version", 1)
        if version not in range(1, VERSION + 1):
            raise ValueError(f"an entry of layout {version!r}: this package reads layouts 1 to {VERSION}")
        if version == 1:
            review = [value["review"]] if value.get("review") else []
            value = {**value, "findings": value.get("findings", review)}
        return cls(
            status=Status(value["status"]),
            message=value.get("message", ""),
            findings=list(value["findings"]),
            similarity=list(value.get("similarity", [])),
            submitted_at=_parsed(value.get("submitted_at")),
            due=_parsed(value.get("due")),
            extension_days=float(value.get("extension_days") or 0.0),
            lms_files=list(value.get("lms_files", [])),
            written_answers={
                name: WrittenAnswer(**answer) for name, answer in value.get("written_answers", {}).items()
            },
            recorded_at=value.get("recorded_at", ""),
        )


class RunRecord:
    """One assignment's run record, read once: each student's :class:`StudentRecord` by id (:attr:`students`)."""

    def __init__(self, path: Path, students: dict[str, StudentRecord]):
        self.path, self.students = path, students

    @classmethod
    def read(cls, course_root: Path, assignment: str) -> RunRecord:
        """The run record of ``assignment`` (empty for an assignment not graded yet).

        Raises:
            RunRecordError: the file is not a run record (the message names it and what is wrong).
        """
        path = records_path(course_root, assignment)
        if not path.is_file():
            return cls(path, {})
        try:
            entries = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(entries, dict):
                raise ValueError("not an object of student ids")
            return cls(path, {student: StudentRecord.from_json(entry) for student, entry in entries.items()})
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            raise RunRecordError(f"the run record {path} cannot be read: {error}") from None

    def keep(self, *submissions: Submission) -> None:
        """Keep each submission's status, message, findings, times, LMS files and written answers, then write the
        record; the similarity findings already there stay, and so do the due date where this run was given none and
        the written answers where this run read none.

        Raises:
            ValueError: a submission that no step has ended (it has no status to keep).
        """
        for submission in submissions:
            if submission.status is None:
                raise ValueError(f"{submission.student_id}'s submission has no status yet: no step has ended it")
            before = self.students.get(submission.student_id)
            self.students[submission.student_id] = StudentRecord(
                status=submission.status,
                message=submission.message,
                findings=list(submission.findings),
                similarity=before.similarity if before else [],
                submitted_at=submission.submitted_at,
                due=submission.due or (before.due if before else None),
                extension_days=submission.extension_days,
                lms_files=list(submission.lms_files),
                written_answers=submission.written_answers or (before.written_answers if before else {}),
                recorded_at=datetime.now(UTC).isoformat(timespec="seconds"),
            )
        self._write()

    def keep_similarity(self, findings: dict[str, list[str]]) -> None:
        """The similarity findings of a new ``similarity`` run, in place of the last run's for every student; a
        student with findings and no record yet gets one (status ``graded``: the report compares what was handed
        in). Then write the record."""
        for record in self.students.values():
            record.similarity = []
        for student_id, found in findings.items():
            self.students.setdefault(student_id, StudentRecord(Status.GRADED)).similarity = list(found)
        self._write()

    def _write(self) -> None:
        entries = {student: record.to_json() for student, record in sorted(self.students.items())}
        write_text_atomically(self.path, json.dumps(entries, indent=1, ensure_ascii=False))


def records_path(course_root: Path, assignment: str) -> Path:
    """Where the run record of ``assignment`` is kept."""
    return Path(course_root) / RECORDS_DIRECTORY / f"{assignment}.json"


def read_records(course_root: Path, assignment: str) -> dict[str, StudentRecord]:
    """student id → their :class:`StudentRecord` (none for an assignment not graded yet)."""
    return RunRecord.read(course_root, assignment).students


def keep_in_run_record(course_root: Path, submission: Submission) -> None:
    """Keep one ``submission`` in its assignment's run record (:meth:`RunRecord.keep`)."""
    RunRecord.read(course_root, submission.assignment).keep(submission)


def keep_similarity(course_root: Path, assignment: str, findings: dict[str, list[str]]) -> None:
    """Keep a ``similarity`` run's findings in the assignment's run record (:meth:`RunRecord.keep_similarity`)."""
    RunRecord.read(course_root, assignment).keep_similarity(findings)


def _time(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment else None


def _parsed(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text else None
