"""Files written whole or not at all: every record the course keeps, by training and by grading alike.

A record (a checkpoint, a run's ``history.json``, its curves, the book's records, the grader's run record) is
written to a temporary file beside it, flushed to disk, then renamed over the old one: ``os.replace`` is atomic on
POSIX and Windows, so a reader (a resumed run, the next grading command) sees either the old file or the new one,
never half a file, even if the process is killed while writing. Nothing here imports torch: the grading commands
write their records with it too.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO


def write_atomically(path: str | Path, write: Callable[[BinaryIO], None]) -> Path:
    """Call ``write(file)`` on a temporary file beside ``path``, then rename it to ``path``; an interruption leaves
    the previous file whole. Returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(descriptor, "wb") as file:
            write(file)
            file.flush()
            os.fsync(file.fileno())  # on disk before the rename makes it visible
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


def write_text_atomically(path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically (:func:`write_atomically`); returns the path."""
    return write_atomically(path, lambda file: file.write(text.encode("utf-8")))
