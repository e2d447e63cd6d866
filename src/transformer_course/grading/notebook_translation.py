"""Learner notebooks in another language, translated by the catalogs of the book's exercise pages.

The book shows each learner notebook as a page, so Sphinx's gettext builder already extracts its
Markdown, block by block, into ``book/locale/<language>/LC_MESSAGES/exercises/<assignment>/<notebook>.po``
(:mod:`transformer_course.book_programs.editions` keeps those catalogs). :func:`translated_notebook`
puts their translations into a copy of the released notebook:

* only in Markdown cells that are not nbgrader's: the instructions and the questions. Code, tests,
  answer cells and every cell nbgrader keeps a checksum of stay byte for byte as released, so
  autograde grades a submission in either language alike;
* each block whose text is a catalog entry (a paragraph, a heading, a list item's paragraph, a table
  cell: its lines joined by spaces, as Sphinx writes a message) is replaced by the entry's
  translation, on one line after the block's own markup (``## ``, ``- ``, ``> ``); math and code
  blocks stay as they are (gettext does not extract them).

A block that has no translation stays in English and is listed by :func:`untranslated_blocks`, so
that a test can require that none is left.
"""

from __future__ import annotations

import copy
from pathlib import Path

from markdown_it import MarkdownIt
from mdit_py_plugins.amsmath import amsmath_plugin
from mdit_py_plugins.dollarmath import dollarmath_plugin

from .nbgrader_cells import source_text

# The block syntax of the notebooks' Markdown: CommonMark with tables and $-math, as the book parses them.
_MARKDOWN = MarkdownIt("commonmark").enable("table").use(dollarmath_plugin).use(amsmath_plugin)


def read_catalog(path: Path) -> dict[str, str]:
    """msgid → msgstr of the translated entries of a ``.po`` file (fuzzy ones left out, as Sphinx leaves them)."""
    from babel.messages.pofile import read_po

    with path.open("rb") as handle:
        messages = list(read_po(handle))
    return {message.id: message.string for message in messages if message.id and message.string and not message.fuzzy}


def _blocks(source: str):
    """(first line, last line + 1, text, message, is a table cell) of each block of ``source`` that gettext
    extracts: its text as written, and as Sphinx writes its message."""
    tokens = _MARKDOWN.parse(source)
    for opener, inline in zip(tokens, tokens[1:]):
        if inline.type == "inline" and inline.content.strip() and inline.map is not None:
            message = inline.content.replace("\n", " ").strip()  # as Sphinx writes a message
            yield inline.map[0], inline.map[1], inline.content, message, opener.type in ("th_open", "td_open")


def translated_markdown(source: str, catalog: dict[str, str]) -> str:
    """``source`` with every block that ``catalog`` translates replaced by its translation."""
    lines = source.split("\n")
    paragraphs = []
    for start, end, content, message, in_table in _blocks(source):
        translation = catalog.get(message)
        if translation is None:
            continue
        if in_table:  # a table cell: its text replaced within its row, which keeps its line
            lines[start] = lines[start].replace(content, translation, 1)
        else:
            paragraphs.append((start, end, content.split("\n")[0], translation))
    for start, end, first, translation in sorted(paragraphs, reverse=True):  # from the end: line numbers hold
        position = lines[start].find(first)
        markup = lines[start][: max(position, 0)]  # "## ", "- ", "> ", indentation
        lines[start:end] = [markup + translation]
    return "\n".join(lines)


def untranslated_blocks(source: str, catalog: dict[str, str]) -> list[str]:
    """The messages of ``source``'s blocks that ``catalog`` has no translation for."""
    return [message for *_, message, _ in _blocks(source) if message not in catalog]


def is_translatable(cell: dict) -> bool:
    """A Markdown cell nbgrader keeps nothing of (no checksum, no grade): the instructions and questions."""
    return cell.get("cell_type") == "markdown" and "nbgrader" not in cell.get("metadata", {})


def translated_notebook(notebook: dict, catalog: dict[str, str]) -> dict:
    """A copy of ``notebook`` whose translatable cells (:func:`is_translatable`) ``catalog`` translates."""
    translated = copy.deepcopy(notebook)
    for cell in translated["cells"]:
        if is_translatable(cell):
            text = translated_markdown(source_text(cell), catalog)
            cell["source"] = text.splitlines(keepends=True) if isinstance(cell["source"], list) else text
    return translated
