"""Intake: what a submission folder holds, read as data and never trusted, before anything runs it.

Everything in a submission is the learner's: the folder's name, the files in it, every byte of the
notebook. Intake takes from it only what grading needs, in a form that cannot surprise the steps
after it:

* **the student id** is the folder's name, and must follow the rule of
  :mod:`transformer_course.grading.student_ids` (ASCII letters and digits, then also ``.``, ``_``, ``-`` and ``@``,
  at most 64 characters). It reaches nbgrader's command line, file paths, the gradebook and ``grades.csv``; anything
  else is refused for that folder alone, with a message that gives the rule;
* **files** are opened only when they are regular files: a symbolic link, a directory, a FIFO or a
  device where the notebook (or the folder) should be is refused without being followed or read,
  and so is a file larger than :data:`MAX_NOTEBOOK_BYTES`;
* **the notebook** is rebuilt from the fields a notebook needs (cell type, id, source, nbgrader's
  metadata, tags) — outputs, attachments and any other metadata the learner's file carries are
  dropped — and nbgrader's metadata is kept only where it has nbgrader's shape; a cell whose
  metadata was lost or mangled gets it back from the released notebook, found by the cell's id;
* **the submission time** is nbgrader's ``timestamp.txt``, in every form ``nbgrader submit`` and
  ``collect`` write it (``2026-11-20 12:00:00.000000 UTC``, without the zone, with an offset or a
  named zone), and nbgrader's ``submission_secret.txt`` is kept with it (``release_feedback`` needs
  both).

:func:`take_in` does all of it for one student's folder and returns a :class:`Submission`: the
rebuilt notebooks travel on in memory, and **nothing in the folder is changed or removed** — the
folder may be nbgrader's own ``submitted/``, which is then graded in place. What was handed in is kept, byte
for byte, in nbgrader's ``submitted/<student_id>/<assignment>/`` by
:func:`transformer_course.grading.kept_submissions.keep_submitted`, which grading calls once the submission is to
be graded.

Each refusal is a :class:`Refused` with the status and the message the submission's row of
``grades.csv`` shows; the class goes on.
"""

from __future__ import annotations

import copy
import json
import os
import re
import stat
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import nbformat

from .lateness import parse_submission_time
from .nbgrader_cells import answer_sources, grade_id, nbgrader_metadata, source_text
from .status import Status
from .student_ids import STUDENT_ID_HELP, is_student_id
from .submission import Submission

MAX_NOTEBOOK_BYTES = 20 * 2**20  # the largest honest notebook of the course, with outputs, is well under 1 MB
# What a notebook may hold beyond the released one (a learner adds cells of scratch work and notes): every later
# step's work grows with the cells and the Markdown, and rendering 20,000 small cells took minutes.
EXTRA_CELLS, CELLS_PER_RELEASED_CELL = 200, 3
EXTRA_MARKDOWN_CHARACTERS, MARKDOWN_PER_RELEASED_CHARACTER = 200_000, 4
MAX_TIMESTAMP_BYTES = 200
TIMESTAMP_FILE, SECRET_FILE = "timestamp.txt", "submission_secret.txt"  # nbgrader's names

# nbgrader's cell metadata, field by field, and the types it may have.
NBGRADER_FIELDS = {
    "grade_id": str,
    "points": (int, float),
    "solution": bool,
    "grade": bool,
    "locked": bool,
    "task": bool,
    "schema_version": int,
    "checksum": str,
    "cell_type": str,
}
CELL_TYPES = ("code", "markdown", "raw")


class Refused(Exception):
    """A submission that cannot be graded: ``status`` and ``message`` for its row of ``grades.csv``."""

    def __init__(self, status: Status, message: str):
        super().__init__(message)
        self.status, self.message = status, message


def student_folders(submissions: Path) -> list[str]:
    """The names of the entries of ``submissions`` that may be students (hidden entries are skipped)."""
    return sorted(entry.name for entry in os.scandir(submissions) if not entry.name.startswith("."))


