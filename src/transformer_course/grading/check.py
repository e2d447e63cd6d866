"""A learner's self-check: run a notebook and report which of its visible tests pass.

    transformer-course check attention.ipynb

The notebook is executed from top to bottom in a fresh kernel, by the same runner and cell loop
as the grader's (but in the learner's own environment, without the sandbox), and each test cell is
scored with nbgrader's rules: it passes when it raises no error. A kernel that dies is reported in
the cell where it happened, as the grader reports it. Hidden tests are not in the learner's
notebook; the instructor's grader adds them. A test cell whose code was edited is reported too:
grading restores the original.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbgrader import utils

from .execute import execute_notebook, started
from .limits import GradingLimits
from .sandbox import Launch


@dataclass
class TestCellResult:
    grade_id: str
    points: float
    passed: bool
    edited: bool
    error: str  # "ErrorName: message" of the first error, or ""


def check_notebook(path: Path | str, cell_timeout: int = 600) -> list[TestCellResult]:
    """Execute the notebook at ``path`` and score its test cells.

    Args:
        path: the learner's notebook.
        cell_timeout: seconds a cell may run before it is interrupted.

    Returns:
        one result per test cell, in notebook order.
    """
    path = Path(path)
    notebook = nbformat.read(path, as_version=4)
    limits = GradingLimits(cell_timeout=cell_timeout, submission_timeout=24 * 3600)
    runner = [sys.executable, "-m", "transformer_course.grading.runner"]
    with started(
        Launch([], runner, dict(os.environ, NBGRADER_EXECUTION="validate"), path.parent.resolve()), limits
    ) as session:
        execute_notebook(notebook, session)
    results = []
    for cell in notebook.cells:
        if not utils.is_grade(cell) or cell.cell_type != "code":
            continue
        score, max_score = utils.determine_grade(cell)
        errors = [output for output in cell.outputs if output.output_type == "error"]
        error = f"{errors[0].ename}: {errors[0].evalue}".strip() if errors else ""
        checksum = cell.metadata.nbgrader.get("checksum")
        edited = checksum is not None and utils.compute_checksum(cell) != checksum
        results.append(TestCellResult(cell.metadata.nbgrader.grade_id, max_score, score == max_score, edited, error))
    return results


def format_report(results: list[TestCellResult]) -> str:
    """A table of the test cells, then a one-line summary."""
    lines = []
    for result in results:
        mark = "PASS" if result.passed else "FAIL"
        line = f"{mark}  {result.grade_id:<32} {result.points:g} point{'s' if result.points != 1 else ''}"
        if result.error:
            line += f"  ({result.error[:120]})"
        if result.edited:
            line += "  [edited: grading restores the original test]"
        lines.append(line)
    passed = sum(result.passed for result in results)
    points = sum(result.points for result in results if result.passed)
    total = sum(result.points for result in results)
    lines.append(f"{passed} of {len(results)} visible test cells pass ({points:g} of {total:g} visible points).")
    if passed == len(results):
        lines.append("Hidden tests are added when the notebook is graded: make your code general.")
    return "\n".join(lines)
