"""What a long run needs, around a training loop the learner wrote: the final project's scaffolding.

The final project asks the learner to write ``train_step`` and ``train_model`` (parts 5 and 7) and
grades them. A real run with them (Multi30k for half an hour on a CPU, or on a Colab GPU that may
disconnect) also needs what those parts do not ask for: a progress bar, a checkpoint every few
minutes that the same cell resumes from when it is run again, and mixed precision on a GPU.
:func:`resumable_training` adds these around the learner's ``train_model`` without changing a line
of it, through the three objects that the learner's functions receive and must use:

* the **model** is wrapped (:class:`MixedPrecisionModel`): its forward pass runs under autocast
  (bfloat16, or float16 on GPUs without bfloat16 such as Colab's T4), returns float32 logits and
  counts the target tokens for the tokens-per-second figure;
* the **optimizer** is wrapped (:class:`CountingOptimizer`): every ``step()`` the learner's
  ``train_step`` makes is counted, moves the progress bar and, in float16, goes through a
  :class:`torch.amp.GradScaler`;
* ``train_model`` is called for a stretch of about half a minute at a time (a whole number of
  ``log_every`` intervals), each call with its own ``seed`` (so each stretch draws its batches from
  a fresh shuffle, and a resumed run goes on with new batches), and a checkpoint is written between
  two calls once ``checkpoint_minutes`` have passed since the last one. The loss on the progress
  bar is the last point of the learner's curve, so it changes after each stretch.

float16 needs its loss scaled so that small gradients do not underflow, but the learner's
``train_step`` calls ``loss.backward()``, clips and steps itself. So the scale is applied to the
gradient of the logits, the first gradient that backward computes (:class:`_ScaleGradient`: the
same factor on every gradient as scaling the loss), and removed again by ``GradScaler.unscale_``
at the end of the same backward pass, before the learner's gradient clipping sees the gradients.
``GradScaler.step`` then skips an update whose gradients overflowed, and adapts the scale.

While the notebook is graded (``NBGRADER_EXECUTION`` is set), :func:`resumable_training` calls
``train_model`` once with the budgets, exactly as the notebook would without it: no wrapper, no
checkpoint, no progress bar, so grading sees the learner's loop alone.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch
from torch import nn
from tqdm.auto import tqdm

from ..data import PAD_ID
from ..device import autocast_dtype
from .checkpoint import load_tensors, save_tensors

# Settings that may change between a run and its resumption: the budgets and the bookkeeping.
# Any other setting that differs means another model or other data, and the checkpoint is refused.
RESUMABLE_CHANGES = {"max_steps", "max_seconds", "log_every", "test_examples"}


class _ScaleGradient(torch.autograd.Function):
    """The identity on the way forward; on the way back, the gradient times ``scale`` (a tensor).

    At the end of the backward pass, ``GradScaler.unscale_(optimizer)`` divides every parameter's
    gradient by the same scale again (and notes whether one overflowed), before the code that
    called ``backward()`` goes on to clip the gradients.
    """

    @staticmethod
    def forward(context, logits, scale, scaler, optimizer):
        context.save_for_backward(scale)
        context.scaler, context.optimizer = scaler, optimizer
        return logits.view_as(logits)

    @staticmethod
    def backward(context, gradient):
        (scale,) = context.saved_tensors
        scaler, optimizer = context.scaler, context.optimizer
        torch.autograd.Variable._execution_engine.queue_callback(lambda: scaler.unscale_(optimizer))
        return gradient * scale.to(gradient.dtype), None, None, None


class MixedPrecisionModel(nn.Module):
    """The learner's model, run under autocast, with float32 logits; counts the target tokens it is given.

    ``forward(src, tgt, src_mask, tgt_mask)`` is the learner's, under ``torch.autocast`` when
    ``dtype`` is set; its logits ``(batch, L_tgt, V)`` come back in float32, so that the learner's
    loss is computed in full precision. With a ``scaler`` (float16), their gradient is scaled.
    ``encode``, ``decode`` and ``next_token_logits`` run under autocast too.
    """

    def __init__(self, model: nn.Module, dtype: torch.dtype | None, scaler: torch.amp.GradScaler | None = None):
        super().__init__()
        self.model, self.dtype, self.scaler = model, dtype, scaler
        self.optimizer: torch.optim.Optimizer | None = None  # the one GradScaler unscales; set by the scaffolding
        self.target_tokens = 0

    def _autocast(self):
        device_type = next(self.model.parameters()).device.type
        return torch.autocast(device_type, dtype=self.dtype, enabled=self.dtype is not None)

    def forward(self, src, tgt, src_mask=None, tgt_mask=None):
        self.target_tokens += int((tgt != PAD_ID).sum())
        with self._autocast():
            logits = self.model(src, tgt, src_mask, tgt_mask)
        logits = logits.float()
        if self.scaler is not None and self.training and torch.is_grad_enabled():
            scale = self.scaler.scale(torch.ones((), device=logits.device))  # the scale, without a sync
            logits = _ScaleGradient.apply(logits, scale, self.scaler, self.optimizer)
        return logits

    def encode(self, *arguments, **options):
        with self._autocast():
            return self.model.encode(*arguments, **options)

    def decode(self, *arguments, **options):
        with self._autocast():
            return self.model.decode(*arguments, **options)

    def next_token_logits(self, hidden):
        with self._autocast():
            return self.model.next_token_logits(hidden).float()


class CountingOptimizer:
    """The learner's optimizer, counting its steps; in float16, each step goes through the GradScaler.

    Everything else (``zero_grad``, ``param_groups``, ``state_dict`` …) is the optimizer's own.
    """

    def __init__(self, optimizer: torch.optim.Optimizer, scaler: torch.amp.GradScaler | None, on_step: Callable):
        self._optimizer, self._scaler, self._on_step = optimizer, scaler, on_step
        self.steps = 0

    def step(self, closure=None):
        if self._scaler is None:
            result = self._optimizer.step(closure)
        else:
            result = self._scaler.step(self._optimizer)  # skipped if the gradients overflowed
            self._scaler.update()
        self.steps += 1
        self._on_step()
        return result

    def __getattr__(self, name):
        return getattr(self._optimizer, name)


def resumable_training(
    train_model: Callable,
    model: nn.Module,
    pairs,
    optimizer: torch.optim.Optimizer,
    scheduler,
    settings: dict,
    checkpoint: str | Path,
    checkpoint_minutes: float = 5.0,
    stretch_seconds: float = 30.0,
    progress: bool = True,
) -> list[dict]:
    """Run the learner's ``train_model`` within ``settings``' budgets, with progress, checkpoints and
    mixed precision; resume from ``checkpoint`` when it holds a run with the same settings.

    Args:
        train_model: the learner's loop, ``train_model(model, pairs, optimizer, scheduler, max_steps,
            max_seconds, max_tokens, log_every, seed)`` returning ``[{"step", "loss"}, ...]``.
        model, optimizer, scheduler: freshly made by the learner; on resumption they take the
            checkpoint's weights and states.
        pairs: the training pairs (``task.encode("train")``).
        settings: the notebook's settings: the budgets ``max_steps`` and ``max_seconds`` (across
            resumptions), ``max_tokens`` and ``log_every``; all of them are kept in the checkpoint.
        checkpoint: the checkpoint file, written atomically every ``checkpoint_minutes`` and at the end.
        stretch_seconds: about how long one call of ``train_model`` runs: a whole number of ``log_every``
            intervals, measured on the first call (one interval). Each call shuffles the whole training
            set anew (seconds for 200,000 pairs), so calls are made long enough for that not to matter.
        progress: show a progress bar (step, loss, target tokens per second) on standard error.

    Returns:
        the learning curve of the whole run, as ``train_model`` returns it: a point every ``log_every`` updates.

    Raises:
        ValueError: neither budget is given, or ``checkpoint`` holds a run with other settings (named).
    """
    max_steps, max_seconds = settings.get("max_steps"), settings.get("max_seconds")
    if "NBGRADER_EXECUTION" in os.environ:  # graded: the learner's loop, as it is
        return train_model(
            model, pairs, optimizer, scheduler, max_steps, max_seconds, settings["max_tokens"], settings["log_every"]
        )
    if max_steps is None and max_seconds is None:
        raise ValueError("give a budget: max_steps, max_seconds or both")
    run = _Run(model, optimizer, scheduler, settings, Path(checkpoint), progress)
    try:
        intervals = 1  # log_every intervals per call of train_model: one at first, to measure the speed
        last_saved = time.monotonic()
        while not run.out_of_budget():
            seconds_per_update = run.stretch(train_model, pairs, intervals)
            intervals = max(1, round(stretch_seconds / (seconds_per_update * settings["log_every"])))
            if time.monotonic() - last_saved >= 60 * checkpoint_minutes:
                run.save()
                last_saved = time.monotonic()
        run.save()
    finally:
        run.bar.close()
    return run.state["history"]


class _Run:
    """A run of :func:`resumable_training`: the learner's objects, wrapped, and the run's progress (``state``)."""

    def __init__(self, model, optimizer, scheduler, settings: dict, checkpoint: Path, progress: bool):
        self.model, self.optimizer, self.scheduler, self.settings = model, optimizer, scheduler, settings
        self.checkpoint = checkpoint
        dtype = autocast_dtype(next(model.parameters()).device)
        device_type = next(model.parameters()).device.type
        self.scaler = torch.amp.GradScaler(device_type) if dtype == torch.float16 else None
        self.state = {"step": 0, "chunk": 0, "seconds": 0.0, "history": []}
        if checkpoint.is_file():
            self.state = _resume(checkpoint, settings, model, optimizer, scheduler, self.scaler)
            print(f"resuming the run in {checkpoint} at update {self.state['step']}", file=sys.stderr)
        self.wrapped = MixedPrecisionModel(model, dtype, self.scaler)
        self.wrapped.optimizer = optimizer
        self.counting = CountingOptimizer(optimizer, self.scaler, self._on_step)
        self.bar = tqdm(
            total=settings.get("max_steps"), initial=self.state["step"], unit="step", disable=not progress,
            dynamic_ncols=True,
        )  # fmt: skip
        self.started = time.monotonic()

    def out_of_budget(self) -> bool:
        """As the learner's loop stops: at max_steps, or after the update that passes max_seconds."""
        max_steps, max_seconds = self.settings.get("max_steps"), self.settings.get("max_seconds")
        return (max_steps is not None and self.state["step"] >= max_steps) or (
            max_seconds is not None and self.state["seconds"] > max_seconds
        )

    def stretch(self, train_model: Callable, pairs, intervals: int) -> float:
        """Call the learner's loop for ``intervals`` × ``log_every`` updates (within the budgets); returns
        the seconds it took per update."""
        state, settings, log_every = self.state, self.settings, self.settings["log_every"]
        steps = intervals * log_every
        if settings.get("max_steps") is not None:
            steps = min(steps, settings["max_steps"] - state["step"])
        seconds_left = None if settings.get("max_seconds") is None else settings["max_seconds"] - state["seconds"]
        started, steps_before = time.monotonic(), self.counting.steps
        seed = state["chunk"]  # each stretch draws its batches from a shuffle of its own
        curve = train_model(
            self.wrapped, pairs, self.counting, self.scheduler, steps, seconds_left, settings["max_tokens"], log_every,
            seed,
        )  # fmt: skip
        seconds, made = time.monotonic() - started, self.counting.steps - steps_before
        if made == 0:
            raise RuntimeError(f"train_model made no update when asked for {steps}: does it call optimizer.step()?")
        state["history"] += [{"step": state["step"] + point["step"], "loss": float(point["loss"])} for point in curve]
        state["seconds"] += seconds
        state["step"] += made
        state["chunk"] += 1
        return max(seconds, 1e-6) / made

    def save(self) -> None:
        _save(self.checkpoint, self.settings, self.state, self.model, self.optimizer, self.scheduler, self.scaler)

    def _on_step(self) -> None:
        self.bar.update()
        history = self.state["history"]
        self.bar.set_postfix(
            loss=f"{history[-1]['loss']:.3f}" if history else "…",
            tokens_per_s=f"{self.wrapped.target_tokens / (time.monotonic() - self.started):,.0f}",
            refresh=False,
        )


