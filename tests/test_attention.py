"""Scaled dot-product attention (paper §3.2.1): both paths equal PyTorch's kernel, and its edge cases."""

from __future__ import annotations

import re

import pytest
import torch
import torch.nn.functional as F
from pytorch_reference import TOLERANCE

from transformer_course import causal_mask, scaled_dot_product_attention

PATHS = [pytest.param(False, id="reference"), pytest.param(True, id="fused")]


def random_qkv(
    *batch: int, length_q: int = 5, length_k: int = 7, d_k: int = 8, d_v: int = 6, device="cpu", dtype=torch.float32
):
    """Query ``(*batch, L_q, d_k)``, key ``(*batch, L_k, d_k)``, value ``(*batch, L_k, d_v)``."""
    query = torch.randn(*batch, length_q, d_k, device=device, dtype=dtype)
    key = torch.randn(*batch, length_k, d_k, device=device, dtype=dtype)
    value = torch.randn(*batch, length_k, d_v, device=device, dtype=dtype)
    return query, key, value


def key_padding(lengths: list[int], length_k: int, device="cpu") -> torch.Tensor:
    """``(batch, 1, 1, L_k)``: sequence ``b`` has ``lengths[b]`` real keys, then padding."""
    positions = torch.arange(length_k, device=device)
    return (positions < torch.tensor(lengths, device=device)[:, None])[:, None, None, :]


@pytest.mark.parametrize("fused", PATHS)
def test_equals_pytorch_without_mask(fused, device):
    torch.manual_seed(0)
    query, key, value = random_qkv(2, 3, device=device)
    output, _ = scaled_dot_product_attention(query, key, value, fused_attention=fused)
    torch.testing.assert_close(output, F.scaled_dot_product_attention(query, key, value), **TOLERANCE)


@pytest.mark.parametrize("fused", PATHS)
def test_equals_pytorch_with_padding_mask(fused, device):
    torch.manual_seed(0)
    query, key, value = random_qkv(3, 2, device=device)
    mask = key_padding([7, 4, 1], 7, device=device)
    output, _ = scaled_dot_product_attention(query, key, value, mask, fused_attention=fused)
    torch.testing.assert_close(output, F.scaled_dot_product_attention(query, key, value, attn_mask=mask), **TOLERANCE)


@pytest.mark.parametrize("fused", PATHS)
def test_equals_pytorch_with_causal_mask(fused, device):
    torch.manual_seed(0)
    query, key, value = random_qkv(2, 3, length_q=6, length_k=6, device=device)
    mask = causal_mask(6, device=device)
    output, _ = scaled_dot_product_attention(query, key, value, mask, fused_attention=fused)
    torch.testing.assert_close(output, F.scaled_dot_product_attention(query, key, value, attn_mask=mask), **TOLERANCE)


@pytest.mark.parametrize("fused", PATHS)
def test_causal_mask_equals_pytorch_is_causal(fused, device):
    torch.manual_seed(0)
    query, key, value = random_qkv(2, 3, length_q=6, length_k=6, device=device)
    output, _ = scaled_dot_product_attention(query, key, value, causal_mask(6, device=device), fused_attention=fused)
    torch.testing.assert_close(output, F.scaled_dot_product_attention(query, key, value, is_causal=True), **TOLERANCE)


@pytest.mark.parametrize("fused", PATHS)
def test_equals_pytorch_with_batch_and_head_broadcasting(fused, device):
    torch.manual_seed(0)
    query = torch.randn(2, 4, 5, 8, device=device)  # (batch, heads, L_q, d_k)
    key = torch.randn(2, 1, 7, 8, device=device)  # one key set shared by every head
    value = torch.randn(1, 1, 7, 6, device=device)  # one value set shared by the whole batch
    mask = key_padding([7, 3], 7, device=device)  # (batch, 1, 1, L_k)
    output, _ = scaled_dot_product_attention(query, key, value, mask, fused_attention=fused)
    expected = F.scaled_dot_product_attention(query, key.expand(2, 4, 7, 8), value.expand(2, 4, 7, 6), attn_mask=mask)
    assert output.shape == (2, 4, 5, 6)
    torch.testing.assert_close(output, expected, **TOLERANCE)


def test_reference_returns_weights_of_shape_lq_by_lk(device):
    query, key, value = random_qkv(2, 3, device=device)
    _, weights = scaled_dot_product_attention(query, key, value)
    assert weights.shape == (2, 3, 5, 7)


def test_fused_returns_no_weights(device):
    query, key, value = random_qkv(2, 3, device=device)
    _, weights = scaled_dot_product_attention(query, key, value, fused_attention=True)
    assert weights is None


