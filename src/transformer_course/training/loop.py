"""The training loop: batches in, a trained model and its learning curves out (paper §5).

One step::

    logits = model(source, target_input)                  (batch, L_tgt, V)     teacher forcing
    loss   = label-smoothed cross-entropy against target_output, mean per target token
    loss.backward(); clip the gradient norm; Adam step; learning rate ← Eq. 3 of step + 1

:class:`Trainer` runs the steps and calls back on events (``on_train_start``, ``on_batch_end``,
``on_train_end``), as minGPT's trainer does; :func:`train` gives it the callbacks of
:mod:`.callbacks` (the learning curves and the progress bar; validation and checkpoints). Around
the step, everything a long run needs:

* **mixed precision** on a GPU (bfloat16, or float16 with a gradient scaler), float32 on a CPU;
* **checkpoints** after every validation, written atomically; ``resume=True`` restores the model,
  optimiser, schedule, scaler, random-number generators and the position in the epoch
  (:mod:`.run_state`), so that an interrupted run ends with the same parameters as one that was
  never interrupted;
* a **non-finite loss or gradient** stops the run before the update that would spread it into the
  weights, with the last good checkpoint left in place (in float16, the gradient scaler skips a
  step with non-finite gradients and lowers its scale instead, as it is meant to);
* **several processes** (``torchrun``) with ``DistributedDataParallel``: each takes every
  ``world_size``-th batch.
"""

from __future__ import annotations

import math
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from tqdm.auto import tqdm

from ..data import PAD_ID, Batch, TranslationTask, bucketed_batches, make_batch
from ..device import autocast_dtype, resolve_device
from ..masks import padding_mask
from .averaging import averaged_model
from .callbacks import LogProgress, ValidateAndCheckpoint
from .checkpoint import run_checkpoint
from .config import ModelConfig, TrainingConfig
from .distributed import ProcessGroup, join_process_group, local_device
from .label_smoothing import LabelSmoothingLoss
from .non_finite import NonFiniteGradientError, NonFiniteLossError, non_finite_message
from .run_state import RunState, SavedRun
from .schedule import transformer_optimizer, warmup_scheduler

EVENTS = ("on_train_start", "on_batch_end", "on_train_end")


@dataclass
class TrainingResult:
    """What :func:`train` returns.

    Attributes:
        model: the trained model (unwrapped from ``DistributedDataParallel``): the average of its weights
            when the config keeps one (``average_decay``), else the weights of the last update.
        history: ``{"train": [...], "validation": [...]}``, the points of the learning curves.
        steps: optimiser updates done in total (across resumptions).
        seconds: wall-clock training time in total (across resumptions).
        stopped_because: ``"minutes"`` or ``"max_steps"``.
        checkpoint: the path of the last checkpoint, or ``None`` without ``out_dir``.
    """

    model: nn.Module
    history: dict
    steps: int
    seconds: float
    stopped_because: str
    checkpoint: Path | None


def train(
    task: TranslationTask,
    config: TrainingConfig,
    model_config: ModelConfig | None = None,
    *,
    model: nn.Module | None = None,
    resume: bool | SavedRun = False,
    progress: bool = True,
    command: str | None = None,
) -> TrainingResult:
    """Train an encoder-decoder Transformer on ``task``.

    Args:
        task: the data, e.g. :func:`~transformer_course.data.numbers_task`.
        config: budget and recipe.
        model_config: the model's size (default :class:`ModelConfig`); stored in checkpoints.
        model: an already built model with the parameters ``model_config`` builds (e.g. one you
            wrote); by default ``model_config.build(...)`` under ``config.seed``.
        resume: continue the run whose checkpoint is in ``config.out_dir``, if there is one
            (``True``), or the one already read with :meth:`SavedRun.read`. Its task and model size
            must be ``task`` and ``model_config``; the training settings are ``config``.
        progress: show a progress bar, and say on standard error which checkpoint a run resumes.
        command: the command line that started this run, kept in the checkpoint's provenance
            (with the machine and the date) for records of the run.

    Raises:
        ValueError: ``task`` has no training pairs; ``model`` does not match ``model_config``;
            :class:`~.checkpoint.CheckpointError` (a ValueError): the resumed run is of another task or
            model architecture.
        NonFiniteLossError: the loss became NaN or infinite, or (:class:`NonFiniteGradientError`)
            its gradients did; the message says where, and which checkpoint is the last good one.
    """
    model_config = model_config or ModelConfig()
    device = local_device(resolve_device(config.device))
    group = join_process_group(device)
    try:
        state = _run_state(task, config, model_config, resume, show_messages=progress and group.is_main)
        state.add_provenance(device, group, command)
        trainer = Trainer(state, model, device, group)
        trainer.add_callbacks(LogProgress(show_bar=progress and group.is_main))
        trainer.add_callbacks(ValidateAndCheckpoint(trainer))
        stopped_because = trainer.run()
        return TrainingResult(
            trainer.delivered_model, state.history, state.step, trainer.seconds(), stopped_because,
            state.checkpoint_path,
        )  # fmt: skip
    finally:
        group.close()


