"""Attention masks (paper §3.2.3).

One convention holds everywhere in this package, the same as
``torch.nn.functional.scaled_dot_product_attention``:

    a mask is a **bool** tensor, broadcastable to the attention scores
    ``(batch, heads, L_q, L_k)``, where ``True`` means "this query **may attend** to this key"
    and ``False`` means "blocked".

Blocked scores are replaced by -inf before the softmax, so they receive exactly zero weight.
(``nn.MultiheadAttention``'s ``key_padding_mask`` and bool ``attn_mask`` use the opposite
convention, True = blocked; invert with ``~mask`` when calling it.)

Two masks cover the Transformer:

* a **padding mask** hides the ``<pad>`` tokens that fill short sentences up to the batch length;
* a **causal mask** hides the future: position ``t`` of the decoder sees positions ``<= t`` only,
  so training on a whole target sentence at once cannot cheat.

Two more restrict attention to save work on long sequences (chapters 4 and 6 of the book):

* a **block-diagonal mask** lets each position attend only within its block of consecutive
  positions (block-sparse attention);
* a **local-window mask** lets each position attend only to its neighbours within a fixed distance
  (the paper's "restricted" self-attention, §4).
"""

from __future__ import annotations

import torch
from torch import Tensor


def causal_mask(size: int, device: torch.device | str | None = None) -> Tensor:
    """The decoder's "no peeking ahead" mask.

    ``mask[i, j] = (j <= i)``: True on and below the diagonal.

    Args:
        size: sequence length ``L``.
        device: where to create the mask.

    Returns:
        bool tensor of shape ``(L, L)``; it broadcasts against ``(batch, heads, L, L)`` scores.
    """
    position = _positions(size, "causal_mask", device)
    return position[None, :] <= position[:, None]


def block_diagonal_mask(size: int, block_size: int, device: torch.device | str | None = None) -> Tensor:
    """Attention within consecutive blocks: ``mask[i, j] = (i // block_size == j // block_size)``.

    Positions ``0 .. block_size - 1`` form the first block, the next ``block_size`` the second, and
    so on; when ``block_size`` does not divide ``size`` the last block is shorter. No position
    attends across a block boundary, so the blocks never exchange information.

    Args:
        size: sequence length ``L``.
        block_size: positions per block, at least 1.
        device: where to create the mask.

    Returns:
        bool tensor of shape ``(L, L)``, True = may attend; it broadcasts against
        ``(batch, heads, L, L)`` scores.
    """
    if block_size < 1:
        raise ValueError(f"block_diagonal_mask block_size must be at least 1, got {block_size}")
    block = _positions(size, "block_diagonal_mask", device) // block_size
    return block[:, None] == block[None, :]


def local_window_mask(size: int, radius: int, device: torch.device | str | None = None) -> Tensor:
    """Attention to nearby positions only: ``mask[i, j] = (|i - j| <= radius)``.

    Each position sees itself and ``radius`` neighbours on either side (fewer at the ends), a window
    of ``2 * radius + 1`` positions: the "restricted" self-attention of the paper's §4 with a
    neighbourhood of size ``r = 2 * radius``. For a decoder, combine it with the causal mask
    (``local_window_mask(L, radius) & causal_mask(L)``).

    Args:
        size: sequence length ``L``.
        radius: how far each position sees to either side, at least 0 (0 = itself only).
        device: where to create the mask.

    Returns:
        bool tensor of shape ``(L, L)``, True = may attend; it broadcasts against
        ``(batch, heads, L, L)`` scores.
    """
    if radius < 0:
        raise ValueError(f"local_window_mask radius must be non-negative, got {radius}")
    position = _positions(size, "local_window_mask", device)
    return (position[:, None] - position[None, :]).abs() <= radius


def _positions(size: int, mask_name: str, device: torch.device | str | None) -> Tensor:
    """``0 … size - 1``: the query positions ``i`` and key positions ``j`` of a square mask."""
    if size < 0:
        raise ValueError(f"{mask_name} size must be non-negative, got {size}")
    return torch.arange(size, device=device)


def padding_mask(tokens: Tensor, pad_id: int) -> Tensor:
    """Hide padding keys: ``mask[b, 0, 0, j] = tokens[b, j] != pad_id``.

    Args:
        tokens: integer token ids of shape ``(batch, L)``.
        pad_id: the id of the padding token.

    Returns:
        bool tensor of shape ``(batch, 1, 1, L)``, broadcastable to ``(batch, heads, L_q, L)``:
        every query (and every head) sees the same keys.
    """
    if tokens.dim() != 2:
        raise ValueError(f"padding_mask expects token ids of shape (batch, L), got shape {tuple(tokens.shape)}")
    if tokens.is_floating_point() or tokens.dtype == torch.bool:
        raise TypeError(f"padding_mask expects integer token ids, got dtype {tokens.dtype}")
    return (tokens != pad_id)[:, None, None, :]


def padding_and_causal_mask(tokens: Tensor, pad_id: int) -> Tensor:
    """The decoder self-attention mask: padding mask AND causal mask.

    Args:
        tokens: target token ids of shape ``(batch, L)``.
        pad_id: the id of the padding token.

    Returns:
        bool tensor of shape ``(batch, 1, L, L)``.
    """
    return padding_mask(tokens, pad_id) & causal_mask(tokens.size(1), device=tokens.device)


def additive_mask(mask: Tensor, dtype: torch.dtype = torch.float32) -> Tensor:
    """Turn a bool mask into the additive form ``M`` of ``softmax(scores + M)``.

    ``M = 0`` where attention is allowed and ``M = -inf`` where it is blocked, since
    ``exp(s - inf) = 0``. Both forms give the same attention weights.

    Args:
        mask: bool mask of any shape (True = may attend).
        dtype: floating dtype of the result.

    Returns:
        tensor of ``mask``'s shape and the given dtype.
    """
    check_mask_dtype(mask)
    return torch.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(~mask, float("-inf"))


def check_mask_dtype(mask: Tensor) -> None:
    """Raise ``TypeError`` unless ``mask`` is a bool tensor."""
    if not isinstance(mask, Tensor):
        raise TypeError(f"mask must be a torch.Tensor of dtype torch.bool, got {type(mask).__name__}")
    if mask.dtype != torch.bool:
        raise TypeError(
            f"mask must have dtype torch.bool (True = may attend), got {mask.dtype}; "
            "convert with mask.bool() or build it with causal_mask()/padding_mask()"
        )


def check_mask(mask: Tensor, scores_shape: tuple[int, ...]) -> None:
    """Check that ``mask`` is a bool tensor that broadcasts to the scores.

    Args:
        mask: the attention mask.
        scores_shape: shape of the attention scores, ``(..., L_q, L_k)``.

    Raises:
        TypeError: if the mask is not a bool tensor.
        ValueError: if it does not broadcast to ``scores_shape``; the message names both shapes.
    """
    check_mask_dtype(mask)
    shape = tuple(scores_shape)
    try:
        broadcast = torch.broadcast_shapes(tuple(mask.shape), shape)
    except RuntimeError:
        broadcast = None
    if broadcast != shape:
        raise ValueError(
            f"mask of shape {tuple(mask.shape)} does not broadcast to the attention scores of shape "
            f"{shape} (..., L_q, L_k)"
        )
