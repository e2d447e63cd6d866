"""A learner's self-check: run a notebook and report which of its visible tests pass.

    transformer-course check attention.ipynb

The notebook is executed from top to bottom in a fresh kernel, by the same runner and cell loop
as the grader's (but in the learner's own environment, without the sandbox), and each test cell is
scored with nbgrader's rules: it passes when it raises no error. A kernel that dies, a cell that
runs past its time limit and memory that runs out are reported with the status autograde gives
them. Hidden tests are not in the learner's notebook; the instructor's grader adds them. A test
cell whose code was edited is reported too: grading restores the original.

It runs wherever the learner is (Linux, macOS, Windows): nothing here needs a sandbox or POSIX
process groups. Where no Jupyter kernel can start, it stops with one line that says so.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbgrader import utils

from .course import CourseError, edited_locked_cells
from .execute import execute_notebook, started
from .limits import GradingLimits
from .pipe import runner_command
from .sandbox import Launch
from .status import Problem, worst


class NoKernelError(CourseError):
    """No Jupyter kernel could start here, so nothing can be checked (a ``CourseError``: the ``check``
    command prints it as one ``error:`` line)."""


@dataclass
class TestCellResult:
    grade_id: str
    points: float
    passed: bool
    edited: bool
    error: str  # "ErrorName: message" of the first error, or ""


@dataclass
class CheckReport:
    tests: list[TestCellResult]  # one per test cell, in notebook order
    problem: Problem | None  # as autograde reports a lost kernel, a timeout, lost memory


def check_notebook(path: Path | str, cell_timeout: int = 600) -> CheckReport:
    """Execute the notebook at ``path`` and score its test cells.

    Args:
        path: the learner's notebook.
        cell_timeout: seconds a cell may run before it is interrupted.

    Raises:
        NoKernelError: no Jupyter kernel starts in this environment.
    """
    path = Path(path)
    notebook = nbformat.read(path, as_version=4)
    edited = set(edited_locked_cells(notebook, notebook))
    limits = GradingLimits(cell_timeout=cell_timeout, submission_timeout=24 * 3600)
    runner = runner_command(sys.executable, Path(__file__).resolve().parents[2])
    with started(
        Launch([], runner, dict(os.environ, NBGRADER_EXECUTION="validate"), path.parent.resolve()), limits
    ) as session:
        problem = session.start_problem()
        if problem is not None:
            raise NoKernelError(
                f"no Jupyter kernel can run here, so {path.name} cannot be checked ({problem}): "
                f"pip install ipykernel, in the environment of {sys.executable}"
            )
        execute_notebook(notebook, session)
    results = []
    for cell in notebook.cells:
        if not utils.is_grade(cell) or utils.is_solution(cell) or cell.cell_type != "code":
            continue
        # The grader's rule for a test cell's visible part: it passes when it raised no error.
        errors = [output for output in cell.outputs if output.output_type == "error"]
        error = f"{errors[0].ename}: {errors[0].evalue}".strip() if errors else ""
        grade_id = cell.metadata.nbgrader.grade_id
        points = float(cell.metadata.nbgrader.points)
        results.append(TestCellResult(grade_id, points, not errors, grade_id in edited, error))
    return CheckReport(results, worst(session.problems))


def format_report(report: CheckReport) -> str:
    """A table of the test cells, what went wrong with the kernel if anything did, then a one-line summary."""
    lines = []
    for result in report.tests:
        mark = "PASS" if result.passed else "FAIL"
        line = f"{mark}  {result.grade_id:<32} {result.points:g} point{'s' if result.points != 1 else ''}"
        if result.error:
            line += f"  ({result.error[:120]})"
        if result.edited:
            line += "  [edited: grading restores the original test]"
        lines.append(line)
    if report.problem is not None:
        lines.append(f"{report.problem.status}: {report.problem.message}")
    passed = sum(result.passed for result in report.tests)
    points = sum(result.points for result in report.tests if result.passed)
    total = sum(result.points for result in report.tests)
    lines.append(f"{passed} of {len(report.tests)} visible test cells pass ({points:g} of {total:g} visible points).")
    failed = [result.grade_id for result in report.tests if not result.passed]
    if len(failed) > 1:
        # Later parts call the learner's earlier functions here; the grader gives them correct ones instead.
        lines.append(
            f"Start with {failed[0]}: later parts call your earlier functions, so one bug can fail several tests "
            "here, while grading gives each part correct earlier functions and charges a bug to its own part."
        )
    if passed == len(report.tests):
        lines.append("Hidden tests are added when the notebook is graded: make your code general.")
    return "\n".join(lines)
