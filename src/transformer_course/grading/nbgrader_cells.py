"""nbgrader's marks on a notebook's cells (``cell.metadata.nbgrader``) and in their sources, read in one way.

nbgrader names a cell (``grade_id``) and marks it as an answer (``solution``), as graded (``grade``, with its
``points``) or as locked (https://nbgrader.readthedocs.io/en/stable/contributor_guide/metadata.html); in a source
notebook, a test cell's hidden tests stand between its markers (:func:`split_hidden_tests`). These helpers take a
cell as nbformat's ``NotebookNode`` or as plain JSON alike, and a cell without the marks has none: ``{}``; a cell's
source is joined in one place (:func:`source_text`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

# nbgrader's markers around the hidden part of a test cell.
BEGIN_HIDDEN_TESTS, END_HIDDEN_TESTS = "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"


def nbgrader_metadata(cell: Mapping) -> dict:
    """``cell``'s nbgrader metadata, or ``{}`` where it has none."""
    return cell.get("metadata", {}).get("nbgrader", {})


def grade_id(cell: Mapping) -> str | None:
    """The name nbgrader gives ``cell``, or None."""
    return nbgrader_metadata(cell).get("grade_id")


def answer_sources(notebook: Mapping, code_only: bool = False) -> dict[str, str]:
    """grade_id → source text of each answer cell (nbgrader's ``solution``) of ``notebook``; its code cells only if
    ``code_only`` (a written answer is a Markdown answer cell)."""
    return {
        grade_id(cell): source_text(cell)
        for cell in notebook.get("cells", [])
        if nbgrader_metadata(cell).get("solution")
        and grade_id(cell) is not None
        and (not code_only or cell.get("cell_type") == "code")
    }


def test_sources(notebook: Mapping) -> dict[str, str]:
    """grade_id → source text of each test cell (a graded code cell) of ``notebook``."""
    return {
        grade_id(cell): source_text(cell)
        for cell in notebook.get("cells", [])
        if cell.get("cell_type") == "code" and nbgrader_metadata(cell).get("grade")
    }


def cells_by_grade_id(notebook: Mapping) -> dict[str, Mapping]:
    """grade_id → cell of ``notebook``'s named cells (the last, where a learner copied one)."""
    return {grade_id(cell): cell for cell in notebook.get("cells", []) if grade_id(cell) is not None}


def source_text(cell: Mapping) -> str:
    """A cell's source as one string (nbformat's JSON may hold it as a list of lines)."""
    source = cell.get("source", "")
    return source if isinstance(source, str) else "".join(source)


def split_hidden_tests(source: str) -> tuple[str, str]:
    """A test cell's source as (visible tests, hidden tests), without nbgrader's marker lines."""
    return split_at_markers(source, BEGIN_HIDDEN_TESTS, END_HIDDEN_TESTS)


def split_at_markers(source: str, begin: str, end: str) -> tuple[str, str]:
    """A cell's source as (the lines outside nbgrader's ``begin`` … ``end`` markers, the lines between them), without
    the marker lines."""
    outside, between, inside = [], [], False
    for line in source.splitlines(keepends=True):
        if begin in line:
            inside = True
        elif end in line:
            inside = False
        else:
            (between if inside else outside).append(line)
    return "".join(outside), "".join(between)


def read_json_notebook(path: Path) -> dict:
    """Parse a notebook file as JSON (without validation)."""
    return json.loads(path.read_text(encoding="utf-8"))
