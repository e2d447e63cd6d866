"""Intake takes a submission as data: names, files and bytes are checked before anything uses them, and every bound
holds. These tests need no kernel; the few that need nbgrader's checksums say so."""

from __future__ import annotations

import json
import os

import pytest
from suite_layers import NBGRADER_MISSING

pytest.importorskip("nbformat", reason=NBGRADER_MISSING)  # intake reads notebooks with it


import nbformat

from transformer_course.grading.intake import (
    Refused,
    check_student_id,
    parse_notebook,
    read_regular_file,
    real_directory,
)


def _refusal(call) -> Refused:
    with pytest.raises(Refused) as raised:
        call()
    return raised.value


@pytest.mark.parametrize("name", ["alice", "bob.smith", "s1234567", "a_b-c@uni.edu", "A" * 64])
def test_ordinary_student_ids_are_accepted(name):
    check_student_id(name)


@pytest.mark.parametrize(
    "name",
    ["$(touch x)", "alice ", " alice", "=2+5", "@SUM(1)", "-rf", ".hidden", "a/b", "a*", "[ab]", "é", "A" * 65, ""],
)
def test_a_folder_name_that_is_not_a_student_id_is_refused_with_the_rule(name):
    refusal = _refusal(lambda: check_student_id(name))
    assert refusal.status == "invalid_student_id" and "letters, digits" in refusal.message, refusal.message


def test_a_symbolic_link_where_the_notebook_should_be_is_not_followed(tmp_path):
    secret = tmp_path / "solution.ipynb"
    secret.write_text("{}")
    (tmp_path / "attention.ipynb").symlink_to(secret)
    refusal = _refusal(lambda: read_regular_file(tmp_path / "attention.ipynb"))
    assert refusal.status == "refused" and "symbolic link" in refusal.message, refusal.message


def test_a_fifo_where_the_notebook_should_be_is_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "attention.ipynb")
    refusal = _refusal(lambda: read_regular_file(tmp_path / "attention.ipynb"))
    assert refusal.status == "refused" and "special file" in refusal.message, refusal.message


def test_a_folder_where_the_notebook_should_be_is_refused(tmp_path):
    (tmp_path / "attention.ipynb").mkdir()
    refusal = _refusal(lambda: read_regular_file(tmp_path / "attention.ipynb"))
    assert refusal.status == "refused" and "directory" in refusal.message, refusal.message


def test_a_student_folder_that_is_a_link_is_refused(tmp_path):
    (tmp_path / "bob").mkdir()
    (tmp_path / "mallory").symlink_to(tmp_path / "bob")
    refusal = _refusal(lambda: real_directory(tmp_path / "mallory", "the folder 'mallory'"))
    assert refusal.status == "refused" and "symbolic link" in refusal.message, refusal.message


def test_a_file_over_the_size_limit_is_refused_unread(tmp_path):
    (tmp_path / "attention.ipynb").write_bytes(b" " * 2_000)
    refusal = _refusal(lambda: read_regular_file(tmp_path / "attention.ipynb", limit=1_000))
    assert refusal.status == "refused" and "larger than" in refusal.message, refusal.message


def _notebook(*cells: dict) -> bytes:
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": list(cells)}).encode()


def _code_cell(source: str = "x = 1", **metadata) -> dict:
    return {
        "cell_type": "code",
        "id": "c1",
        "metadata": metadata,
        "source": source,
        "outputs": [],
        "execution_count": 1,
    }


def test_a_notebook_nested_too_deep_is_an_invalid_notebook_not_a_crash():
    deep = b'{"nbformat": 4, "cells": [], "metadata": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"
    refusal = _refusal(lambda: parse_notebook(deep, "attention.ipynb"))
    assert refusal.status == "invalid_notebook" and "nested" in refusal.message, refusal.message


def test_nbgrader_metadata_that_is_a_string_is_dropped():
    notebook = parse_notebook(_notebook(_code_cell(nbgrader="solution")), "attention.ipynb")
    assert "nbgrader" not in notebook["cells"][0]["metadata"], notebook["cells"][0]["metadata"]


def test_nbgrader_metadata_of_the_wrong_types_is_dropped():
    metadata = {"grade_id": "softmax", "points": "15", "grade": True}
    notebook = parse_notebook(_notebook(_code_cell(nbgrader=metadata)), "attention.ipynb")
    assert "nbgrader" not in notebook["cells"][0]["metadata"], notebook["cells"][0]["metadata"]


def test_well_formed_nbgrader_metadata_is_kept():
    metadata = {"grade_id": "softmax", "points": 2, "grade": True, "solution": False, "locked": True}
    notebook = parse_notebook(_notebook(_code_cell(nbgrader=metadata)), "attention.ipynb")
    assert notebook["cells"][0]["metadata"]["nbgrader"] == metadata


