"""Figures that describe themselves: a text alternative for every figure a page shows, read from what it drew.

    from transformer_course.book_programs.figure_descriptions import describe
    describe(figure, "zh_CN").alt          # one or two sentences: what is plotted, what stands out
    describe(figure).tables                # the numbers drawn, where a sentence cannot carry them

A screen reader cannot see a plot, and a notebook output has no text alternative of its own (Sphinx
falls back to the image's file name). :func:`describe` reads a matplotlib Figure's artists, the data
the cell drew, not a caption written beside it: each panel's title and axes, every labelled line
(where it starts, ends and turns), heat maps (their size, range and each row's largest cell; or,
where a colour bar names the colours with words, as a mask's key does, how many cells of each and
where they are), bars, points, and the words of a diagram in reading order; and tables of the
numbers. Its words come in every edition's language (:data:`WORDS`); the figure's own labels are
quoted as drawn.

:func:`describe_every_figure_shown` makes IPython attach the descriptions of every language to every
Figure a cell shows (``plt.show()``, the inline backend's end of cell, ``display(figure)``), in the
output's metadata under :data:`METADATA_KEY`; importing :mod:`transformer_course.book_programs` calls
it. :class:`~.edition_figures.EditionImages`, the book's image renderer, writes the page's language's
description as the ``alt`` of the image and the rest below it, and refuses an image without one.
"""

from __future__ import annotations

import dataclasses
import html
import math
import re
import sys

import numpy as np

METADATA_KEY = "transformer-course/description"  # in a display output's metadata: language -> Description
ALT_LIMIT = 400  # characters of a text alternative; what does not fit is in the long description
TABLE_ROWS = 24  # rows of a data table; a longer series is sampled evenly (the caption says so)
TABLES = 12  # data tables per figure
BARS_SAID = 12  # bars named in a sentence; the table has them all

