"""Positional encoding (paper §3.5).

Attention treats its input as a set: permute the tokens and the outputs are permuted the same
way. Order must therefore be added to the input. The paper adds a fixed pattern of sines and
cosines to the embeddings:

    PE(pos, 2i)   = sin(pos / 10000^(2i / d_model))
    PE(pos, 2i+1) = cos(pos / 10000^(2i / d_model))

Each pair of dimensions ``(2i, 2i+1)`` is a clock hand turning at its own frequency
``ω_i = 10000^(-2i/d_model)``, from one turn every 2π positions down to nearly one every 10000·2π.
Moving ``k`` positions ahead rotates every hand by the angle ``k·ω_i``, so ``PE(pos + k)`` is a
fixed linear map (a block of 2×2 rotations) of ``PE(pos)``, whatever ``pos`` is: relative offsets
are easy for the model to read off. The paper found learned position embeddings (§3.5, Table 3
row E) to work as well; :class:`LearnedPositionalEmbedding` is that variant.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn


def sinusoidal_positional_encoding(max_positions: int, d_model: int) -> Tensor:
    """The paper's sinusoid table.

    Args:
        max_positions: number of positions ``0 … max_positions - 1``.
        d_model: model width (an odd width drops the last cosine column).

    Returns:
        float32 tensor ``(max_positions, d_model)`` with ``PE[pos, 2i] = sin(pos·ω_i)``,
        ``PE[pos, 2i+1] = cos(pos·ω_i)`` and ``ω_i = 10000^(-2i/d_model)``.
    """
    if max_positions <= 0 or d_model <= 0:
        raise ValueError(
            f"max_positions and d_model must be positive, got max_positions={max_positions}, d_model={d_model}"
        )
    position = torch.arange(max_positions, dtype=torch.float64).unsqueeze(1)  # (max_positions, 1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)  # (ceil(d_model / 2),)
    frequency = torch.exp(-math.log(10000.0) * two_i / d_model)  # ω_i = 10000^(-2i/d_model)
    angle = position * frequency  # (max_positions, ceil(d_model / 2))
    encoding = torch.zeros(max_positions, d_model, dtype=torch.float64)
    encoding[:, 0::2] = torch.sin(angle)
    encoding[:, 1::2] = torch.cos(angle[:, : d_model // 2])
    return encoding.float()


def relative_position_map(offset: int, d_model: int) -> Tensor:
    """The matrix ``M_k`` with ``PE(pos + k) = PE(pos) @ M_k`` for every ``pos``.

    It is block diagonal: for each frequency ``ω_i``, the 2×2 block
    ``[[cos kω_i, -sin kω_i], [sin kω_i, cos kω_i]]`` acting on the row vector ``(sin, cos)``
    (from sin(a + b) = sin a cos b + cos a sin b and cos(a + b) = cos a cos b - sin a sin b).

    Args:
        offset: the shift ``k`` (any integer).
        d_model: model width (even).

    Returns:
        float32 tensor ``(d_model, d_model)``.
    """
    if d_model % 2:
        raise ValueError(f"relative_position_map needs an even d_model, got {d_model}")
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)
    angle = offset * torch.exp(-math.log(10000.0) * two_i / d_model)  # k·ω_i
    cos, sin = torch.cos(angle), torch.sin(angle)
    matrix = torch.zeros(d_model, d_model, dtype=torch.float64)
    matrix[0::2, 0::2] = torch.diag(cos)  # new sin gets  sin·cos(kω)
    matrix[1::2, 0::2] = torch.diag(sin)  #             + cos·sin(kω)
    matrix[0::2, 1::2] = torch.diag(-sin)  # new cos gets -sin·sin(kω)
    matrix[1::2, 1::2] = torch.diag(cos)  #             + cos·cos(kω)
    return matrix.float()


class SinusoidalPositionalEncoding(nn.Module):
    """Add the sinusoid table to a batch of embeddings, then apply dropout (paper §5.4).

    Args:
        d_model: model width.
        max_positions: longest sequence supported.
        dropout: dropout probability applied to the sum.
    """

    def __init__(self, d_model: int, max_positions: int = 5000, dropout: float = 0.0):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        # A buffer, not a parameter: it moves with .to(device) but is never trained.
        self.register_buffer("encoding", sinusoidal_positional_encoding(max_positions, d_model), persistent=False)

    def forward(self, x: Tensor, start: int = 0) -> Tensor:
        """``x``: ``(batch, L, d_model)`` holding positions ``start … start + L - 1``; returns the same shape."""
        positions = _check_positions(x, start, self.encoding.size(0))
        return self.dropout(x + self.encoding[positions].to(x.dtype))


class LearnedPositionalEmbedding(nn.Module):
    """A trained vector per position, added to the embeddings (the paper's alternative, §3.5).

    Args:
        d_model: model width.
        max_positions: number of positions that have a vector (no extrapolation beyond it).
        dropout: dropout probability applied to the sum.
    """

    def __init__(self, d_model: int, max_positions: int = 5000, dropout: float = 0.0):
        super().__init__()
        self.embedding = nn.Embedding(max_positions, d_model)
        nn.init.normal_(self.embedding.weight, std=d_model**-0.5)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor, start: int = 0) -> Tensor:
        """``x``: ``(batch, L, d_model)`` holding positions ``start … start + L - 1``; returns the same shape."""
        positions = _check_positions(x, start, self.embedding.num_embeddings)
        return self.dropout(x + self.embedding(positions.to(x.device)).to(x.dtype))


def _check_positions(x: Tensor, start: int, max_positions: int) -> Tensor:
    if x.dim() != 3:
        raise ValueError(f"positional encoding expects (batch, L, d_model), got shape {tuple(x.shape)}")
    end = start + x.size(1)
    if start < 0:
        raise ValueError(f"positions start at 0, got start={start}")
    if end > max_positions:
        raise ValueError(
            f"positions {start}…{end - 1} need a table of at least {end} positions, "
            f"but this one has max_positions={max_positions} (positions 0…{max_positions - 1})"
        )
    return torch.arange(start, end, device=x.device)
