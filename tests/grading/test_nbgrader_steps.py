"""The grader's check of nbgrader's cell metadata gives nbgrader's own verdicts: it accepts what nbgrader
accepts and refuses, with an error, what nbgrader refuses (it only makes the schema's validator once)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from suite_layers import NBGRADER_MISSING

pytestmark = pytest.mark.needs_nbgrader
pytest.importorskip("nbgrader", reason=NBGRADER_MISSING)

import nbformat  # noqa: E402
from nbgrader.nbgraderformat import MetadataValidator, ValidationError  # noqa: E402
from nbgrader.nbgraderformat.common import SchemaTooNewError, SchemaTooOldError  # noqa: E402

from transformer_course.grading.nbgrader_steps import CheckCellMetadataSchemaOnce  # noqa: E402

SOURCE = Path(__file__).resolve().parents[2] / "solutions" / "01-attention" / "attention.ipynb"


def _notebook() -> nbformat.NotebookNode:
    return nbformat.read(SOURCE, as_version=4)


def _first(notebook, flag: str) -> dict:
    """The nbgrader metadata of the notebook's first cell with ``flag`` set (``grade``, ``solution``, ``locked``)."""
    return next(cell.metadata["nbgrader"] for cell in notebook.cells if cell.metadata.get("nbgrader", {}).get(flag))


def _corrupted(name: str) -> nbformat.NotebookNode:
    notebook = _notebook()
    grade = _first(notebook, "grade")
    if name == "points as text":
        grade["points"] = "ten"
    elif name == "grade flag as text":
        grade["grade"] = "yes"
    elif name == "no grade_id":
        del grade["grade_id"]
    elif name == "duplicate grade_id":
        _first(notebook, "solution")["grade_id"] = grade["grade_id"]
    elif name == "older schema":
        grade["schema_version"] = 1
    elif name == "newer schema":
        grade["schema_version"] = 99
    return notebook


def _nbgrader_refuses(notebook) -> type[Exception] | None:
    try:
        MetadataValidator().validate_nb(copy.deepcopy(notebook))
    except (ValidationError, SchemaTooOldError, SchemaTooNewError) as error:
        return type(error)
    return None


def test_the_released_notebook_passes_as_nbgrader_passes_it():
    notebook = _notebook()
    assert _nbgrader_refuses(notebook) is None
    checked, _ = CheckCellMetadataSchemaOnce()(notebook, {})
    assert json.dumps(checked, sort_keys=True) == json.dumps(_notebook(), sort_keys=True), "the check changed cells"


@pytest.mark.parametrize(
    "corruption",
    ["points as text", "grade flag as text", "no grade_id", "duplicate grade_id", "older schema", "newer schema"],
)
def test_corrupted_metadata_is_refused_as_nbgrader_refuses_it(corruption):
    notebook = _corrupted(corruption)
    expected = _nbgrader_refuses(notebook)
    assert expected is not None, f"nbgrader itself accepts {corruption!r}: the case tests nothing"
    with pytest.raises(expected) as raised:
        CheckCellMetadataSchemaOnce()(notebook, {})
    assert raised.type is expected


def test_one_step_checks_many_notebooks_alike():
    step = CheckCellMetadataSchemaOnce()
    step(_notebook(), {})
    with pytest.raises(ValidationError):
        step(_corrupted("points as text"), {})
    step(_notebook(), {})  # a refusal leaves nothing behind for the next notebook
