"""Encoder and decoder layers and stacks equal PyTorch's ``nn.TransformerEncoderLayer``,
``nn.TransformerDecoderLayer`` and ``nn.Transformer`` given the same weights, Post-LN and Pre-LN.

PyTorch's modules run in training mode with dropout 0 and autograd on, which keeps them off their
inference fast path (see ``pytorch_reference``); ours run with dropout 0 too.
"""

from __future__ import annotations

import pytest
import torch
from pytorch_reference import TOLERANCE, copy_decoder_layer, copy_encoder_layer, copy_transformer
from torch import nn

from transformer_course import (
    DecoderLayer,
    EncoderLayer,
    Transformer,
    causal_mask,
    padding_and_causal_mask,
    padding_mask,
)

D_MODEL, HEADS, D_FF, LAYERS, PAD = 16, 4, 32, 2, 0
NORM_FIRST = [pytest.param(False, id="post-ln"), pytest.param(True, id="pre-ln")]
FUSED = [pytest.param(False, id="reference"), pytest.param(True, id="fused")]

# Source (batch, 6) and target (batch, 5) token ids; the second sentence of each is padded.
SOURCE = torch.tensor([[4, 5, 6, 7, 8, 9], [4, 5, 6, PAD, PAD, PAD]])
TARGET = torch.tensor([[1, 5, 6, 7, 8], [1, 9, PAD, PAD, PAD]])


def encoder_layer_pair(norm_first: bool, fused: bool, device):
    torch.manual_seed(0)
    ours = EncoderLayer(D_MODEL, HEADS, D_FF, dropout=0.0, norm_first=norm_first, fused_attention=fused).to(device)
    theirs = nn.TransformerEncoderLayer(D_MODEL, HEADS, D_FF, dropout=0.0, batch_first=True, norm_first=norm_first)
    theirs = theirs.to(device).train()
    copy_encoder_layer(ours, theirs)
    return ours, theirs


def decoder_layer_pair(norm_first: bool, fused: bool, device):
    torch.manual_seed(0)
    ours = DecoderLayer(D_MODEL, HEADS, D_FF, dropout=0.0, norm_first=norm_first, fused_attention=fused).to(device)
    theirs = nn.TransformerDecoderLayer(D_MODEL, HEADS, D_FF, dropout=0.0, batch_first=True, norm_first=norm_first)
    theirs = theirs.to(device).train()
    copy_decoder_layer(ours, theirs)
    return ours, theirs


@pytest.mark.parametrize("fused", FUSED)
@pytest.mark.parametrize("norm_first", NORM_FIRST)
def test_encoder_layer_equals_pytorch_without_mask(norm_first, fused, device):
    ours, theirs = encoder_layer_pair(norm_first, fused, device)
    x = torch.randn(2, 6, D_MODEL, device=device)
    torch.testing.assert_close(ours(x), theirs(x), **TOLERANCE)


@pytest.mark.parametrize("fused", FUSED)
@pytest.mark.parametrize("norm_first", NORM_FIRST)
def test_encoder_layer_equals_pytorch_with_padding_mask(norm_first, fused, device):
    ours, theirs = encoder_layer_pair(norm_first, fused, device)
    x = torch.randn(2, 6, D_MODEL, device=device)
    source = SOURCE.to(device)
    expected = theirs(x, src_key_padding_mask=source == PAD)  # PyTorch: True = padding
    torch.testing.assert_close(ours(x, padding_mask(source, PAD)), expected, **TOLERANCE)


@pytest.mark.parametrize("fused", FUSED)
@pytest.mark.parametrize("norm_first", NORM_FIRST)
def test_encoder_layer_equals_pytorch_with_causal_mask(norm_first, fused, device):
    ours, theirs = encoder_layer_pair(norm_first, fused, device)
    x = torch.randn(2, 6, D_MODEL, device=device)
    mask = causal_mask(6, device=device)
    torch.testing.assert_close(ours(x, mask), theirs(x, src_mask=~mask), **TOLERANCE)


