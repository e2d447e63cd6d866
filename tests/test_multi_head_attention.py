"""Multi-head attention (paper §3.2.2): equal to ``nn.MultiheadAttention`` given the same weights."""

from __future__ import annotations

import re

import pytest
import torch
from pytorch_reference import TOLERANCE, pytorch_attention_like

from transformer_course import KeyValueCache, MultiHeadAttention, causal_mask

D_MODEL, HEADS = 16, 4
PATHS = [pytest.param(False, id="reference"), pytest.param(True, id="fused")]


def attention_pair(device, fused_attention: bool = False) -> tuple[MultiHeadAttention, torch.nn.MultiheadAttention]:
    torch.manual_seed(0)
    ours = MultiHeadAttention(D_MODEL, HEADS, fused_attention=fused_attention).to(device)
    return ours, pytorch_attention_like(ours)


def key_padding(lengths: list[int], length: int, device) -> torch.Tensor:
    """``(batch, 1, 1, L)``, True at the first ``lengths[b]`` positions of sequence ``b``."""
    return (torch.arange(length, device=device) < torch.tensor(lengths, device=device)[:, None])[:, None, None, :]


@pytest.mark.parametrize("fused", PATHS)
def test_self_attention_equals_pytorch(fused, device):
    ours, theirs = attention_pair(device, fused)
    x = torch.randn(3, 6, D_MODEL, device=device)
    expected, _ = theirs(x, x, x, need_weights=False)
    torch.testing.assert_close(ours(x, x, x), expected, **TOLERANCE)


@pytest.mark.parametrize("fused", PATHS)
def test_cross_attention_with_different_lengths_equals_pytorch(fused, device):
    ours, theirs = attention_pair(device, fused)
    query = torch.randn(3, 4, D_MODEL, device=device)  # L_q = 4
    memory = torch.randn(3, 9, D_MODEL, device=device)  # L_k = 9
    expected, _ = theirs(query, memory, memory, need_weights=False)
    output = ours(query, memory, memory)
    assert output.shape == (3, 4, D_MODEL)
    torch.testing.assert_close(output, expected, **TOLERANCE)


@pytest.mark.parametrize("fused", PATHS)
def test_padding_mask_equals_pytorch_key_padding_mask(fused, device):
    ours, theirs = attention_pair(device, fused)
    query = torch.randn(3, 4, D_MODEL, device=device)
    memory = torch.randn(3, 6, D_MODEL, device=device)
    mask = key_padding([6, 3, 1], 6, device)  # (batch, 1, 1, L_k), True = may attend
    # PyTorch's key_padding_mask is (batch, L_k) with the opposite meaning: True = padding.
    expected, _ = theirs(query, memory, memory, key_padding_mask=~mask[:, 0, 0, :], need_weights=False)
    torch.testing.assert_close(ours(query, memory, memory, mask), expected, **TOLERANCE)


@pytest.mark.parametrize("fused", PATHS)
def test_causal_mask_equals_pytorch_attn_mask(fused, device):
    ours, theirs = attention_pair(device, fused)
    x = torch.randn(2, 5, D_MODEL, device=device)
    mask = causal_mask(5, device=device)
    expected, _ = theirs(x, x, x, attn_mask=~mask, need_weights=False)  # PyTorch: True = blocked
    torch.testing.assert_close(ours(x, x, x, mask), expected, **TOLERANCE)


def test_three_dimensional_mask_applies_to_every_head(device):
    ours, _ = attention_pair(device)
    x = torch.randn(2, 5, D_MODEL, device=device)
    mask = key_padding([5, 2], 5, device) & causal_mask(5, device=device)  # (batch, 1, L, L)
    torch.testing.assert_close(ours(x, x, x, mask[:, 0]), ours(x, x, x, mask), **TOLERANCE)