def check_student_id(name: str) -> None:
    """Refuse a folder name that is not a student id (it would reach command lines, paths and spreadsheets)."""
    if not is_student_id(name):
        raise Refused(Status.INVALID_STUDENT_ID, f"the folder name {name!r} is not a student id: {STUDENT_ID_HELP}")


def real_directory(path: Path, what: str) -> Path:
    """``path`` if it is a directory itself (not a link to one); refused otherwise."""
    kind = _kind(path)
    if kind != "directory":
        raise Refused(Status.REFUSED, f"{what} is {kind}, not a folder: not read")
    return path


def read_regular_file(path: Path, limit: int = MAX_NOTEBOOK_BYTES) -> bytes:
    """The bytes of ``path``, which must be a regular file of at most ``limit`` bytes, read without
    following a link (``O_NOFOLLOW``) and without blocking on a FIFO (``O_NONBLOCK``)."""
    kind = _kind(path)
    if kind != "a regular file":
        raise Refused(Status.REFUSED, f"{path.name} is {kind}, not a notebook file: not read")
    descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(descriptor, "rb") as file:
        if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):  # replaced between the look and the open
            raise Refused(Status.REFUSED, f"{path.name} is not a regular file: not read")
        content = file.read(limit + 1)
    if len(content) > limit:
        raise Refused(Status.REFUSED, f"{path.name} is larger than {limit // 2**20} MB: not read")
    return content


def parse_notebook(content: bytes, name: str) -> dict:
    """A notebook rebuilt from ``content``'s cells: types, ids, sources, well-formed nbgrader metadata, tags.

    Raises:
        Refused: ``invalid_notebook`` when ``content`` is not a Jupyter notebook (not UTF-8 JSON, nested
            too deep to read, no list of cells, a source that is not text).
    """
    try:
        raw = json.loads(content.decode("utf-8"))
    except RecursionError:
        raise Refused(Status.INVALID_NOTEBOOK, f"{name}: nested too deeply to be a notebook") from None
    except (UnicodeDecodeError, ValueError) as error:
        raise Refused(Status.INVALID_NOTEBOOK, f"{name}: {_first_line(error)}") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("cells"), list):
        raise Refused(Status.INVALID_NOTEBOOK, f"{name}: not a Jupyter notebook (no list of cells)")
    if raw.get("nbformat") != 4:
        raise Refused(Status.INVALID_NOTEBOOK, f"{name}: notebook format {raw.get('nbformat')!r}; version 4 is read")
    cells = [_rebuilt_cell(cell, index, name) for index, cell in enumerate(raw["cells"])]
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    try:
        nbformat.validate(notebook)
    except nbformat.ValidationError as error:
        raise Refused(Status.INVALID_NOTEBOOK, f"{name}: {_first_line(error)}") from None
    return json.loads(json.dumps(notebook))


def _rebuilt_cell(cell, index: int, name: str) -> dict:
    if not isinstance(cell, dict) or cell.get("cell_type") not in CELL_TYPES:
        raise Refused(Status.INVALID_NOTEBOOK, f"{name}: cell {index + 1} is not a code, markdown or raw cell")
    source = cell.get("source", "")
    if isinstance(source, list) and all(isinstance(line, str) for line in source):
        source = "".join(source)
    if not isinstance(source, str):
        raise Refused(Status.INVALID_NOTEBOOK, f"{name}: the source of cell {index + 1} is not text")
    metadata = cell.get("metadata") if isinstance(cell.get("metadata"), dict) else {}
    kept: dict = {}
    nbgrader = _nbgrader_metadata(metadata.get("nbgrader"))
    if nbgrader is not None:
        kept["nbgrader"] = nbgrader
    tags = metadata.get("tags")
    if isinstance(tags, list) and all(isinstance(tag, str) and len(tag) <= 100 for tag in tags[:50]):
        kept["tags"] = tags[:50]
    rebuilt = {"cell_type": cell["cell_type"], "metadata": kept, "source": source}
    cell_id = cell.get("id")
    if isinstance(cell_id, str) and re.fullmatch(r"[A-Za-z0-9_-]{1,64}", cell_id):
        rebuilt["id"] = cell_id
    else:
        rebuilt["id"] = f"cell-{index + 1}"
    if cell["cell_type"] == "code":
        rebuilt.update(outputs=[], execution_count=None)
    return rebuilt