@pytest.mark.parametrize("fused", FUSED)
@pytest.mark.parametrize("norm_first", NORM_FIRST)
def test_decoder_layer_equals_pytorch_with_padding_and_causal_masks(norm_first, fused, device):
    ours, theirs = decoder_layer_pair(norm_first, fused, device)
    source, target = SOURCE.to(device), TARGET.to(device)
    y = torch.randn(2, 5, D_MODEL, device=device)
    memory = torch.randn(2, 6, D_MODEL, device=device)
    expected = theirs(
        y,
        memory,
        tgt_mask=~causal_mask(5, device=device),
        tgt_key_padding_mask=target == PAD,
        memory_key_padding_mask=source == PAD,
    )
    output = ours(y, memory, source_mask=padding_mask(source, PAD), target_mask=padding_and_causal_mask(target, PAD))
    torch.testing.assert_close(output, expected, **TOLERANCE)


@pytest.mark.parametrize("norm_first", NORM_FIRST)
def test_decoder_layer_equals_pytorch_without_masks(norm_first, device):
    ours, theirs = decoder_layer_pair(norm_first, False, device)
    y = torch.randn(2, 5, D_MODEL, device=device)
    memory = torch.randn(2, 7, D_MODEL, device=device)
    torch.testing.assert_close(ours(y, memory), theirs(y, memory), **TOLERANCE)


def transformer_pair(norm_first: bool, device):
    torch.manual_seed(0)
    ours = Transformer(20, 20, D_MODEL, HEADS, LAYERS, D_FF, dropout=0.0, norm_first=norm_first).to(device)
    theirs = (
        nn.Transformer(D_MODEL, HEADS, LAYERS, LAYERS, D_FF, dropout=0.0, batch_first=True, norm_first=norm_first)
        .to(device)
        .train()
    )
    # nn.Transformer always ends each stack with a LayerNorm. The paper's Post-LN stack has none
    # (each layer already ends with one), so copy_transformer sets reference.encoder.norm and
    # reference.decoder.norm to None for norm_first=False; a Pre-LN stack needs the final norm,
    # and ours has it too, so for norm_first=True copy_transformer copies our final norms into it.
    copy_transformer(ours, theirs)
    return ours, theirs


@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")  # PyTorch's notice for Pre-LN stacks
@pytest.mark.parametrize("norm_first", NORM_FIRST)
def test_encoder_stack_equals_pytorch_transformer_encoder(norm_first, device):
    ours, theirs = transformer_pair(norm_first, device)
    source = SOURCE.to(device)
    embedded = ours.source_positions(ours.source_embedding(source))  # nn.Transformer takes embeddings
    expected = theirs.encoder(embedded, src_key_padding_mask=source == PAD)
    torch.testing.assert_close(ours.encode(source, padding_mask(source, PAD)), expected, **TOLERANCE)


@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")
@pytest.mark.parametrize("norm_first", NORM_FIRST)
def test_decoder_stack_equals_pytorch_transformer_decoder(norm_first, device):
    ours, theirs = transformer_pair(norm_first, device)
    source, target = SOURCE.to(device), TARGET.to(device)
    memory = ours.encode(source, padding_mask(source, PAD))
    embedded = ours.target_positions(ours.target_embedding(target))
    expected = theirs.decoder(
        embedded,
        memory,
        tgt_mask=~causal_mask(5, device=device),
        tgt_key_padding_mask=target == PAD,
        memory_key_padding_mask=source == PAD,
    )
    hidden = ours.decode(target, memory, padding_mask(source, PAD), padding_and_causal_mask(target, PAD))
    torch.testing.assert_close(hidden, expected, **TOLERANCE)


@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")
@pytest.mark.parametrize("norm_first", NORM_FIRST)
def test_whole_model_equals_pytorch_transformer_then_output_projection(norm_first, device):
    ours, theirs = transformer_pair(norm_first, device)
    source, target = SOURCE.to(device), TARGET.to(device)
    hidden = theirs(
        ours.source_positions(ours.source_embedding(source)),
        ours.target_positions(ours.target_embedding(target)),
        tgt_mask=~causal_mask(5, device=device),
        src_key_padding_mask=source == PAD,
        tgt_key_padding_mask=target == PAD,
        memory_key_padding_mask=source == PAD,
    )
    logits = ours(source, target, padding_mask(source, PAD), padding_and_causal_mask(target, PAD))
    torch.testing.assert_close(logits, hidden @ ours.target_embedding.weight.T, **TOLERANCE)
