"""The encoder-decoder Transformer (paper §3, Figure 1): shapes, symmetry, causality, weight tying,
caching, padding and precision."""

from __future__ import annotations

import pytest
import torch
from pytorch_reference import TOLERANCE

from transformer_course import (
    Decoder,
    DecoderLayer,
    Encoder,
    EncoderLayer,
    LearnedPositionalEmbedding,
    MultiHeadAttention,
    SinusoidalPositionalEncoding,
    Transformer,
    padding_and_causal_mask,
    padding_mask,
    recording_attention,
)
from transformer_course.training import ModelConfig

SRC_VOCAB, TGT_VOCAB, D_MODEL, HEADS, LAYERS, D_FF, PAD = 23, 19, 16, 4, 2, 32, 0


def small_model(
    device, source_vocab_size: int = SRC_VOCAB, target_vocab_size: int = TGT_VOCAB, **options
) -> Transformer:
    """A two-layer model in eval mode, dropout 0 unless asked for."""
    torch.manual_seed(0)
    options = {"dropout": 0.0, "max_positions": 64} | options
    model = Transformer(source_vocab_size, target_vocab_size, D_MODEL, HEADS, LAYERS, D_FF, **options)
    return model.to(device).eval()


def tokens(batch: int, length: int, vocab: int, device) -> torch.Tensor:
    return torch.randint(1, vocab, (batch, length), device=device)  # ids ≥ 1: no padding


def test_logits_have_shape_batch_by_target_length_by_target_vocabulary(device):
    model = small_model(device)
    logits = model(tokens(3, 7, SRC_VOCAB, device), tokens(3, 5, TGT_VOCAB, device))
    assert logits.shape == (3, 5, TGT_VOCAB)


def test_encoder_stack_without_positions_is_permutation_equivariant(device):
    model = small_model(device)
    x = torch.randn(2, 6, D_MODEL, device=device)
    permutation = torch.tensor([3, 0, 5, 1, 4, 2], device=device)
    torch.testing.assert_close(model.encoder(x[:, permutation]), model.encoder(x)[:, permutation], **TOLERANCE)


def test_encode_with_positions_is_not_permutation_equivariant(device):
    model = small_model(device)
    src = tokens(2, 6, SRC_VOCAB, device)
    permutation = torch.tensor([3, 0, 5, 1, 4, 2], device=device)
    difference = (model.encode(src[:, permutation]) - model.encode(src)[:, permutation]).abs().max()
    assert difference > 1e-2


@pytest.mark.parametrize("fused", [False, True], ids=["reference", "fused"])
def test_logits_at_position_t_ignore_target_tokens_after_t(fused, device):
    model = small_model(device, fused_attention=fused)
    src, tgt = tokens(2, 7, SRC_VOCAB, device), tokens(2, 6, TGT_VOCAB, device)
    changed = tgt.clone()
    changed[:, 3:] = (tgt[:, 3:] % (TGT_VOCAB - 1)) + 1  # every token after position 2 is different
    assert torch.all(changed[:, 3:] != tgt[:, 3:])
    before, after = model(src, tgt), model(src, changed)
    torch.testing.assert_close(after[:, :3], before[:, :3], **TOLERANCE)
    assert (after[:, 3:] - before[:, 3:]).abs().max() > 1e-3  # the later positions do see their tokens


def test_tied_output_projection_shares_the_target_embedding_storage():
    model = small_model("cpu")
    assert model.output_projection.weight is model.target_embedding.weight
    assert model.output_projection.weight.data_ptr() == model.target_embedding.weight.data_ptr()


def test_tied_embeddings_also_share_the_source_table_with_a_shared_vocabulary():
    model = small_model("cpu", source_vocab_size=TGT_VOCAB, shared_vocabulary=True)
    assert model.source_embedding.weight.data_ptr() == model.target_embedding.weight.data_ptr()


def test_separate_vocabularies_keep_separate_source_tables_even_of_equal_size():
    model = small_model("cpu", source_vocab_size=TGT_VOCAB)
    assert model.source_embedding.weight.data_ptr() != model.target_embedding.weight.data_ptr()


def test_a_shared_vocabulary_of_two_sizes_is_refused():
    with pytest.raises(ValueError, match=f"source_vocab_size == target_vocab_size, got {SRC_VOCAB} and {TGT_VOCAB}"):
        small_model("cpu", shared_vocabulary=True)


def test_embedding_rows_start_with_length_about_one():
    lengths = small_model("cpu").target_embedding.weight.norm(dim=-1)
    assert 0.5 < lengths.mean() < 1.5


@pytest.mark.cuda
@pytest.mark.skipif(
    not torch.cuda.is_available(), reason="needs a CUDA GPU; the two tying tests above are its CPU twins"
)
def test_tied_weights_stay_shared_after_moving_to_the_gpu():
    model = small_model("cuda", source_vocab_size=TGT_VOCAB, shared_vocabulary=True)
    shared = model.target_embedding.weight.data_ptr()
    assert model.output_projection.weight.data_ptr() == shared == model.source_embedding.weight.data_ptr()


