"""The encoder stack (paper §3.1, left half of Figure 1).

Each of the ``N`` identical layers has two sublayers, each wrapped in a residual connection and
LayerNorm (:class:`~transformer_course.sublayers.SublayerConnection`):

    x ← Sublayer₁(x, lambda x: SelfAttention(x, x, x, source_mask))
    x ← Sublayer₂(x, FFN)

Every position attends to every (non-padding) position of the source: the encoder is
bidirectional. The layers share their shape but not their weights: each has its own
``W^Q, W^K, W^V, W^O`` and FFN.
"""

from __future__ import annotations

from torch import Tensor, nn

from .feed_forward import PositionwiseFeedForward
from .multi_head_attention import MultiHeadAttention
from .sublayers import SublayerConnection, independent_copies


class EncoderLayer(nn.Module):
    """Self-attention then feed-forward, each with residual + LayerNorm.

    Args:
        d_model: model width.
        num_heads: attention heads.
        d_ff: inner width of the feed-forward network.
        dropout: dropout rate (attention weights, sublayer outputs, FFN hidden layer).
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
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.attention_sublayer = SublayerConnection(d_model, dropout, norm_first)
        self.feed_forward_sublayer = SublayerConnection(d_model, dropout, norm_first)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> Tensor:
        """``x``: ``(batch, L, d_model)``; ``mask``: bool, broadcastable to ``(batch, heads, L, L)``."""
        x = self.attention_sublayer(x, lambda h: self.self_attention(h, h, h, mask))
        return self.feed_forward_sublayer(x, self.feed_forward)


class Encoder(nn.Module):
    """``num_layers`` independent copies of ``layer``, then ``final_norm``.

    A Pre-LN stack leaves its output un-normalised (the residual sum of all layers), so it needs a
    last LayerNorm; a Post-LN stack already ends with one. The stack is given it, as
    ``nn.TransformerEncoder`` is given its ``norm``.

    Args:
        layer: the layer to copy (each copy gets its own freshly initialised parameters).
        num_layers: ``N`` (6 in the paper).
        final_norm: applied to the last layer's output, e.g. ``nn.LayerNorm(d_model)`` for a Pre-LN
            stack; ``None`` (Post-LN) applies nothing.
    """

    def __init__(self, layer: EncoderLayer, num_layers: int, final_norm: nn.Module | None = None):
        super().__init__()
        self.layers = independent_copies(layer, num_layers)
        self.final_norm = final_norm if final_norm is not None else nn.Identity()

    def forward(self, x: Tensor, mask: Tensor | None = None) -> Tensor:
        """``x``: ``(batch, L_src, d_model)`` → memory ``(batch, L_src, d_model)``."""
        for layer in self.layers:
            x = layer(x, mask)
        return self.final_norm(x)
