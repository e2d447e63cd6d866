"""A figure describes itself from what it drew: its kind, its series and their numbers, in each edition's language."""

from __future__ import annotations

import re
import types

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

from transformer_course.book_programs.figure_descriptions import (
    METADATA_KEY,
    TABLE_ROWS,
    Description,
    describe,
    describe_every_figure_shown,
    number,
    plain,
)
from transformer_course.book_programs.plots import attention_heatmap

CJK = re.compile(r"[\u4e00-\u9fff]")
TOKENS = ["the", "cat", "sat"]


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _attention_figure():
    weights = torch.tensor([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.05, 0.41, 0.54]])
    return attention_heatmap(weights, TOKENS, TOKENS, title="attention of 'the cat sat'").figure


def test_a_heat_map_says_its_size_range_and_largest_cell_by_its_labels():
    alt = describe(_attention_figure()).alt
    expected = "heat map: 3 × 3, values from 0.05 to 0.8; largest 0.8 at row cat, column cat."
    assert alt == f"“attention of 'the cat sat'”, {expected}"


def test_a_heat_map_names_the_largest_cell_of_each_row():
    details = " ".join(describe(_attention_figure()).details)
    assert "the → the 0.7, cat → cat 0.8, sat → sat 0.54" in details


def test_a_heat_maps_numbers_are_a_table_with_its_labels():
    (table,) = describe(_attention_figure()).tables
    assert table.columns == ["query \\ key", *TOKENS]
    assert table.rows[2] == ["sat", "0.05", "0.41", "0.54"]
    assert '<th scope="row">sat</th><td>0.05</td>' in table.html()


def test_a_line_says_where_it_starts_ends_and_turns():
    _, ax = plt.subplots()
    steps = np.arange(1, 11)
    ax.plot(steps, [5, 4, 3, 2.5, 2, 1.8, 1.7, 1.75, 1.9, 2.2], label="validation loss")
    ax.set(xlabel="epoch", ylabel="loss", title="learning curve")
    described = describe(ax.figure)
    assert "validation loss: 10 points, from 5 at 1 to 2.2 at 10; lowest 1.7 at 7, highest 5 at 1" in described.alt
    assert "x axis “epoch” from" in described.details[0]


def test_a_long_series_is_tabulated_every_nth_point_and_says_so():
    _, ax = plt.subplots()
    ax.plot(np.arange(100), np.arange(100) ** 2, label="square")
    (table,) = describe(ax.figure).tables
    assert len(table.rows) <= TABLE_ROWS + 1 and table.rows[-1] == ["99", "9,801"]
    assert table.caption.endswith("(one point in every 5, of 100)")


def test_bars_are_read_with_their_names():
    _, ax = plt.subplots()
    ax.barh(["encoder", "decoder"], [19.0, 25.2], label="parameters (M)")
    assert "parameters (M): encoder 19, decoder 25.2" in describe(ax.figure).alt


def test_a_reference_line_is_named_as_one():
    _, ax = plt.subplots()
    ax.plot([1, 2, 3], [0.2, 0.5, 0.9], label="largest weight")
    ax.axhline(0.1, label="uniform (1/L)")
    assert "uniform (1/L): level line at 0.1" in " ".join(describe(ax.figure).details)


def test_a_diagram_is_read_by_its_words_top_to_bottom():
    figure, ax = plt.subplots()
    ax.axis("off")
    ax.text(0.5, 0.9, "softmax")
    ax.text(0.5, 0.1, "inputs")
    ax.text(0.5, 0.5, "attention")
    assert "labels, top to bottom: softmax, attention, inputs" in describe(figure).alt


def test_every_panel_is_described_and_counted():
    figure, axes = plt.subplots(1, 2)
    attention_heatmap(torch.eye(2), ax=axes[0], title="identity")
    axes[1].plot([0, 1], [1, 0], label="falling")
    described = describe(figure)
    assert described.alt.startswith("2 panels; “identity”, heat map")
    assert [d.split(",")[0] for d in described.details] == ["Panel 1 “identity”", "Panel 2"]


def test_the_chinese_description_speaks_chinese_and_keeps_the_figures_own_labels():
    alt = describe(_attention_figure(), "zh_CN").alt
    assert CJK.search(alt) and "热力图" in alt and "cat" in alt


