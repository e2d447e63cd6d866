"""The pictures of the chapters' mechanisms draw what they are given: the tensors, the package's wiring,
its batches and its beam search, with the shapes and counts in their labels."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch
from matplotlib.colors import to_hex
from matplotlib.patches import FancyBboxPatch

import transformer_course as tc
from transformer_course.book_programs import mechanisms
from transformer_course.data.batching import bucketed_batches, random_batches
from transformer_course.decoding import beam_search


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _image(ax) -> np.ndarray:
    return np.asarray(ax.images[0].get_array())


def test_qkv_draws_x_the_three_weights_and_their_products_with_shapes():
    torch.manual_seed(0)
    attention, x = tc.MultiHeadAttention(6, 1), torch.randn(2, 5, 6)
    fig = mechanisms.draw_qkv(attention, x)
    titles = [ax.get_title() for ax in fig.axes]
    assert len(fig.axes) == 7 and "(5, 6)" in titles[0]
    with torch.no_grad():
        expected = [attention.w_q(x[0]), attention.w_k(x[0]), attention.w_v(x[0])]
    products = [ax for ax in fig.axes if ax.get_title().startswith(("Q =", "K =", "V ="))]
    for ax, tensor in zip(products, expected):
        np.testing.assert_allclose(_image(ax), tensor.numpy(), rtol=1e-6)
        assert "(5, 6)" in ax.get_title()
    np.testing.assert_allclose(_image(fig.axes[0]), x[0].numpy())


@pytest.mark.parametrize("heads", [2, 4])
def test_head_split_draws_one_panel_per_head_with_its_columns(heads):
    torch.manual_seed(0)
    attention, x = tc.MultiHeadAttention(8, heads), torch.randn(3, 4, 8)
    fig = mechanisms.draw_head_split(attention, x)
    assert len(fig.axes) == heads + 2
    with torch.no_grad():
        values = attention.w_v(x)[0]
    width = 8 // heads
    for head, ax in enumerate(fig.axes[2:]):  # the two wide panels are created first
        np.testing.assert_allclose(_image(ax), values[:, head * width : (head + 1) * width].numpy(), rtol=1e-6)
        assert ax.get_title() == f"head {head + 1}\n(4, {width})"
    np.testing.assert_allclose(_image(fig.axes[1]), _image(fig.axes[0]))
    assert f"(3, {heads}, 4, {width})" in fig._suptitle.get_text()


def test_the_wiring_is_read_off_the_package_sublayer_connection():
    post, pre = mechanisms.sublayer_wiring(norm_first=False), mechanisms.sublayer_wiring(norm_first=True)
    assert post.index("LayerNorm") > post.index("add: x + ...")
    assert pre.index("LayerNorm") < pre.index("sublayer (attention or feed-forward)") < pre.index("add: x + ...")
    assert post.count("LayerNorm") == pre.count("LayerNorm") == 1


def _box_labels(ax) -> list[tuple[str, bool]]:
    """The labels of the boxes, bottom to top, and whether each box is coloured."""
    boxes = [patch for patch in ax.patches if isinstance(patch, FancyBboxPatch)]
    boxes.sort(key=lambda patch: patch.get_y())
    labels = [text for text in ax.texts if text.get_position()[0] == 0.5 and 0 < text.get_position()[1] < 1]
    labels.sort(key=lambda text: text.get_position()[1])
    coloured = [to_hex(patch.get_facecolor()) == to_hex(mechanisms.HIGHLIGHT) for patch in boxes]
    return [(text.get_text(), flag) for text, flag in zip(labels, coloured)]


def test_post_ln_and_pre_ln_diagrams_show_the_wiring_in_order_with_the_norm_coloured():
    fig = mechanisms.draw_sublayer_wiring()
    for ax, norm_first in zip(fig.axes, (False, True)):
        drawn = _box_labels(ax)
        assert [label for label, _ in drawn] == mechanisms.sublayer_wiring(norm_first)
        assert [label for label, coloured in drawn if coloured] == ["LayerNorm"]


@pytest.mark.parametrize("n, kernel", [(8, 3), (10, 4)])
def test_path_lengths_are_those_of_table_1_and_the_graph_draws_each_edge(n, kernel):
    connections = mechanisms.one_layer_connections(n, kernel)
    lengths = [len(mechanisms.shortest_path(graph)) - 1 for graph in connections.values()]
    assert lengths == [1, n - 1, math.ceil((n - 1) / (kernel - 1))]
    fig = mechanisms.draw_path_lengths(n, kernel)
    for ax, graph, length in zip(fig.axes, connections.values(), lengths):
        coloured = [line for line in ax.lines if to_hex(line.get_color()) == to_hex(mechanisms.HIGHLIGHT)]
        assert len(coloured) == length and f"path of {length} " in ax.get_title()
        assert len(ax.lines) - length == length * int(graph.sum())


def test_a_path_only_uses_connections_of_one_layer():
    for graph in mechanisms.one_layer_connections(9).values():
        path = mechanisms.shortest_path(graph)
        assert path[0] == 0 and path[-1] == 8
        assert all(graph[later, earlier] for earlier, later in zip(path, path[1:]))


def _sequences(count: int, seed: int = 1) -> list[list[int]]:
    generator = torch.Generator().manual_seed(seed)
    lengths = torch.randint(2, 12, (count,), generator=generator).tolist()
    return [torch.randint(4, 30, (length,), generator=generator).tolist() for length in lengths]


def test_batch_padding_shades_the_pad_cells_of_the_packages_batches():
    sequences, max_tokens = _sequences(20), 40
    fig = mechanisms.draw_batch_padding(sequences, max_tokens)
    bucketed = bucketed_batches([len(sequence) for sequence in sequences], max_tokens)
    size = round(len(sequences) / len(bucketed))
    for ax, batches in zip(fig.axes, (random_batches(len(sequences), size), bucketed)):
        pad = sum(len(batch) * max(len(sequences[i]) for i in batch) - sum(len(sequences[i]) for i in batch)
                  for batch in batches)  # fmt: skip
        assert int(np.nansum(_image(ax))) == pad and f"{pad} <pad> cells" in ax.get_title()
        assert len(ax.lines) == len(batches) - 1  # one separator between consecutive batches
        ids = [int(text.get_text()) for text in ax.texts]
        assert sorted(ids) == sorted(token for sequence in sequences for token in sequence)


def test_bucketing_needs_less_padding_than_random_batches_in_the_picture():
    fig = mechanisms.draw_batch_padding(_sequences(40, seed=2), max_tokens=50)
    random_pad, bucketed_pad = (int(np.nansum(_image(ax))) for ax in fig.axes)
    assert bucketed_pad < random_pad


@pytest.fixture
def tiny_model():
    torch.manual_seed(0)
    return tc.Transformer(12, 12, d_model=16, num_heads=2, num_layers=1, d_ff=32)


def test_the_recorded_beam_ends_with_what_beam_search_returns(tiny_model):
    source = torch.tensor([[5, 6, 7, 8, 2]])
    steps = mechanisms.beam_search_steps(tiny_model, source, beam_size=3, max_output_length=5)
    best, score = beam_search(tiny_model, source, beam_size=3, max_output_length=5)
    assert len(steps) == best.size(1) and steps[-1]["score"][0] == pytest.approx(score.item())
    rank, tokens = 0, []
    for step in reversed(steps):
        tokens.append(step["token"][rank])
        rank = step["origin"][rank]
    assert tokens[::-1] == best[0].tolist()


def test_the_beam_tree_draws_every_kept_hypothesis_with_its_score(tiny_model):
    steps = mechanisms.beam_search_steps(tiny_model, torch.tensor([[5, 6, 7, 2]]), beam_size=3, max_output_length=4)
    fig = mechanisms.draw_beam_tree(steps, lambda token: f"t{token}")
    ax = fig.axes[0]
    nodes = [text.get_text() for text in ax.texts if text.get_text() != "<bos>"]
    expected = [
        f"t{token}\n{score:.2f}"
        for step in steps
        for origin, token, score in zip(step["origin"], step["token"], step["score"])
        if not step["was_finished"][origin]
    ]
    assert nodes == expected and len(ax.lines) == len(expected)
    coloured = [
        text.get_text()
        for text in ax.texts
        if to_hex(text.get_bbox_patch().get_facecolor()) == to_hex(mechanisms.HIGHLIGHT)
    ]
    rank, returned = 0, []  # the hypothesis beam_search returns, followed back from its last step
    for step in reversed(steps):
        if not step["was_finished"][step["origin"][rank]]:
            returned.append(f"t{step['token'][rank]}\n{step['score'][rank]:.2f}")
        rank = step["origin"][rank]
    assert coloured == returned[::-1] and "3 beams" in ax.get_title()


def test_decoder_masks_are_the_packages_masks_in_the_mask_colours():
    tokens, pad_id = torch.tensor([[7, 3, 9, 0, 0], [5, 8, 4, 6, 2]]), 0
    fig = mechanisms.draw_decoder_masks(tokens, pad_id, sentence=0)
    padding, causal, target = fig.axes[:3]
    np.testing.assert_array_equal(_image(padding), tc.padding_mask(tokens, pad_id)[0, 0].expand(5, 5).float())
    np.testing.assert_array_equal(_image(causal), tc.causal_mask(5).float())
    np.testing.assert_array_equal(_image(target), tc.padding_and_causal_mask(tokens, pad_id)[0, 0].float())
    assert [label.get_text() for label in target.get_xticklabels()] == ["7", "3", "9", "0", "0"]
    for ax in (padding, causal, target):  # False white, True dark: the colours of MASK_COLOURS, in that order
        image = ax.images[0]
        assert [to_hex(image.to_rgba(value)) for value in (0.0, 1.0)] == [to_hex(c) for c in mechanisms.MASK_COLOURS]


def test_every_mask_picture_has_a_key_naming_its_two_colours():
    masks = {"causal": tc.causal_mask(4), "block": tc.block_diagonal_mask(4, block_size=2)}
    for fig in (
        mechanisms.draw_decoder_masks(torch.tensor([[4, 5, 0]]), 0),
        mechanisms.draw_mask_graphs(masks, {"causal": 4.0, "block": 0.0}),
    ):
        (key,) = [ax._colorbar for ax in fig.axes if getattr(ax, "_colorbar", None) is not None]
        assert list(key.get_ticks()) == [0, 1]
        assert [label.get_text() for label in key.ax.get_yticklabels()] == ["blocked", "may attend"]


def test_mask_graphs_draw_each_mask_over_its_undirected_graph_with_its_lambda_2():
    n = 5
    masks = {"causal": tc.causal_mask(n), "local window": tc.local_window_mask(n, radius=1)}
    fig = mechanisms.draw_mask_graphs(masks, {"causal": 5.0, "local window": 0.382})
    panels = [ax for ax in fig.axes if getattr(ax, "_colorbar", None) is None]
    matrices, graphs = panels[:2], panels[2:]  # the first row, then the second
    for ax, (name, mask) in zip(matrices, masks.items()):
        np.testing.assert_array_equal(_image(ax), mask.float())
        assert ax.get_title() == f"{name} mask"
    edges = [len(ax.lines) for ax in graphs]
    assert edges == [n * (n - 1) // 2, n - 1]  # causal: every pair joined one way; a window: a path
    assert [ax.get_title() for ax in graphs] == ["$\\lambda_2$ = 5.000", "$\\lambda_2$ = 0.382"]


def test_a_mask_that_is_not_a_two_dimensional_bool_is_refused():
    _, ax = plt.subplots()
    with pytest.raises(ValueError, match=r"2-D bool mask, got torch.float32 of shape \(3, 3\)"):
        mechanisms.draw_mask(torch.ones(3, 3), ax)
