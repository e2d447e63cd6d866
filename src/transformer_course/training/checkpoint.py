"""Checkpoints: what a run's checkpoint holds, where it is kept, how it is written and read back.

A run's checkpoint is one :class:`Checkpoint`, a typed record with a format version: every writer
and reader of ``checkpoint.pt`` goes through it, and :meth:`Checkpoint.from_dict` reads the layouts
that earlier versions of the package wrote (see :data:`FORMAT_VERSION`).

Every file of tensors (:func:`save_tensors`: checkpoints, the book's averaged model, the final
project's run) is written whole or not at all, as every record of the course is
(:func:`transformer_course.atomic_files.write_atomically`): a reader, or a resumed run, sees either the
old file or the new one, never half a file, even if the process is killed while saving.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import nn

from ..atomic_files import write_atomically
from ..data import TranslationTask, task_from_dict
from ..device import resolve_device
from .config import ModelConfig, TrainingConfig

# The layout of checkpoint.pt, counted up whenever it changes; Checkpoint.from_dict reads every one.
#   0  (no "format_version", no "provenance"): the first checkpoints, before the run's provenance was kept;
#      a vocabulary's "unit" was its "split", ModelConfig's "max_positions" its "max_len"
#   1  (no "format_version"): with "provenance" (the command lines, the machine, the date)
#   2  "format_version" itself; otherwise as 1
#   3  "average": the moving average of the weights (.averaging), or None for a run that keeps none
FORMAT_VERSION = 3
CHECKPOINT_NAME = "checkpoint.pt"
# Which of a checkpoint's weights a trained model is built with (Checkpoint.trained_model).
WEIGHTS = ("average", "last")


def run_checkpoint(out_dir: str | Path) -> Path:
    """The checkpoint that a run writes into its directory ``out_dir``."""
    return Path(out_dir) / CHECKPOINT_NAME


def checkpoint_path(location: str | Path) -> Path:
    """A checkpoint named on the command line: the file itself, or the one a run's directory holds."""
    location = Path(location)
    return run_checkpoint(location) if location.is_dir() else location


class CheckpointError(ValueError):
    """A checkpoint that cannot be used as asked: written by a newer version of the package, or holding
    a run that cannot continue with the task or model given. The message says which setting, and why."""


def save_tensors(values: dict[str, Any], path: str | Path) -> Path:
    """Write ``values`` (tensors, numbers, strings, lists and dicts of them) with ``torch.save`` to
    ``path`` atomically; returns the path."""
    return write_atomically(path, lambda file: torch.save(values, file))


