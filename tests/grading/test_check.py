"""A learner's self-check runs the visible tests and says which pass."""

from __future__ import annotations

import json

import pytest
from grading_support import (
    answer_cell_ids,
    exercise_notebook,
    notebook_name,
    partly_done_notebook,
    with_appended_code,
)

from transformer_course.cli import main
from transformer_course.grading.check import check_notebook

pytestmark = pytest.mark.needs_nbgrader  # runs notebooks in Jupyter kernels, outside the sandbox

FIRST = "01-attention"


def _write(tmp_path, notebook):
    path = tmp_path / notebook_name(FIRST)
    path.write_text(json.dumps(notebook), encoding="utf-8")
    return path


def test_check_passes_some_tests_of_a_partly_done_notebook(tmp_path):
    results = check_notebook(_write(tmp_path, partly_done_notebook(FIRST))).tests
    passed = [result.grade_id for result in results if result.passed]
    assert "test-project-qkv" in passed and "test-attention" not in passed
    failing = next(result for result in results if result.grade_id == "test-attention")
    assert "NotImplementedError" in failing.error or "NameError" in failing.error


def test_check_command_prints_each_test_and_fails_when_one_fails(tmp_path, capsys):
    exit_code = main(["check", str(_write(tmp_path, exercise_notebook(FIRST)))])
    output = capsys.readouterr().out
    assert exit_code == 1
    assert "FAIL  test-attention" in output and "0 of" in output


def test_check_flags_an_edited_test_cell(tmp_path):
    notebook = partly_done_notebook(FIRST)
    for cell in notebook["cells"]:
        if cell["id"] == "test-project-qkv":
            cell["source"] = "assert True\n"
    results = check_notebook(_write(tmp_path, notebook)).tests
    edited = {result.grade_id for result in results if result.edited}
    assert edited == {"test-project-qkv"}


def test_check_reports_a_kernel_that_dies_with_autogrades_status(tmp_path, capsys):
    notebook = partly_done_notebook(FIRST)
    first_answer = answer_cell_ids(notebook)[0]
    path = _write(tmp_path, with_appended_code(notebook, first_answer, "import os\nos._exit(1)"))
    exit_code = main(["check", str(path)])
    output = capsys.readouterr().out
    assert exit_code == 1
    assert f"kernel_died: cell {first_answer}:" in output


def test_the_report_sends_the_learner_to_the_first_failing_test_when_several_fail():
    from transformer_course.grading.check import CheckReport, TestCellResult, format_report

    tests = [
        TestCellResult("test-shift", 2, True, False, ""),
        TestCellResult("test-train-step", 5, False, False, "AssertionError: the loss"),
        TestCellResult("test-train-and-evaluate", 4, False, False, "AssertionError: exact match"),
    ]
    report = format_report(CheckReport(tests, None))
    assert "Start with test-train-step:" in report, report
    assert "Start with" not in format_report(CheckReport(tests[:2], None)), "one failure needs no pointer"