def _nbgrader_metadata(value) -> dict | None:
    """nbgrader's metadata of a cell when every field it has is of nbgrader's type; None otherwise."""
    if not isinstance(value, dict) or not isinstance(value.get("grade_id"), str):
        return None
    for key, kind in NBGRADER_FIELDS.items():
        if key in value and (not isinstance(value[key], kind) or (kind is not bool and isinstance(value[key], bool))):
            return None
    return {key: value[key] for key in NBGRADER_FIELDS if key in value}


def read_timestamp(path: Path) -> datetime | None:
    """The submission time in nbgrader's ``timestamp.txt`` (in UTC), if the file is there and holds a time.

    nbgrader writes ``%Y-%m-%d %H:%M:%S.%f %Z`` (``2026-11-20 12:00:00.000000 UTC``, or the zone
    ``Exchange.timezone`` names); older versions and hand-made files leave the zone out (read as UTC)
    or give an ISO offset (``2026-11-20T13:00:00+01:00``).
    """
    if _kind(path) == "missing":
        return None
    try:
        return parse_submission_time(read_regular_file(path, MAX_TIMESTAMP_BYTES).decode("utf-8"))
    except (Refused, UnicodeDecodeError, OSError, ValueError, OverflowError):
        return None


def read_secret(path: Path) -> bytes | None:
    """nbgrader's ``submission_secret.txt`` as it was handed in, if it is a small regular file."""
    if _kind(path) == "missing":
        return None
    try:
        content = read_regular_file(path, MAX_TIMESTAMP_BYTES)
    except (Refused, OSError):
        return None
    return content if re.fullmatch(rb"[0-9A-Za-z_-]{1,128}\s*", content) else None


