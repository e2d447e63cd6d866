"""The run record: what the gradebook cannot hold about each student's last grading, kept between runs.

``grading_records/<assignment>.json`` in the course root, beside the gradebook, holds one
:class:`StudentRecord` per student: the status, message and review findings of the last run that graded them,
when they handed in (and the due date given on the command line, if one was), their extension, the LMS's name of
the file graded, what :mod:`transformer_course.grading.similarity` found (kept until the next ``similarity`` run,
whatever ``autograde`` does meanwhile), and the written answers' versions
(:class:`~transformer_course.grading.written_answers.WrittenAnswer`). It is rewritten, whole and atomically, after
every submission, so that a run that is interrupted keeps what it graded.

Each entry carries its :data:`VERSION`; an entry written before versions (version 1: status, message, findings or a
``review`` text, submitted_at, extension_days) is read as one.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from ..atomic_files import write_text_atomically
from .status import Status
from .submission import Submission
from .written_answers import WrittenAnswer

VERSION = 2
RECORDS_DIRECTORY = "grading_records"


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
        findings = value.get("findings", [value["review"]] if value.get("review") else [])
        return cls(
            status=Status(value["status"]),
            message=value.get("message", ""),
            findings=list(findings),
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


def records_path(course_root: Path, assignment: str) -> Path:
    """Where the run record of ``assignment`` is kept."""
    return Path(course_root) / RECORDS_DIRECTORY / f"{assignment}.json"


def read_records(course_root: Path, assignment: str) -> dict[str, StudentRecord]:
    """student id → their :class:`StudentRecord` (none for an assignment not graded yet)."""
    path = records_path(course_root, assignment)
    if not path.is_file():
        return {}
    return {student: StudentRecord.from_json(value) for student, value in json.loads(path.read_text("utf-8")).items()}


def keep_in_run_record(course_root: Path, result: Submission) -> None:
    """Keep ``result``'s status, message, findings, times, LMS files and written answers in its assignment's run
    record; the similarity findings already there stay, and so do the due date where this run was given none and
    the written answers where this run read none."""
    records = read_records(course_root, result.assignment)
    before = records.get(result.student_id)
    records[result.student_id] = StudentRecord(
        status=result.status,
        message=result.message,
        findings=list(result.findings),
        similarity=before.similarity if before else [],
        submitted_at=result.submitted_at,
        due=result.due or (before.due if before else None),
        extension_days=result.extension_days,
        lms_files=list(result.lms_files),
        written_answers=result.written_answers or (before.written_answers if before else {}),
        recorded_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    _write(records_path(course_root, result.assignment), records)


def keep_similarity(course_root: Path, assignment: str, findings: dict[str, list[str]]) -> None:
    """The similarity findings of a new ``similarity`` run, in place of the last run's for every student; a student
    with findings and no record yet gets one (status ``graded``: the report compares what was handed in)."""
    records = read_records(course_root, assignment)
    for record in records.values():
        record.similarity = []
    for student_id, found in findings.items():
        records.setdefault(student_id, StudentRecord(Status.GRADED)).similarity = list(found)
    _write(records_path(course_root, assignment), records)


def _write(path: Path, records: dict[str, StudentRecord]) -> None:
    entries = {student: record.to_json() for student, record in sorted(records.items())}
    write_text_atomically(path, json.dumps(entries, indent=1, ensure_ascii=False))  # whole, whenever a run is stopped


def _time(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment else None


def _parsed(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text else None
