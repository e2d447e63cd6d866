"""The LMS's own downloads, as they come, mapped to students through the roster.

    transformer-course autograde 01-attention submissions.zip --lms canvas --roster roster.csv

* **Canvas** ("Download Submissions"): one flat folder (or its zip) of files named
  ``<name>_<user id>_<attachment id>_<file name>``, with ``_LATE`` after the name for late work
  (``doejane_LATE_48213_90211_attention.ipynb``) and ``-1``, ``-2``… added to the file name on a
  resubmission (``attention-1.ipynb``). The user id is the roster's ``lms_id``; the attachment id names the
  file handed in, which Canvas's bulk feedback upload matches again (:mod:`.lms_feedback`).
* **Moodle** ("Download all submissions"): one folder per learner,
  ``<Full Name>_<participant id>_assignsubmission_file_/`` (or the same prefix on each file, when
  Moodle is told not to make folders), the learner's own subfolders kept inside it. The participant id is the
  roster's ``lms_id``.

A file is matched by its LMS id. Only a learner whose roster row has no ``lms_id`` is matched by name (compared as
:func:`~transformer_course.grading.roster.comparable_name` spells it, so a Chinese name works): a file whose LMS id
is on nobody's row is never credited to a learner whose row has one (two people may share a name, and a display
name is the user's to edit). A file that matches nobody, or more than one learner, is reported by name and graded
nowhere — never guessed.

Every file of the download is considered, and only what is graded is read: of a learner's files, the notebooks the
assignment names (the latest resubmission of each), or their one notebook under another name. A learner whose files
hold no notebook that can be read (a zipped notebook, a damaged member of the archive, a file over the size
limit) gets a :class:`~transformer_course.grading.status.Problem`, their row's status and message; the class goes on.
The download is read, never changed: :func:`unpack` writes what it takes into a folder of the grader's, in the layout
``autograde`` reads (``<student_id>/<notebook>.ipynb``).
"""

from __future__ import annotations

import re
import stat
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from .intake import MAX_NOTEBOOK_BYTES, Refused, read_regular_file
from .roster import Student, comparable_name
from .status import Problem, Status

CANVAS_FILE = re.compile(r"(?P<name>[^_]+?)(?P<late>_LATE)?_(?P<user>\d+)_(?P<attachment>\d+)_(?P<file>.+)")
# Moodle before 4.1 ends the prefix with "_"; 4.1 and later name the learner's folder without it.
MOODLE_ENTRY = re.compile(r"(?P<name>.+?)_(?P<user>\d+)_assignsubmission_(?:file|onlinetext)(?:_(?P<file>.*))?")
RESUBMISSION = re.compile(r"(?P<stem>.+?)-(?P<number>\d+)(?P<suffix>\.ipynb)")
# Folders below a Moodle learner's own folder that are read (the learner's file manager allows subfolders).
MOODLE_DEPTH = 4
# What reading a member of a damaged archive can raise (a bad CRC, a size that lies, a method zipfile lacks).
DAMAGED = (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError, OSError)


@dataclass
class Unpacked:
    """What :func:`unpack` took from a download."""

    students: dict[str, list[str]] = field(default_factory=dict)  # student id -> the download's files taken
    late: set[str] = field(default_factory=set)  # students whose file the LMS marked late
    unmatched: list[str] = field(default_factory=list)  # "file: why", graded nowhere
    problems: dict[str, Problem] = field(default_factory=dict)  # student id -> why nothing of theirs can be graded


@dataclass(frozen=True)
class _Entry:
    """One file of the download, as its name says: whose it is, which file, and how to read it."""

    name: str  # as the download gives it
    user: str
    learner_name: str
    file: str  # the learner's own file name (Moodle keeps their subfolders: week1/attention.ipynb)
    late: bool
    read: Callable[[], bytes]
    attachment: int = 0  # Canvas's id of the file handed in: a later upload has a larger one

    @property
    def notebook(self) -> tuple[str, int]:
        """(the notebook's name, which resubmission): Canvas adds ``-1``, ``-2``… to a file handed in again."""
        base = self.file.rsplit("/", 1)[-1]
        match = RESUBMISSION.fullmatch(base)
        return (base, 0) if match is None else (match["stem"] + match["suffix"], int(match["number"]))


