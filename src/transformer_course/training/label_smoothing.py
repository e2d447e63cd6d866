"""Label smoothing (paper §5.4: ε_ls = 0.1).

Cross-entropy trains the model to put probability 1 on the reference token. Label smoothing
trains it towards a softened target instead: ``1 - ε`` on the reference token plus ``ε`` spread
evenly over the whole vocabulary of ``V`` tokens,

    q(k) = (1 - ε) · [k = y] + ε / V

    loss = -Σ_k q(k) log p(k) = (1 - ε) · (-log p(y)) + ε · mean_k(-log p(k))

The model is never rewarded for being certain, which "hurts perplexity, as the model learns to be
more unsure, but improves accuracy and BLEU score" (§5.4). Padding positions count for nothing,
and the loss is the mean over the real target tokens.

This is the convention of ``F.cross_entropy(..., label_smoothing=ε)`` (the ε mass includes the
reference token); the tests prove the two equal.
"""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn


class LabelSmoothingLoss(nn.Module):
    """Cross-entropy against the smoothed target ``(1 - ε)·one_hot(y) + ε/V``, ignoring padding.

    Args:
        smoothing: ε (0 gives ordinary cross-entropy).
        ignore_index: the target id whose positions are left out (``<pad>``).
    """

    def __init__(self, smoothing: float = 0.1, ignore_index: int = 0):
        super().__init__()
        if not 0.0 <= smoothing < 1.0:
            raise ValueError(f"smoothing must be in [0, 1), got {smoothing}")
        self.smoothing = smoothing
        self.ignore_index = ignore_index

    def forward(self, logits: Tensor, targets: Tensor) -> Tensor:
        """Mean loss over the non-padding tokens.

        Args:
            logits: ``(..., V)``, e.g. ``(batch, L_tgt, V)``.
            targets: ids ``(...)``, e.g. ``(batch, L_tgt)``.

        Returns:
            a scalar.
        """
        if logits.shape[:-1] != targets.shape:
            raise ValueError(
                f"logits (..., V) and targets (...) must agree, got logits {tuple(logits.shape)} and targets "
                f"{tuple(targets.shape)}"
            )
        log_probs = F.log_softmax(logits.float(), dim=-1)  # (..., V), in float32 even under autocast
        keep = targets != self.ignore_index  # (...)
        safe_targets = targets.masked_fill(~keep, 0)  # any valid id; these positions are dropped below
        nll = -log_probs.gather(-1, safe_targets.unsqueeze(-1)).squeeze(-1)  # -log p(y)
        uniform = -log_probs.mean(dim=-1)  # mean_k(-log p(k))
        loss = (1.0 - self.smoothing) * nll + self.smoothing * uniform  # (...)
        return loss[keep].sum() / keep.sum().clamp(min=1)

    def extra_repr(self) -> str:
        return f"smoothing={self.smoothing}, ignore_index={self.ignore_index}"