def test_per_head_weights_equal_pytorch_unaveraged_weights(device):
    ours, theirs = attention_pair(device)
    query = torch.randn(2, 4, D_MODEL, device=device)
    memory = torch.randn(2, 6, D_MODEL, device=device)
    mask = key_padding([6, 2], 6, device)
    _, expected = theirs(query, memory, memory, key_padding_mask=~mask[:, 0, 0, :], average_attn_weights=False)
    ours(query, memory, memory, mask)
    assert ours.attention_weights.shape == (2, HEADS, 4, 6)
    torch.testing.assert_close(ours.attention_weights, expected, **TOLERANCE)


def test_attention_weights_are_detached_and_none_on_the_fused_path(device):
    ours, _ = attention_pair(device)
    x = torch.randn(2, 3, D_MODEL, device=device)
    ours(x, x, x)
    assert ours.attention_weights is not None and not ours.attention_weights.requires_grad
    ours.fused_attention = True
    ours(x, x, x)
    assert ours.attention_weights is None


def test_fused_path_equals_reference_path(device):
    reference, _ = attention_pair(device, fused_attention=False)
    fused = MultiHeadAttention(D_MODEL, HEADS, fused_attention=True).to(device)
    fused.load_state_dict(reference.state_dict())
    x = torch.randn(3, 6, D_MODEL, device=device)
    mask = key_padding([6, 4, 2], 6, device) & causal_mask(6, device=device)
    torch.testing.assert_close(fused(x, x, x, mask), reference(x, x, x, mask), **TOLERANCE)


@pytest.mark.parametrize("fused", PATHS)
def test_gradients_equal_pytorch(fused, device):
    ours, theirs = attention_pair(device, fused)
    x = torch.randn(2, 5, D_MODEL, device=device, requires_grad=True)
    ours(x, x, x).square().sum().backward()
    our_input_grad, x.grad = x.grad, None
    theirs(x, x, x, need_weights=False)[0].square().sum().backward()
    torch.testing.assert_close(our_input_grad, x.grad, **TOLERANCE)
    our_in_proj_grad = torch.cat([ours.w_q.weight.grad, ours.w_k.weight.grad, ours.w_v.weight.grad])
    torch.testing.assert_close(our_in_proj_grad, theirs.in_proj_weight.grad, **TOLERANCE)
    torch.testing.assert_close(ours.w_o.weight.grad, theirs.out_proj.weight.grad, **TOLERANCE)


@pytest.mark.parametrize("fused", PATHS)
def test_fully_masked_query_row_gives_finite_output(fused, device):
    # nn.MultiheadAttention returns NaN for a query that may attend to no key (with its default
    # need_weights=True, and on its inference fast path). Ours defines the attention of such a query
    # as 0, so its output is W^O·0 + b^O, and the other rows are unaffected.
    ours, theirs = attention_pair(device, fused)
    x = torch.randn(2, 5, D_MODEL, device=device)
    mask = torch.ones(5, 5, dtype=torch.bool, device=device)
    mask[3] = False
    output = ours(x, x, x, mask)
    assert torch.isfinite(output).all()
    torch.testing.assert_close(output[:, 3], ours.w_o.bias.expand(2, D_MODEL), **TOLERANCE)
    other_rows = [0, 1, 2, 4]
    expected, _ = theirs(x[:, other_rows], x, x, attn_mask=~mask[other_rows], need_weights=False)
    torch.testing.assert_close(output[:, other_rows], expected, **TOLERANCE)


def test_d_model_not_divisible_by_num_heads_raises_naming_both():
    with pytest.raises(ValueError, match="d_model=10 is not divisible by num_heads=4"):
        MultiHeadAttention(10, 4)


def test_non_positive_sizes_raise():
    with pytest.raises(ValueError, match="d_model=16, num_heads=0"):
        MultiHeadAttention(16, 0)


def test_key_size_sets_the_query_and_key_projections_and_leaves_values_at_d_model():
    attention = MultiHeadAttention(D_MODEL, HEADS, d_k=2)  # d_v = D_MODEL / HEADS = 4
    assert attention.w_q.weight.shape == attention.w_k.weight.shape == (HEADS * 2, D_MODEL)
    assert attention.w_v.weight.shape == attention.w_o.weight.shape == (D_MODEL, D_MODEL)
    weights = 2 * (HEADS * 2 * D_MODEL) + 2 * D_MODEL * D_MODEL
    biases = 2 * HEADS * 2 + 2 * D_MODEL
    assert sum(parameter.numel() for parameter in attention.parameters()) == weights + biases


