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
    if size < 0:
        raise ValueError(f"causal_mask size must be non-negative, got {size}")
    return torch.ones(size, size, dtype=torch.bool, device=device).tril()


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


def target_mask(tokens: Tensor, pad_id: int) -> Tensor:
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