# The sentences' words, by language; {placeholders} are filled in from the figure.
WORDS = {
    "en": {
        "figure": "Figure",
        "panels": "{count} panels",
        "panel": "Panel {index}",
        "titled": "“{title}”",
        "line chart": "line chart",
        "heat map": "heat map",
        "bar chart": "bar chart",
        "scatter plot": "scatter plot",
        "dot plot": "dot plot",
        "diagram": "diagram",
        "picture": "picture",
        "empty": "empty panel",
        "x axis": "x axis {label} from {low} to {high}",
        "y axis": "y axis {label} from {low} to {high}",
        "log": "logarithmic",
        "line": "{label}: {count} points, from {first} at {x_first} to {last} at {x_last}; "
        "lowest {low} at {x_low}, highest {high} at {x_high}",
        "level": "{label}: level line at {value}",
        "vertical": "{label}: vertical line at {value}",
        "heat": "{rows} × {columns}, values from {low} to {high}; largest {high} at row {row}, column {column}",
        "heat axes": "rows: {rows}, columns: {columns}",
        "row largest": "largest cell of each row: {pairs}",
        "pair": "{row} → {column} {value}",
        "image": "{rows} × {columns} pixels",
        "bars": "{label}: {pairs}",
        "bar": "{name} {value}",
        "more": "and {count} more",
        "points": "{label}: {count} points, x from {x_low} to {x_high}, y from {y_low} to {y_high}",
        "words": "labels, top to bottom: {words}",
        "edges": "{count} connections drawn",
        "colour scale": "colour scale {label} from {low} to {high}",
        "colour key": "colour key{label}: {entries}",
        "key entry": "{word} ({shade})",
        "light": "light",
        "dark": "dark",
        "cells": "{rows} × {columns} cells: {counts}",
        "count of": "{count} {word}",
        "cells of each row": "{word}, row by row: {pairs}",
        "row cells": "{row} → {columns}",
        "no cell": "none",
        "series": "series",
        "unlabelled": "unlabelled",
        "row": "row",
        "column": "column",
        "value": "value",
        "table": "Numbers of {what}",
        "sampled": " (one point in every {step}, of {count})",
        "first rows": " (first {shown} of {count} rows)",
        "more tables": "{count} more panels are not tabulated.",
        "summary": "Description of the figure and its numbers",
        "sentence end": ".",
        "list": "; ",
        "comma": ", ",
        "colon": ": ",
    },
    "zh_CN": {
        "figure": "图",
        "panels": "{count} 个子图",
        "panel": "子图 {index}",
        "titled": "“{title}”",
        "line chart": "折线图",
        "heat map": "热力图",
        "bar chart": "柱状图",
        "scatter plot": "散点图",
        "dot plot": "点图",
        "diagram": "示意图",
        "picture": "图像",
        "empty": "空白子图",
        "x axis": "横轴 {label} 从 {low} 到 {high}",
        "y axis": "纵轴 {label} 从 {low} 到 {high}",
        "log": "对数刻度",
        "line": "{label}：{count} 个点，从 {x_first} 处的 {first} 到 {x_last} 处的 {last}；"
        "最低 {low}（{x_low} 处），最高 {high}（{x_high} 处）",
        "level": "{label}：{value} 处的水平参考线",
        "vertical": "{label}：{value} 处的竖直参考线",
        "heat": "{rows} 行 × {columns} 列，数值从 {low} 到 {high}；最大值 {high} 在 {row} 行、{column} 列",
        "heat axes": "行：{rows}，列：{columns}",
        "row largest": "每行最大的格子：{pairs}",
        "pair": "{row} → {column} {value}",
        "image": "{rows} × {columns} 像素",
        "bars": "{label}：{pairs}",
        "bar": "{name} {value}",
        "more": "另有 {count} 个",
        "points": "{label}：{count} 个点，横坐标从 {x_low} 到 {x_high}，纵坐标从 {y_low} 到 {y_high}",
        "words": "标签（自上而下）：{words}",
        "edges": "画有 {count} 条连线",
        "colour scale": "颜色刻度 {label} 从 {low} 到 {high}",
        "colour key": "颜色图例{label}：{entries}",
        "key entry": "{word}（{shade}）",
        "light": "浅色",
        "dark": "深色",
        "cells": "{rows} 行 × {columns} 列的格子：{counts}",
        "count of": "{count} 个{word}",
        "cells of each row": "各行中{word}的格子：{pairs}",
        "row cells": "{row} → {columns}",
        "no cell": "无",
        "series": "序列",
        "unlabelled": "未命名",
        "row": "行",
        "column": "列",
        "value": "数值",
        "table": "{what}的数值",
        "sampled": "（{count} 个点中每隔 {step} 个取一个）",
        "first rows": "（{count} 行中的前 {shown} 行）",
        "more tables": "另有 {count} 个子图未列出数值。",
        "summary": "图的文字说明与数值",
        "sentence end": "。",
        "list": "；",
        "comma": "，",
        "colon": "：",
    },
}


@dataclasses.dataclass
class Table:
    """The numbers of one drawing: a caption, column headers, rows (the first cell of each names the row)."""

    caption: str
    columns: list[str]
    rows: list[list[str]]

    def html(self) -> str:
        head = "".join(f'<th scope="col">{html.escape(column)}</th>' for column in self.columns)
        body = "".join(
            f'<tr><th scope="row">{html.escape(row[0])}</th>'
            + "".join(f"<td>{html.escape(cell)}</td>" for cell in row[1:])
            + "</tr>"
            for row in self.rows
        )
        return (
            f'<table class="figure-data"><caption>{html.escape(self.caption)}</caption>'
            f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
        )


