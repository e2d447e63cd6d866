"""The optimiser and the learning-rate schedule of the paper (§5.3).

Adam with β₁ = 0.9, β₂ = 0.98, ε = 10⁻⁹, and a learning rate that rises linearly for
``warmup_steps`` steps and then decays with the inverse square root of the step (Eq. 3):

    lrate = d_model^-0.5 · min(step^-0.5, step · warmup_steps^-1.5)

The two branches meet at ``step = warmup_steps``, where the rate peaks at
``(d_model · warmup_steps)^-0.5``. Early on, Adam's second-moment estimates are noisy and a
Post-LN Transformer diverges at a full learning rate; the warmup lets the estimates settle first.
The paper used ``warmup_steps = 4000`` for 100,000 steps of a 512-wide model; a small model
trained for a few thousand steps needs a shorter warmup, and ``scale`` multiplies the whole curve.
"""

from __future__ import annotations

from torch import nn, optim
from torch.optim.lr_scheduler import LambdaLR


def transformer_learning_rate(step: int, d_model: int, warmup_steps: int, scale: float = 1.0) -> float:
    """Eq. 3 of the paper, times ``scale``; ``step`` counts optimiser updates from 1."""
    if step < 1 or warmup_steps < 1:
        raise ValueError(f"step and warmup_steps start at 1, got step={step}, warmup_steps={warmup_steps}")
    return scale * d_model**-0.5 * min(step**-0.5, step * warmup_steps**-1.5)


def transformer_optimizer(model: nn.Module, betas: tuple[float, float] = (0.9, 0.98), eps: float = 1e-9) -> optim.Adam:
    """Adam with the paper's β and ε. Its learning rate is set by :func:`warmup_scheduler`."""
    return optim.Adam(model.parameters(), lr=1.0, betas=betas, eps=eps)


def warmup_scheduler(
    optimizer: optim.Optimizer, d_model: int, warmup_steps: int = 4000, scale: float = 1.0
) -> LambdaLR:
    """A scheduler that sets the learning rate of update ``n`` (counting from 1) to Eq. 3.

    ``LambdaLR`` multiplies the optimiser's base rate (1.0 from :func:`transformer_optimizer`)
    by the function's value; it counts its steps from 0, hence ``n + 1``. Call
    ``scheduler.step()`` after each ``optimizer.step()``.
    """
    for group in optimizer.param_groups:
        group["lr"] = group["initial_lr"] = 1.0
    return LambdaLR(optimizer, lambda step: transformer_learning_rate(step + 1, d_model, warmup_steps, scale))
