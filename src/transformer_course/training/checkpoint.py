"""Checkpoints: where a run keeps one, how it is written, and how a trained model comes back.

A checkpoint (and any other file a run keeps, such as a record) is written to a temporary file,
then renamed over the old one: ``os.replace`` is atomic on POSIX and Windows, so a reader (or a
resumed run) sees either the old file or the new one, never half a file, even if the process is
killed while saving.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import torch
from torch import nn

from ..data import TranslationTask, task_from_dict
from ..device import resolve_device
from .config import ModelConfig

CHECKPOINT_NAME = "checkpoint.pt"


def run_checkpoint(out_dir: str | Path) -> Path:
    """The checkpoint that a run writes into its directory ``out_dir``."""
    return Path(out_dir) / CHECKPOINT_NAME


def checkpoint_path(location: str | Path) -> Path:
    """A checkpoint named on the command line: the file itself, or the one a run's directory holds."""
    location = Path(location)
    return run_checkpoint(location) if location.is_dir() else location


def write_atomically(path: str | Path, write: Callable[[BinaryIO], None]) -> Path:
    """Call ``write(file)`` on a temporary file beside ``path``, then rename it to ``path``.

    Used for every file a run keeps (checkpoints, records): an interruption leaves the previous
    file whole. Returns the path.
    """
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


def save_checkpoint(state: dict[str, Any], path: str | Path) -> Path:
    """Write ``state`` with ``torch.save`` to ``path`` atomically; returns the path."""
    return write_atomically(path, lambda file: torch.save(state, file))


def load_checkpoint(path: str | Path, map_location: torch.device | str = "cpu") -> dict[str, Any]:
    """Read a checkpoint written by :func:`save_checkpoint` (tensors only, no pickled code)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no checkpoint at {path}")
    return torch.load(path, map_location=map_location, weights_only=True)


def load_trained_model(
    path: str | Path, device: torch.device | str | None = None
) -> tuple[nn.Module, TranslationTask, dict]:
    """Rebuild the model and the task of a checkpoint (a file, or a run's directory).

    Returns:
        ``(model, task, checkpoint)``: the model in eval mode on ``device`` (``None`` or ``"auto"``:
        a GPU if there is one), the task with the tokenizers it was trained with, and the checkpoint dict.
    """
    device = resolve_device(device)
    state = load_checkpoint(checkpoint_path(path), map_location=device)
    task = task_from_dict(state["task"])
    model = ModelConfig.from_dict(state["model_config"]).build(len(task.source_tokenizer), len(task.target_tokenizer))
    model.load_state_dict(state["model"])
    return model.to(device).eval(), task, state
