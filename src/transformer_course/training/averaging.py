"""The average of a run's weights: the paper's checkpoint averaging, for a run that stops on a clock.

The paper evaluated its base models as "a single model obtained by averaging the last 5
checkpoints, which were written at 10-minute intervals" (§6.1). At the end of training the weights
still wander around a minimum with the noise of each update; their average lies nearer to it, which
is worth about what lowering the learning rate at the end would be, and costs no training. A run
stopped by a time budget cannot know which of its checkpoints will be its last five, so it keeps an
exponential moving average of its weights instead (Polyak and Juditsky, 1992), after every update::

    θ̄ ← d_t · θ̄ + (1 − d_t) · θ          d_t = min(d, (1 + t) / (10 + t))

where t counts the updates averaged so far. The cap (1 + t) / (10 + t), as TensorFlow's
``ExponentialMovingAverage(num_updates=...)`` has it, keeps the average from remembering the first
updates for long: validation scores the average all through the run, and with a constant d = 0.995
the average at update 500 would still hold 0.995⁵⁰⁰ ≈ 8 % of the random initial weights. The
average spans about the last 1 / (1 − d) updates, and it is what the run delivers: validation
scores it, the checkpoint keeps it beside the weights that training continues from, and
``evaluate`` decodes with it.

The average is PyTorch's :class:`torch.optim.swa_utils.AveragedModel`, a copy of the model whose
parameters are the average; only this update rule is ours.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch.optim.swa_utils import AveragedModel


def averaged_model(model: nn.Module, decay: float) -> AveragedModel:
    """A copy of ``model`` whose parameters follow the moving average above with decay ``d = decay``;
    call ``update_parameters(model)`` after each update (the first call copies the weights).

    Raises:
        ValueError: ``decay`` is not in [0, 1).
    """
    if not 0.0 <= decay < 1.0:
        raise ValueError(f"the average's decay must be in [0, 1), got {decay}")

    @torch.no_grad()
    def update(averages: list[Tensor], weights: list[Tensor], updates: Tensor) -> None:
        t = float(updates)
        weight = 1.0 - min(decay, (1.0 + t) / (10.0 + t))
        for average, current in zip(averages, weights):
            average.lerp_(current, weight)

    return AveragedModel(model, multi_avg_fn=update)