def _kind(path: Path) -> str:
    """What ``path`` is, without following it: 'a regular file', 'directory', 'a symbolic link', ..."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return "missing"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISREG(mode):
        return "a regular file"
    return "a special file (a FIFO, socket or device)"


def _first_line(error: Exception) -> str:
    text = str(error).strip()
    return text.splitlines()[0][:300] if text else type(error).__name__


@dataclass(frozen=True)
class Given:
    """What intake holds each submission against, read once per run: the released and source notebooks (by file
    name), the setup cell that release puts first, and what the review looks for (``grading.yml``)."""

    released: dict[str, dict]
    sources: dict[str, dict]
    setup_source: str
    library_implementations: list[str]


def take_in(submissions: Path, student_id: str, assignment: str, given: Given) -> Submission:
    """Check one student's folder and rebuild what it holds; whatever is wrong becomes this submission's status
    alone. Nothing in the folder is written, moved or removed."""
    try:
        return _taken_in(submissions, student_id, assignment, given)
    except Refused as refusal:
        return Submission(student_id, assignment).end(refusal.status, refusal.message)
    except Exception as error:  # noqa: BLE001  (one submission's surprise must not stop the class)
        message = f"the submission could not be read: {type(error).__name__}: {error}"
        return Submission(student_id, assignment).end(Status.ERROR, message)


def _taken_in(submissions: Path, student_id: str, assignment: str, given: Given) -> Submission:
    from .locked_cells import edited_locked_cells  # nbgrader's: imported only here, so that reading a file needs none

    check_student_id(student_id)
    folder = real_directory(submissions / student_id, f"the folder {student_id!r}")
    names = {entry.name for entry in os.scandir(folder)}
    if not any(name.endswith(".ipynb") for name in names) and assignment in names:
        # nbgrader's own <student>/<assignment>/ layout
        folder = real_directory(folder / assignment, f"{student_id}/{assignment}")
        names = {entry.name for entry in os.scandir(folder)}
    notebooks = sorted(name for name in names if name.endswith(".ipynb"))
    expected_names = sorted(given.released)
    chosen = {name: name for name in expected_names if name in names}
    if not chosen and len(notebooks) == 1 and len(expected_names) == 1:
        chosen = {expected_names[0]: notebooks[0]}  # renamed: accepted if its cells belong here
    if not chosen:
        found = ", ".join(notebooks) or "no notebook"
        message = f"expected {', '.join(expected_names)}; found {found}"
        return Submission(student_id, assignment).end(Status.MISSING, message)

    submission = Submission(
        student_id, assignment, folder=folder, library_implementations=given.library_implementations
    )
    restored_cells, restored_metadata = [], []
    for name, file_name in chosen.items():
        released = given.released[name]
        file_name, content, note = _worked_in(folder, file_name, released)
        if note:
            submission.findings.append(note)
        notebook = parse_notebook(content, file_name)
        check_size(notebook, released, file_name)
        restored_metadata += _restore_stripped_metadata(notebook, released)
        if not _answer_and_test_cells(notebook) & _answer_and_test_cells(released):
            other = ", ".join(sorted(_answer_and_test_cells(notebook))[:3]) or "no nbgrader answer or test cells"
            message = f"{file_name} has none of the answer or test cells of {assignment}/{name} (it has {other})"
            return Submission(student_id, assignment).end(Status.WRONG_ASSIGNMENT, message)
        restored_cells += edited_locked_cells(notebook, released, given.sources[name])
        _unmark_duplicate_cells(notebook)
        submission.learner_cells += _learner_cells(notebook, given.sources[name], given.setup_source)
        submission.notebooks[name] = notebook
        submission.kept[name] = content
    submission.restored_cells, submission.restored_metadata = tuple(restored_cells), tuple(restored_metadata)
    submission.submitted_at = read_timestamp(folder / TIMESTAMP_FILE)
    if submission.submitted_at is not None:
        submission.kept[TIMESTAMP_FILE] = read_regular_file(folder / TIMESTAMP_FILE, MAX_TIMESTAMP_BYTES)
    secret = read_secret(folder / SECRET_FILE)
    if secret is not None:
        submission.kept[SECRET_FILE] = secret
    return submission


def _worked_in(folder: Path, file_name: str, released: dict) -> tuple[str, bytes, str]:
    """The notebook the learner worked in: ``file_name``, or its translation in a language folder beside it.

    nbgrader's exchange hands a learner the whole released folder, the Chinese notebook (``zh_CN/``) included, and
    ``submit`` sends all of it back. The notebook whose answers differ from the released ones is graded; where both
    hold work, the one changed last, and the review says so. Returns (its path in the folder, its bytes, a note).
    """
    candidates = [file_name] + [
        f"{entry.name}/{file_name}"
        for entry in sorted(os.scandir(folder), key=lambda entry: entry.name)
        if entry.is_dir(follow_symlinks=False) and _kind(Path(entry.path) / file_name) == "a regular file"
    ]
    if len(candidates) == 1:
        return file_name, read_regular_file(folder / file_name), ""
    worked = []
    for candidate in candidates:
        content = read_regular_file(folder / candidate)
        try:
            answered = answer_sources(parse_notebook(content, candidate)) != answer_sources(released)
        except Refused:
            answered = False
        if answered:
            worked.append((os.lstat(folder / candidate).st_mtime, candidate, content))
    if not worked:
        return file_name, read_regular_file(folder / file_name), ""
    _, chosen, content = max(worked)
    note = ""
    if len(worked) > 1:
        note = f"answers in {' and '.join(sorted(path for _, path, _ in worked))}: graded {chosen}, changed last"
    return chosen, content, note


def check_size(notebook: dict, released: dict, name: str) -> None:
    """Refuse a notebook with far more cells or Markdown than the released one (see :data:`EXTRA_CELLS`)."""
    cells, released_cells = len(notebook["cells"]), len(released.get("cells", []))
    most_cells = CELLS_PER_RELEASED_CELL * released_cells + EXTRA_CELLS
    if cells > most_cells:
        raise Refused(
            Status.REFUSED,
            f"{name} has {cells:,} cells; the released notebook has {released_cells}: at most "
            f"{most_cells:,} are graded",
        )
    markdown, released_markdown = _markdown_characters(notebook), _markdown_characters(released)
    most_markdown = MARKDOWN_PER_RELEASED_CHARACTER * released_markdown + EXTRA_MARKDOWN_CHARACTERS
    if markdown > most_markdown:
        raise Refused(
            Status.REFUSED, f"{name} has {markdown:,} characters of Markdown; at most {most_markdown:,} are graded"
        )


def _markdown_characters(notebook: dict) -> int:
    return sum(len(source_text(cell)) for cell in notebook.get("cells", []) if cell.get("cell_type") == "markdown")


def _unmark_duplicate_cells(notebook: dict) -> None:
    """Take nbgrader's metadata off every cell that repeats an earlier cell's grade_id: it is the learner's copy."""
    seen = set()
    for cell in notebook.get("cells", []):
        name = grade_id(cell)
        if name in seen:
            del cell["metadata"]["nbgrader"]
        elif name is not None:
            seen.add(name)