def unpack(source: Path, lms: str, roster: dict[str, Student], notebooks: list[str], target: Path) -> Unpacked:
    """Take the notebooks of an LMS download (a folder or a zip) into ``target/<student_id>/<notebook>``.

    Args:
        source: the download, as the LMS gave it; only read.
        lms: ``"canvas"`` or ``"moodle"``.
        roster: the class, by student id.
        notebooks: the assignment's notebook file names (``attention.ipynb``): another file name is taken only
            where the learner sent a single notebook.
        target: a new folder of the grader's (made even when nobody's file is in the download).
    """
    target.mkdir(parents=True, exist_ok=True)
    with _opened(Path(source)) as entries:
        return _unpacked(entries, lms, roster, notebooks, target)


def _unpacked(
    entries: Iterator[tuple[str, Callable[[], bytes]]],
    lms: str,
    roster: dict[str, Student],
    notebooks: list[str],
    target: Path,
) -> Unpacked:
    parse = {"canvas": _canvas_entry, "moodle": _moodle_entry}[lms]
    unpacked = Unpacked()
    by_student: dict[str, list[_Entry]] = {}
    for name, read in entries:
        entry = parse(name, read)
        if entry is None:
            unpacked.unmatched.append(f"{name}: not a file name {lms.title()} gives a submission")
            continue
        student, why = _match(entry, roster)
        if student is None:
            unpacked.unmatched.append(f"{name}: {why}")
            continue
        by_student.setdefault(student.student_id, []).append(entry)
    for student_id, entries in sorted(by_student.items()):
        if any(entry.late for entry in entries):
            unpacked.late.add(student_id)
        chosen = _chosen(entries, notebooks)
        if not chosen:
            handed_in = ", ".join(sorted(entry.file for entry in entries)[:10])
            more = f" and {len(entries) - 10} more" if len(entries) > 10 else ""
            message = f"handed in {handed_in}{more}: no Jupyter notebook (.ipynb) of {', '.join(notebooks)} among them"
            unpacked.problems[student_id] = Problem(Status.INVALID_NOTEBOOK, message)
            continue
        problem = _take(chosen, target / student_id)
        if problem is not None:
            unpacked.problems[student_id] = problem
        else:
            unpacked.students[student_id] = [entry.name for entry in chosen.values()]
    return unpacked


def _chosen(entries: list[_Entry], notebooks: list[str]) -> dict[str, _Entry]:
    """file name in the folder autograde reads -> the entry taken: the latest of each notebook the assignment names,
    or the learner's one notebook under another name; nothing where neither is there."""
    latest: dict[str, tuple[tuple, _Entry]] = {}
    for entry in entries:
        notebook, order = entry.notebook
        if notebook.endswith(".ipynb"):
            rank = (order, entry.attachment, entry.name)
            if notebook not in latest or rank > latest[notebook][0]:
                latest[notebook] = (rank, entry)
    expected = {name: latest[name][1] for name in notebooks if name in latest}
    if expected or len(latest) != 1 or len(notebooks) != 1:
        return expected
    ((_, entry),) = latest.values()
    return {entry.notebook[0]: entry}


def _take(chosen: dict[str, _Entry], folder: Path) -> Problem | None:
    """Read the chosen entries into ``folder``; the learner's problem where one cannot be read (nothing is written)."""
    contents = {}
    for file_name, entry in chosen.items():
        try:
            contents[file_name] = entry.read()
        except Refused as refusal:
            return Problem(refusal.status, f"{entry.name}: {refusal.message}")
        except DAMAGED as error:
            return Problem(Status.INVALID_NOTEBOOK, f"{entry.name}: damaged in the download ({error}): not read")
    folder.mkdir(parents=True, exist_ok=True)
    for file_name, content in contents.items():
        (folder / file_name).write_bytes(content)
    return None


