"""What stops a run that diverges: a NaN or infinite loss, gradient, weight or validation loss.

The run stops before the update that would spread it into the weights (a training step), or
before a checkpoint is written from it (a validation), so the last good checkpoint stays in place
and ``--resume`` can continue from it with a gentler schedule.
"""

from __future__ import annotations

from .run_state import RunState


class NonFiniteLossError(RuntimeError):
    """The loss (or the gradients, or the weights) became NaN or infinite: the run stopped without
    updating the weights or overwriting the last good checkpoint."""


class NonFiniteGradientError(NonFiniteLossError):
    """The loss was finite but its gradients were not (without a gradient scaler to skip the step)."""


def non_finite_message(state: RunState, what: str, updated: bool = False) -> str:
    """``what`` happened in ``state``'s current step; say where, and which checkpoint is the last good one.

    Args:
        updated: raised by a validation, after the update of step ``state.step``; otherwise by a
            training step, before its update.
    """
    if state.saved_step is not None:
        kept = f"the last good checkpoint, {state.checkpoint_path} (step {state.saved_step}), is left as it was"
    else:
        kept = "no checkpoint had been written yet"
    if updated:
        where, done = f"step {state.step}", "no checkpoint was written from it"
    else:
        where = f"step {state.step + 1} (epoch {state.epoch}, batch {state.batch_in_epoch})"
        done = "the weights were not updated"
    return (
        f"{what} at {where}; {done} and {kept}. "
        f"Try a lower --learning-rate-scale or a longer --warmup-steps, then --resume."
    )