def _run_state(task, config, model_config, resume: bool | SavedRun, show_messages: bool) -> RunState:
    """A new run, or the one saved in ``config.out_dir`` (read only if ``resume`` is not read already).

    Says which on standard error when ``show_messages``: standard output is the caller's (the
    commands print their results there).
    """
    saved = resume if isinstance(resume, SavedRun) else None
    if resume is True and config.out_dir is not None:
        saved = SavedRun.read(config.out_dir)
    if saved is None:
        if resume and show_messages:
            path = None if config.out_dir is None else run_checkpoint(config.out_dir)
            tqdm.write(f"no checkpoint at {path}: starting a new run", file=sys.stderr)
        return RunState(task, config, model_config)
    state = RunState.resume(saved, task, config, model_config)
    if show_messages:
        where = f"step {state.step} (epoch {state.epoch}, batch {state.batch_in_epoch})"
        before = {**saved.training_config.to_dict(), "dropout": saved.model_config.dropout}
        now = {**config.to_dict(), "dropout": model_config.dropout}
        changes = [f"{name} {before[name]!r} → {value!r}" for name, value in now.items() if before[name] != value]
        tqdm.write(f"resuming {saved.path} at {where}" + "".join(f"; {change}" for change in changes), file=sys.stderr)
    return state