@dataclasses.dataclass
class Description:
    """A figure in words: ``alt`` (short, for the image's text alternative), ``details`` (every panel), ``tables``."""

    alt: str
    details: list[str]
    tables: list[Table]

    def as_json(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> Description:
        return cls(data["alt"], list(data["details"]), [Table(**table) for table in data["tables"]])

    def long_html(self, language: str) -> str:
        """The long description: a ``<details>`` element holding every panel's sentence and the tables."""
        said = _words(language)
        sentences = "".join(f"<p>{html.escape(sentence)}</p>" for sentence in self.details)
        tables = "".join(table.html() for table in self.tables)
        return (
            f'<details class="figure-description"><summary>{html.escape(said["summary"])}</summary>'
            f"{sentences}{tables}</details>"
        )


def _words(language: str) -> dict[str, str]:
    if language not in WORDS:
        raise ValueError(f"no description words for language {language!r}; there are {', '.join(sorted(WORDS))}")
    return WORDS[language]


# matplotlib's mathtext in labels (r"$\sqrt{d_k}$"), as a reader hears it.
_TEX = {r"\sqrt": "√", r"\cdot": "·", r"\times": "×", r"\top": "ᵀ", r"\epsilon": "ε", r"\varepsilon": "ε",
        r"\alpha": "α", r"\beta": "β", r"\ell": "ℓ", r"\infty": "∞", r"\approx": "≈", r"\leq": "≤",
        r"\geq": "≥", r"\to": "→", r"\rightarrow": "→", r"\mathrm": "", r"\text": "", r"\,": " ", r"\;": " ",
        r"\ ": " ", r"\{": "{", r"\}": "}", r"\%": "%"}  # fmt: skip


def plain(text: str) -> str:
    """A label without mathtext markup: ``r"std of $q\\cdot k/\\sqrt{d_k}$"`` → ``"std of q·k/√d_k"``."""
    if "$" not in text:
        return " ".join(text.split())
    for command, replacement in sorted(_TEX.items(), key=lambda item: -len(item[0])):
        text = text.replace(command, replacement)
    text = re.sub(r"\\([A-Za-z]+)", r"\1", text)
    text = text.replace("$", "").replace("{", "").replace("}", "").replace("^", "")
    return " ".join(text.split())


def number(value: float) -> str:
    """A number as a reader needs it: three significant digits, thousands grouped, no exponent below 10⁶."""
    value = float(value)
    if not math.isfinite(value):
        return str(value)
    if value == int(value) and abs(value) < 1e6:
        return f"{int(value):,}"
    if abs(value) >= 1e6 or abs(value) < 1e-3:
        return f"{value:.3g}"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def _quoted(label: str, said: dict) -> str:
    return said["titled"].format(title=label) if label else ""


def _tick_labels(axis, count: int) -> list[str] | None:
    """The labels of an axis's ticks at 0, 1, ..., count - 1 (a heat map's or bar chart's names), if it has them."""
    locations = list(axis.get_majorticklocs())
    labels = axis.get_major_formatter().format_ticks(locations)
    named = {round(float(location)): plain(str(label)) for location, label in zip(locations, labels)}
    if all(index in named and named[index] for index in range(count)):
        return [named[index] for index in range(count)]
    return None


def _is_colour_bar(ax) -> bool:
    return getattr(ax, "_colorbar", None) is not None


def _x_data(line) -> np.ndarray:
    return np.asarray(line.get_xdata(), dtype=float).ravel()


def _y_data(line) -> np.ndarray:
    return np.asarray(line.get_ydata(), dtype=float).ravel()


def _series_label(artist) -> str:
    label = artist.get_label() or ""
    return plain(label) if label and not label.startswith("_") else ""


def _is_reference_line(line) -> str | None:
    """``"level"`` for ``axhline``, ``"vertical"`` for ``axvline`` (drawn across the axes, whatever its limits)."""
    ax = line.axes
    if line.get_transform() is ax.get_yaxis_transform(which="grid"):
        return "level"
    if line.get_transform() is ax.get_xaxis_transform(which="grid"):
        return "vertical"
    return None


def _is_edge(line) -> bool:
    """A straight unlabelled segment between two points: an arrow or edge of a drawing, not a series."""
    return len(_x_data(line)) == 2 and not _series_label(line) and _is_reference_line(line) is None


def _describe_dots(ax, said: dict, panel: str) -> tuple[list[str], list[Table]]:
    """Lines of one point each (a dot plot): one series per look (colour and marker), named by its one label."""
    from matplotlib.colors import to_hex

    groups: dict[tuple, dict] = {}
    for line in ax.get_lines():
        x, y = _x_data(line), _y_data(line)
        if len(x) != 1 or _is_reference_line(line) or not (np.isfinite(x[0]) and np.isfinite(y[0])):
            continue
        group = groups.setdefault((to_hex(line.get_color()), str(line.get_marker())), {"label": "", "points": []})
        group["label"] = group["label"] or _series_label(line)
        group["points"].append((x[0], y[0]))
    if not groups:
        return [], []
    sentences, columns, by_row = [], [], {}
    for index, group in enumerate(groups.values(), start=1):
        label = group["label"] or f"{said['series']} {index}"
        x, y = np.array(group["points"]).T
        names = _category_names(ax.yaxis, y)
        sentences.append(
            said["points"].format(label=label, count=len(x), x_low=number(x.min()), x_high=number(x.max()),
                                  y_low=number(y.min()), y_high=number(y.max()))
        )  # fmt: skip
        columns.append(label)
        for i, (a, b) in enumerate(zip(x, y)):
            by_row.setdefault(names[i] if names else number(b), {})[label] = number(a)
    rows = [[name, *(found.get(column, "") for column in columns)] for name, found in by_row.items()]
    corner = plain(ax.get_ylabel()) or ""
    caption = said["table"].format(what=f"{panel}, {plain(ax.get_xlabel())}" if ax.get_xlabel() else panel)
    return sentences, [Table(caption, [corner, *columns], rows[:TABLE_ROWS])]


def _describe_lines(ax, said: dict, panel: str) -> tuple[list[str], list[Table]]:
    sentences, series = [], []
    unnamed = 0
    for line in ax.get_lines():
        if _is_edge(line) or (len(_x_data(line)) == 1 and _is_reference_line(line) is None):
            continue  # an edge of a diagram, or a dot (_describe_dots)
        x, y = _x_data(line), _y_data(line)
        finite = np.isfinite(x) & np.isfinite(y)
        if not finite.any():
            continue
        label = _series_label(line)
        reference = _is_reference_line(line)
        if reference == "level":
            sentences.append(said["level"].format(label=label or said["unlabelled"], value=number(y[0])))
            continue
        if reference == "vertical":
            sentences.append(said["vertical"].format(label=label or said["unlabelled"], value=number(x[0])))
            continue
        if not label:
            unnamed += 1
            label = f"{said['series']} {unnamed}"
        x, y = x[finite], y[finite]
        low, high = int(np.argmin(y)), int(np.argmax(y))
        sentences.append(
            said["line"].format(
                label=label, count=len(y), first=number(y[0]), x_first=number(x[0]), last=number(y[-1]),
                x_last=number(x[-1]), low=number(y[low]), x_low=number(x[low]), high=number(y[high]),
                x_high=number(x[high]),
            )
        )  # fmt: skip
        series.append((label, x, y))
    return sentences, _line_tables(series, ax, said, panel)


def _line_tables(series, ax, said: dict, panel: str) -> list[Table]:
    """The lines' numbers: one table where they share their x values, else one per line."""
    if not series:
        return []
    x_name = plain(ax.get_xlabel()) or "x"
    shared = all(len(x) == len(series[0][1]) and np.array_equal(x, series[0][1]) for _, x, _ in series)
    groups = [series] if shared else [[one] for one in series]
    tables = []
    for group in groups:
        x = group[0][1]
        step = max(1, math.ceil(len(x) / TABLE_ROWS))
        chosen = sorted(set(range(0, len(x), step)) | {len(x) - 1})
        what = panel if shared else f"{panel}, {group[0][0]}"
        caption = said["table"].format(what=what)
        if step > 1:
            caption += said["sampled"].format(step=step, count=len(x))
        rows = [[number(x[i]), *(number(y[i]) for _, _, y in group)] for i in chosen]
        tables.append(Table(caption, [x_name, *(label for label, _, _ in group)], rows))
    return tables


def _heat_maps(ax) -> list[tuple[np.ndarray, object]]:
    """Every matrix drawn as colours on ``ax``: its images and meshes, with the artist."""
    from matplotlib.collections import QuadMesh

    found = []
    for artist in [*ax.images, *(c for c in ax.collections if isinstance(c, QuadMesh))]:
        array = artist.get_array()
        if array is None:
            continue
        values = np.ma.filled(np.ma.asarray(array, dtype=float), np.nan)
        found.append((values, artist))
    return found


def _word_ticks(colour_bar) -> dict[float, str]:
    """{value: word} of a colour bar whose ticks are all words (a mask's "blocked", "may attend"), else {}."""
    axis = colour_bar.ax.yaxis if colour_bar.orientation == "vertical" else colour_bar.ax.xaxis
    locations = [float(location) for location in axis.get_majorticklocs()]
    labels = [plain(str(label)) for label in axis.get_major_formatter().format_ticks(locations)]
    if locations and all(label and not _is_number(label) for label in labels):
        return dict(zip(locations, labels))
    return {}


def _colour_key(artist) -> dict[float, str]:
    """The words that a colour bar of the figure gives this artist's colours: the bar of the same colours and
    scale whose ticks are words (one key serves every panel drawn alike), as {value: word}; {} if none."""
    for ax in artist.figure.get_axes():
        colour_bar = getattr(ax, "_colorbar", None)
        mappable = getattr(colour_bar, "mappable", None)
        if mappable is None or mappable.get_cmap() != artist.get_cmap() or mappable.get_clim() != artist.get_clim():
            continue
        words = _word_ticks(colour_bar)
        if words:
            return words
    return {}


def _describe_categories(values: np.ndarray, key: dict[float, str], row_names: list[str], column_names: list[str],
                         ax, said: dict, panel: str) -> tuple[list[str], list[Table]]:  # fmt: skip
    """A heat map whose colours a key names with words: how many cells of each word, and, row by row, the cells of
    the key's last word (a mask's "may attend"); its table holds the words."""
    rows, columns = values.shape
    counts = [said["count of"].format(count=int((values == value).sum()), word=word) for value, word in key.items()]
    sentences = [said["cells"].format(rows=rows, columns=columns, counts=said["comma"].join(counts))]
    row_label, column_label = plain(ax.get_ylabel()), plain(ax.get_xlabel())
    if row_label and column_label:
        sentences.append(said["heat axes"].format(rows=row_label, columns=column_label))
    last, word = list(key.items())[-1]
    if rows <= 12:
        pairs = [
            said["row cells"].format(
                row=row_names[r],
                columns=said["comma"].join(column_names[c] for c in range(columns) if values[r, c] == last)
                or said["no cell"],
            )
            for r in range(rows)
        ]
        sentences.append(said["cells of each row"].format(word=word, pairs=said["list"].join(pairs)))
    caption = said["table"].format(what=panel)
    shown = min(rows, TABLE_ROWS)
    if shown < rows:
        caption += said["first rows"].format(shown=shown, count=rows)
    table_rows = [[row_names[r], *(key.get(float(v), number(v)) for v in values[r])] for r in range(shown)]
    corner = f"{row_label or said['row']} \\ {column_label or said['column']}"
    return sentences, [Table(caption, [corner, *column_names], table_rows)]


def _describe_heat_map(
    values: np.ndarray, ax, said: dict, panel: str, key: dict | None = None
) -> tuple[list[str], list[Table]]:
    if values.ndim == 3:  # RGB(A): a picture, not numbers
        return [said["image"].format(rows=values.shape[0], columns=values.shape[1])], []
    if values.ndim == 1:
        values = values.reshape(1, -1)
    rows, columns = values.shape
    row_names = _tick_labels(ax.yaxis, rows) or [str(i) for i in range(rows)]
    column_names = _tick_labels(ax.xaxis, columns) or [str(i) for i in range(columns)]
    finite = np.isfinite(values)
    if not finite.any():
        return [said["image"].format(rows=rows, columns=columns)], []
    if key and set(np.unique(values[finite]).tolist()) <= set(key):
        return _describe_categories(values, key, row_names, column_names, ax, said, panel)
    filled = np.where(finite, values, -np.inf)
    row, column = np.unravel_index(int(np.argmax(filled)), values.shape)
    sentences = [
        said["heat"].format(
            rows=rows,
            columns=columns,
            low=number(np.nanmin(values)),
            high=number(np.nanmax(values)),
            row=row_names[row],
            column=column_names[column],
        )
    ]
    row_label, column_label = plain(ax.get_ylabel()), plain(ax.get_xlabel())
    if row_label and column_label:
        sentences.append(said["heat axes"].format(rows=row_label, columns=column_label))
    if rows <= 12 and np.isfinite(filled).any(axis=1).all():
        pairs = [
            said["pair"].format(row=row_names[r], column=column_names[int(np.argmax(filled[r]))],
                                value=number(filled[r].max()))
            for r in range(rows)
        ]  # fmt: skip
        sentences.append(said["row largest"].format(pairs=", ".join(pairs)))
    caption = said["table"].format(what=panel)
    shown = min(rows, TABLE_ROWS)
    if shown < rows:
        caption += said["first rows"].format(shown=shown, count=rows)
    table_rows = [[row_names[r], *("" if not np.isfinite(v) else number(v) for v in values[r])] for r in range(shown)]
    corner = f"{plain(ax.get_ylabel()) or said['row']} \\ {plain(ax.get_xlabel()) or said['column']}"
    return sentences, [Table(caption, [corner, *column_names], table_rows)]


def _describe_bars(ax, said: dict, panel: str) -> tuple[list[str], list[Table]]:
    from matplotlib.container import BarContainer

    sentences, columns, values_by_name = [], [], {}
    for index, container in enumerate(c for c in ax.containers if isinstance(c, BarContainer)):
        horizontal = getattr(container, "orientation", "vertical") == "horizontal"
        label = _series_label(container) or f"{said['series']} {index + 1}"
        axis = ax.yaxis if horizontal else ax.xaxis
        patches = container.patches
        centres = np.array([p.get_y() + p.get_height() / 2 if horizontal else p.get_x() + p.get_width() / 2
                            for p in patches])  # fmt: skip
        shift = centres - np.round(centres)
        if len(centres) and np.allclose(shift, shift[0]):  # grouped bars: each group beside its category
            centres = np.round(centres)
        pairs = []
        for patch, centre in zip(patches, centres):
            value = patch.get_width() if horizontal else patch.get_height()
            start = patch.get_x() if horizontal else patch.get_y()
            name = _tick_name(axis, centre)
            shown = number(value) if not start else f"{number(start)}–{number(start + value)}"
            pairs.append(said["bar"].format(name=name, value=shown))
            values_by_name.setdefault(name, {})[label] = shown
        columns.append(label)
        if len(pairs) > BARS_SAID:
            pairs = [*pairs[:BARS_SAID], said["more"].format(count=len(pairs) - BARS_SAID)]
        sentences.append(said["bars"].format(label=label, pairs=", ".join(pairs)))
    if not columns:
        return [], []
    rows = [[name, *(found.get(column, "") for column in columns)] for name, found in values_by_name.items()]
    return sentences, [Table(said["table"].format(what=panel), ["", *columns], rows[:TABLE_ROWS])]


def _tick_name(axis, position: float) -> str:
    """The word a categorical axis has at ``position`` (a bar's name), or the position as a number."""
    locations = list(axis.get_majorticklocs())
    if locations:
        labels = axis.get_major_formatter().format_ticks(locations)
        nearest = min(range(len(locations)), key=lambda i: abs(locations[i] - position))
        name = plain(str(labels[nearest]))
        if abs(locations[nearest] - position) < 1e-6 and name and not _is_number(name):
            return name
    return number(position)


def _is_number(text: str) -> bool:
    try:
        float(text.replace("−", "-").replace(",", ""))
    except ValueError:
        return False
    return True


def _describe_points(ax, said: dict, panel: str) -> tuple[list[str], list[Table]]:
    from matplotlib.collections import PathCollection

    sentences, tables = [], []
    for index, collection in enumerate(c for c in ax.collections if isinstance(c, PathCollection)):
        offsets = np.ma.filled(np.ma.asarray(collection.get_offsets(), dtype=float), np.nan)
        if offsets.ndim != 2 or not len(offsets):
            continue
        label = _series_label(collection) or f"{said['series']} {index + 1}"
        x, y = offsets[:, 0], offsets[:, 1]
        y_names = _category_names(ax.yaxis, y)
        sentences.append(
            said["points"].format(label=label, count=len(offsets), x_low=number(np.nanmin(x)),
                                  x_high=number(np.nanmax(x)), y_low=number(np.nanmin(y)), y_high=number(np.nanmax(y)))
        )  # fmt: skip
        rows = [[number(a), y_names[i] if y_names else number(b)] for i, (a, b) in enumerate(zip(x, y))]
        caption = said["table"].format(what=f"{panel}, {label}")
        if len(rows) > TABLE_ROWS:
            caption += said["first rows"].format(shown=TABLE_ROWS, count=len(rows))
        x_name, y_name = plain(ax.get_xlabel()) or "x", plain(ax.get_ylabel()) or "y"
        tables.append(Table(caption, [x_name, y_name], rows[:TABLE_ROWS]))
    return sentences, tables


def _category_names(axis, values: np.ndarray) -> list[str] | None:
    """Names of points placed at whole tick positions that are named (a bar chart's categories), else None."""
    if not len(values) or not np.all(np.isfinite(values)) or not np.all(values == np.round(values)):
        return None
    names = _tick_labels(axis, int(values.max()) + 1) if values.min() >= 0 else None
    return [names[int(v)] for v in values] if names else None


def _words_in_reading_order(texts) -> list[str]:
    """The visible texts, top to bottom and left to right (as display coordinates place them)."""
    placed = []
    for text in texts:
        said = plain(text.get_text())
        if not said or not text.get_visible():
            continue
        x, y = text.get_transform().transform(text.get_position())
        placed.append((-round(y / 8), x, said))
    return [said for _, _, said in sorted(placed)]


def _axis_sentence(ax, which: str, said: dict) -> str | None:
    axis = ax.xaxis if which == "x" else ax.yaxis
    low, high = ax.get_xlim() if which == "x" else ax.get_ylim()
    label = plain(axis.get_label_text())
    if not label:
        return None
    if axis.get_scale() == "log":
        label = f"{label} ({said['log']})"
    low, high = number(min(low, high)), number(max(low, high))
    return said[f"{which} axis"].format(label=_quoted(label, said), low=low, high=high)


def _describe_axes(ax, said: dict, panel: str) -> tuple[str, list[str], list[Table], str]:
    """One panel: its kind, its sentences, its tables, and its most telling sentence (for the short text)."""
    sentences, tables, kinds = [], [], []
    for values, artist in _heat_maps(ax):
        found, found_tables = _describe_heat_map(values, ax, said, panel, _colour_key(artist))
        sentences += found
        tables += found_tables
        kinds.append("picture" if values.ndim == 3 else "heat map")
    # A panel without axes, or one that joins points by edges, is a diagram: its lines and dots are arrows,
    # edges and nodes, and its words say what they are.
    edges = sum(_is_edge(line) for line in ax.get_lines())
    diagram = not ax.axison or edges > 1
    if diagram and edges:
        kinds.append("diagram")
    parts = [(_describe_bars, "bar chart")]
    if not diagram:
        parts += [(_describe_lines, "line chart"), (_describe_dots, "dot plot"), (_describe_points, "scatter plot")]
    for describe_part, kind in parts:
        found, found_tables = describe_part(ax, said, panel)
        if found:
            kinds.append(kind)
            sentences += found
            tables += found_tables
    numbers_on_a_heat_map = "heat map" in kinds and not diagram  # its texts are its cells' numbers, tabulated
    texts = [] if numbers_on_a_heat_map else _words_in_reading_order(ax.texts)
    if texts:
        if not kinds:
            kinds.append("diagram")
        sentences.append(said["words"].format(words=", ".join(texts)))
    if diagram and edges:
        sentences.append(said["edges"].format(count=edges))
    summary = sentences[0] if sentences else ""
    if kinds and kinds[0] in ("line chart", "bar chart", "scatter plot", "dot plot"):
        sentences = [s for s in (_axis_sentence(ax, "x", said), _axis_sentence(ax, "y", said)) if s] + sentences
    return said[kinds[0]] if kinds else said["empty"], sentences, tables, summary


def _luminance(rgba) -> float:
    """The relative luminance of a colour (WCAG's), 0 for black, 1 for white."""
    channels = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgba[:3]]
    return 0.2126 * channels[0] + 0.7152 * channels[1] + 0.0722 * channels[2]