def _learner_cells(notebook: dict, source: dict, setup: str) -> list[tuple[str, str]]:
    """(label, source) of the code cells the learner wrote: answer cells and cells they added.

    Given cells (locked, restored by nbgrader from the source) and the setup cell that release puts
    first are not the learner's.
    """
    given = set(_nbgrader_cells(source, locked_only=True))
    cells = []
    for index, cell in enumerate(notebook.get("cells", [])):
        if cell.get("cell_type") != "code":
            continue
        name = grade_id(cell)
        text = source_text(cell)
        if name in given or (name is None and text == setup):
            continue
        cells.append((f"cell {name}" if name else f"added cell {index + 1}", text))
    return cells


def _restore_stripped_metadata(submitted: dict, released: dict) -> list[str]:
    """Give back the nbgrader metadata of cells that lost it, matching cells by their Jupyter id.

    Without it nbgrader would not know which cell holds which answer, and would put the test cells
    back at the top of the notebook, before the code they test. Returns the grade_ids restored.
    """
    present = set(_nbgrader_cells(submitted))
    by_id = {
        cell["id"]: nbgrader_metadata(cell)
        for cell in released.get("cells", [])
        if "id" in cell and grade_id(cell) is not None
    }
    restored = []
    for cell in submitted.get("cells", []):
        metadata = by_id.get(cell.get("id"))
        if metadata is None or grade_id(cell) is not None or metadata["grade_id"] in present:
            continue
        cell.setdefault("metadata", {})["nbgrader"] = copy.deepcopy(metadata)
        restored.append(metadata["grade_id"])
    return restored


def _answer_and_test_cells(notebook: dict) -> set[str]:
    """grade_ids of the cells that identify an assignment: its answers and its tests (every
    assignment has its own; headings such as ``intro`` or ``part-1`` recur in all of them)."""
    return {
        grade_id(cell)
        for cell in notebook.get("cells", [])
        if any(nbgrader_metadata(cell).get(flag) for flag in ("solution", "grade")) and grade_id(cell) is not None
    }


def _nbgrader_cells(notebook: dict, locked_only: bool = False) -> dict[str, tuple[str, str]]:
    """grade_id → (cell type, source text) of a notebook's nbgrader cells (only the locked,
    non-answer ones if asked)."""
    cells = {}
    for cell in notebook.get("cells", []):
        metadata = nbgrader_metadata(cell)
        if "grade_id" in metadata and (not locked_only or (metadata.get("locked") and not metadata.get("solution"))):
            cells[metadata["grade_id"]] = (cell.get("cell_type"), source_text(cell))
    return cells