def _save(path: Path, settings: dict, run: dict, model, optimizer, scheduler, scaler) -> None:
    save_tensors(
        {
            "settings": dict(settings),
            "run": run,
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict(),
            "scaler": None if scaler is None else scaler.state_dict(),
        },
        path,
    )


def _resume(path: Path, settings: dict, model, optimizer, scheduler, scaler) -> dict:
    """Load the run saved in ``path`` into the learner's objects; returns its progress."""
    saved = load_tensors(path, map_location=next(model.parameters()).device)
    keys = (set(saved["settings"]) | set(settings)) - RESUMABLE_CHANGES
    changed = sorted(key for key in keys if saved["settings"].get(key) != settings.get(key))
    if changed:
        differences = ", ".join(
            f"{key}: {saved['settings'].get(key)!r} there, {settings.get(key)!r} now" for key in changed
        )
        raise ValueError(
            f"{path} holds a run with other settings ({differences}): give another checkpoint file to start a "
            "new run, or delete this one"
        )
    model.load_state_dict(saved["model"])
    optimizer.load_state_dict(saved["optimizer"])
    scheduler.load_state_dict(saved["scheduler"])
    if scaler is not None and saved["scaler"] is not None:
        scaler.load_state_dict(saved["scaler"])
    return saved["run"]
