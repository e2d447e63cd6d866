"""What a training run is, and how its checkpoint keeps it.

A run is its settings (the task with its tokenizers, the model's size, the training recipe), how
far it has come (step, epoch, batch within the epoch, wall-clock seconds), its learning curves and
its provenance (the command lines that ran it, the machine, the date). Its checkpoint holds all of
that and the tensors that continue it: the model's and the optimiser's, the schedule's and the
gradient scaler's state, and every process's random-number generator (dropout masks depend on them).

    saved = SavedRun.read("runs/numbers")                    # the checkpoint, read once (None if absent)
    state = RunState.resume(saved, task, config, model_config)   # refuses another task or model size
    state = RunState(task, config, model_config)                 # or a new run

``train(resume=True)`` and ``transformer-course train --resume`` both continue a run this way: the
task and the model's architecture must be the checkpoint's (its dropout may change), and the
training settings are the ones given (the command fills in those not given from the checkpoint, see
:mod:`.commands`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import torch
import torch.distributed as dist

from ..data import TranslationTask
from ..device import describe_machine
from .checkpoint import Checkpoint, CheckpointError, Progress, load_checkpoint, run_checkpoint
from .config import ModelConfig, TrainingConfig
from .distributed import ProcessGroup


@dataclass
class SavedRun:
    """A run's checkpoint, read back (once) to be continued.

    Attributes:
        path: the checkpoint file.
        checkpoint: what :meth:`RunState.checkpoint` wrote.
    """

    path: Path
    checkpoint: Checkpoint = field(repr=False)

    @classmethod
    def read(cls, out_dir: str | Path) -> SavedRun | None:
        """The checkpoint a run keeps in ``out_dir``, or ``None`` if it has none yet."""
        path = run_checkpoint(out_dir)
        return cls(path, load_checkpoint(path)) if path.is_file() else None

    @property
    def task_name(self) -> str:
        return self.checkpoint.task["name"]

    @property
    def model_config(self) -> ModelConfig:
        return self.checkpoint.model_config

    @property
    def training_config(self) -> TrainingConfig:
        return self.checkpoint.training_config

    def task(self) -> TranslationTask:
        """The run's task, with the tokenizers it was trained with (:meth:`Checkpoint.rebuild_task`)."""
        return self.checkpoint.rebuild_task()


