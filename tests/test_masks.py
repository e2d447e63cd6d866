"""Masks (paper §3.2.3): bool, True = may attend; padding hides <pad> keys, causal hides the future."""

from __future__ import annotations

import pytest
import torch
from pytorch_reference import TOLERANCE

from transformer_course import (
    additive_mask,
    causal_mask,
    padding_and_causal_mask,
    padding_mask,
    scaled_dot_product_attention,
)
from transformer_course.masks import block_diagonal_mask, local_window_mask

PAD = 0


def test_causal_mask_has_shape_l_by_l_and_dtype_bool(device):
    mask = causal_mask(5, device=device)
    assert mask.shape == (5, 5) and mask.dtype == torch.bool and mask.device.type == device.type


def test_causal_mask_lets_position_i_see_exactly_positions_up_to_i():
    mask = causal_mask(6)
    for i in range(6):
        for j in range(6):
            assert mask[i, j] == (j <= i)


def test_causal_mask_of_size_zero_is_empty():
    assert causal_mask(0).shape == (0, 0)


def test_padding_mask_has_shape_batch_1_1_l(device):
    tokens = torch.tensor([[5, 6, 7, PAD], [8, PAD, PAD, PAD]], device=device)
    mask = padding_mask(tokens, PAD)
    assert mask.shape == (2, 1, 1, 4) and mask.dtype == torch.bool


def test_padding_mask_is_false_exactly_at_pad_tokens():
    tokens = torch.tensor([[5, 6, 7, PAD], [8, PAD, PAD, PAD]])
    assert padding_mask(tokens, PAD)[:, 0, 0].tolist() == [[True, True, True, False], [True, False, False, False]]


def test_padding_mask_uses_the_given_pad_id():
    tokens = torch.tensor([[3, 0, 3]])
    assert padding_mask(tokens, 3)[0, 0, 0].tolist() == [False, True, False]


def test_target_mask_is_padding_and_causal(device):
    tokens = torch.tensor([[5, 6, 7, PAD], [8, 9, PAD, PAD]], device=device)
    mask = padding_and_causal_mask(tokens, PAD)
    assert mask.shape == (2, 1, 4, 4)
    assert torch.equal(mask, padding_mask(tokens, PAD) & causal_mask(4, device=device))
    assert mask[1, 0, 3].tolist() == [True, True, False, False]  # last query sees the two real tokens


def test_additive_mask_is_zero_where_allowed_and_minus_infinity_where_blocked():
    mask = causal_mask(3)
    additive = additive_mask(mask)
    assert additive.dtype == torch.float32
    assert torch.all(additive[mask] == 0.0) and torch.all(additive[~mask] == float("-inf"))


def test_additive_mask_gives_the_same_softmax_weights_as_the_bool_mask():
    torch.manual_seed(0)
    query, key, value = torch.randn(2, 4, 5, 8), torch.randn(2, 4, 5, 8), torch.randn(2, 4, 5, 8)
    tokens = torch.tensor([[5, 6, 7, 8, PAD], [8, 9, PAD, PAD, PAD]])
    mask = padding_and_causal_mask(tokens, PAD)
    _, bool_weights = scaled_dot_product_attention(query, key, value, mask)
    scores = query @ key.transpose(-2, -1) / 8**0.5
    additive_weights = torch.softmax(scores + additive_mask(mask), dim=-1)
    torch.testing.assert_close(additive_weights, bool_weights, **TOLERANCE)


def test_additive_mask_has_the_requested_dtype():
    assert additive_mask(causal_mask(3), dtype=torch.float16).dtype == torch.float16


def test_negative_causal_size_raises():
    with pytest.raises(ValueError, match="non-negative, got -1"):
        causal_mask(-1)


def test_padding_mask_of_one_dimensional_tokens_raises_naming_the_shape():
    with pytest.raises(ValueError, match=r"\(batch, L\), got shape \(4,\)"):
        padding_mask(torch.tensor([1, 2, 3, PAD]), PAD)


def test_padding_mask_of_float_tokens_raises_type_error():
    with pytest.raises(TypeError, match="integer token ids, got dtype torch.float32"):
        padding_mask(torch.ones(2, 3), PAD)


def test_additive_mask_of_a_non_bool_mask_raises_type_error():
    with pytest.raises(TypeError, match="dtype torch.bool .* got torch.int64"):
        additive_mask(torch.ones(3, 3, dtype=torch.long))


def test_block_diagonal_mask_has_shape_l_by_l_and_dtype_bool(device):
    mask = block_diagonal_mask(6, 3, device=device)
    assert mask.shape == (6, 6) and mask.dtype == torch.bool and mask.device.type == device.type


def test_block_diagonal_mask_lets_position_i_see_exactly_its_own_block():
    mask = block_diagonal_mask(6, 3)
    for i in range(6):
        for j in range(6):
            assert mask[i, j] == (i // 3 == j // 3)


def test_block_diagonal_mask_makes_the_last_block_shorter_when_the_size_does_not_divide():
    assert block_diagonal_mask(5, 2)[4].tolist() == [False, False, False, False, True]


def test_block_diagonal_mask_with_one_block_of_the_whole_length_allows_everything():
    assert block_diagonal_mask(4, 4).all()


def test_block_diagonal_attention_equals_attention_run_on_each_block_alone():
    torch.manual_seed(0)
    query, key, value = torch.randn(2, 6, 4), torch.randn(2, 6, 4), torch.randn(2, 6, 4)
    masked, _ = scaled_dot_product_attention(query, key, value, block_diagonal_mask(6, 3))
    blocks = [scaled_dot_product_attention(query[:, s], key[:, s], value[:, s])[0] for s in (slice(0, 3), slice(3, 6))]
    torch.testing.assert_close(masked, torch.cat(blocks, dim=1), **TOLERANCE)


def test_block_diagonal_mask_with_block_size_zero_raises_naming_it():
    with pytest.raises(ValueError, match="block_size must be at least 1, got 0"):
        block_diagonal_mask(6, 0)


def test_block_diagonal_mask_of_negative_size_raises():
    with pytest.raises(ValueError, match="non-negative, got -2"):
        block_diagonal_mask(-2, 3)


def test_local_window_mask_has_shape_l_by_l_and_dtype_bool(device):
    mask = local_window_mask(7, 2, device=device)
    assert mask.shape == (7, 7) and mask.dtype == torch.bool and mask.device.type == device.type


def test_local_window_mask_lets_position_i_see_exactly_the_positions_within_the_radius():
    mask = local_window_mask(7, 2)
    for i in range(7):
        for j in range(7):
            assert mask[i, j] == (abs(i - j) <= 2)


def test_local_window_mask_of_radius_zero_lets_each_position_see_only_itself():
    assert torch.equal(local_window_mask(5, 0), torch.eye(5, dtype=torch.bool))


def test_local_window_mask_wider_than_the_sequence_allows_everything():
    assert local_window_mask(4, 10).all()


def test_local_window_mask_and_causal_mask_leave_the_window_of_the_past():
    assert (local_window_mask(5, 1) & causal_mask(5))[3].tolist() == [False, False, True, True, False]


def test_local_window_mask_with_negative_radius_raises_naming_it():
    with pytest.raises(ValueError, match="radius must be non-negative, got -1"):
        local_window_mask(5, -1)