def describe(figure, language: str = "en") -> Description:
    """A matplotlib Figure (or the Figure of an Axes) in words, in ``language`` (see the module docstring)."""
    said = _words(language)
    figure = getattr(figure, "figure", figure)
    panels = [ax for ax in figure.get_axes() if ax.get_visible() and not _is_colour_bar(ax)]
    title = plain(figure._suptitle.get_text()) if getattr(figure, "_suptitle", None) else ""
    details, tables, summaries = [], [], []
    for index, ax in enumerate(panels, start=1):
        panel_title = next((plain(t) for t in (ax.get_title(), ax.get_title("left"), ax.get_title("right"))
                            if plain(t)), plain(ax.get_xlabel()) if len(panels) > 1 else "")  # fmt: skip
        name = said["panel"].format(index=index) if len(panels) > 1 else said["figure"]
        kind, sentences, panel_tables, summary = _describe_axes(ax, said, panel_title or name)
        head = " ".join(part for part in (name, _quoted(panel_title, said)) if part)
        details.append(
            head
            + said["comma"]
            + kind
            + (said["colon"] + said["list"].join(sentences) if sentences else "")
            + said["sentence end"]
        )
        tables += panel_tables
        summaries.append(
            (_quoted(panel_title, said) or name) + said["comma"] + kind + (said["colon"] + summary if summary else "")
        )
    for colour_bar in (ax._colorbar for ax in figure.get_axes() if _is_colour_bar(ax)):
        low, high = colour_bar.mappable.get_clim()
        label = _quoted(plain(colour_bar.ax.get_ylabel()), said)
        words = _word_ticks(colour_bar)
        if words:  # a key: each word with the shade it names
            mappable = colour_bar.mappable
            entries = [
                said["key entry"].format(
                    word=word, shade=said["dark" if _luminance(mappable.to_rgba(value)) < 0.5 else "light"]
                )
                for value, word in words.items()
            ]
            scale = said["colour key"].format(label=f" {label}" if label else "", entries=said["comma"].join(entries))
        else:
            scale = said["colour scale"].format(label=label, low=number(low), high=number(high))
        details.append(scale + said["sentence end"])
    figure_words = _words_in_reading_order(figure.texts)
    if figure_words:
        details.append(said["words"].format(words=", ".join(figure_words)) + said["sentence end"])
    opening = _quoted(title, said) + said["colon"] if title else ""
    count = said["panels"].format(count=len(panels)) + said["list"] if len(panels) > 1 else ""
    alt = opening + count + said["list"].join(summaries) + said["sentence end"]
    if len(alt) > ALT_LIMIT:
        alt = alt[: ALT_LIMIT - 1].rstrip() + "…"
    if len(tables) > TABLES:
        details.append(said["more tables"].format(count=len(tables) - TABLES))
        tables = tables[:TABLES]
    return Description(alt=alt, details=details, tables=tables)


