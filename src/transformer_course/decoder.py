"""The decoder stack (paper §3.1, right half of Figure 1).

Each of the ``N`` identical layers has three sublayers, each with residual + LayerNorm:

    y ← Sublayer₁(y, masked self-attention over the target prefix)     # causal mask
    y ← Sublayer₂(y, cross-attention: queries from y, keys/values from the encoder memory)
    y ← Sublayer₃(y, FFN)

The causal mask lets position ``t`` see target positions ``≤ t`` only, so the whole target
sentence can be trained in parallel while each prediction depends only on its past.
Cross-attention's scores have shape ``(batch, heads, L_tgt, L_src)``: every target position
looks over the whole source sentence.

During decoding, :class:`DecoderLayerCache` (one per layer, from :meth:`Decoder.new_cache`) keeps
the keys and values: self-attention's grow by one position per step, cross-attention's are
computed once from the memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from torch import Tensor, nn

from .feed_forward import PositionwiseFeedForward
from .multi_head_attention import KeyValueCache, MultiHeadAttention
from .sublayers import SublayerConnection, independent_copies


@dataclass
class DecoderLayerCache:
    """The two key/value caches of one decoder layer."""

    self_attention: KeyValueCache = field(default_factory=lambda: KeyValueCache(static=False))
    cross_attention: KeyValueCache = field(default_factory=lambda: KeyValueCache(static=True))

    def reorder(self, index: Tensor) -> None:
        self.self_attention.reorder(index)
        self.cross_attention.reorder(index)


class DecoderLayer(nn.Module):
    """Masked self-attention, cross-attention, feed-forward; each with residual + LayerNorm.

    Args:
        d_model: model width.
        num_heads: attention heads.
        d_ff: inner width of the feed-forward network.
        dropout: dropout rate.
        norm_first: Pre-LN if True, Post-LN (the paper) if False.
        d_k: each head's query/key size (default ``d_model / num_heads``; see
            :class:`~transformer_course.MultiHeadAttention`).
        fused_attention: use PyTorch's fused attention kernel.
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.1,
        norm_first: bool = False,
        *,
        d_k: int | None = None,
        fused_attention: bool = False,
    ):
        super().__init__()
        self.self_attention = MultiHeadAttention(d_model, num_heads, dropout, d_k=d_k, fused_attention=fused_attention)
        self.cross_attention = MultiHeadAttention(d_model, num_heads, dropout, d_k=d_k, fused_attention=fused_attention)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.self_attention_sublayer = SublayerConnection(d_model, dropout, norm_first)
        self.cross_attention_sublayer = SublayerConnection(d_model, dropout, norm_first)
        self.feed_forward_sublayer = SublayerConnection(d_model, dropout, norm_first)

    def forward(
        self,
        y: Tensor,
        memory: Tensor,
        source_mask: Tensor | None = None,
        target_mask: Tensor | None = None,
        cache: DecoderLayerCache | None = None,
    ) -> Tensor:
        """Run one decoder layer.

        Args:
            y: target states ``(batch, L_tgt, d_model)`` (only the new positions when caching).
            memory: encoder output ``(batch, L_src, d_model)``.
            source_mask: bool, broadcastable to ``(batch, heads, L_tgt, L_src)``.
            target_mask: bool, broadcastable to ``(batch, heads, L_tgt, L_tgt)``; causal.
            cache: keys/values from earlier decoding steps, updated in place.

        Returns:
            ``(batch, L_tgt, d_model)``.
        """
        self_cache = cache.self_attention if cache is not None else None
        cross_cache = cache.cross_attention if cache is not None else None
        y = self.self_attention_sublayer(y, lambda h: self.self_attention(h, h, h, target_mask, self_cache))
        y = self.cross_attention_sublayer(
            y, lambda h: self.cross_attention(h, memory, memory, source_mask, cross_cache)
        )
        return self.feed_forward_sublayer(y, self.feed_forward)


class Decoder(nn.Module):
    """``num_layers`` independent copies of ``layer``, then ``final_norm`` (see :class:`~transformer_course.Encoder`).

    Args:
        layer: the layer to copy (each copy gets its own freshly initialised parameters).
        num_layers: ``N`` (6 in the paper).
        final_norm: applied to the last layer's output, e.g. ``nn.LayerNorm(d_model)`` for a Pre-LN
            stack; ``None`` (Post-LN) applies nothing.
    """

    def __init__(self, layer: DecoderLayer, num_layers: int, final_norm: nn.Module | None = None):
        super().__init__()
        self.layers = independent_copies(layer, num_layers)
        self.final_norm = final_norm if final_norm is not None else nn.Identity()

    def forward(
        self,
        y: Tensor,
        memory: Tensor,
        source_mask: Tensor | None = None,
        target_mask: Tensor | None = None,
        cache: list[DecoderLayerCache] | None = None,
    ) -> Tensor:
        """``y``: ``(batch, L_tgt, d_model)`` → ``(batch, L_tgt, d_model)``; ``cache``: one entry per layer."""
        for index, layer in enumerate(self.layers):
            y = layer(y, memory, source_mask, target_mask, None if cache is None else cache[index])
        return self.final_norm(y)

    def new_cache(self) -> list[DecoderLayerCache]:
        """Empty caches for incremental decoding, one per layer."""
        return [DecoderLayerCache() for _ in self.layers]
