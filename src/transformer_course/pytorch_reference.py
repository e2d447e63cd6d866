"""Copy our weights into PyTorch's own modules, so that both compute the same function: how the
tests prove each layer equal to PyTorch's, and how the benchmarks time the two on equal terms.

PyTorch stores the three input projections of ``nn.MultiheadAttention`` stacked in one matrix
``in_proj_weight`` of shape ``(3·d_model, d_model)``, rows ``[W^Q; W^K; W^V]``; ours are three
``nn.Linear`` layers. Its Transformer layers name their sublayers by position (``linear1``,
``norm1``, …); ours name them by role.

The comparisons run PyTorch's modules in training mode with dropout 0 and with autograd on: that
keeps them off their inference "fast path" (fused kernels, nested tensors for padding), so what is
compared is the same computation, not PyTorch's shortcut for it.
"""

from __future__ import annotations

import torch
from torch import nn

from transformer_course import DecoderLayer, EncoderLayer, MultiHeadAttention, PositionwiseFeedForward, Transformer


@torch.no_grad()
def copy_attention(ours: MultiHeadAttention, theirs: nn.MultiheadAttention) -> None:
    """W^Q, W^K, W^V → ``in_proj_weight``/``in_proj_bias`` (stacked); W^O → ``out_proj``."""
    theirs.in_proj_weight.copy_(torch.cat([ours.w_q.weight, ours.w_k.weight, ours.w_v.weight]))
    theirs.in_proj_bias.copy_(torch.cat([ours.w_q.bias, ours.w_k.bias, ours.w_v.bias]))
    theirs.out_proj.weight.copy_(ours.w_o.weight)
    theirs.out_proj.bias.copy_(ours.w_o.bias)


@torch.no_grad()
def copy_feed_forward(
    ours: PositionwiseFeedForward, theirs: nn.TransformerEncoderLayer | nn.TransformerDecoderLayer
) -> None:
    """``feed_forward.w_1``/``w_2`` → ``linear1``/``linear2``."""
    theirs.linear1.load_state_dict(ours.w_1.state_dict())
    theirs.linear2.load_state_dict(ours.w_2.state_dict())


@torch.no_grad()
def copy_encoder_layer(ours: EncoderLayer, theirs: nn.TransformerEncoderLayer) -> None:
    """Self-attention, feed-forward, and the two sublayer norms (``norm1``, ``norm2``)."""
    copy_attention(ours.self_attention, theirs.self_attn)
    copy_feed_forward(ours.feed_forward, theirs)
    theirs.norm1.load_state_dict(ours.attention_sublayer.norm.state_dict())
    theirs.norm2.load_state_dict(ours.feed_forward_sublayer.norm.state_dict())


@torch.no_grad()
def copy_decoder_layer(ours: DecoderLayer, theirs: nn.TransformerDecoderLayer) -> None:
    """Self-attention, cross-attention, feed-forward, and the three sublayer norms."""
    copy_attention(ours.self_attention, theirs.self_attn)
    copy_attention(ours.cross_attention, theirs.multihead_attn)
    copy_feed_forward(ours.feed_forward, theirs)
    theirs.norm1.load_state_dict(ours.self_attention_sublayer.norm.state_dict())
    theirs.norm2.load_state_dict(ours.cross_attention_sublayer.norm.state_dict())
    theirs.norm3.load_state_dict(ours.feed_forward_sublayer.norm.state_dict())


@torch.no_grad()
def copy_transformer(ours: Transformer, theirs: nn.Transformer) -> None:
    """Every layer of both stacks, and the stacks' final LayerNorms.

    ``nn.Transformer`` always ends each stack with a LayerNorm. A Pre-LN stack needs it (its
    output is an un-normalised residual sum) and ours has it too, so it is copied. A Post-LN
    stack, as in the paper, already ends with the last sublayer's LayerNorm; ours adds no other,
    so PyTorch's extra one is removed (``norm = None``) to compare the same function.
    """
    for our_layer, their_layer in zip(ours.encoder.layers, theirs.encoder.layers, strict=True):
        copy_encoder_layer(our_layer, their_layer)
    for our_layer, their_layer in zip(ours.decoder.layers, theirs.decoder.layers, strict=True):
        copy_decoder_layer(our_layer, their_layer)
    if isinstance(ours.encoder.final_norm, nn.LayerNorm):
        theirs.encoder.norm.load_state_dict(ours.encoder.final_norm.state_dict())
        theirs.decoder.norm.load_state_dict(ours.decoder.final_norm.state_dict())
    else:
        theirs.encoder.norm = None
        theirs.decoder.norm = None


def pytorch_attention_like(ours: MultiHeadAttention) -> nn.MultiheadAttention:
    """An ``nn.MultiheadAttention(batch_first=True)`` holding ``ours``'s weights, in training mode."""
    theirs = nn.MultiheadAttention(ours.d_model, ours.num_heads, dropout=0.0, batch_first=True)
    theirs = theirs.to(ours.w_q.weight.device)
    copy_attention(ours, theirs)
    return theirs.train()
