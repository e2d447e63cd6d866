"""Checkpoints that survive a crash: written to a temporary file, then renamed over the old one.

``os.replace`` is atomic on POSIX and Windows: a reader (or a resumed run) sees either the old
checkpoint or the new one, never half a file, even if the process is killed while saving.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import torch


def save_checkpoint(state: dict[str, Any], path: str | Path) -> Path:
    """Write ``state`` with ``torch.save`` to ``path`` atomically; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(descriptor, "wb") as file:
            torch.save(state, file)
            file.flush()
            os.fsync(file.fileno())  # on disk before the rename makes it visible
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


def load_checkpoint(path: str | Path, map_location: torch.device | str = "cpu") -> dict[str, Any]:
    """Read a checkpoint written by :func:`save_checkpoint` (tensors only, no pickled code)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no checkpoint at {path}")
    return torch.load(path, map_location=map_location, weights_only=True)
