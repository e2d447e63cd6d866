"""The LMS's own downloads, as they come, mapped to students through the roster.

    transformer-course autograde 01-attention submissions.zip --lms canvas --roster roster.csv

* **Canvas** ("Download Submissions"): one flat folder (or its zip) of files named
  ``<name>_<user id>_<submission id>_<file name>``, with ``_LATE`` after the name for late work
  (``doejane_LATE_48213_90211_attention.ipynb``) and ``-1``, ``-2``… added to the file name on a
  resubmission (``attention-1.ipynb``). The user id is the roster's ``lms_id``.
* **Moodle** ("Download all submissions"): one folder per learner,
  ``<Full Name>_<participant id>_assignsubmission_file_/`` (or the same prefix on each file, when
  Moodle is told not to make folders). The participant id is the roster's ``lms_id``.

A file is matched by its LMS id, else by the learner's name (compared as
:func:`~transformer_course.grading.roster.comparable_name` spells it, so a Chinese name works); a file
that matches nobody on the roster, or more than one learner, is reported by name and graded nowhere —
never guessed. Of a learner's several files for one notebook, the latest resubmission is taken.
The download is read, never changed: :func:`unpack` writes what it takes into a folder of the
grader's, in the layout ``autograde`` reads (``<student_id>/<notebook>.ipynb``).
"""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from .intake import MAX_NOTEBOOK_BYTES, Refused, read_regular_file
from .roster import Student, comparable_name
from .status import Status

LMS_NAMES = ("canvas", "moodle")
CANVAS_FILE = re.compile(r"(?P<name>[^_]+?)(?P<late>_LATE)?_(?P<user>\d+)_(?P<submission>\d+)_(?P<file>.+)")
MOODLE_ENTRY = re.compile(r"(?P<name>.+)_(?P<user>\d+)_assignsubmission_(?:file|onlinetext)_(?P<file>.*)")
RESUBMISSION = re.compile(r"(?P<stem>.+?)-(?P<number>\d+)(?P<suffix>\.ipynb)")
MAX_ARCHIVE_MEMBERS = 10_000


@dataclass
class Unpacked:
    """What :func:`unpack` took from a download."""

    students: dict[str, list[str]] = field(default_factory=dict)  # student id -> the download's files taken
    late: set[str] = field(default_factory=set)  # students whose file the LMS marked late
    unmatched: list[str] = field(default_factory=list)  # "file: why", graded nowhere


def unpack(source: Path, lms: str, roster: dict[str, Student], notebooks: list[str], target: Path) -> Unpacked:
    """Take the notebooks of an LMS download (a folder or a zip) into ``target/<student_id>/<notebook>``.

    Args:
        source: the download, as the LMS gave it; only read.
        lms: ``"canvas"`` or ``"moodle"``.
        roster: the class, by student id.
        notebooks: the assignment's notebook file names (``attention.ipynb``): another file name is taken only
            where the learner sent a single notebook.
        target: a new folder of the grader's.
    """
    parse = {"canvas": _canvas_entry, "moodle": _moodle_entry}[lms]
    unpacked = Unpacked()
    chosen: dict[tuple[str, str], tuple[tuple, str, bytes]] = {}
    for name, read in _entries(Path(source)):
        entry = parse(name)
        if entry is None:
            unpacked.unmatched.append(f"{name}: not a file name {lms.title()} gives a submission")
            continue
        student, why = _match(entry, roster)
        if student is None:
            unpacked.unmatched.append(f"{name}: {why}")
            continue
        file_name, order = _resubmission(entry["file"])
        if not file_name.endswith(".ipynb"):
            continue
        try:
            content = read()
        except Refused as refusal:
            unpacked.unmatched.append(f"{name}: {refusal.message}")
            continue
        key = (student.student_id, file_name)
        rank = (order, entry.get("submission", ""), name)
        if key not in chosen or rank > chosen[key][0]:
            chosen[key] = (rank, name, content)
        if entry.get("late"):
            unpacked.late.add(student.student_id)
    for (student_id, file_name), (_, name, content) in sorted(chosen.items()):
        folder = target / student_id
        folder.mkdir(parents=True, exist_ok=True)
        (folder / file_name).write_bytes(content)
        unpacked.students.setdefault(student_id, []).append(name)
    return unpacked


