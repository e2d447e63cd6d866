"""Multi-head attention (paper §3.2.2).

    MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O
    head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V)

One attention averages the values with a single set of weights, which blurs together different
kinds of information ("reduced effective resolution"). Multi-head attention runs ``h`` attentions
side by side, each in its own ``d_k = d_model / h``-dimensional subspace, then concatenates them
and mixes them with ``W^O``.

The ``h`` projections ``W_i^Q`` (each ``d_model × d_k``) are stored side by side as one
``nn.Linear(d_model, h·d_k)``: its output, reshaped to ``(batch, L, h, d_k)``, holds every
head's query. The same holds for ``W^K``, and for ``W^V`` with ``d_v`` in place of ``d_k``. All
heads together cost the matrix multiplications of one full-width attention; only the softmax and
the stored weights ``(batch, h, L_q, L_k)`` grow with ``h``.

The paper sets ``d_k = d_v = d_model / h`` in its models. Table 3 row B shrinks the key size
``d_k`` alone (16 and 32 instead of 64), and quality drops ("determining compatibility is not
easy"); so ``d_k`` is an argument here, while ``d_v`` stays ``d_model / h`` so that the
concatenated heads keep the model's width.

For autoregressive decoding, :class:`KeyValueCache` keeps the keys and values already computed
so that each new token costs one projection instead of recomputing the whole prefix.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from .attention import scaled_dot_product_attention


@dataclass
class KeyValueCache:
    """Keys and values of one attention layer, kept between decoding steps.

    Both tensors are already projected and split into heads: keys ``(batch, heads, steps, d_k)``,
    values ``(batch, heads, steps, d_v)``.

    * ``static=False`` (decoder self-attention): every call appends the new positions' keys and
      values, so the cache grows by one step per generated token.
    * ``static=True`` (cross-attention): keys and values come from the encoder output, which does
      not change while decoding; they are computed on the first call and reused afterwards.
    """

    static: bool = False
    key: Tensor | None = None
    value: Tensor | None = None

    def reorder(self, index: Tensor) -> None:
        """Keep the batch rows ``index`` (beam search reorders its hypotheses every step)."""
        if self.key is not None:
            self.key = self.key.index_select(0, index)
            self.value = self.value.index_select(0, index)


class MultiHeadAttention(nn.Module):
    """Multi-head attention with the paper's projections ``W^Q, W^K, W^V, W^O``.

    Args:
        d_model: model width; must be divisible by ``num_heads``.
        num_heads: number of heads ``h``; each head's values have ``d_v = d_model / h`` dimensions.
        d_k: each head's query and key size (default ``d_model / h``, as in the paper's models;
            Table 3 row B varies it alone). Scores are scaled by ``1/√d_k``.
        dropout: dropout on the attention weights (the paper applies dropout to sublayer outputs;
            PyTorch's ``nn.MultiheadAttention`` applies it here, and so do we, to match it).
        bias: whether the four projections have biases.
        fused_attention: compute attention with PyTorch's fused kernel (faster, less memory) instead of the
            reference path; the weights are then not kept.

    Attributes:
        w_q, w_k: ``nn.Linear(d_model, h·d_k)``, the paper's W^Q and W^K for all heads.
        w_v, w_o: ``nn.Linear(d_model, d_model)`` (``h·d_v = d_model``), the paper's W^V and W^O.
        attention_weights: the weights of the last forward call, ``(batch, heads, L_q, L_k)``,
            detached; ``None`` before the first call and when ``fused_attention`` is True.
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        *,
        d_k: int | None = None,
        fused_attention: bool = False,
    ):
        super().__init__()
        if d_model <= 0 or num_heads <= 0:
            raise ValueError(f"d_model and num_heads must be positive, got d_model={d_model}, num_heads={num_heads}")
        if d_model % num_heads != 0:
            raise ValueError(
                f"d_model={d_model} is not divisible by num_heads={num_heads}: each head needs "
                f"d_v = d_model / num_heads dimensions"
            )
        if d_k is not None and (not isinstance(d_k, int) or d_k <= 0):
            raise ValueError(f"d_k, the key size of each head, must be a positive int or None, got {d_k!r}")
        self.d_model = d_model
        self.num_heads = num_heads
        self.d_v = d_model // num_heads
        self.d_k = self.d_v if d_k is None else d_k
        self.dropout = dropout
        self.fused_attention = fused_attention
        self.w_q = nn.Linear(d_model, num_heads * self.d_k, bias=bias)
        self.w_k = nn.Linear(d_model, num_heads * self.d_k, bias=bias)
        self.w_v = nn.Linear(d_model, d_model, bias=bias)
        self.w_o = nn.Linear(d_model, d_model, bias=bias)
        self.attention_weights: Tensor | None = None

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        mask: Tensor | None = None,
        cache: KeyValueCache | None = None,
    ) -> Tensor:
        """Attend from ``query`` to ``key``/``value``.

        Self-attention passes the same tensor three times; cross-attention passes the decoder
        state as ``query`` and the encoder output as ``key`` and ``value``.

        Args:
            query: ``(batch, L_q, d_model)``.
            key: ``(batch, L_k, d_model)``.
            value: ``(batch, L_k, d_model)``.
            mask: bool, True = may attend; broadcastable to ``(batch, heads, L_q, L_k)``.
                A 3-D mask ``(batch, L_q, L_k)`` is applied to every head.
            cache: keys/values kept between decoding steps (see :class:`KeyValueCache`).

        Returns:
            ``(batch, L_q, d_model)``.
        """
        self._check_shapes(query, key, value)
        if mask is not None and mask.dim() == 3:
            mask = mask.unsqueeze(1)  # (batch, 1, L_q, L_k): the same mask for every head

        q = self.split_heads(self.w_q(query))  # (batch, heads, L_q, d_k)
        if cache is not None and cache.static and cache.key is not None:
            k, v = cache.key, cache.value  # cross-attention: computed once from the encoder output
        else:
            k = self.split_heads(self.w_k(key))  # (batch, heads, L_k, d_k)
            v = self.split_heads(self.w_v(value))  # (batch, heads, L_k, d_v)
            if cache is not None:
                if not cache.static and cache.key is not None:
                    k = torch.cat([cache.key, k], dim=2)  # (batch, heads, steps so far + L_k, d_k)
                    v = torch.cat([cache.value, v], dim=2)
                cache.key, cache.value = k, v

        heads, weights = scaled_dot_product_attention(
            q, k, v, mask, dropout_p=self.dropout if self.training else 0.0, fused_attention=self.fused_attention
        )  # heads: (batch, heads, L_q, d_v); weights: (batch, heads, L_q, L_k) or None
        self.attention_weights = None if weights is None else weights.detach()
        return self.w_o(self.merge_heads(heads))  # (batch, L_q, d_model)

    def split_heads(self, x: Tensor) -> Tensor:
        """``(batch, L, h·d)`` → ``(batch, heads, L, d)``: head ``i`` owns features ``i·d … (i+1)·d - 1``.

        ``d`` is ``d_k`` for projected queries and keys, ``d_v`` for projected values."""
        batch, length, _ = x.shape
        return x.view(batch, length, self.num_heads, -1).transpose(1, 2)

    def merge_heads(self, x: Tensor) -> Tensor:
        """``(batch, heads, L, d_v)`` → ``(batch, L, d_model)``: Concat(head_1, …, head_h)."""
        batch, _, length, _ = x.shape
        return x.transpose(1, 2).reshape(batch, length, self.d_model)

    def _check_shapes(self, query: Tensor, key: Tensor, value: Tensor) -> None:
        for name, tensor in (("query", query), ("key", key), ("value", value)):
            if tensor.dim() != 3 or tensor.size(-1) != self.d_model:
                raise ValueError(
                    f"{name} must have shape (batch, L, d_model={self.d_model}), got shape {tuple(tensor.shape)}"
                )
        if not (query.size(0) == key.size(0) == value.size(0)):
            raise ValueError(
                f"query, key and value must have the same batch size, got shapes {tuple(query.shape)}, "
                f"{tuple(key.shape)} and {tuple(value.shape)}"
            )
        if key.size(1) != value.size(1):
            raise ValueError(
                f"key and value must have the same length, got shapes {tuple(key.shape)} and {tuple(value.shape)}"
            )

    def extra_repr(self) -> str:
        sizes = f"d_model={self.d_model}, num_heads={self.num_heads}, d_k={self.d_k}, d_v={self.d_v}"
        return f"{sizes}, dropout={self.dropout}, fused_attention={self.fused_attention}"
