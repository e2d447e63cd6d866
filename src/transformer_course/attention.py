"""Scaled dot-product attention (paper §3.2.1, Eq. 1).

    Attention(Q, K, V) = softmax(Q Kᵀ / √d_k) V

Every query compares itself with every key (a dot product), the scores are scaled by 1/√d_k so
their variance stays near 1 whatever the width, a softmax turns each row into weights that sum
to 1, and the output is the weighted average of the values.

Two paths compute it:

* the **reference** path below, written line by line from Eq. 1, which also returns the weights;
* the **fused** path, ``torch.nn.functional.scaled_dot_product_attention``, PyTorch's kernel
  (FlashAttention or memory-efficient attention on a GPU), which never materialises the
  ``(L_q, L_k)`` weight matrix and so returns ``None`` for it.

The tests prove the two paths equal. Masks follow the convention of :mod:`transformer_course.masks`:
bool, True = may attend.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .masks import check_mask


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    mask: Tensor | None = None,
    dropout_p: float = 0.0,
    fused_attention: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """softmax(Q Kᵀ / √d_k) V, with an optional mask and dropout on the weights.

    Args:
        query: ``(..., L_q, d_k)``, e.g. ``(batch, heads, L_q, d_k)``.
        key: ``(..., L_k, d_k)``.
        value: ``(..., L_k, d_v)``.
        mask: optional bool tensor broadcastable to ``(..., L_q, L_k)``; True = may attend.
            A query whose keys are all blocked gets weight 0 everywhere and output 0 (not NaN).
        dropout_p: probability of zeroing an attention weight (pass 0.0 when evaluating).
        fused_attention: use ``torch.nn.functional.scaled_dot_product_attention``; the weights are then
            not computed and ``None`` is returned for them.

    Returns:
        ``(output, weights)``: output ``(..., L_q, d_v)``; weights ``(..., L_q, L_k)`` (or None).

    Raises:
        ValueError: ranks, sizes or mask shape do not fit; the message names the shapes.
        TypeError: the mask is not bool, or the inputs' dtypes differ.
    """
    _check_inputs(query, key, value, mask, dropout_p)

    if fused_attention:
        output = F.scaled_dot_product_attention(query, key, value, attn_mask=mask, dropout_p=dropout_p)
        if mask is not None:
            # A query with no key to attend to has an undefined softmax; define its output as 0.
            output = output.masked_fill(~mask.any(dim=-1, keepdim=True), 0.0)
        return output, None

    d_k = query.size(-1)
    scores = query @ key.transpose(-2, -1) / math.sqrt(d_k)  # (..., L_q, L_k)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))  # exp(-inf) = 0: blocked keys get no weight
    # Softmax in float32 for accuracy in half precision; each row sums to 1.
    weights = torch.softmax(scores.float(), dim=-1).type_as(value)  # (..., L_q, L_k)
    if mask is not None:
        # A fully blocked row is softmax(-inf, ..., -inf) = NaN; give it weight 0 everywhere instead.
        weights = weights.masked_fill(~mask, 0.0)
    if dropout_p > 0.0:
        weights = F.dropout(weights, p=dropout_p)
    output = weights @ value  # (..., L_q, d_v)
    return output, weights


def _check_inputs(query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None, dropout_p: float) -> None:
    """Raise a ``ValueError``/``TypeError`` naming the shapes if the inputs of attention do not fit."""
    for name, tensor in (("query", query), ("key", key), ("value", value)):
        if not isinstance(tensor, Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(tensor).__name__}")
        if tensor.dim() < 2:
            raise ValueError(
                f"{name} must have shape (..., L, d) with at least 2 dimensions, got shape {tuple(tensor.shape)}"
            )
    if not (query.dim() == key.dim() == value.dim()):
        raise ValueError(
            f"query, key and value must have the same rank, got shapes {tuple(query.shape)}, "
            f"{tuple(key.shape)} and {tuple(value.shape)}"
        )
    if not (query.dtype == key.dtype == value.dtype):
        raise TypeError(f"query, key and value must share a dtype, got {query.dtype}, {key.dtype} and {value.dtype}")
    if not query.is_floating_point():
        raise TypeError(f"attention needs floating-point inputs, got {query.dtype}")
    if query.size(-1) != key.size(-1):
        raise ValueError(
            f"query and key must have the same feature size d_k, got query {tuple(query.shape)} and key "
            f"{tuple(key.shape)}"
        )
    if key.size(-2) != value.size(-2):
        raise ValueError(
            f"key and value must have the same length L_k, got key {tuple(key.shape)} and value {tuple(value.shape)}"
        )
    try:
        batch_shape = torch.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2])
    except RuntimeError:
        raise ValueError(
            f"the leading (batch) dimensions of query {tuple(query.shape)}, key {tuple(key.shape)} and "
            f"value {tuple(value.shape)} do not broadcast"
        ) from None
    if not 0.0 <= dropout_p < 1.0:
        raise ValueError(f"dropout_p must be in [0, 1), got {dropout_p}")
    if mask is not None:
        check_mask(mask, (*batch_shape, query.size(-2), key.size(-2)))  # the scores' shape
