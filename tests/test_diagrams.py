"""The paper's Figures 1 and 2, drawn from the package: shapes from a real forward pass, parts highlighted
on request."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
from matplotlib.colors import to_hex
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from transformer_course.book_programs.diagrams import (
    EXAMPLE,
    HIGHLIGHT,
    PARTS,
    attention_shapes,
    draw_figure_1,
    draw_figure_2,
    transformer_shapes,
)


def test_figure_1_shapes_are_those_of_the_base_models_forward_pass():
    shapes = transformer_shapes()
    batch, source, target, vocabulary = (
        EXAMPLE[key] for key in ("batch", "source_length", "target_length", "vocabulary")
    )
    assert shapes["encoder self-attention"] == (batch, source, 512)
    assert shapes["cross-attention"] == (batch, target, 512)
    assert shapes["output projection"] == shapes["softmax"] == (batch, target, vocabulary)


def test_figure_2_shapes_split_512_into_8_heads_of_64():
    shapes = attention_shapes()
    assert shapes["heads"] == (2, 8, 7, 64) and shapes["weights"] == (2, 8, 7, 7) and shapes["output"] == (2, 7, 512)


def _highlighted_labels(ax) -> list[str]:
    boxes = [patch for patch in ax.patches if isinstance(patch, FancyBboxPatch) and patch.get_fill()]
    highlighted = []
    for patch in boxes:
        if to_hex(patch.get_facecolor()) == to_hex(HIGHLIGHT):
            x, y = patch.get_x() + patch.get_width() / 2, patch.get_y() + patch.get_height() / 2
            highlighted += [
                text.get_text()
                for text in ax.texts
                if abs(text.get_position()[0] - x) < 1e-6 and abs(text.get_position()[1] - y) < 1e-6
            ]
    return highlighted


def test_every_box_of_figure_1_names_its_shape():
    ax = draw_figure_1()
    labels = [text.get_text() for text in ax.texts if "\n" in text.get_text()]
    assert len(labels) == 18 and all(label.splitlines()[1].startswith("(") for label in labels)
    plt.close(ax.figure)


@pytest.mark.parametrize("part", sorted(PARTS))
def test_only_the_requested_part_is_highlighted(part):
    ax = draw_figure_1({part})
    assert len(_highlighted_labels(ax)) == len(PARTS[part])
    plt.close(ax.figure)


def _highlighted_arrows(ax) -> int:
    return sum(
        isinstance(patch, FancyArrowPatch) and to_hex(patch.get_edgecolor()) == to_hex(HIGHLIGHT)
        for patch in ax.patches
    )


@pytest.mark.parametrize("part", sorted(PARTS))
def test_the_decoding_loop_back_to_the_inputs_is_drawn_for_decoding_only(part):
    ax = draw_figure_1({part})
    assert _highlighted_arrows(ax) == (1 if part == "decoding" else 0)
    plt.close(ax.figure)


def test_an_unknown_part_is_refused_with_the_known_ones():
    with pytest.raises(ValueError, match="unknown parts \\['decoder-stack'\\]"):
        draw_figure_1({"decoder-stack"})


def test_figure_2_highlights_the_scaled_dot_product_steps():
    left, right = draw_figure_2({"scaled dot-product"})
    assert any("softmax over the keys" in label for label in _highlighted_labels(left))
    plt.close(left.figure)