@contextmanager
def _opened(source: Path) -> Iterator[Iterator[tuple[str, Callable[[], bytes]]]]:
    """(name, read) of every file of the download, readable until the block ends: a zip's members, or a folder's files
    and, a few levels down, its folders' files (as Moodle makes them), named ``folder/file``. A link is given as a
    file, which reading refuses."""
    if source.is_file() and zipfile.is_zipfile(source):
        with zipfile.ZipFile(source) as archive:
            yield (
                (member.filename.replace("\\", "/"), lambda member=member: _read_member(archive, member))
                for member in archive.infolist()
                if not member.is_dir()
            )
        return
    if not source.is_dir():
        raise NotADirectoryError(f"the download {source} is neither a folder nor a zip file")
    yield _folder_entries(source, "", MOODLE_DEPTH + 1)


def _folder_entries(folder: Path, prefix: str, depth: int) -> Iterator[tuple[str, Callable[[], bytes]]]:
    for path in sorted(folder.iterdir()):
        if depth > 0 and stat.S_ISDIR(path.lstat().st_mode):
            yield from _folder_entries(path, f"{prefix}{path.name}/", depth - 1)
        else:
            yield f"{prefix}{path.name}", lambda path=path: read_regular_file(path)


def _read_member(archive: zipfile.ZipFile, member: zipfile.ZipInfo) -> bytes:
    if member.file_size > MAX_NOTEBOOK_BYTES:
        raise Refused(Status.REFUSED, f"larger than {MAX_NOTEBOOK_BYTES // 2**20} MB: not read")
    with archive.open(member) as file:
        content = file.read(MAX_NOTEBOOK_BYTES + 1)
    if len(content) > MAX_NOTEBOOK_BYTES:
        raise Refused(Status.REFUSED, f"larger than {MAX_NOTEBOOK_BYTES // 2**20} MB: not read")
    return content


def _canvas_entry(name: str, read: Callable[[], bytes]) -> _Entry | None:
    match = CANVAS_FILE.fullmatch(name.rsplit("/", 1)[-1])
    if match is None:
        return None
    late = bool(match["late"])
    return _Entry(name, match["user"], match["name"], match["file"], late, read, int(match["attachment"]))


def _moodle_entry(name: str, read: Callable[[], bytes]) -> _Entry | None:
    """Moodle's prefix on the learner's folder (``Jane Doe_48213_assignsubmission_file_/week1/attention.ipynb``) or on
    the file itself (``Jane Doe_48213_assignsubmission_file_attention.ipynb``)."""
    first, _, rest = name.partition("/")
    match = MOODLE_ENTRY.fullmatch(first)
    if match is None:
        return None
    file_name = "/".join(part for part in (match["file"] or "", rest) if part)
    if not file_name:
        return None
    return _Entry(name, match["user"], match["name"], file_name, False, read)


def _match(entry: _Entry, roster: dict[str, Student]) -> tuple[Student | None, str]:
    """The roster's student for a download's entry, by LMS id, else by name among those with no LMS id; or None
    and why."""
    by_id = [student for student in roster.values() if student.lms_id and student.lms_id == entry.user]
    if len(by_id) == 1:
        return by_id[0], ""
    if len(by_id) > 1:
        return None, f"LMS id {entry.user} is on the roster {len(by_id)} times"
    wanted = comparable_name(entry.learner_name)
    by_name = [student for student in roster.values() if wanted and wanted in _spellings(student.name)]
    without_id = [student for student in by_name if not student.lms_id]
    if len(without_id) == 1:
        return without_id[0], ""
    if len(without_id) > 1:
        return None, f"{len(without_id)} students on the roster are called {entry.learner_name!r}: not guessed"
    if by_name:
        others = ", ".join(f"{student.student_id} has LMS id {student.lms_id}" for student in by_name)
        return None, f"LMS id {entry.user} is on no roster row, and {others}: not credited to another user's row"
    return None, f"nobody on the roster has LMS id {entry.user} or the name {entry.learner_name!r}"


def _spellings(name: str) -> set[str]:
    """A roster name as an LMS may write it: as it is, and family name first (Canvas's ``doejane``)."""
    words = name.split()
    forms = {comparable_name(name)}
    if len(words) > 1:
        forms.add(comparable_name(" ".join([words[-1], *words[:-1]])))
    return forms
