"""What the answer key looks for: an answer cell's model answer apart from what its release keeps, and a source
notebook's copy told by nbgrader's markers."""

from __future__ import annotations

import pytest
from suite_layers import NBGRADER_MISSING

pytest.importorskip("nbgrader", reason=NBGRADER_MISSING)

from transformer_course.grading.answer_key import (  # noqa: E402
    has_nbgrader_cells,
    holds_a_marker,
    read_notebook,
    split_solution,
)
from transformer_course.grading.errors import CourseError  # noqa: E402

pytestmark = pytest.mark.needs_nbgrader


def test_the_model_answer_is_what_stands_between_the_solution_markers():
    source = "def f(x):\n    ### BEGIN SOLUTION\n    return x + 1\n    ### END SOLUTION\n"
    assert split_solution(source) == ("def f(x):\n", "    return x + 1\n")


def test_an_answer_cell_without_markers_is_answer_all_through():
    assert split_solution("x = 42\n") == ("", "x = 42\n")


def test_a_copy_of_a_source_notebook_is_told_by_its_markers():
    copied = {"cells": [{"cell_type": "code", "source": ["### BEGIN SOLUTION\n", "x = 1\n", "### END SOLUTION"]}]}
    released = {"cells": [{"cell_type": "code", "source": "raise NotImplementedError()"}]}
    assert (holds_a_marker(copied), holds_a_marker(released)) == (True, False)


def test_a_notebook_with_nbgraders_cells_is_told_from_one_without():
    marked = {"cells": [{"cell_type": "code", "metadata": {"nbgrader": {"grade_id": "a", "solution": True}}}]}
    assert (has_nbgrader_cells(marked), has_nbgrader_cells({"cells": [{"cell_type": "code", "metadata": {}}]})) == (
        True,
        False,
    )


def test_a_notebook_that_is_not_json_is_one_error_naming_it(tmp_path):
    (tmp_path / "broken.ipynb").write_text("{ not json", encoding="utf-8")
    with pytest.raises(CourseError, match="book/broken.ipynb is not a notebook"):
        read_notebook(tmp_path / "broken.ipynb", "book/broken.ipynb")