def test_an_unknown_language_is_named_with_the_ones_there_are():
    with pytest.raises(ValueError, match=r"'fr'.*en, zh_CN"):
        describe(_attention_figure(), "fr")


@pytest.mark.parametrize(
    "label, said",
    [(r"std of $q\cdot k/\sqrt{d_k}$", "std of q· k/√d_k"), (r"softmax$(QK^\top)$", "softmax(QKᵀ)"), ("loss", "loss")],
)
def test_mathtext_is_read_as_text(label, said):
    assert plain(label) == said


@pytest.mark.parametrize("value, said", [(0.41234, "0.412"), (27123.4, "27,123"), (3.0, "3"), (2.5e-5, "2.5e-05")])
def test_numbers_are_read_with_three_significant_digits(value, said):
    assert number(value) == said


def test_a_description_survives_the_notebooks_json():
    described = describe(_attention_figure())
    assert Description.from_json(described.as_json()) == described


def test_ipython_shows_every_figure_with_its_description_in_every_language():
    from IPython.core.formatters import DisplayFormatter

    shell = types.SimpleNamespace(display_formatter=DisplayFormatter())
    assert describe_every_figure_shown(shell)
    data, metadata = shell.display_formatter.format(_attention_figure())
    assert set(metadata[METADATA_KEY]) == {"en", "zh_CN"}
    assert data["text/plain"] == metadata[METADATA_KEY]["en"]["alt"], "not matplotlib's <Figure size ...>"


def test_outside_ipython_nothing_is_registered():
    assert describe_every_figure_shown() is False


def test_a_graphs_edges_are_counted_as_connections_not_read_as_series():
    _, ax = plt.subplots()
    for start, end in ((0, 1), (1, 2), (0, 2)):
        ax.plot([start, end], [0, 1], color="grey")
    ax.text(0, 0, "<bos>")
    described = describe(ax.figure)
    assert described.alt == "Figure, diagram: labels, top to bottom: <bos>."
    assert "3 connections drawn" in described.details[0] and not described.tables


def test_a_dot_plot_is_read_as_one_series_per_look_with_its_categories():
    _, ax = plt.subplots()
    for position, scores in enumerate(([2.1, 2.3], [1.9, 2.6])):
        for seed, score in enumerate(scores):
            ax.plot(score, position, "o", color=f"C{seed}", label=f"seed {seed}" if position == 0 else None)
    ax.set_yticks([0, 1], ["base", "h = 1"])
    ax.set_xlabel("perplexity")
    described = describe(ax.figure)
    assert "seed 0: 2 points, x from 1.9 to 2.1" in described.alt and "dot plot" in described.alt
    (table,) = described.tables
    assert table.columns == ["", "seed 0", "seed 1"] and table.rows == [["base", "2.1", "2.3"], ["h = 1", "1.9", "2.6"]]


def test_grouped_bars_are_named_by_their_category_and_a_long_list_is_cut_in_the_sentence():
    _, ax = plt.subplots()
    ax.bar(np.arange(20) - 0.2, np.arange(20) / 10, width=0.4, label="smoothed")
    described = describe(ax.figure)
    assert "smoothed: 0 0, 1 0.1, 2 0.2" in described.alt and "and 8 more" in described.alt
    assert len(described.tables[0].rows) == 20


def _mask_figure(language="en"):
    from transformer_course.book_programs.mechanisms import add_mask_key, draw_mask

    figure, ax = plt.subplots()
    image = draw_mask(torch.tensor([[True, False, False], [True, True, False]]), ax)
    ax.set_xticks(range(3), ["a", "b", "c"])
    ax.set_yticks(range(2), ["a", "b"])
    add_mask_key(image, ax, language)
    return figure


def test_a_heat_map_whose_colours_a_key_names_is_read_in_the_keys_words():
    description = describe(_mask_figure())
    assert description.alt == "Figure, heat map: 2 × 3 cells: 3 blocked, 3 may attend."
    assert "may attend, row by row: a → a; b → a, b" in description.details[0]
    assert description.tables[0].rows == [
        ["a", "may attend", "blocked", "blocked"],
        ["b", "may attend", "may attend", "blocked"],
    ]


def test_a_key_says_which_shade_each_word_names():
    assert describe(_mask_figure()).details[-1] == "colour key: blocked (light), may attend (dark)."
    assert describe(_mask_figure("zh_CN"), "zh_CN").details[-1] == "颜色图例：被屏蔽（浅色），可以关注（深色）。"
