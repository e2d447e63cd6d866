"""Specification of the book's attention heat map (transformer_course.book_programs.plots)."""

import matplotlib

matplotlib.use("Agg")  # no display needed

import matplotlib.pyplot as plt
import pytest
import torch

from transformer_course.book_programs.plots import attention_heatmap


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_heatmap_draws_the_weights_as_an_image_with_one_cell_per_weight():
    weights = torch.softmax(torch.randn(3, 5), dim=-1)
    ax = attention_heatmap(weights)
    assert torch.allclose(torch.as_tensor(ax.images[0].get_array()), weights)


def test_heatmap_labels_rows_with_queries_and_columns_with_keys():
    ax = attention_heatmap(torch.full((2, 3), 1 / 3), queries=["a", "b"], keys=["x", "y", "z"])
    assert [label.get_text() for label in ax.get_yticklabels()] == ["a", "b"]
    assert [label.get_text() for label in ax.get_xticklabels()] == ["x", "y", "z"]


def test_heatmap_writes_each_weight_in_its_cell_when_small():
    weights = torch.tensor([[0.25, 0.75], [1.0, 0.0]])
    ax = attention_heatmap(weights)
    assert sorted(text.get_text() for text in ax.texts) == ["0.00", "0.25", "0.75", "1.00"]


def test_heatmap_writes_no_numbers_in_large_maps():
    ax = attention_heatmap(torch.softmax(torch.randn(20, 20), dim=-1))
    assert len(ax.texts) == 0


def test_heatmap_colour_scale_is_fixed_to_zero_one_so_maps_compare():
    ax = attention_heatmap(torch.tensor([[0.4, 0.6]]))
    assert ax.images[0].get_clim() == (0.0, 1.0)


def test_heatmap_draws_on_the_given_axes():
    _, ax = plt.subplots()
    assert attention_heatmap(torch.eye(2), ax=ax) is ax


def test_heatmap_rejects_weights_that_are_not_a_matrix():
    with pytest.raises(ValueError, match=r"\(L_q, L_k\).*\(2, 3, 4\)"):
        attention_heatmap(torch.rand(2, 3, 4))


def test_heatmap_rejects_labels_of_the_wrong_length():
    with pytest.raises(ValueError, match="queries has 3 labels for 2 rows"):
        attention_heatmap(torch.rand(2, 2), queries=["a", "b", "c"])
