"""Position-wise feed-forward network (paper §3.3, Eq. 2).

    FFN(x) = max(0, x W_1 + b_1) W_2 + b_2

Two linear maps with a ReLU between them, applied to every position separately and identically
(the same ``W_1, W_2`` at every position, different ones in every layer). Attention mixes
information *across* positions; the FFN transforms each position's vector on its own. The inner
width is ``d_ff = 4 · d_model`` in the paper (2048 for d_model = 512).
"""

from __future__ import annotations

from torch import Tensor, nn


class PositionwiseFeedForward(nn.Module):
    """``W_2(dropout(relu(W_1 x)))``, applied at every position.

    Args:
        d_model: input and output width.
        d_ff: inner width (paper: 4 · d_model).
        dropout: dropout on the hidden activations (as in ``nn.TransformerEncoderLayer``).

    Attributes:
        w_1: ``nn.Linear(d_model, d_ff)``.
        w_2: ``nn.Linear(d_ff, d_model)``.
    """

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0):
        super().__init__()
        self.w_1 = nn.Linear(d_model, d_ff)
        self.w_2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        """``(..., d_model)`` → ``(..., d_model)``; the hidden layer is ``(..., d_ff)``."""
        return self.w_2(self.dropout(self.w_1(x).relu()))
