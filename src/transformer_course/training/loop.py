"""The training loop: batches in, a trained model and its learning curves out (paper §5).

One step::

    logits = model(source, target_input)                  (batch, L_tgt, V)     teacher forcing
    loss   = label-smoothed cross-entropy against target_output, mean per target token
    loss.backward(); clip the gradient norm; Adam step; learning rate ← Eq. 3 of step + 1

Around it, everything a long run needs:

* **mixed precision** on a GPU (bfloat16, or float16 with a gradient scaler), float32 on a CPU;
* **checkpoints** after every validation, written atomically; ``resume=True`` restores the model,
  optimiser, schedule, scaler, random-number generators and the position in the epoch, so that an
  interrupted run ends with the same parameters as one that was never interrupted;
* a **non-finite loss or gradient** stops the run before the update that would spread it into the
  weights, with the last good checkpoint left in place (in float16, the gradient scaler skips a
  step with non-finite gradients and lowers its scale instead, as it is meant to); a checkpoint is
  never written from parameters or a validation loss that are not finite;
* **several processes** (``torchrun``) with ``DistributedDataParallel``: each takes every
  ``world_size``-th batch;
* a tqdm progress bar, ``history.json`` and ``curves.png`` in ``out_dir``.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from tqdm.auto import tqdm

from ..data import PAD_ID, TranslationTask, bucketed_batches, make_batch
from ..device import autocast_dtype, default_device, describe_machine
from ..masks import padding_mask
from .checkpoint import CHECKPOINT_NAME, load_checkpoint, save_checkpoint
from .config import ModelConfig, TrainingConfig
from .distributed import ProcessGroup, join_process_group, local_device
from .evaluation import evaluate, teacher_forced_loss
from .label_smoothing import LabelSmoothingLoss
from .plots import plot_training_curves
from .schedule import transformer_optimizer, warmup_scheduler


class NonFiniteLossError(RuntimeError):
    """The loss (or the gradients, or the weights) became NaN or infinite: the run stopped without
    updating the weights or overwriting the last good checkpoint."""


class NonFiniteGradientError(NonFiniteLossError):
    """The loss was finite but its gradients were not (without a gradient scaler to skip the step)."""


@dataclass
class TrainingResult:
    """What :func:`train` returns.

    Attributes:
        model: the trained model (unwrapped from ``DistributedDataParallel``).
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
    resume: bool = False,
    progress: bool = True,
    command: str | None = None,
) -> TrainingResult:
    """Train an encoder-decoder Transformer on ``task``.

    Args:
        task: the data, e.g. :func:`~transformer_course.data.numbers_task`.
        config: budget and recipe.
        model_config: the model's size (default :class:`ModelConfig`); stored in checkpoints.
        model: an already built model matching ``model_config`` (e.g. one you wrote); by default
            ``model_config.build(...)`` under ``config.seed``.
        resume: continue from ``config.out_dir/checkpoint.pt`` if it exists.
        progress: show a progress bar.
        command: the command line that started this run, kept in the checkpoint's provenance
            (with the machine and the date) for records of the run.

    Raises:
        NonFiniteLossError: the loss became NaN or infinite, or (:class:`NonFiniteGradientError`)
            its gradients did; the message says where, and which checkpoint is the last good one.
    """
    model_config = model_config or ModelConfig()
    device = torch.device(config.device) if config.device != "auto" else default_device()
    device = local_device(device)
    group = join_process_group(device)
    try:
        return _Run(task, config, model_config, model, device, group, progress, command).run(resume)
    finally:
        group.close()