class Trainer:
    """The loop of one run: the model, its optimiser and schedule, and the training step.

    Callbacks (``callback(trainer)``) see the trainer after each event: ``state`` (a
    :class:`RunState`: step, epoch, history …), ``loss`` and ``tokens`` of the last batch, and
    ``stopped_because`` once a budget is spent.
    """

    def __init__(self, state: RunState, model: nn.Module | None, device: torch.device, group: ProcessGroup):
        self.state, self.device, self.group = state, device, group
        config, task = state.training_config, state.task
        self.train_pairs = task.encode("train")
        if len(self.train_pairs) == 0:  # no batch would ever come, and the loop would wait for one forever
            raise ValueError(f"task {task.name!r} has no training pairs")
        torch.manual_seed(config.seed)
        if model is None:
            model = state.model_config.build(len(task.source_tokenizer), len(task.target_tokenizer))
        else:
            check_model_matches(model, state.model_config, task)
        self.model = model.to(device)
        if group.rank > 0:
            torch.manual_seed(config.seed + group.rank)  # the same initial weights, different dropout
        self.criterion = LabelSmoothingLoss(config.label_smoothing, ignore_index=PAD_ID)
        self.optimizer = transformer_optimizer(self.model)
        self.scheduler = warmup_scheduler(
            self.optimizer, state.model_config.d_model, config.warmup_steps, config.learning_rate_scale
        )
        self.precision = autocast_dtype(device)  # None (float32) on the CPU
        # float16 has a narrow exponent range: small gradients underflow unless the loss is scaled
        # up first. bfloat16 and float32 have float32's range and need no scaler.
        self.scaler = torch.amp.GradScaler(device.type, enabled=self.precision == torch.float16)
        # The moving average of the weights (paper §6.1's checkpoint averaging), if the recipe keeps one.
        decay = config.average_decay
        self.average = None if decay is None else averaged_model(self.model, decay)
        if state.saved is not None:
            warning = state.restore(
                self.model, self.optimizer, self.scheduler, self.scaler, group, device, self.average
            )
            if warning and group.is_main:
                tqdm.write(warning, file=sys.stderr)
        self.train_lengths = self.train_pairs.longer_side_lengths()  # the longer side only: see data.batching
        self.callbacks: dict[str, list[Callable]] = defaultdict(list)
        self.loss, self.tokens, self.stopped_because = math.nan, 0, None  # of the last step, for the callbacks
        self.seconds_before = state.seconds  # of the run, before this process took over
        self.started, self.seconds_in_callbacks = time.monotonic(), 0.0  # set again when the loop starts

    @property
    def delivered_model(self) -> nn.Module:
        """The model the run delivers: the average of its weights if it keeps one, else the model itself."""
        return self.model if self.average is None else self.average.module

    # ---- callbacks -----------------------------------------------------------------------

    def add_callback(self, event: str, callback: Callable[[Trainer], None]) -> None:
        if event not in EVENTS:
            raise ValueError(f"unknown event {event!r}; the events are {EVENTS}")
        self.callbacks[event].append(callback)

    def add_callbacks(self, handler) -> None:
        """Register every method of ``handler`` named after an event."""
        for event in EVENTS:
            if hasattr(handler, event):
                self.add_callback(event, getattr(handler, event))

    def trigger_callbacks(self, event: str) -> None:
        for callback in self.callbacks[event]:
            started = time.monotonic()
            callback(self)
            self.seconds_in_callbacks += time.monotonic() - started

    # ---- the loop ------------------------------------------------------------------------

    def run(self) -> str:
        """Train until a budget is spent; returns which: ``"minutes"`` or ``"max_steps"``."""
        state = self.state
        network = self.model
        if self.group.is_distributed:
            device_ids = [self.device.index] if self.device.type == "cuda" else None
            network = DistributedDataParallel(self.model, device_ids=device_ids)
        self.model.train()
        self.started, self.seconds_in_callbacks = time.monotonic(), 0.0
        self.trigger_callbacks("on_train_start")
        self.stopped_because = self._steps_spent() or self._minutes_spent()
        while self.stopped_because is None:
            batches = self._epoch_batches()
            while state.batch_in_epoch < len(batches) and self.stopped_because is None:
                batch = make_batch(self.train_pairs, batches[state.batch_in_epoch]).to(self.device)
                self.loss, self.tokens, time_is_up = self.train_step(network, batch)
                state.step += 1
                state.batch_in_epoch += 1
                self.stopped_because = "minutes" if time_is_up else self._steps_spent()
                self.trigger_callbacks("on_batch_end")
            if state.batch_in_epoch >= len(batches):
                state.epoch, state.batch_in_epoch = state.epoch + 1, 0
        self.trigger_callbacks("on_train_end")
        return self.stopped_because

    def train_step(self, network: nn.Module, batch: Batch) -> tuple[float, int, bool]:
        """One update; returns the batch's loss (averaged over processes), its target tokens, and
        whether any process has run out of time."""
        with torch.autocast(self.device.type, dtype=self.precision, enabled=self.precision is not None):
            # The decoder's default mask is causal; padding sits after every real target token, so
            # it needs no mask of its own there (and its positions are left out of the loss).
            logits = network(batch.source, batch.target_input, padding_mask(batch.source, PAD_ID))  # (batch, L_tgt, V)
        loss = self.criterion(logits, batch.target_output)
        tokens = batch.num_target_tokens
        time_is_up = self._minutes_spent() is not None
        # One message between processes per step: summed loss, tokens, and "my time is up".
        shared = torch.tensor([loss.item() * tokens, tokens, float(time_is_up)], dtype=torch.float64)
        if self.group.is_distributed:
            shared = shared.to(self.device)
            dist.all_reduce(shared)
            shared = shared.cpu()
        loss_sum, tokens_all, time_flags = shared.tolist()
        mean_loss = loss_sum / tokens_all
        if not math.isfinite(mean_loss):
            raise NonFiniteLossError(non_finite_message(self.state, f"the training loss became {mean_loss}"))
        self.optimizer.zero_grad(set_to_none=True)
        self.scaler.scale(loss).backward()
        self._check_gradient(mean_loss)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.scheduler.step()
        if self.average is not None:
            self.average.update_parameters(self.model)
        return mean_loss, int(tokens_all), time_flags > 0

    def _check_gradient(self, mean_loss: float) -> None:
        """Clip the gradient; stop before an update from a non-finite one."""
        clip_norm = self.state.training_config.clip_norm
        if clip_norm is not None:
            self.scaler.unscale_(self.optimizer)  # clip the true gradient, not the scaled one
            gradient_norm = nn.utils.clip_grad_norm_(self.model.parameters(), clip_norm)
        # A finite loss can still have an infinite gradient. Clipping then multiplies it by 0
        # (inf · 0 = NaN), and Adam writes NaN into every weight. With a scaler (float16) such a
        # step is expected now and then: scaler.step skips it and lowers the scale. Without one it
        # is a divergence: stop before the update. (Under DDP the gradients, and so their norm, are
        # the same on every process, so every process stops.)
        if self.scaler.is_enabled():
            return
        if clip_norm is None:  # an infinite threshold measures the norm and clips nothing
            gradient_norm = nn.utils.clip_grad_norm_(self.model.parameters(), float("inf"))
        if not math.isfinite(gradient_norm.item()):
            what = f"the gradient norm became {gradient_norm.item()} (with a finite loss, {mean_loss:.4g})"
            raise NonFiniteGradientError(non_finite_message(self.state, what))

    def _epoch_batches(self) -> list[list[int]]:
        """This process's batches of the current epoch, the same on every call for a given epoch."""
        config = self.state.training_config
        batches = bucketed_batches(self.train_lengths, config.max_tokens, config.seed, self.state.epoch)
        world = self.group.world_size
        usable = len(batches) - len(batches) % world  # every process gets as many batches
        return batches[self.group.rank : usable : world]

    # ---- the clock and the budget --------------------------------------------------------

    def seconds(self) -> float:
        """Wall-clock seconds of the run (across resumptions), validations included."""
        return self.seconds_before + time.monotonic() - self.started

    def training_seconds(self) -> float:
        """Wall-clock seconds of this process's loop, without the time spent in callbacks."""
        return time.monotonic() - self.started - self.seconds_in_callbacks

    def _steps_spent(self) -> str | None:
        max_steps = self.state.training_config.max_steps
        return "max_steps" if max_steps is not None and self.state.step >= max_steps else None

    def _minutes_spent(self) -> str | None:
        minutes = self.state.training_config.minutes
        return "minutes" if minutes is not None and self.seconds() >= minutes * 60 else None


def check_model_matches(model: nn.Module, model_config: ModelConfig, task: TranslationTask) -> None:
    """Raise a ValueError unless ``model`` has the parameters and buffers (names and shapes) that
    ``model_config`` builds for ``task``: the schedule reads ``d_model`` from the config, and a
    checkpoint rebuilds its model from the config it records."""
    with torch.device("meta"):  # shapes only: no memory, no initialisation, no random numbers drawn
        expected = model_config.build(len(task.source_tokenizer), len(task.target_tokenizer)).state_dict()
    given = model.state_dict()
    for name, tensor in expected.items():
        if name not in given:
            raise ValueError(f"the model has no {name}, which model_config builds with shape {tuple(tensor.shape)}")
        if given[name].shape != tensor.shape:
            raise ValueError(
                f"the model's {name} has shape {tuple(given[name].shape)}; model_config builds it with shape "
                f"{tuple(tensor.shape)}"
            )
    extra = next((name for name in given if name not in expected), None)
    if extra is not None:
        raise ValueError(f"the model has {extra}, which model_config does not build")
