"""A locked cell that a learner edited, retyped or deleted is found by nbgrader's own checksums; one left as released,
or as the source notebook has it with its hidden tests, is not."""

from __future__ import annotations

import copy

import pytest
from suite_layers import NBGRADER_MISSING

pytest.importorskip("nbgrader", reason=NBGRADER_MISSING)

from nbformat import from_dict  # noqa: E402
from nbgrader.utils import compute_checksum  # noqa: E402

from transformer_course.grading.locked_cells import edited_locked_cells  # noqa: E402

pytestmark = pytest.mark.needs_nbgrader

VISIBLE = "assert f(1) == 2\n"


def _test_cell(source: str) -> dict:
    nbgrader = {"grade_id": "test-f", "grade": True, "locked": True, "points": 1.0, "solution": False}
    cell = {"cell_type": "code", "metadata": {"nbgrader": nbgrader}, "source": source, "outputs": []}
    nbgrader["checksum"] = compute_checksum(from_dict(cell))
    return cell


RELEASE = {"cells": [_test_cell(VISIBLE)]}


def _handed_in(source: str | None) -> dict:
    notebook = copy.deepcopy(RELEASE)
    if source is None:
        notebook["cells"] = []
    else:
        notebook["cells"][0]["source"] = source
    return notebook


def test_a_test_cell_left_as_released_is_not_edited():
    assert edited_locked_cells(_handed_in(VISIBLE), RELEASE) == []


@pytest.mark.parametrize("source", ["assert True\n", VISIBLE + "pass\n", None])
def test_a_test_cell_edited_retyped_or_deleted_is_found(source):
    assert edited_locked_cells(_handed_in(source), RELEASE) == ["test-f"]


def test_the_source_notebooks_version_with_its_hidden_tests_is_accepted():
    hidden = VISIBLE + "### BEGIN HIDDEN TESTS\nassert f(2) == 3\n### END HIDDEN TESTS\n"
    source = {"cells": [_test_cell(hidden)]}
    assert edited_locked_cells(_handed_in(hidden), RELEASE, source) == []
