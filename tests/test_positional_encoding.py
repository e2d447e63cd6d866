"""Positional encoding (paper §3.5): the sinusoid table, its rotation property, and the two modules."""

from __future__ import annotations

import math

import pytest
import torch

from transformer_course import (
    LearnedPositionalEmbedding,
    SinusoidalPositionalEncoding,
    relative_position_map,
    sinusoidal_positional_encoding,
)


def paper_formula(max_positions: int, d_model: int) -> torch.Tensor:
    """PE(pos, 2i) = sin(pos / 10000^(2i/d_model)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model)).

    Checked one entry at a time."""
    table = torch.empty(max_positions, d_model, dtype=torch.float64)
    for pos in range(max_positions):
        for dim in range(d_model):
            i = dim // 2
            angle = pos / 10000 ** (2 * i / d_model)
            table[pos, dim] = math.sin(angle) if dim % 2 == 0 else math.cos(angle)
    return table


@pytest.mark.parametrize("d_model", [8, 7], ids=["even", "odd"])
def test_table_matches_the_paper_formula_element_by_element(d_model):
    table = sinusoidal_positional_encoding(20, d_model)
    assert table.shape == (20, d_model) and table.dtype == torch.float32
    torch.testing.assert_close(table.double(), paper_formula(20, d_model), atol=1e-6, rtol=0.0)


@pytest.mark.parametrize("offset", [1, 3, 17, -5])
def test_shifting_by_k_is_a_fixed_linear_map_for_every_position(offset):
    d_model, max_positions = 16, 64
    table = sinusoidal_positional_encoding(max_positions, d_model)
    shift = relative_position_map(offset, d_model)
    positions = torch.arange(
        max(0, -offset), min(max_positions, max_positions - offset)
    )  # pos with pos + k in the table
    torch.testing.assert_close(table[positions] @ shift, table[positions + offset], atol=1e-5, rtol=0.0)


def test_relative_position_map_is_a_rotation():
    shift = relative_position_map(7, 12)
    torch.testing.assert_close(shift @ shift.T, torch.eye(12), atol=1e-6, rtol=0.0)


def test_relative_position_map_refuses_odd_width():
    with pytest.raises(ValueError, match="even d_model, got 7"):
        relative_position_map(1, 7)


def test_values_lie_in_minus_one_to_one():
    table = sinusoidal_positional_encoding(2000, 64)
    assert table.min() >= -1.0 and table.max() <= 1.0


def test_position_zero_is_sin_zero_cos_zero():
    assert torch.equal(sinusoidal_positional_encoding(10, 6)[0], torch.tensor([0.0, 1.0, 0.0, 1.0, 0.0, 1.0]))


def test_odd_d_model_ends_with_a_sine_column():
    table = sinusoidal_positional_encoding(10, 5)
    frequency = 10000 ** (-4 / 5)  # column 4 is 2i with i = 2
    torch.testing.assert_close(table[:, 4], torch.sin(torch.arange(10.0) * frequency), atol=1e-6, rtol=0.0)


def test_non_positive_sizes_raise():
    with pytest.raises(ValueError, match="max_positions=0, d_model=8"):
        sinusoidal_positional_encoding(0, 8)


def test_sinusoidal_module_adds_the_table(device):
    encoding = SinusoidalPositionalEncoding(8, max_positions=10).to(device)
    x = torch.randn(2, 4, 8, device=device)
    expected = x + sinusoidal_positional_encoding(10, 8).to(device)[:4]
    torch.testing.assert_close(encoding(x), expected)


def test_sinusoidal_module_starts_at_start(device):
    encoding = SinusoidalPositionalEncoding(8, max_positions=10).to(device)
    x = torch.randn(2, 3, 8, device=device)
    expected = x + sinusoidal_positional_encoding(10, 8).to(device)[5:8]
    torch.testing.assert_close(encoding(x, start=5), expected)


def test_sinusoidal_table_is_a_buffer_not_a_parameter():
    encoding = SinusoidalPositionalEncoding(8, max_positions=10)
    assert list(encoding.parameters()) == []
    assert "encoding" in dict(encoding.named_buffers())


def test_learned_module_adds_its_embedding_and_starts_at_start(device):
    torch.manual_seed(0)
    positions = LearnedPositionalEmbedding(8, max_positions=10).to(device)
    x = torch.randn(2, 3, 8, device=device)
    torch.testing.assert_close(positions(x, start=4), x + positions.embedding.weight[4:7])


@pytest.mark.parametrize("module", [SinusoidalPositionalEncoding, LearnedPositionalEmbedding])
def test_positions_beyond_max_positions_raise_naming_the_table_size_they_need(module):
    encoding = module(8, max_positions=10)
    expected = (
        r"positions 8…11 need a table of at least 12 positions, but this one has max_positions=10 \(positions 0…9\)"
    )
    with pytest.raises(ValueError, match=expected):
        encoding(torch.zeros(1, 4, 8), start=8)


@pytest.mark.parametrize("module", [SinusoidalPositionalEncoding, LearnedPositionalEmbedding])
def test_positions_that_end_at_the_last_row_of_the_table_are_accepted(module):
    assert module(8, max_positions=10)(torch.zeros(1, 4, 8), start=6).shape == (1, 4, 8)


@pytest.mark.parametrize("module", [SinusoidalPositionalEncoding, LearnedPositionalEmbedding])
def test_negative_start_raises(module):
    with pytest.raises(ValueError, match="positions start at 0, got start=-1"):
        module(8, max_positions=10)(torch.zeros(1, 4, 8), start=-1)


@pytest.mark.parametrize("module", [SinusoidalPositionalEncoding, LearnedPositionalEmbedding])
def test_input_without_batch_dimension_raises_naming_the_shape(module):
    with pytest.raises(ValueError, match=r"\(batch, L, d_model\), got shape \(4, 8\)"):
        module(8, max_positions=10)(torch.zeros(4, 8))


def test_learned_embedding_has_a_trainable_vector_per_position():
    positions = LearnedPositionalEmbedding(8, max_positions=10)
    parameters = list(positions.parameters())
    assert len(parameters) == 1
    assert parameters[0].shape == (10, 8) and parameters[0].requires_grad
    positions(torch.zeros(1, 3, 8), start=2).sum().backward()
    used = parameters[0].grad.abs().sum(dim=1) > 0
    assert used.tolist() == [False, False, True, True, True, False, False, False, False, False]
