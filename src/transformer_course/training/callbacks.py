"""What happens around the training steps, as callbacks of the :class:`~.loop.Trainer`'s events.

* :class:`LogProgress`: a point of the training-loss curve every ``log_every`` steps, and a tqdm bar;
* :class:`ValidateAndCheckpoint`: every ``validate_every`` steps and when the run stops, the
  validation loss and score (of the average of the weights, if the run keeps one), then the
  checkpoint and ``history.json`` in ``out_dir``, and ``curves.png`` (unless the config's ``curves``
  is off) when the run stops or :data:`CURVES_SECONDS` have passed since it was last drawn (each
  written atomically), never from parameters or a validation loss that are not finite.

Each has a method per event it handles (``on_train_start``, ``on_batch_end``, ``on_train_end``),
called with the trainer; :meth:`~.loop.Trainer.add_callbacks` registers them.
"""

from __future__ import annotations

import json
import math
import time

import torch
from tqdm.auto import tqdm

from ..atomic_files import write_text_atomically
from ..metrics import corpus_bleu, exact_match
from .evaluation import teacher_forced_loss, translate_split
from .non_finite import NonFiniteLossError, non_finite_message
from .plots import plot_training_curves
from .run_state import gather_random_states


class LogProgress:
    """The training loss (per target token, over the steps since the last point), the learning rate
    and the speed in target tokens per second of training (callbacks, validation among them, not
    counted), into ``history["train"]`` and onto a progress bar."""

    def __init__(self, show_bar: bool):
        self.show_bar = show_bar

    def on_train_start(self, trainer) -> None:
        config = trainer.state.training_config
        self.bar = tqdm(
            total=config.max_steps,
            initial=trainer.state.step,
            unit="step",
            disable=not self.show_bar,
            dynamic_ncols=True,
        )
        self._start_window(trainer)

    def on_batch_end(self, trainer) -> None:
        self.loss_sum += trainer.loss * trainer.tokens
        self.tokens += trainer.tokens
        self.bar.update()
        state = trainer.state
        if state.step % state.training_config.log_every != 0 and trainer.stopped_because is None:
            return
        train_loss = self.loss_sum / self.tokens
        tokens_per_second = self.tokens / (trainer.training_seconds() - self.window_started)
        learning_rate = trainer.scheduler.get_last_lr()[0]
        row = {"step": state.step, "epoch": state.epoch, "train_loss": train_loss, "learning_rate": learning_rate}
        state.history["train"].append({**row, "tokens_per_second": tokens_per_second})
        self.bar.set_postfix(
            loss=f"{train_loss:.3f}", lr=f"{learning_rate:.2e}", tokens_per_s=f"{tokens_per_second:,.0f}"
        )
        self._start_window(trainer)

    def on_train_end(self, trainer) -> None:
        self.bar.close()

    def _start_window(self, trainer) -> None:
        self.loss_sum, self.tokens, self.window_started = 0.0, 0, trainer.training_seconds()


# Seconds of a run between two drawings of its learning curves: a drawing takes a fifth of a second or
# so, which a run that validates every few steps (a test's, a tiny task's) would otherwise pay every time.
CURVES_SECONDS = 30.0


class ValidateAndCheckpoint:
    """Validate (the main process), then write the checkpoint, the history and the curves.

    Raises :class:`NonFiniteLossError` instead of writing a checkpoint from parameters or a
    validation loss that are not finite: the last good checkpoint stays in place.
    """

    def __init__(self, trainer):
        self.validation_pairs = trainer.state.task.encode("validation")

    def on_train_start(self, trainer) -> None:
        self.curves_drawn_at = trainer.seconds()

    def on_batch_end(self, trainer) -> None:
        state, config = trainer.state, trainer.state.training_config
        if trainer.stopped_because is None and state.step % config.validate_every != 0:
            return
        seconds = trainer.seconds()
        random_states = gather_random_states(trainer.group, trainer.device)  # a collective call: every process
        if not all(torch.isfinite(parameter).all() for parameter in trainer.model.parameters()):
            raise NonFiniteLossError(
                non_finite_message(state, "the model's parameters became non-finite", updated=True)
            )
        if not trainer.group.is_main:
            return
        state.history["validation"].append(self._validate(trainer, seconds))
        if state.out_dir is None:
            return
        state.out_dir.mkdir(parents=True, exist_ok=True)
        checkpoint = state.checkpoint(
            trainer.model, trainer.optimizer, trainer.scheduler, trainer.scaler, seconds, random_states, trainer.average
        )
        checkpoint.save(state.checkpoint_path)
        state.saved_step = state.step
        write_text_atomically(state.out_dir / "history.json", json.dumps(state.history, indent=1))
        if not config.curves:
            return
        if trainer.stopped_because is not None or seconds - self.curves_drawn_at >= CURVES_SECONDS:
            self._draw_curves(state)
            self.curves_drawn_at = seconds

    @staticmethod
    def _draw_curves(state) -> None:
        size = state.model_config
        layers = f"{size.num_layers}+{size.num_layers} layers"
        title = f"{state.task.name}: d_model {size.d_model}, {layers}, {size.num_heads} heads, d_ff {size.d_ff}"
        if size.architecture == "gru":
            title = f"{state.task.name}: GRU with attention, d_model {size.d_model}, {layers}"
        plot_training_curves(state.history, state.out_dir / "curves.png", title=title)

    def _validate(self, trainer, seconds: float) -> dict:
        """The validation row of the history, ``seconds`` into the run, of the model the run delivers
        (the average of its weights, if it keeps one)."""
        state, config = trainer.state, trainer.state.training_config
        started = time.monotonic()
        model = trainer.delivered_model
        loss = teacher_forced_loss(model, self.validation_pairs, trainer.criterion, config.max_tokens)
        if not math.isfinite(loss):
            # Only the main process validates; torchrun stops the others when it exits.
            raise NonFiniteLossError(non_finite_message(state, f"the validation loss became {loss}", updated=True))
        hypotheses, references = translate_split(model, state.task, "validation", limit=config.validation_examples)
        trainer.model.train()
        row = {
            "step": state.step,
            "validation_loss": loss,
            "validation_exact_match": exact_match(hypotheses, references),
        }
        if state.task.metric == "bleu":  # the standard BLEU alone: the other two are the final evaluation's
            row["validation_sacrebleu"] = corpus_bleu(hypotheses, references)
        # When it was reached (wall-clock seconds of the run), and what the validation itself cost.
        return {**row, "seconds": round(seconds, 1), "validation_seconds": round(time.monotonic() - started, 1)}
