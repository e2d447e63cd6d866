"""Token embeddings scaled by √d_model (paper §3.4).

    Embedding(token) = E[token] · √d_model

A learned table ``E`` maps each token id to a ``d_model``-vector. The paper multiplies it by
√d_model: with the usual initialisation the entries of ``E`` are small (about 1/√d_model), and
the scaling brings the embedding to the same magnitude as the positional encoding added to it,
whose entries lie in [-1, 1], so that position does not drown out meaning.

The same table can serve as the output projection (``logits = h Eᵀ``): the paper shares it
between the two embeddings and the pre-softmax linear layer ("weight tying", §3.4).
"""

from __future__ import annotations

import math

from torch import Tensor, nn


class TokenEmbedding(nn.Module):
    """Look up token vectors and scale them by √d_model.

    Args:
        vocab_size: number of token ids.
        d_model: model width.
        padding_idx: optional id whose vector stays zero and gets no gradient.

    Attributes:
        weight: the table ``E`` of shape ``(vocab_size, d_model)``, shareable with the output layer.
    """

    def __init__(self, vocab_size: int, d_model: int, padding_idx: int | None = None):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, d_model, padding_idx=padding_idx)
        self.scale = math.sqrt(d_model)

    @property
    def weight(self) -> nn.Parameter:
        return self.embedding.weight

    def forward(self, tokens: Tensor) -> Tensor:
        """``tokens``: integer ids ``(batch, L)`` → ``(batch, L, d_model)``."""
        if tokens.is_floating_point():
            raise TypeError(f"token ids must be integers, got dtype {tokens.dtype}")
        return self.embedding(tokens) * self.scale
