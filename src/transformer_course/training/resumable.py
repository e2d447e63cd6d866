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
* ``train_model`` is called for ``log_every`` updates at a time, each call with its own ``seed``
  (so each stretch of the run draws its batches from a fresh shuffle, and a resumed run goes on
  with new batches), and a checkpoint is written between two calls once ``checkpoint_minutes``
  have passed since the last one.

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
from .checkpoint import load_checkpoint, save_checkpoint

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
        progress: show a progress bar (step, loss, target tokens per second) on standard error.

    Returns:
        the learning curve of the whole run, as ``train_model`` returns it: a point every ``log_every`` updates.

    Raises:
        ValueError: neither budget is given, or ``checkpoint`` holds a run with other settings (named).
    """
    max_steps, max_seconds = settings.get("max_steps"), settings.get("max_seconds")
    max_tokens, log_every = settings["max_tokens"], settings["log_every"]
    if "NBGRADER_EXECUTION" in os.environ:  # graded: the learner's loop, as it is
        return train_model(model, pairs, optimizer, scheduler, max_steps, max_seconds, max_tokens, log_every)
    if max_steps is None and max_seconds is None:
        raise ValueError("give a budget: max_steps, max_seconds or both")
    checkpoint = Path(checkpoint)
    device = next(model.parameters()).device
    dtype = autocast_dtype(device)
    scaler = torch.amp.GradScaler(device.type) if dtype == torch.float16 else None
    run = {"step": 0, "chunk": 0, "seconds": 0.0, "history": []}
    if checkpoint.is_file():
        run = _resume(checkpoint, settings, model, optimizer, scheduler, scaler)
        print(f"resuming the run in {checkpoint} at update {run['step']}", file=sys.stderr)

    wrapped = MixedPrecisionModel(model, dtype, scaler)
    bar = tqdm(total=max_steps, initial=run["step"], unit="step", disable=not progress, dynamic_ncols=True)
    counting = CountingOptimizer(optimizer, scaler, on_step=lambda: bar.update())
    wrapped.optimizer = optimizer
    session_started, session_tokens = time.monotonic(), 0
    last_saved = time.monotonic()

    def out_of_budget() -> bool:
        # As the learner's loop stops: after the update that passes max_seconds.
        return (max_steps is not None and run["step"] >= max_steps) or (
            max_seconds is not None and run["seconds"] > max_seconds
        )

    try:
        while not out_of_budget():
            steps = log_every if max_steps is None else min(log_every, max_steps - run["step"])
            seconds_left = None if max_seconds is None else max_seconds - run["seconds"]
            started, steps_before, tokens_before = time.monotonic(), counting.steps, wrapped.target_tokens
            seed = run["chunk"]  # each stretch of log_every updates draws from a shuffle of its own
            curve = train_model(wrapped, pairs, counting, scheduler, steps, seconds_left, max_tokens, steps, seed)
            run["seconds"] += time.monotonic() - started
            if counting.steps == steps_before:
                raise RuntimeError(f"train_model made no update when asked for {steps}: does it call optimizer.step()?")
            run["step"] += counting.steps - steps_before
            run["chunk"] += 1
            session_tokens += wrapped.target_tokens - tokens_before
            if curve:
                run["history"].append({"step": run["step"], "loss": float(curve[-1]["loss"])})
                bar.set_postfix(
                    loss=f"{run['history'][-1]['loss']:.3f}",
                    tokens_per_s=f"{session_tokens / (time.monotonic() - session_started):,.0f}",
                )
            if time.monotonic() - last_saved >= 60 * checkpoint_minutes:
                _save(checkpoint, settings, run, model, optimizer, scheduler, scaler)
                last_saved = time.monotonic()
        _save(checkpoint, settings, run, model, optimizer, scheduler, scaler)
    finally:
        bar.close()
    return run["history"]


def _save(path: Path, settings: dict, run: dict, model, optimizer, scheduler, scaler) -> None:
    save_checkpoint(
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
    saved = load_checkpoint(path, map_location=next(model.parameters()).device)
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