def descriptions(figures_by_language: dict[str, object]) -> dict[str, dict]:
    """The metadata of one output: each edition's language's description, as JSON.

    ``figures_by_language`` maps a language to the figure drawn in it; a language without a picture of
    its own (no font to draw it) is described from the English figure, the one its edition shows.
    """
    from .editions import LANGUAGES  # not at the top: ``python -m ...editions`` imports this package first

    english = figures_by_language["en"]
    return {
        language: describe(figures_by_language.get(language, english), language).as_json()
        for language in ("en", *LANGUAGES)
    }


def _described_bundle(figure) -> tuple[dict, dict]:
    """IPython's mime bundle of a Figure: the English text as its ``text/plain``, every language's in its metadata.

    The picture itself is the inline backend's ``image/png`` formatter's, which IPython adds beside this.
    """
    described = descriptions({"en": figure})
    return {"text/plain": described["en"]["alt"]}, {METADATA_KEY: described}


def describe_every_figure_shown(shell=None) -> bool:
    """Make IPython give every Figure it displays its descriptions (a no-op outside IPython); True if it did."""
    if shell is None:
        ipython = sys.modules.get("IPython")  # a kernel has imported it; a command line need not pay for it
        shell = ipython.get_ipython() if ipython is not None else None
    if shell is None or not hasattr(shell, "display_formatter"):
        return False
    from matplotlib.figure import Figure

    shell.display_formatter.mimebundle_formatter.for_type(Figure, _described_bundle)
    return True