def test_untied_model_has_its_own_output_projection():
    model = small_model("cpu", tie_embeddings=False, source_vocab_size=TGT_VOCAB, shared_vocabulary=True)
    pointers = {
        model.output_projection.weight.data_ptr(),
        model.target_embedding.weight.data_ptr(),
        model.source_embedding.weight.data_ptr(),
    }
    assert len(pointers) == 3


def test_learned_positions_option_gives_both_sides_a_learned_embedding():
    model = small_model("cpu", positional="learned")
    assert isinstance(model.source_positions, LearnedPositionalEmbedding)
    assert isinstance(model.target_positions, LearnedPositionalEmbedding)


def test_learned_positions_are_trained_by_backpropagation(device):
    model = small_model(device, positional="learned")
    logits = model(tokens(2, 7, SRC_VOCAB, device), tokens(2, 5, TGT_VOCAB, device))
    logits.sum().backward()
    assert model.target_positions.embedding.weight.grad[:5].abs().sum() > 0


def test_sinusoidal_positions_are_the_default():
    assert isinstance(small_model("cpu").source_positions, SinusoidalPositionalEncoding)


def test_unknown_positional_option_raises_naming_the_choices():
    with pytest.raises(ValueError, match=r"positional must be one of \['learned', 'sinusoidal'\], got 'rotary'"):
        Transformer(SRC_VOCAB, TGT_VOCAB, D_MODEL, HEADS, positional="rotary")


def test_fused_and_reference_attention_give_the_same_logits(device):
    model = small_model(device, fused_attention=True)
    src, tgt = tokens(2, 7, SRC_VOCAB, device), tokens(2, 5, TGT_VOCAB, device)
    src[1, 4:] = PAD
    src_mask, tgt_mask = padding_mask(src, PAD), padding_and_causal_mask(tgt, PAD)
    fused = model(src, tgt, src_mask, tgt_mask)
    with recording_attention(model):
        reference = model(src, tgt, src_mask, tgt_mask)
    torch.testing.assert_close(fused, reference, **TOLERANCE)


def test_key_size_reaches_every_attention_of_both_stacks():
    model = small_model("cpu", d_k=2)
    attentions = [module for module in model.modules() if isinstance(module, MultiHeadAttention)]
    assert len(attentions) == 3 * LAYERS  # encoder self; decoder self and cross
    assert all(attention.d_k == 2 and attention.w_q.out_features == HEADS * 2 for attention in attentions)


def test_smaller_key_size_removes_exactly_the_query_and_key_weights_it_saves():
    def count(model):
        return sum(parameter.numel() for parameter in model.parameters())

    d_k = D_MODEL // HEADS
    saved_per_attention = 2 * HEADS * (d_k - 2) * (D_MODEL + 1)  # W^Q and W^K, weights and biases
    assert count(small_model("cpu")) - count(small_model("cpu", d_k=2)) == 3 * LAYERS * saved_per_attention


def test_model_config_builds_the_key_size_it_stores():
    config = ModelConfig(d_model=D_MODEL, num_heads=HEADS, d_k=2)
    model = config.build(SRC_VOCAB, TGT_VOCAB)
    assert model.encoder.layers[0].self_attention.d_k == 2
    assert ModelConfig.from_dict(config.to_dict()) == config


def test_recording_attention_keeps_weights_then_restores_the_fused_path():
    model = small_model("cpu", fused_attention=True)
    cross_attention = model.decoder.layers[0].cross_attention
    with recording_attention(model):
        model(tokens(2, 7, SRC_VOCAB, "cpu"), tokens(2, 5, TGT_VOCAB, "cpu"))
        assert cross_attention.attention_weights.shape == (2, HEADS, 5, 7)
    assert cross_attention.fused_attention


@pytest.mark.parametrize("fused", [False, True], ids=["reference", "fused"])
def test_cached_decoding_one_token_at_a_time_equals_decoding_the_whole_prefix(fused, device):
    model = small_model(device, fused_attention=fused)
    src, tgt = tokens(2, 7, SRC_VOCAB, device), tokens(2, 6, TGT_VOCAB, device)
    src[0, 5:] = PAD
    src_mask = padding_mask(src, PAD)
    memory = model.encode(src, src_mask)
    expected = model.decode(tgt, memory, src_mask)  # causal mask by default
    cache = model.decoder.new_cache()
    steps = [model.decode(tgt[:, t : t + 1], memory, src_mask, cache=cache) for t in range(6)]
    torch.testing.assert_close(torch.cat(steps, dim=1), expected, **TOLERANCE)


def test_cached_decoding_continues_positions_after_the_cached_prefix(device):
    model = small_model(device)
    src, tgt = tokens(1, 5, SRC_VOCAB, device), tokens(1, 6, TGT_VOCAB, device)
    memory = model.encode(src)
    cache = model.decoder.new_cache()
    model.decode(tgt[:, :4], memory, cache=cache)  # a prefix of 4 at once, then 2 more
    continued = model.decode(tgt[:, 4:], memory, cache=cache)
    torch.testing.assert_close(continued, model.decode(tgt, memory)[:, 4:], **TOLERANCE)