def test_reference_weights_equal_softmax_of_scaled_scores(device):
    torch.manual_seed(0)
    query, key, value = random_qkv(2, device=device)
    _, weights = scaled_dot_product_attention(query, key, value)
    expected = torch.softmax(query @ key.transpose(-2, -1) / 8**0.5, dim=-1)
    torch.testing.assert_close(weights, expected, **TOLERANCE)


def test_attention_rows_sum_to_one(device):
    torch.manual_seed(0)
    query, key, value = random_qkv(3, 2, device=device)
    _, weights = scaled_dot_product_attention(query, key, value, key_padding([7, 4, 1], 7, device=device))
    torch.testing.assert_close(weights.sum(dim=-1), torch.ones(3, 2, 5, device=device), **TOLERANCE)


def test_masked_positions_get_weight_exactly_zero(device):
    torch.manual_seed(0)
    query, key, value = random_qkv(2, 2, length_q=6, length_k=6, device=device)
    mask = key_padding([6, 4], 6, device=device) & causal_mask(6, device=device)  # (batch, 1, L_q, L_k)
    _, weights = scaled_dot_product_attention(query, key, value, mask)
    blocked = ~mask.expand_as(weights)
    assert blocked.any()
    assert torch.all(weights[blocked] == 0.0)
    assert torch.all(weights[~blocked] > 0.0)


@pytest.mark.parametrize("fused", PATHS)
def test_fully_masked_row_gives_finite_zero_output(fused, device):
    torch.manual_seed(0)
    query, key, value = random_qkv(2, 3, device=device)
    mask = torch.ones(5, 7, dtype=torch.bool, device=device)
    mask[2] = False  # query 2 may attend to no key
    output, _ = scaled_dot_product_attention(query, key, value, mask, fused_attention=fused)
    assert torch.isfinite(output).all()
    assert torch.all(output[..., 2, :] == 0.0)


@pytest.mark.parametrize("fused", PATHS)
def test_fully_masked_row_gives_finite_gradients(fused, device):
    torch.manual_seed(0)
    query, key, value = (tensor.requires_grad_() for tensor in random_qkv(2, 3, device=device))
    mask = torch.ones(5, 7, dtype=torch.bool, device=device)
    mask[2] = False
    output, _ = scaled_dot_product_attention(query, key, value, mask, fused_attention=fused)
    output.sum().backward()
    for tensor in (query, key, value):
        assert torch.isfinite(tensor.grad).all()


def test_fully_masked_row_gets_zero_weights():
    torch.manual_seed(0)
    query, key, value = random_qkv(2)
    mask = torch.ones(5, 7, dtype=torch.bool)
    mask[2] = False
    _, weights = scaled_dot_product_attention(query, key, value, mask)
    assert torch.all(weights[:, 2] == 0.0)


@pytest.mark.parametrize("fused", PATHS)
@pytest.mark.parametrize(
    "dtype, tolerance", [(torch.float16, 5e-3), (torch.bfloat16, 3e-2)], ids=["float16", "bfloat16"]
)
def test_half_precision_runs_and_stays_close_to_float32(fused, dtype, tolerance, device):
    torch.manual_seed(0)
    query, key, value = random_qkv(2, 3, device=device)
    mask = key_padding([7, 3], 7, device=device)
    expected, _ = scaled_dot_product_attention(query, key, value, mask, fused_attention=fused)
    output, _ = scaled_dot_product_attention(
        query.to(dtype), key.to(dtype), value.to(dtype), mask, fused_attention=fused
    )
    assert output.dtype == dtype
    torch.testing.assert_close(output.float(), expected, atol=tolerance, rtol=tolerance)


def test_dropout_zeroes_some_weights_and_rescales_the_rest():
    torch.manual_seed(0)
    query, key, value = random_qkv(4, 8)
    _, weights = scaled_dot_product_attention(query, key, value)
    torch.manual_seed(1)
    _, dropped = scaled_dot_product_attention(query, key, value, dropout_p=0.25)
    kept = dropped != 0
    assert 0.6 < kept.float().mean() < 0.9  # about 3 weights in 4 survive
    # Inverted dropout: a surviving weight is divided by 1 - p, so each weight keeps its expectation.
    torch.testing.assert_close(dropped[kept], weights[kept] / 0.75, **TOLERANCE)


@pytest.mark.parametrize("fused", PATHS)
def test_dropout_keeps_the_expected_output(fused):
    torch.manual_seed(0)
    query, key, value = random_qkv(1, length_q=3, length_k=4, d_v=2)
    expected, weights = scaled_dot_product_attention(query, key, value)
    p, draws = 0.5, 20000  # the same query repeated over many batch rows, each with its own dropout draw
    output, _ = scaled_dot_product_attention(query.expand(draws, 3, 8), key, value, dropout_p=p, fused_attention=fused)
    # output_j = Σ_k w_k·m_k/(1-p)·v_kj with m_k ~ Bernoulli(1-p): each term has variance
    # w_k²·v_kj²·p/(1-p). The mean of the draws must lie within 5 standard errors of its expectation.
    standard_error = ((weights**2) @ (value**2) * p / (1 - p) / draws).sqrt()  # (1, L_q, d_v)
    assert torch.all((output.mean(dim=0, keepdim=True) - expected).abs() < 5 * standard_error)


