"""A notebook's instructions are translated block by block from a gettext catalog, and nothing else changes:
the markup of each block stays, math and code stay, and a block the catalog lacks stays in English."""

from __future__ import annotations

import pytest
from suite_layers import NBGRADER_MISSING

pytest.importorskip("markdown_it", reason=NBGRADER_MISSING)  # the grading extra parses the notebooks' Markdown

from transformer_course.grading.notebook_translation import (  # noqa: E402
    is_translatable,
    translated_markdown,
    translated_notebook,
    untranslated_blocks,
)

CATALOG = {
    "Part one": "第一部分",
    "Write `f(x)`, which adds one to $x$ and returns it.": "编写 `f(x)`：把 $x$ 加一后返回。",
    "first point": "第一点",
    "a second point": "第二点",
    "What": "内容",
    "Points": "分值",
    "a quoted line": "引用的一行",
}

SOURCE = """## Part one

Write `f(x)`, which adds one
to $x$ and returns it.

$$f(x) = x + 1$$

- first point
- a second
  point

| What | Points |
|---|---|
| `f` | 1 |

> a quoted line

Not in the catalog."""


def test_each_block_is_replaced_by_its_translation_after_its_own_markup():
    translated = translated_markdown(SOURCE, CATALOG)
    assert translated.split("\n") == [
        "## 第一部分",
        "",
        "编写 `f(x)`：把 $x$ 加一后返回。",
        "",
        "$$f(x) = x + 1$$",
        "",
        "- 第一点",
        "- 第二点",
        "",
        "| 内容 | 分值 |",
        "|---|---|",
        "| `f` | 1 |",
        "",
        "> 引用的一行",
        "",
        "Not in the catalog.",
    ]


def test_a_block_the_catalog_lacks_is_listed_and_left_in_english():
    assert untranslated_blocks(SOURCE, CATALOG) == ["`f`", "1", "Not in the catalog."]
    assert "Not in the catalog." in translated_markdown(SOURCE, CATALOG)


def test_only_markdown_cells_that_nbgrader_keeps_nothing_of_are_translated():
    locked = {"nbgrader": {"grade_id": "intro", "locked": True, "checksum": "0f"}}
    notebook = {
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": "## Part one"},
            {"cell_type": "markdown", "metadata": locked, "source": "## Part one"},
            {"cell_type": "code", "metadata": {}, "source": "# Part one", "outputs": []},
        ]
    }
    translated = translated_notebook(notebook, CATALOG)
    assert [cell["source"] for cell in translated["cells"]] == ["## 第一部分", "## Part one", "# Part one"]
    assert [is_translatable(cell) for cell in notebook["cells"]] == [True, False, False]
    assert notebook["cells"][0]["source"] == "## Part one", "the notebook given was changed"