def test_outputs_and_other_metadata_of_a_submission_are_dropped():
    cell = _code_cell(anything={"deep": [1, 2]}) | {
        "outputs": [{"output_type": "stream", "name": "stdout", "text": "15"}]
    }
    notebook = parse_notebook(_notebook(cell), "attention.ipynb")
    assert notebook["cells"][0]["outputs"] == [] and notebook["cells"][0]["metadata"] == {}, notebook["cells"][0]
    nbformat.validate(nbformat.from_dict(notebook))


def test_a_source_that_is_not_text_is_an_invalid_notebook():
    refusal = _refusal(lambda: parse_notebook(_notebook(_code_cell(source={"a": 1})), "attention.ipynb"))
    assert refusal.status == "invalid_notebook" and "not text" in refusal.message, refusal.message


def _given(notebook: dict):
    from transformer_course.grading.intake import Given

    return Given({"attention.ipynb": notebook}, {"attention.ipynb": notebook}, "", [])


def _released_attention() -> dict:
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "exercises" / "01-attention" / "attention.ipynb"
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.needs_nbgrader  # nbgrader's checksums
def test_a_notebook_of_twenty_thousand_small_cells_is_refused_at_intake(tmp_path):
    from transformer_course.grading.intake import take_in

    released = _released_attention()
    flood = {**released, "cells": released["cells"] + [nbformat.v4.new_markdown_cell("x") for _ in range(20_000)]}
    (tmp_path / "mallory").mkdir()
    (tmp_path / "mallory" / "attention.ipynb").write_text(json.dumps(flood), encoding="utf-8")
    submission = take_in(tmp_path, "mallory", "01-attention", _given(released))
    assert submission.status == "refused", submission
    assert "20," in submission.message and "cells" in submission.message, submission.message


@pytest.mark.needs_nbgrader  # nbgrader's checksums
def test_a_notebook_with_some_cells_of_notes_added_is_taken_in(tmp_path):
    from transformer_course.grading.intake import take_in

    released = _released_attention()
    notes = [nbformat.v4.new_markdown_cell("my notes " * 50) for _ in range(40)]
    (tmp_path / "alice").mkdir()
    (tmp_path / "alice" / "attention.ipynb").write_text(
        json.dumps({**released, "cells": released["cells"] + notes}), encoding="utf-8"
    )
    submission = take_in(tmp_path, "alice", "01-attention", _given(released))
    assert submission.status is None, submission.message  # taken in: intake ended nothing


@pytest.mark.needs_nbgrader  # nbgrader's checksums
def test_intake_changes_nothing_in_the_folder_it_reads(tmp_path):
    from transformer_course.grading.intake import take_in

    folder = tmp_path / "alice" / "01-attention"
    folder.mkdir(parents=True)
    (folder / "attention.ipynb").write_text(json.dumps(_released_attention()), encoding="utf-8")
    (folder / "timestamp.txt").write_text("2026-11-20 12:00:00.000000 UTC", encoding="utf-8")
    (folder / "submission_secret.txt").write_text("0123abcd", encoding="utf-8")
    before = {path: (path.read_bytes(), path.stat().st_mtime_ns) for path in folder.iterdir()}
    submission = take_in(tmp_path, "alice", "01-attention", _given(_released_attention()))
    assert {path: (path.read_bytes(), path.stat().st_mtime_ns) for path in folder.iterdir()} == before
    assert sorted(submission.kept) == ["attention.ipynb", "submission_secret.txt", "timestamp.txt"], submission.kept


@pytest.mark.needs_nbgrader  # nbgrader's checksums
def test_the_chinese_notebook_a_learner_worked_in_is_the_one_graded(tmp_path):
    """nbgrader's exchange hands out and takes back the whole folder, the Chinese notebook beside the English one."""
    from transformer_course.grading.intake import take_in

    released = _released_attention()
    worked = json.loads(json.dumps(released))
    answer = next(cell for cell in worked["cells"] if cell.get("metadata", {}).get("nbgrader", {}).get("solution"))
    answer["source"] = "def project_qkv(x, w_q, w_k, w_v):\n    return x @ w_q, x @ w_k, x @ w_v\n"
    folder = tmp_path / "li" / "01-attention"
    (folder / "zh_CN").mkdir(parents=True)
    (folder / "attention.ipynb").write_text(json.dumps(released), encoding="utf-8")
    (folder / "zh_CN" / "attention.ipynb").write_text(json.dumps(worked), encoding="utf-8")
    submission = take_in(tmp_path, "li", "01-attention", _given(released))
    graded = submission.notebooks["attention.ipynb"]
    assert any("x @ w_q" in cell["source"] for cell in graded["cells"]), "the English notebook, untouched, was graded"
    assert submission.kept["attention.ipynb"] == (folder / "zh_CN" / "attention.ipynb").read_bytes()