def test_dropout_is_off_when_p_is_zero():
    torch.manual_seed(0)
    query, key, value = random_qkv(2)
    first, _ = scaled_dot_product_attention(query, key, value, dropout_p=0.0)
    second, _ = scaled_dot_product_attention(query, key, value, dropout_p=0.0)
    assert torch.equal(first, second)


def shapes(*tensors: torch.Tensor) -> list[str]:
    return [re.escape(str(tuple(tensor.shape))) for tensor in tensors]


def test_rank_below_two_raises_naming_the_shape():
    query = torch.randn(8)
    key, value = torch.randn(7, 8), torch.randn(7, 8)
    with pytest.raises(ValueError, match=r"query must have shape \(\.\.\., L, d\).*got shape \(8,\)"):
        scaled_dot_product_attention(query, key, value)


def test_different_ranks_raise_naming_the_shapes():
    query, key, value = torch.randn(2, 5, 8), torch.randn(7, 8), torch.randn(7, 6)
    q, k, v = shapes(query, key, value)
    with pytest.raises(ValueError, match=f"same rank, got shapes {q}, {k} and {v}"):
        scaled_dot_product_attention(query, key, value)


def test_mismatched_d_k_raises_naming_the_shapes():
    query, key, value = torch.randn(2, 5, 8), torch.randn(2, 7, 4), torch.randn(2, 7, 6)
    q, k = shapes(query, key)
    with pytest.raises(ValueError, match=f"feature size d_k, got query {q} and key {k}"):
        scaled_dot_product_attention(query, key, value)


def test_mismatched_key_and_value_lengths_raise_naming_the_shapes():
    query, key, value = torch.randn(2, 5, 8), torch.randn(2, 7, 8), torch.randn(2, 6, 8)
    k, v = shapes(key, value)
    with pytest.raises(ValueError, match=f"same length L_k, got key {k} and value {v}"):
        scaled_dot_product_attention(query, key, value)


def test_unbroadcastable_batch_dimensions_raise_naming_the_shapes():
    query, key, value = torch.randn(2, 5, 8), torch.randn(3, 7, 8), torch.randn(3, 7, 8)
    q, k, v = shapes(query, key, value)
    with pytest.raises(ValueError, match=f"query {q}, key {k} and value {v} do not broadcast"):
        scaled_dot_product_attention(query, key, value)


@pytest.mark.parametrize("fused", PATHS)
def test_non_bool_mask_raises_type_error_naming_the_dtype(fused):
    query, key, value = random_qkv(2)
    mask = torch.ones(5, 7)  # float32: is 1.0 "may attend" or "add 1 to the score"? Refused.
    with pytest.raises(TypeError, match=r"mask must have dtype torch\.bool.*got torch\.float32"):
        scaled_dot_product_attention(query, key, value, mask, fused_attention=fused)


@pytest.mark.parametrize("fused", PATHS)
def test_unbroadcastable_mask_raises_value_error_naming_both_shapes(fused):
    query, key, value = random_qkv(2)
    mask = torch.ones(5, 5, dtype=torch.bool)  # L_k is 7
    with pytest.raises(
        ValueError, match=r"mask of shape \(5, 5\) does not broadcast to the attention scores of shape \(2, 5, 7\)"
    ):
        scaled_dot_product_attention(query, key, value, mask, fused_attention=fused)


def test_mask_with_more_batch_rows_than_the_scores_raises():
    query, key, value = random_qkv(2)
    mask = torch.ones(3, 5, 7, dtype=torch.bool)
    with pytest.raises(ValueError, match=r"mask of shape \(3, 5, 7\) does not broadcast .* \(2, 5, 7\)"):
        scaled_dot_product_attention(query, key, value, mask)


def test_integer_inputs_raise_type_error():
    query = key = value = torch.ones(2, 5, 8, dtype=torch.long)
    with pytest.raises(TypeError, match="floating-point inputs, got torch.int64"):
        scaled_dot_product_attention(query, key, value)


def test_mixed_dtypes_raise_type_error_naming_them():
    query, key, value = random_qkv(2)
    with pytest.raises(TypeError, match="share a dtype, got torch.float32, torch.float64 and torch.float32"):
        scaled_dot_product_attention(query, key.double(), value)


def test_dropout_probability_outside_zero_one_raises():
    query, key, value = random_qkv(2)
    with pytest.raises(ValueError, match=r"dropout_p must be in \[0, 1\), got 1.0"):
        scaled_dot_product_attention(query, key, value, dropout_p=1.0)
