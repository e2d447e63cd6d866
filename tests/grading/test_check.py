"""A learner's self-check runs the visible tests and says which pass, with each failure's whole message, and an
answer cell that raises reported at that cell, as the learner's feedback page reports it."""

from __future__ import annotations

import copy
import html
import json
import re

import nbformat
import pytest
from grading_support import (
    TEST_LIMITS,
    answer_cell_ids,
    exercise_notebook,
    grade,
    notebook_name,
    partly_done_notebook,
    solution_notebook,
    with_appended_code,
    write_submissions,
)

from transformer_course.cli import main
from transformer_course.grading.check import check_notebook, format_report

pytestmark = pytest.mark.needs_nbgrader  # runs notebooks in Jupyter kernels, outside the sandbox

FIRST = "01-attention"
POSITIONS = "03-positional-encoding"
# A mistake in assignment 3's part 3: a table of 7 positions for a sequence of 6 raises halfway through the answer
# cell, after gap_without_positions is defined and before gap_with_positions is.
WRONG_TABLE = "sinusoidal_positional_encoding(7, 16)"
SHAPE_ERROR = "RuntimeError: The size of tensor a (6) must match the size of tensor b (7) at non-singleton dimension 1"


def _write(tmp_path, notebook, assignment=FIRST):
    path = tmp_path / notebook_name(assignment)
    path.write_text(json.dumps(notebook), encoding="utf-8")
    return path


def _done_with_wrong_table() -> dict:
    """Assignment 3's learner notebook with every answer cell filled in from the solution, and part 3's cell `gaps`
    using a table of the wrong length."""
    solution = {cell["id"]: cell for cell in solution_notebook(POSITIONS)["cells"]}
    notebook = exercise_notebook(POSITIONS)
    for cell in notebook["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("solution") and cell["cell_type"] == "code":
            cell["source"] = "".join(copy.deepcopy(solution[cell["id"]]["source"]))
            if cell["id"] == "gaps":
                cell["source"] = cell["source"].replace("sinusoidal_positional_encoding(6, 16)", WRONG_TABLE)
    assert any(WRONG_TABLE in cell["source"] for cell in notebook["cells"]), "the mistake should be in the notebook"
    return notebook


def _block(report: str, heading: str) -> str:
    """The lines of ``report`` from the line that starts with ``heading`` to the next row (a line not indented),
    joined into one line, as a learner reads a wrapped message."""
    lines = report.splitlines()
    start = next(index for index, line in enumerate(lines) if line.startswith(heading))
    block = [lines[start]]
    for line in lines[start + 1 :]:
        if not line.startswith(" "):
            break
        block.append(line)
    return " ".join(" ".join(block).split())


@pytest.fixture(scope="module")
def wrong_table_checked(tmp_path_factory) -> str:
    """What `check` prints for assignment 3 with the wrong table in part 3."""
    path = _write(tmp_path_factory.mktemp("wrong-table"), _done_with_wrong_table(), POSITIONS)
    return format_report(check_notebook(path))


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


def _one_failing_test(directory, message: str):
    """A notebook of one graded test cell whose assertion says ``message``."""
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    test = nbformat.v4.new_code_cell(f"assert 1 + 1 == 3, {message!r}")
    test.metadata["nbgrader"] = {
        "grade": True, "grade_id": "test-sum", "locked": True, "points": 1, "schema_version": 3, "solution": False,
        "task": False,
    }  # fmt: skip
    notebook.cells = [test]
    path = directory / "sum.ipynb"
    nbformat.write(notebook, path)
    return path


def test_a_long_assertion_message_is_shown_whole_and_wrapped(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    message = "the weights of each row should sum to one; " * 9 + "got 1.25 in row 3, expected 1.0 (the end)"
    exit_code = main(["check", str(_one_failing_test(tmp_path, message))])
    output = capsys.readouterr().out
    assert exit_code == 1
    assert f"AssertionError: {message}" in _block(output, "FAIL  test-sum"), output
    assert max(len(line) for line in output.splitlines()) <= 80, f"not wrapped to the terminal's 80 columns:\n{output}"


def test_an_answer_cell_that_raises_is_reported_at_that_cell_with_its_part_and_error(wrong_table_checked):
    report = wrong_table_checked
    block = _block(report, "ERROR gaps")
    assert "Your cell gaps (part 3) raised " + SHAPE_ERROR in block, report
    rows = [line.split()[1] for line in report.splitlines() if line.startswith(("PASS", "FAIL", "ERROR"))]
    assert rows.index("gaps") == rows.index("test-gaps") - 1, f"gaps is reported just before its test cell: {rows}"


def test_a_test_that_fails_only_because_an_answer_cell_raised_says_so(wrong_table_checked):
    report = wrong_table_checked
    assert "The test cell test-gaps fails only because of it." in _block(report, "ERROR gaps"), report
    block = _block(report, "FAIL  test-gaps")
    assert "Failed only because your cell gaps (part 3) raised RuntimeError above" in block, report
    assert "NameError: name 'gap_with_positions' is not defined" in block, "the test's own error is still shown"
    failing = [line.split()[1] for line in report.splitlines() if line.startswith("FAIL")]
    assert failing == ["test-gaps"], f"the other parts are right: {failing}"
    assert "Start with gaps:" in report or "Start with" not in report, report


@pytest.mark.needs_bwrap
def test_the_feedback_page_reports_the_raising_cell_and_its_test_as_check_does(
    course, tmp_path_factory, wrong_table_checked
):
    submissions = write_submissions(tmp_path_factory.mktemp("submitted"), POSITIONS, {"ada": _done_with_wrong_table()})
    grade(course, POSITIONS, submissions, limits=TEST_LIMITS)
    page = (course.feedback_directory / "ada" / POSITIONS / "positional_encoding.html").read_text(encoding="utf-8")
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())
    report = " ".join(wrong_table_checked.split())
    for sentence in [
        "Your cell gaps (part 3) raised " + SHAPE_ERROR,
        "The test cell test-gaps fails only because of it.",
        "Failed only because your cell gaps (part 3) raised RuntimeError above: fix that cell first.",
    ]:
        assert sentence in report, f"check does not say: {sentence}"
        assert sentence in text, f"the feedback page does not say: {sentence}"
    answer, test, after = (page.index(f'id="{name}"') for name in ("gaps", "test-gaps", "order-counterexample"))
    assert answer < page.index("Your cell gaps (part 3) raised") < test, "said at the answer cell"
    assert test < page.index("Failed only because your cell gaps") < after, "said at the test cell"