def _entries(source: Path):
    """(name, read) of each file of the download: a zip's members, or a folder's files and its folders' files (one
    level, as Moodle makes them), named ``folder/file``."""
    if source.is_file() and zipfile.is_zipfile(source):
        with zipfile.ZipFile(source) as archive:
            members = [member for member in archive.infolist() if not member.is_dir()][:MAX_ARCHIVE_MEMBERS]
            for member in members:
                yield member.filename.replace("\\", "/"), lambda member=member: _read_member(archive, member)
        return
    if not source.is_dir():
        raise NotADirectoryError(f"the download {source} is neither a folder nor a zip file")
    for path in sorted(source.iterdir()):
        if path.is_dir() and not path.is_symlink():
            for inner in sorted(path.iterdir()):
                yield f"{path.name}/{inner.name}", lambda inner=inner: read_regular_file(inner)
        else:
            yield path.name, lambda path=path: read_regular_file(path)


def _read_member(archive: zipfile.ZipFile, member: zipfile.ZipInfo) -> bytes:
    if member.file_size > MAX_NOTEBOOK_BYTES:
        raise Refused(Status.REFUSED, f"larger than {MAX_NOTEBOOK_BYTES // 2**20} MB: not read")
    with archive.open(member) as file:
        content = file.read(MAX_NOTEBOOK_BYTES + 1)
    if len(content) > MAX_NOTEBOOK_BYTES:
        raise Refused(Status.REFUSED, f"larger than {MAX_NOTEBOOK_BYTES // 2**20} MB: not read")
    return content


def _canvas_entry(name: str) -> dict | None:
    match = CANVAS_FILE.fullmatch(name.rsplit("/", 1)[-1])
    return None if match is None else {**match.groupdict(), "late": bool(match["late"])}


def _moodle_entry(name: str) -> dict | None:
    folder, _, file_name = name.rpartition("/")
    match = MOODLE_ENTRY.fullmatch(f"{folder}{file_name}" if folder.endswith("_") else name.rsplit("/", 1)[-1])
    if match is None:
        return None
    return {"name": match["name"], "user": match["user"], "file": match["file"] or file_name, "late": False}


def _match(entry: dict, roster: dict[str, Student]) -> tuple[Student | None, str]:
    """The roster's student for a download's entry, by LMS id, else by name; or None and why."""
    by_id = [student for student in roster.values() if student.lms_id and student.lms_id == entry["user"]]
    if len(by_id) == 1:
        return by_id[0], ""
    if len(by_id) > 1:
        return None, f"LMS id {entry['user']} is on the roster {len(by_id)} times"
    wanted = comparable_name(entry["name"])
    by_name = [student for student in roster.values() if wanted and wanted in _spellings(student.name)]
    if len(by_name) == 1:
        return by_name[0], ""
    if by_name:
        return None, f"{len(by_name)} students on the roster are called {entry['name']!r}: not guessed"
    return None, f"nobody on the roster has LMS id {entry['user']} or the name {entry['name']!r}"


def _spellings(name: str) -> set[str]:
    """A roster name as an LMS may write it: as it is, and family name first (Canvas's ``doejane``)."""
    words = name.split()
    forms = {comparable_name(name)}
    if len(words) > 1:
        forms.add(comparable_name(" ".join([words[-1], *words[:-1]])))
    return forms


def _resubmission(file_name: str) -> tuple[str, int]:
    """(the notebook's name, which resubmission): Canvas adds ``-1``, ``-2``… to a file handed in again."""
    match = RESUBMISSION.fullmatch(file_name)
    if match is None:
        return file_name, 0
    return match["stem"] + match["suffix"], int(match["number"])
