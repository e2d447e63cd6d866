"""nbgrader's marks on cells, read one way: a cell's source joined wherever it is held as lines, its hidden tests
split from its visible ones, and a cell without marks marked nothing."""

from __future__ import annotations

from transformer_course.grading import nbgrader_cells
from transformer_course.grading.nbgrader_cells import (
    answer_sources,
    cells_by_grade_id,
    grade_id,
    nbgrader_metadata,
    source_text,
    split_hidden_tests,
)


def _cell(name: str | None, kind: str = "code", source: str | list[str] = "", **marks) -> dict:
    metadata = {"nbgrader": {"grade_id": name, **marks}} if name else {}
    return {"cell_type": kind, "metadata": metadata, "source": source}


def test_a_source_held_as_lines_is_joined_as_written():
    assert source_text(_cell(None, source=["x = 1\n", "y = 2"])) == "x = 1\ny = 2"


def test_a_cell_without_nbgraders_marks_has_none():
    assert (nbgrader_metadata(_cell(None)), grade_id(_cell(None))) == ({}, None)


def test_the_hidden_tests_are_split_from_the_visible_ones_without_the_markers():
    source = "assert f(1) == 1\n### BEGIN HIDDEN TESTS\nassert f(2) == 2\n### END HIDDEN TESTS\n"
    assert split_hidden_tests(source) == ("assert f(1) == 1\n", "assert f(2) == 2\n")


def test_the_answers_of_a_notebook_are_its_solution_cells_and_code_only_leaves_out_written_ones():
    notebook = {
        "cells": [
            _cell("code-answer", source="x = 1", solution=True),
            _cell("written", "markdown", "Because.", solution=True, grade=True),
            _cell("test-x", source="assert x == 1", grade=True),
        ]
    }
    assert answer_sources(notebook) == {"code-answer": "x = 1", "written": "Because."}
    assert answer_sources(notebook, code_only=True) == {"code-answer": "x = 1"}
    assert nbgrader_cells.test_sources(notebook) == {"test-x": "assert x == 1"}


def test_a_grade_id_a_learner_copied_names_the_last_cell_that_has_it():
    notebook = {"cells": [_cell("part", source="first"), _cell("part", source="copy")]}
    assert source_text(cells_by_grade_id(notebook)["part"]) == "copy"