def load_tensors(path: str | Path, map_location: torch.device | str = "cpu") -> dict[str, Any]:
    """Read a file written by :func:`save_tensors` (tensors only, no pickled code)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no checkpoint at {path}")
    return torch.load(path, map_location=map_location, weights_only=True)


@dataclass
class Progress:
    """How far a run has come: optimiser updates, the position in the epochs, wall-clock seconds."""

    step: int = 0
    epoch: int = 0
    batch_in_epoch: int = 0
    seconds: float = 0.0


@dataclass(eq=False)  # tensors do not compare as one truth value
class Checkpoint:
    """Everything a run's ``checkpoint.pt`` holds: what continues the run, and what describes it.

    Attributes:
        model_config, training_config: the model's size and how it is trained.
        task: the task's description (:meth:`TranslationTask.to_dict`), with its tokenizers: a
            resumed run must not retrain them; :meth:`rebuild_task` makes the task again.
        model, optimizer, scheduler, scaler: their ``state_dict()`` (``scaler``: empty when written
            without a gradient scaler, in float32 or bfloat16).
        progress: step, epoch, batch within the epoch, seconds.
        history: ``{"train": [...], "validation": [...]}``, the points of the learning curves.
        random_states: every process's random-number generator states, in rank order.
        provenance: the command lines, the machine, the device, the processes, the date.
        average: the ``state_dict()`` of the run's moving average of the weights
            (:func:`~.averaging.averaged_model`), or ``None`` when the run keeps none.
    """

    model_config: ModelConfig
    training_config: TrainingConfig
    task: dict
    model: dict[str, torch.Tensor] = field(repr=False)
    optimizer: dict = field(repr=False)
    scheduler: dict
    scaler: dict
    progress: Progress
    history: dict = field(repr=False)
    random_states: list = field(repr=False)
    provenance: dict = field(default_factory=dict)
    average: dict[str, torch.Tensor] | None = field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """The checkpoint as plain data, the way ``checkpoint.pt`` keeps it."""
        values = {item.name: getattr(self, item.name) for item in dataclasses.fields(self)}
        values.update(
            model_config=self.model_config.to_dict(),
            training_config=self.training_config.to_dict(),
            progress=dataclasses.asdict(self.progress),
        )
        return {"format_version": FORMAT_VERSION, **values}

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> Checkpoint:
        """The checkpoint that ``values`` (read from a file) describes, in any layout of :data:`FORMAT_VERSION`.

        Raises:
            CheckpointError: written by a newer version of the package, in a layout this one does not know.
        """
        version = values.get("format_version", 1 if "provenance" in values else 0)
        if version > FORMAT_VERSION:
            raise CheckpointError(
                f"the checkpoint has format version {version}, newer than this package's {FORMAT_VERSION}: "
                "upgrade transformer-course to read it"
            )
        names = {item.name for item in dataclasses.fields(cls)}
        values = {"provenance": {}, **{name: value for name, value in values.items() if name in names}}  # 0: none
        if version == 0:
            values["task"] = _task_of_version_0(values["task"])
        values.update(
            model_config=ModelConfig.from_dict(values["model_config"]),  # renamed settings: see ModelConfig.from_dict
            training_config=TrainingConfig.from_dict(values["training_config"]),
            progress=Progress(**values["progress"]),
        )
        return cls(**values)

    def save(self, path: str | Path) -> Path:
        """Write the checkpoint to ``path`` atomically; returns the path."""
        return save_tensors(self.to_dict(), path)

    @classmethod
    def load(cls, path: str | Path, map_location: torch.device | str = "cpu") -> Checkpoint:
        """Read the checkpoint file ``path`` (tensors only, no pickled code)."""
        return cls.from_dict(load_tensors(path, map_location))

    def rebuild_task(self) -> TranslationTask:
        """The run's task, with the tokenizers it was trained with (retraining a BPE vocabulary could
        change the token ids under the trained model)."""
        return task_from_dict(self.task)

    def trained_model(self, task: TranslationTask, weights: str = "average") -> nn.Module:
        """The model, built from :attr:`model_config` for ``task``'s vocabularies, with the saved weights.

        Args:
            weights: ``"average"``: the run's moving average of its weights, what the run delivers
                (the last weights when it keeps no average); ``"last"``: the weights of the last update.
        """
        if weights not in WEIGHTS:
            raise ValueError(f"weights must be one of {WEIGHTS}, got {weights!r}")
        model = self.model_config.build(len(task.source_tokenizer), len(task.target_tokenizer))
        if weights == "average" and self.average is not None:
            # AveragedModel's state: the copy of the model under "module.", and its count of updates
            model.load_state_dict(
                {
                    name.removeprefix("module."): value
                    for name, value in self.average.items()
                    if name.startswith("module.")
                }
            )
        else:
            model.load_state_dict(self.model)
        return model


def _task_of_version_0(description: dict) -> dict:
    """A task's description as version 0 wrote it, with a vocabulary's ``unit`` called its ``split``."""
    tokenizers = {
        side: {("unit" if key == "split" else key): value for key, value in tokenizer.items()}
        for side, tokenizer in description["tokenizers"].items()
    }
    return {**description, "tokenizers": tokenizers}


def save_checkpoint(checkpoint: Checkpoint, path: str | Path) -> Path:
    """Write ``checkpoint`` to ``path`` atomically; returns the path."""
    return checkpoint.save(path)


def load_checkpoint(path: str | Path, map_location: torch.device | str = "cpu") -> Checkpoint:
    """Read the checkpoint that :func:`save_checkpoint` wrote to ``path`` (or an older version)."""
    return Checkpoint.load(path, map_location)


def load_trained_model(
    path: str | Path, device: torch.device | str | None = None, weights: str = "average"
) -> tuple[nn.Module, TranslationTask, Checkpoint]:
    """Rebuild the model and the task of a checkpoint (a file, or a run's directory).

    Args:
        weights: the run's average of its weights (``"average"``, the last ones if it keeps none) or
            its last weights (``"last"``): :meth:`Checkpoint.trained_model`.

    Returns:
        ``(model, task, checkpoint)``: the model in eval mode on ``device`` (``None`` or ``"auto"``:
        a GPU if there is one), the task with the tokenizers it was trained with, and the :class:`Checkpoint`.
    """
    device = resolve_device(device)
    checkpoint = load_checkpoint(checkpoint_path(path), map_location=device)
    task = checkpoint.rebuild_task()
    return checkpoint.trained_model(task, weights).to(device).eval(), task, checkpoint
