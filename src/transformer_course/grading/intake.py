"""Intake: what a submission folder holds, read as data and never trusted, before anything runs it.

Everything in a submission is the learner's: the folder's name, the files in it, every byte of the
notebook. Intake takes from it only what grading needs, in a form that cannot surprise the steps
after it:

* **the student id** is the folder's name, and must match :data:`STUDENT_ID_RULE` (ASCII letters and
  digits, then also ``.``, ``_``, ``-`` and ``@``, at most 64 characters). It reaches nbgrader's
  command line, file paths, the gradebook and ``grades.csv``; anything else is refused for that
  folder alone, with a message that gives the rule;
* **files** are opened only when they are regular files: a symbolic link, a directory, a FIFO or a
  device where the notebook (or the folder) should be is refused without being followed or read,
  and so is a file larger than :data:`MAX_NOTEBOOK_BYTES`;
* **the notebook** is rebuilt from the fields a notebook needs (cell type, id, source, nbgrader's
  metadata, tags) — outputs, attachments and any other metadata the learner's file carries are
  dropped — and nbgrader's metadata is kept only where it has nbgrader's shape; a cell whose
  metadata was lost or mangled gets it back from the released notebook, found by the cell's id.

Each refusal is a :class:`Refused` with the status and the message the submission's row of
``grades.csv`` shows; the class goes on.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import nbformat

STUDENT_ID_RULE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")
STUDENT_ID_HELP = (
    "a student id is 1 to 64 ASCII letters, digits, '.', '_', '-' or '@', starting with a letter or a digit"
)
MAX_NOTEBOOK_BYTES = 20 * 2**20  # the largest honest notebook of the course, with outputs, is well under 1 MB
MAX_TIMESTAMP_BYTES = 200

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

    def __init__(self, status: str, message: str):
        super().__init__(message)
        self.status, self.message = status, message


def student_folders(submissions: Path) -> list[str]:
    """The names of the entries of ``submissions`` that may be students (hidden entries are skipped)."""
    return sorted(entry.name for entry in os.scandir(submissions) if not entry.name.startswith("."))


def check_student_id(name: str) -> None:
    """Refuse a folder name that is not a student id (it would reach command lines, paths and spreadsheets)."""
    if not STUDENT_ID_RULE.fullmatch(name):
        raise Refused("invalid_student_id", f"the folder name {name!r} is not a student id: {STUDENT_ID_HELP}")


def real_directory(path: Path, what: str) -> Path:
    """``path`` if it is a directory itself (not a link to one); refused otherwise."""
    kind = _kind(path)
    if kind != "directory":
        raise Refused("refused", f"{what} is {kind}, not a folder: not read")
    return path


def read_regular_file(path: Path, limit: int = MAX_NOTEBOOK_BYTES) -> bytes:
    """The bytes of ``path``, which must be a regular file of at most ``limit`` bytes, read without
    following a link (``O_NOFOLLOW``) and without blocking on a FIFO (``O_NONBLOCK``)."""
    kind = _kind(path)
    if kind != "a regular file":
        raise Refused("refused", f"{path.name} is {kind}, not a notebook file: not read")
    descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(descriptor, "rb") as file:
        if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):  # replaced between the look and the open
            raise Refused("refused", f"{path.name} is not a regular file: not read")
        content = file.read(limit + 1)
    if len(content) > limit:
        raise Refused("refused", f"{path.name} is larger than {limit // 2**20} MB: not read")
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
        raise Refused("invalid_notebook", f"{name}: nested too deeply to be a notebook") from None
    except (UnicodeDecodeError, ValueError) as error:
        raise Refused("invalid_notebook", f"{name}: {_first_line(error)}") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("cells"), list):
        raise Refused("invalid_notebook", f"{name}: not a Jupyter notebook (no list of cells)")
    if raw.get("nbformat") != 4:
        raise Refused("invalid_notebook", f"{name}: notebook format {raw.get('nbformat')!r}; version 4 is read")
    cells = [_rebuilt_cell(cell, index, name) for index, cell in enumerate(raw["cells"])]
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    try:
        nbformat.validate(notebook)
    except nbformat.ValidationError as error:
        raise Refused("invalid_notebook", f"{name}: {_first_line(error)}") from None
    return json.loads(json.dumps(notebook))


def _rebuilt_cell(cell, index: int, name: str) -> dict:
    if not isinstance(cell, dict) or cell.get("cell_type") not in CELL_TYPES:
        raise Refused("invalid_notebook", f"{name}: cell {index + 1} is not a code, markdown or raw cell")
    source = cell.get("source", "")
    if isinstance(source, list) and all(isinstance(line, str) for line in source):
        source = "".join(source)
    if not isinstance(source, str):
        raise Refused("invalid_notebook", f"{name}: the source of cell {index + 1} is not text")
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


def read_timestamp(path: Path) -> str | None:
    """The submission time in nbgrader's ``timestamp.txt``, if there is one that can be a time stamp."""
    if _kind(path) == "missing":
        return None
    try:
        text = read_regular_file(path, MAX_TIMESTAMP_BYTES).decode("utf-8").strip()
    except (Refused, UnicodeDecodeError, OSError):
        return None
    return text if re.fullmatch(r"[0-9T:. +\-]{1,64}", text) else None


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