def test_source_padding_tokens_do_not_change_outputs_when_masked(device):
    model = small_model(device)
    src, tgt = tokens(2, 8, SRC_VOCAB, device), tokens(2, 5, TGT_VOCAB, device)
    src[0, 5:] = PAD
    src[1, 3:] = PAD
    mask = padding_mask(src, PAD)
    other = src.clone()
    other[~mask[:, 0, 0]] = torch.randint(1, SRC_VOCAB, (int((~mask).sum()),), device=device)  # garbage in the padding
    torch.testing.assert_close(model(other, tgt, mask), model(src, tgt, mask), **TOLERANCE)
    real = mask[:, 0, 0]
    torch.testing.assert_close(model.encode(other, mask)[real], model.encode(src, mask)[real], **TOLERANCE)


def test_source_padding_tokens_do_change_outputs_without_the_mask(device):
    model = small_model(device)
    src, tgt = tokens(1, 8, SRC_VOCAB, device), tokens(1, 5, TGT_VOCAB, device)
    other = src.clone()
    other[0, 5:] = (src[0, 5:] % (SRC_VOCAB - 1)) + 1
    assert (model(other, tgt) - model(src, tgt)).abs().max() > 1e-3


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
@pytest.mark.parametrize("fused", [False, True], ids=["reference", "fused"])
def test_model_runs_in_half_precision_with_finite_outputs(dtype, fused, device):
    model = small_model(device, fused_attention=fused).to(dtype)
    src, tgt = tokens(2, 7, SRC_VOCAB, device), tokens(2, 5, TGT_VOCAB, device)
    src[1, 4:] = PAD
    logits = model(src, tgt, padding_mask(src, PAD), padding_and_causal_mask(tgt, PAD))
    assert logits.dtype == dtype
    assert torch.isfinite(logits).all()


def test_training_step_gives_finite_gradients_to_every_parameter(device):
    model = small_model(device, dropout=0.1).train()
    src, tgt = tokens(2, 7, SRC_VOCAB, device), tokens(2, 5, TGT_VOCAB, device)
    src[1, 4:] = PAD
    logits = model(src, tgt, padding_mask(src, PAD), padding_and_causal_mask(tgt, PAD))
    torch.nn.functional.cross_entropy(logits.flatten(0, 1), tgt.flatten()).backward()
    for name, parameter in model.named_parameters():
        assert parameter.grad is not None and torch.isfinite(parameter.grad).all(), name


def test_encoder_and_decoder_layers_start_from_different_weights():
    encoder = Encoder(EncoderLayer(16, 2, 32, dropout=0.0), num_layers=3)
    decoder = Decoder(DecoderLayer(16, 2, 32, dropout=0.0), num_layers=3)
    for stack in (encoder, decoder):
        first, second = stack.layers[0].self_attention.w_q.weight, stack.layers[1].self_attention.w_q.weight
        assert first.shape == second.shape and not torch.equal(first, second)


@pytest.mark.parametrize("stack, layer", [(Encoder, EncoderLayer), (Decoder, DecoderLayer)], ids=["encoder", "decoder"])
def test_a_stack_applies_the_final_norm_it_is_given_after_its_last_layer(stack, layer):
    final_norm = torch.nn.LayerNorm(16)
    built = stack(layer(16, 2, 32, dropout=0.0, norm_first=True), num_layers=2, final_norm=final_norm)
    assert built.final_norm is final_norm
    assert isinstance(stack(layer(16, 2, 32), num_layers=2).final_norm, torch.nn.Identity)


@pytest.mark.parametrize("norm_first, final_norm", [(False, torch.nn.Identity), (True, torch.nn.LayerNorm)])
def test_transformer_ends_each_stack_with_a_layer_norm_only_when_pre_ln(norm_first, final_norm):
    model = small_model("cpu", norm_first=norm_first)
    assert isinstance(model.encoder.final_norm, final_norm) and isinstance(model.decoder.final_norm, final_norm)


def test_token_ids_outside_the_vocabulary_raise_naming_the_range():
    model = small_model("cpu")
    src = tokens(2, 7, SRC_VOCAB, "cpu")
    src[0, 3] = SRC_VOCAB
    with pytest.raises(ValueError, match=rf"0 … {SRC_VOCAB - 1} .* to {SRC_VOCAB}$"):
        model(src, tokens(2, 5, TGT_VOCAB, "cpu"))


def test_negative_token_ids_raise():
    model = small_model("cpu")
    tgt = tokens(2, 5, TGT_VOCAB, "cpu")
    tgt[1, 0] = -1
    with pytest.raises(ValueError, match="token ids must lie in"):
        model(tokens(2, 7, SRC_VOCAB, "cpu"), tgt)


def test_token_ids_without_a_batch_dimension_raise_naming_the_shape():
    model = small_model("cpu")
    with pytest.raises(ValueError, match=r"\(batch, L\), got shape \(7,\)"):
        model.encode(tokens(1, 7, SRC_VOCAB, "cpu")[0])


def test_float_token_ids_raise_type_error():
    model = small_model("cpu")
    with pytest.raises(TypeError, match="integers"):
        model.encode(tokens(2, 7, SRC_VOCAB, "cpu").float())