@dataclass
class RunState:
    """One training run: settings, progress, curves and provenance.

    Attributes:
        task, training_config, model_config: what is trained, how, and how large.
        step: optimiser updates done (across resumptions).
        epoch, batch_in_epoch: where in the batches of :func:`~transformer_course.data.bucketed_batches` the
            next step starts.
        seconds: wall-clock seconds of training before this process took over.
        history: ``{"train": [...], "validation": [...]}``, the points of the learning curves.
        provenance: the command lines, the machine, the device, the processes, the date.
        saved: the checkpoint this run continues (its tensors are restored by :meth:`restore`).
        saved_step: the step of the last checkpoint written or read, the last good one.
    """

    task: TranslationTask
    training_config: TrainingConfig
    model_config: ModelConfig
    step: int = 0
    epoch: int = 0
    batch_in_epoch: int = 0
    seconds: float = 0.0
    history: dict = field(default_factory=lambda: {"train": [], "validation": []})
    provenance: dict = field(default_factory=dict)
    saved: SavedRun | None = field(default=None, repr=False)
    saved_step: int | None = None

    @classmethod
    def resume(
        cls, saved: SavedRun, task: TranslationTask, training_config: TrainingConfig, model_config: ModelConfig
    ) -> RunState:
        """Continue ``saved`` with ``training_config``.

        Raises:
            CheckpointError: ``task`` is not the one ``saved`` was trained on, or ``model_config`` has
                another architecture (any setting but dropout differs); the message names each setting.
        """
        changed = saved.model_config.architecture_changes(model_config)
        if changed:
            differences = ", ".join(f"{name}: {old!r} there, {new!r} now" for name, (old, new) in changed.items())
            raise CheckpointError(
                f"{saved.path} holds a model of another architecture ({differences}): a resumed run may change "
                "its dropout and training settings, not its model; give another out_dir (--out) for a new run"
            )
        _check_same_task(saved, task)
        progress, checkpoint = saved.checkpoint.progress, saved.checkpoint
        return cls(
            task,
            training_config,
            model_config,
            step=progress.step,
            epoch=progress.epoch,
            batch_in_epoch=progress.batch_in_epoch,
            seconds=progress.seconds,
            history=checkpoint.history,
            provenance=checkpoint.provenance,
            saved=saved,
            saved_step=progress.step,
        )

    @property
    def out_dir(self) -> Path | None:
        out_dir = self.training_config.out_dir
        return None if out_dir is None else Path(out_dir)

    @property
    def checkpoint_path(self) -> Path | None:
        return None if self.out_dir is None else run_checkpoint(self.out_dir)

    def add_provenance(self, device: torch.device, group: ProcessGroup, command: str | None) -> None:
        """Start the provenance of a new run on ``device``; add ``command`` to the run's command lines."""
        if not self.provenance:
            self.provenance = {
                "commands": [], "machine": describe_machine(device), "device": str(device),
                "processes": group.world_size, "threads": torch.get_num_threads(), "torch": str(torch.__version__),
                "started": date.today().isoformat(),
            }  # fmt: skip
        if command is not None:
            self.provenance["commands"].append(command)

    def checkpoint(
        self, model, optimizer, scheduler, scaler, seconds: float, random_states: list, average=None
    ) -> Checkpoint:
        """The checkpoint of this run as it is now, ``seconds`` into it; ``random_states`` from
        :func:`gather_random_states`; ``average``: the run's average of its weights, if it keeps one."""
        return Checkpoint(
            model_config=self.model_config,
            training_config=self.training_config,
            task=self.task.to_dict(),  # with the tokenizers: a resumed run must not retrain them
            model=model.state_dict(),
            optimizer=optimizer.state_dict(),
            scheduler=scheduler.state_dict(),
            scaler=scaler.state_dict(),
            progress=Progress(self.step, self.epoch, self.batch_in_epoch, seconds),
            history=self.history,
            random_states=random_states,
            provenance=self.provenance,
            average=None if average is None else average.state_dict(),
        )

    def restore(
        self, model, optimizer, scheduler, scaler, group: ProcessGroup, device: torch.device, average=None
    ) -> str | None:
        """Load the saved tensors into freshly built ``model``, ``optimizer``, ``scheduler``, ``scaler``
        and ``average`` (the run's average of its weights, if it keeps one; a run resumed with an
        average that its checkpoint lacks starts it from here), and this process's random-number
        generators; returns a warning, or ``None``."""
        checkpoint = self.saved.checkpoint
        model.load_state_dict(checkpoint.model)
        if average is not None and checkpoint.average is not None:
            average.load_state_dict(checkpoint.average)
        optimizer.load_state_dict(checkpoint.optimizer)
        scheduler.load_state_dict(checkpoint.scheduler)
        if checkpoint.scaler:  # empty when written without a gradient scaler (float32 or bfloat16)
            scaler.load_state_dict(checkpoint.scaler)
        states = checkpoint.random_states
        if len(states) != group.world_size:
            processes = f"{len(states)} processes, this run has {group.world_size}"
            return f"{self.saved.path} was written by {processes}: dropout is reseeded"
        mine = states[group.rank]
        torch.set_rng_state(mine["torch"].cpu())
        if "cuda" in mine and device.type == "cuda":
            torch.cuda.set_rng_state(mine["cuda"].cpu(), device)
        return None


def _check_same_task(saved: SavedRun, task: TranslationTask) -> None:
    description, own = saved.checkpoint.task, task.to_dict()
    if own["name"] != description["name"]:
        raise CheckpointError(f"{saved.path} holds a {description['name']} run, not {own['name']}")
    for part in ("arguments", "tokenizers"):
        if own[part] != description[part]:
            raise CheckpointError(
                f"{saved.path} holds a {description['name']} run with other {part}: the task given must be the one "
                "it was trained on (SavedRun.task() rebuilds it)"
            )


def gather_random_states(group: ProcessGroup, device: torch.device) -> list[dict]:
    """Every process's generator states, in rank order (a collective call under DDP)."""
    state = {"torch": torch.get_rng_state()}
    if device.type == "cuda":
        state["cuda"] = torch.cuda.get_rng_state(device)
    if not group.is_distributed:
        return [state]
    states = [None] * group.world_size
    dist.all_gather_object(states, state)
    return states