class _Run:
    """The state of one training run, and the loop that advances it."""

    def __init__(
        self, task, config, model_config, model, device, group: ProcessGroup, progress: bool, command: str | None = None
    ):
        self.task, self.config, self.model_config, self.device, self.group = task, config, model_config, device, group
        self.out_dir = Path(config.out_dir) if config.out_dir is not None else None
        self.checkpoint = self.out_dir / CHECKPOINT_NAME if self.out_dir is not None else None
        torch.manual_seed(config.seed)
        if model is None:
            model = model_config.build(len(task.source_tokenizer), len(task.target_tokenizer))
        self.model = model.to(device)
        if group.rank > 0:
            torch.manual_seed(config.seed + group.rank)  # the same initial weights, different dropout
        self.criterion = LabelSmoothingLoss(config.label_smoothing, ignore_index=PAD_ID)
        self.optimizer = transformer_optimizer(self.model)
        self.scheduler = warmup_scheduler(
            self.optimizer, model_config.d_model, config.warmup_steps, config.learning_rate_scale
        )
        self.precision = autocast_dtype(device)  # None (float32) on the CPU
        # float16 has a narrow exponent range: small gradients underflow unless the loss is scaled
        # up first. bfloat16 and float32 have float32's range and need no scaler.
        self.scaler = torch.amp.GradScaler(device.type, enabled=self.precision == torch.float16)
        self.train_pairs = task.encode("train")
        self.train_lengths = self.train_pairs.longer_side_lengths()  # the longer side only: see data.batching
        self.validation_pairs = task.encode("validation")
        self.step, self.epoch, self.batch_in_epoch, self.seconds_before = 0, 0, 0, 0.0
        self.history: dict = {"train": [], "validation": []}
        self.progress = progress and group.is_main
        self.command = command
        self.provenance = {
            "commands": [], "machine": describe_machine(device), "device": str(device), "processes": group.world_size,
            "threads": torch.get_num_threads(), "torch": str(torch.__version__), "started": date.today().isoformat(),
        }  # fmt: skip

    # ---- the loop ------------------------------------------------------------------------

    def run(self, resume: bool) -> TrainingResult:
        if resume:
            self._restore()
        if self.command is not None:
            self.provenance["commands"].append(self.command)
        network = self.model
        if self.group.is_distributed:
            network = DistributedDataParallel(
                self.model, device_ids=[self.device.index] if self.device.type == "cuda" else None
            )
        self.model.train()
        started = time.monotonic()
        bar = tqdm(
            total=self.config.max_steps, initial=self.step, unit="step", disable=not self.progress, dynamic_ncols=True
        )
        window_loss, window_tokens, window_started = 0.0, 0, time.monotonic()
        stopped_because = self._steps_spent() or self._minutes_spent(self.seconds_before)
        while stopped_because is None:
            batches = self._epoch_batches()
            while self.batch_in_epoch < len(batches) and stopped_because is None:
                batch = make_batch(self.train_pairs, batches[self.batch_in_epoch]).to(self.device)
                loss, tokens, time_is_up = self._train_step(
                    network, batch, self.seconds_before + time.monotonic() - started
                )
                self.step += 1
                self.batch_in_epoch += 1
                window_loss += loss * tokens
                window_tokens += tokens
                bar.update()
                stopped_because = "minutes" if time_is_up else self._steps_spent()
                if self.step % self.config.log_every == 0 or stopped_because is not None:
                    elapsed = time.monotonic() - window_started
                    self._log(window_loss / window_tokens, window_tokens / elapsed, bar)
                    window_loss, window_tokens, window_started = 0.0, 0, time.monotonic()
                if stopped_because is not None or self.step % self.config.validate_every == 0:
                    validation_started = time.monotonic()
                    self._validate_and_save(self.seconds_before + validation_started - started)
                    window_started += time.monotonic() - validation_started  # counts towards the budget, not the speed
            if self.batch_in_epoch >= len(batches):
                self.epoch, self.batch_in_epoch = self.epoch + 1, 0
        bar.close()
        seconds = self.seconds_before + time.monotonic() - started
        return TrainingResult(self.model, self.history, self.step, seconds, stopped_because, self.checkpoint)

    def _train_step(self, network: nn.Module, batch, seconds: float) -> tuple[float, int, bool]:
        """One update; returns the batch's loss (averaged over processes), its target tokens, and
        whether any process has run out of time."""
        with torch.autocast(self.device.type, dtype=self.precision, enabled=self.precision is not None):
            # The decoder's default mask is causal; padding sits after every real target token, so
            # it needs no mask of its own there (and its positions are left out of the loss).
            logits = network(batch.source, batch.target_input, padding_mask(batch.source, PAD_ID))  # (batch, L_tgt, V)
        loss = self.criterion(logits, batch.target_output)
        tokens = batch.num_target_tokens
        time_is_up = self._minutes_spent(seconds) is not None
        # One message between processes per step: summed loss, tokens, and "my time is up".
        shared = torch.tensor([loss.item() * tokens, tokens, float(time_is_up)], dtype=torch.float64)
        if self.group.is_distributed:
            shared = shared.to(self.device)
            dist.all_reduce(shared)
            shared = shared.cpu()
        loss_sum, tokens_all, time_flags = shared.tolist()
        mean_loss = loss_sum / tokens_all
        if not math.isfinite(mean_loss):
            raise NonFiniteLossError(self._non_finite_message(f"the training loss became {mean_loss}"))
        self.optimizer.zero_grad(set_to_none=True)
        self.scaler.scale(loss).backward()
        if self.config.clip_norm is not None:
            self.scaler.unscale_(self.optimizer)  # clip the true gradient, not the scaled one
            gradient_norm = nn.utils.clip_grad_norm_(self.model.parameters(), self.config.clip_norm)
        # A finite loss can still have an infinite gradient. Clipping then multiplies it by 0
        # (inf · 0 = NaN), and Adam writes NaN into every weight. With a scaler (float16) such a
        # step is expected now and then: scaler.step skips it and lowers the scale. Without one it
        # is a divergence: stop before the update. (Under DDP the gradients, and so their norm, are
        # the same on every process, so every process stops.)
        if not self.scaler.is_enabled():
            if self.config.clip_norm is None:  # an infinite threshold measures the norm and clips nothing
                gradient_norm = nn.utils.clip_grad_norm_(self.model.parameters(), float("inf"))
            if not math.isfinite(gradient_norm.item()):
                what = f"the gradient norm became {gradient_norm.item()} (with a finite loss, {mean_loss:.4g})"
                raise NonFiniteGradientError(self._non_finite_message(what))
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.scheduler.step()
        return mean_loss, int(tokens_all), time_flags > 0

    def _epoch_batches(self) -> list[list[int]]:
        """This process's batches of the current epoch, the same on every call for a given epoch."""
        batches = bucketed_batches(self.train_lengths, self.config.max_tokens, self.config.seed, self.epoch)
        world = self.group.world_size
        usable = len(batches) - len(batches) % world  # every process gets as many batches
        return batches[self.group.rank : usable : world]

    def _steps_spent(self) -> str | None:
        if self.config.max_steps is not None and self.step >= self.config.max_steps:
            return "max_steps"
        return None

    def _minutes_spent(self, seconds: float) -> str | None:
        if self.config.minutes is not None and seconds >= self.config.minutes * 60:
            return "minutes"
        return None

    # ---- bookkeeping ---------------------------------------------------------------------

    def _log(self, train_loss: float, tokens_per_second: float, bar) -> None:
        learning_rate = self.scheduler.get_last_lr()[0]
        row = {"step": self.step, "epoch": self.epoch, "train_loss": train_loss, "learning_rate": learning_rate}
        self.history["train"].append({**row, "tokens_per_second": tokens_per_second})
        bar.set_postfix(loss=f"{train_loss:.3f}", lr=f"{learning_rate:.2e}", tokens_per_s=f"{tokens_per_second:,.0f}")

    def _validate_and_save(self, seconds: float) -> None:
        """Validate (main process), write the checkpoint, the history and the curves.

        Raises :class:`NonFiniteLossError` instead of writing a checkpoint from parameters or a
        validation loss that are not finite: the last good checkpoint stays in place.
        """
        random_states = self._random_states()  # gathered from every process: a collective call
        if not all(torch.isfinite(parameter).all() for parameter in self.model.parameters()):
            raise NonFiniteLossError(self._non_finite_message("the model's parameters became non-finite", updated=True))
        if not self.group.is_main:
            return
        validation_started = time.monotonic()
        validation_loss = teacher_forced_loss(self.model, self.validation_pairs, self.criterion, self.config.max_tokens)
        if not math.isfinite(validation_loss):
            # Only the main process validates; torchrun stops the others when it exits.
            raise NonFiniteLossError(
                self._non_finite_message(f"the validation loss became {validation_loss}", updated=True)
            )
        scores = evaluate(self.model, self.task, "validation", limit=self.config.validation_examples)
        row = {"step": self.step, "validation_loss": validation_loss}
        row.update({f"validation_{name}": scores[name] for name in ("exact_match", "sacrebleu") if name in scores})
        # When it was reached (wall-clock seconds of the run), and what the validation itself cost.
        row.update(seconds=round(seconds, 1), validation_seconds=round(time.monotonic() - validation_started, 1))
        self.history["validation"].append(row)
        self.model.train()
        if self.out_dir is None:
            return
        self.out_dir.mkdir(parents=True, exist_ok=True)
        save_checkpoint(self._checkpoint(seconds, random_states), self.checkpoint)
        (self.out_dir / "history.json").write_text(json.dumps(self.history, indent=1))
        size = self.model_config
        layers = f"{size.num_layers}+{size.num_layers} layers"
        title = f"{self.task.name}: d_model {size.d_model}, {layers}, {size.num_heads} heads, d_ff {size.d_ff}"
        plot_training_curves(self.history, self.out_dir / "curves.png", title=title)

    def _checkpoint(self, seconds: float, random_states: list) -> dict:
        return {
            "model_config": self.model_config.to_dict(),
            "training_config": self.config.to_dict(),
            "task": self.task.to_dict(),  # with the tokenizers: a resumed run must not retrain them
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "scaler": self.scaler.state_dict(),
            "progress": {
                "step": self.step,
                "epoch": self.epoch,
                "batch_in_epoch": self.batch_in_epoch,
                "seconds": seconds,
            },
            "history": self.history,
            "random_states": random_states,
            "provenance": self.provenance,
        }

    def _random_states(self) -> list:
        """Every process's generator states (dropout masks depend on them)."""
        state = {"torch": torch.get_rng_state()}
        if self.device.type == "cuda":
            state["cuda"] = torch.cuda.get_rng_state(self.device)
        if not self.group.is_distributed:
            return [state]
        states = [None] * self.group.world_size
        dist.all_gather_object(states, state)
        return states

    def _restore(self) -> None:
        path = self.checkpoint
        if path is None or not path.exists():
            if self.group.is_main:
                tqdm.write(f"no checkpoint at {path}: starting a new run")
            return
        state = load_checkpoint(path, map_location=self.device)
        if state["model_config"] != self.model_config.to_dict():
            raise ValueError(
                f"{path} holds a model of another size: {state['model_config']} (this run: "
                f"{self.model_config.to_dict()})"
            )
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        if state["scaler"]:  # empty when written without a gradient scaler (float32 or bfloat16)
            self.scaler.load_state_dict(state["scaler"])
        progress = state["progress"]
        self.step, self.epoch, self.batch_in_epoch, self.seconds_before = (
            progress["step"],
            progress["epoch"],
            progress["batch_in_epoch"],
            progress["seconds"],
        )
        self.history = state["history"]
        self.provenance = state.get("provenance", self.provenance)
        states = state["random_states"]
        if len(states) == self.group.world_size:
            mine = states[self.group.rank]
            torch.set_rng_state(mine["torch"].cpu())
            if "cuda" in mine and self.device.type == "cuda":
                torch.cuda.set_rng_state(mine["cuda"].cpu(), self.device)
        elif self.group.is_main:
            tqdm.write(
                f"{path} was written by {len(states)} processes, this run has {self.group.world_size}: dropout is "
                "reseeded"
            )
        if self.group.is_main:
            tqdm.write(f"resuming {path} at step {self.step} (epoch {self.epoch}, batch {self.batch_in_epoch})")

    def _non_finite_message(self, what: str, updated: bool = False) -> str:
        """``what`` happened at the current step; say where, and which checkpoint is the last good one."""
        path = self.checkpoint
        if path is not None and path.exists():
            last_step = load_checkpoint(path)["progress"]["step"]
            kept = f"the last good checkpoint, {path} (step {last_step}), is left as it was"
        else:
            kept = "no checkpoint had been written yet"
        if updated:  # raised by a validation, after the update of step self.step
            where, done = f"step {self.step}", "no checkpoint was written from it"
        else:  # raised by a training step, before its update
            where, done = (
                f"step {self.step + 1} (epoch {self.epoch}, batch {self.batch_in_epoch})",
                "the weights were not updated",
            )
        return (
            f"{what} at {where}; {done} and {kept}. "
            f"Try a lower --learning-rate-scale or a longer --warmup-steps, then --resume."
        )
