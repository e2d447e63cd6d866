"""Token embeddings scaled by √d_model (paper §3.4).

    Embedding(token) = E[token] · √d_model

A learned table ``E`` maps each token id to a ``d_model``-vector. Its entries start small, drawn
from N(0, 1/d_model), so that a row has length about 1 — the scale at which ``E`` also works as the
output layer (below). The paper multiplies the embedding by √d_model, which brings that length to
about √d_model, the magnitude of the positional encoding added to it (length √(d_model/2)), so
that neither drowns out the other.

The same table can serve as the output projection (``logits = h Eᵀ``): the paper shares it
between the two embeddings and the pre-softmax linear layer ("weight tying", §3.4).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn


class TokenEmbedding(nn.Module):
    """Look up token vectors and scale them by √d_model.

    Args:
        vocab_size: number of token ids.
        d_model: model width.

    Attributes:
        weight: the table ``E`` of shape ``(vocab_size, d_model)``, shareable with the output layer.
    """

    def __init__(self, vocab_size: int, d_model: int):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, d_model)
        self.scale = math.sqrt(d_model)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Entries from N(0, 1/d_model): every row of ``E`` has length about 1."""
        nn.init.normal_(self.embedding.weight, mean=0.0, std=self.embedding.embedding_dim**-0.5)

    @property
    def weight(self) -> nn.Parameter:
        return self.embedding.weight

    def forward(self, tokens: Tensor) -> Tensor:
        """``tokens``: integer ids ``(batch, L)`` → ``(batch, L, d_model)``.

        Raises:
            TypeError: the ids are not integers.
            ValueError: they are not ``(batch, L)``, or an id lies outside ``0 … vocab_size - 1``
                (on a GPU that would otherwise end in an opaque device-side assertion).
        """
        if tokens.is_floating_point() or tokens.dtype == torch.bool:
            raise TypeError(f"token ids must be integers, got dtype {tokens.dtype}")
        if tokens.dim() != 2:
            raise ValueError(f"token ids must have shape (batch, L), got shape {tuple(tokens.shape)}")
        vocab_size = self.embedding.num_embeddings
        if tokens.numel() and not (0 <= int(tokens.min()) and int(tokens.max()) < vocab_size):
            raise ValueError(
                f"token ids must lie in 0 … {vocab_size - 1} (vocab_size={vocab_size}), "
                f"got ids from {int(tokens.min())} to {int(tokens.max())}"
            )
        return self.embedding(tokens) * self.scale