def test_default_key_size_is_d_model_over_heads_like_the_values():
    attention = MultiHeadAttention(D_MODEL, HEADS)
    assert attention.d_k == attention.d_v == D_MODEL // HEADS


@pytest.mark.parametrize("fused", PATHS)
def test_smaller_key_size_keeps_the_output_shape_and_caches_keys_of_d_k(fused, device):
    attention = MultiHeadAttention(D_MODEL, HEADS, d_k=2, fused_attention=fused).to(device)
    query, memory = torch.randn(3, 4, D_MODEL, device=device), torch.randn(3, 6, D_MODEL, device=device)
    cache = KeyValueCache(static=True)
    assert attention(query, memory, memory, cache=cache).shape == (3, 4, D_MODEL)
    assert cache.key.shape == (3, HEADS, 6, 2) and cache.value.shape == (3, HEADS, 6, D_MODEL // HEADS)


def test_smaller_key_size_scales_the_scores_by_one_over_root_d_k():
    torch.manual_seed(0)
    attention = MultiHeadAttention(D_MODEL, HEADS, d_k=3)
    x = torch.randn(2, 5, D_MODEL)
    attention(x, x, x)
    q, k = attention.split_heads(attention.w_q(x)), attention.split_heads(attention.w_k(x))  # (2, HEADS, 5, 3)
    expected = torch.softmax(q @ k.transpose(-2, -1) / 3**0.5, dim=-1)
    torch.testing.assert_close(attention.attention_weights, expected, **TOLERANCE)


def test_fused_path_equals_reference_path_with_a_smaller_key_size(device):
    torch.manual_seed(0)
    reference = MultiHeadAttention(D_MODEL, HEADS, d_k=2).to(device)
    fused = MultiHeadAttention(D_MODEL, HEADS, d_k=2, fused_attention=True).to(device)
    fused.load_state_dict(reference.state_dict())
    x = torch.randn(3, 6, D_MODEL, device=device)
    mask = key_padding([6, 4, 2], 6, device) & causal_mask(6, device=device)
    torch.testing.assert_close(fused(x, x, x, mask), reference(x, x, x, mask), **TOLERANCE)


@pytest.mark.parametrize("d_k", [0, -4, 2.5], ids=["zero", "negative", "float"])
def test_bad_key_size_raises_naming_it(d_k):
    with pytest.raises(
        ValueError, match=re.escape(f"d_k, the key size of each head, must be a positive int or None, got {d_k!r}")
    ):
        MultiHeadAttention(D_MODEL, HEADS, d_k=d_k)


@pytest.mark.parametrize(
    "name, shape",
    [("query", (2, 5)), ("key", (2, 5, D_MODEL + 1)), ("value", (2, 5, D_MODEL, 1))],
    ids=["query-2d", "key-wrong-width", "value-4d"],
)
def test_wrong_input_shape_raises_naming_it(name, shape):
    attention = MultiHeadAttention(D_MODEL, HEADS)
    inputs = {
        "query": torch.randn(2, 5, D_MODEL),
        "key": torch.randn(2, 5, D_MODEL),
        "value": torch.randn(2, 5, D_MODEL),
    }
    inputs[name] = torch.randn(*shape)
    with pytest.raises(
        ValueError, match=re.escape(f"{name} must have shape (batch, L, d_model={D_MODEL}), got shape {shape}")
    ):
        attention(**inputs)


def test_mismatched_batch_sizes_raise_naming_the_shapes():
    attention = MultiHeadAttention(D_MODEL, HEADS)
    query, memory = torch.randn(2, 5, D_MODEL), torch.randn(3, 5, D_MODEL)
    with pytest.raises(
        ValueError, match=re.escape(f"same batch size, got shapes (2, 5, {D_MODEL}), (3, 5, {D_MODEL})")
    ):
        attention(query, memory, memory)


def test_mismatched_key_and_value_lengths_raise_naming_the_shapes():
    attention = MultiHeadAttention(D_MODEL, HEADS)
    query, key, value = torch.randn(2, 5, D_MODEL), torch.randn(2, 6, D_MODEL), torch.randn(2, 7, D_MODEL)
    with pytest.raises(ValueError, match=re.escape(f"same length, got shapes (2, 6, {D_MODEL}) and (2, 7, {D_MODEL})")):
        attention(query, key, value)


def test_mask_that_does_not_fit_the_scores_raises_naming_both_shapes():
    attention = MultiHeadAttention(D_MODEL, HEADS)
    x = torch.randn(2, 5, D_MODEL)
    with pytest.raises(
        ValueError,
        match=re.escape(f"mask of shape (4, 4) does not broadcast to the attention scores of shape (2, {HEADS}, 5, 5)"),
    ):
        attention(x, x, x, causal_mask(4))


@pytest.mark.parametrize("fused", PATHS)
def test_self_attention_cache_one_token_at_a_time_equals_full_causal_attention(fused, device):
    ours, _ = attention_pair(device, fused)
    x = torch.randn(2, 6, D_MODEL, device=device)
    expected = ours(x, x, x, causal_mask(6, device=device))
    cache = KeyValueCache(static=False)
    steps = [ours(x[:, t : t + 1], x[:, t : t + 1], x[:, t : t + 1], cache=cache) for t in range(6)]
    torch.testing.assert_close(torch.cat(steps, dim=1), expected, **TOLERANCE)
    assert cache.key.shape == (2, HEADS, 6, D_MODEL // HEADS)


@pytest.mark.parametrize("fused", PATHS)
def test_static_cross_attention_cache_is_computed_once_and_reused(fused, device):
    ours, _ = attention_pair(device, fused)
    queries = torch.randn(2, 4, D_MODEL, device=device)
    memory = torch.randn(2, 7, D_MODEL, device=device)
    projections_of_memory = []
    ours.w_k.register_forward_hook(lambda module, inputs, output: projections_of_memory.append("key"))
    ours.w_v.register_forward_hook(lambda module, inputs, output: projections_of_memory.append("value"))
    cache = KeyValueCache(static=True)
    steps = [ours(queries[:, t : t + 1], memory, memory, cache=cache) for t in range(4)]
    assert projections_of_memory == ["key", "value"]  # projected on the first step only
    assert cache.key.shape == (2, HEADS, 7, D_MODEL // HEADS)
    torch.testing.assert_close(torch.cat(steps, dim=1), ours(queries, memory, memory), **TOLERANCE)


def test_cache_reorder_keeps_the_chosen_batch_rows():
    ours, _ = attention_pair("cpu")
    x = torch.randn(3, 2, D_MODEL)
    cache = KeyValueCache()
    ours(x, x, x, cache=cache)
    key, value = cache.key.clone(), cache.value.clone()
    cache.reorder(torch.tensor([2, 2, 0]))
    assert torch.equal(cache.key, key[[2, 2, 0]]) and torch.equal(cache.value, value[[2, 2, 0]])


def test_split_heads_then_merge_heads_is_the_identity():
    attention = MultiHeadAttention(D_MODEL, HEADS)
    x = torch.randn(2, 5, D_MODEL)
    assert torch.equal(attention.merge_heads(attention.split_heads(x)), x)


def test_merge_heads_then_split_heads_is_the_identity():
    attention = MultiHeadAttention(D_MODEL, HEADS)
    heads = torch.randn(2, HEADS, 5, D_MODEL // HEADS)
    assert torch.equal(attention.split_heads(attention.merge_heads(heads)), heads)


def test_split_heads_gives_head_i_features_i_dk_to_i_plus_one_dk():
    attention = MultiHeadAttention(D_MODEL, HEADS)
    x = torch.randn(2, 5, D_MODEL)
    heads = attention.split_heads(x)  # (batch, heads, L, d_k)
    d_k = D_MODEL // HEADS
    for head in range(HEADS):
        assert torch.equal(heads[:, head], x[..., head * d_k : (head + 1) * d_k])
