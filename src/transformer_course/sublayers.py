"""Residual connection and layer normalisation around each sublayer (paper §3.1, §5.4).

Every attention and feed-forward sublayer is wrapped the same way. The paper puts the
normalisation after the residual sum (**Post-LN**):

    x ← LayerNorm(x + Dropout(Sublayer(x)))

Most later models put it before the sublayer, inside the residual branch (**Pre-LN**):

    x ← x + Dropout(Sublayer(LayerNorm(x)))

The residual path gives each layer the Jacobian ``I + ∂F/∂x``: the identity lets gradients pass
through any depth. Post-LN sends every gradient through a LayerNorm per layer; Pre-LN keeps a
clean identity path from the loss to the first layer. Xiong et al. (2020) trace Post-LN's need
for a learning-rate warmup to this difference; chapter 5 measures the gradients of both.

:func:`independent_copies` builds a stack of such layers, each with weights of its own.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from torch import Tensor, nn


class SublayerConnection(nn.Module):
    """Residual connection with dropout and LayerNorm, Post-LN or Pre-LN.

    Args:
        d_model: width normalised by the LayerNorm.
        dropout: dropout on the sublayer output before the sum (paper §5.4, P_drop = 0.1).
        norm_first: False for Post-LN (the paper), True for Pre-LN.
    """

    def __init__(self, d_model: int, dropout: float = 0.0, norm_first: bool = False):
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x: Tensor, sublayer: Callable[[Tensor], Tensor]) -> Tensor:
        """``x``: ``(batch, L, d_model)``; ``sublayer`` maps that shape to itself."""
        if self.norm_first:
            return x + self.dropout(sublayer(self.norm(x)))  # Pre-LN
        return self.norm(x + self.dropout(sublayer(x)))  # Post-LN


def independent_copies(layer: nn.Module, count: int) -> nn.ModuleList:
    """``count`` copies of ``layer`` with the same structure and freshly initialised weights each.

    (``nn.TransformerEncoder`` deep-copies its layer, so all its layers start from identical
    weights; here every layer starts from its own random draw, as separately built layers would.)
    """
    copies = nn.ModuleList(copy.deepcopy(layer) for _ in range(count))
    for module in copies.modules():
        if module is not copies and hasattr(module, "reset_parameters"):
            module.reset_parameters()
    return copies
