"""A learner's self-check: run a notebook and report which of its visible tests pass.

    transformer-course check attention.ipynb

The notebook is executed from top to bottom in a fresh kernel, by the same runner and cell loop
as the grader's (but in the learner's own environment, without the sandbox), and each test cell is
scored with nbgrader's rules: it passes when it raises no error. A kernel that dies, a cell that
runs past its time limit and memory that runs out are reported with the status autograde gives
them. Hidden tests are not in the learner's notebook; the instructor's grader adds them. A test
cell whose code was edited is reported too: grading restores the original.

The report shows every failing test's whole message, wrapped to the terminal, never cut: the
visible tests' messages say what was expected, what came and a hint, and the end of one is often
the part that teaches. An answer cell (or a given one) that raised is reported at that cell, with
its part and its error, and a test that failed only because of it says so
(:mod:`transformer_course.grading.cell_errors`, whose sentences the feedback page shows too).

It runs wherever the learner is (Linux, macOS, Windows): nothing here needs a sandbox or POSIX
process groups. Where no Jupyter kernel can start, it stops with one line that says so.
"""

from __future__ import annotations

import os
import shutil
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbgrader import utils

from .cell_errors import RaisedCell, caused_note, raised_note, read_cell_errors
from .errors import CourseError
from .execute import execute_notebook, started
from .limits import GradingLimits
from .locked_cells import edited_locked_cells
from .pipe import runner_command
from .sandbox import Launch
from .status import Problem, worst


class NoKernelError(CourseError):
    """No Jupyter kernel could start here, so nothing can be checked (a ``CourseError``: the ``check``
    command prints it as one ``error:`` line)."""


# Where a report's messages start: under the row's grade id.
INDENT = " " * 6


@dataclass
class TestCellResult:
    grade_id: str
    points: float
    passed: bool
    edited: bool
    error: str  # what the learner reads: "ErrorName: the whole message" of the first error, or why it failed
    index: int = 0  # the cell's place in the notebook


@dataclass
class RaisedCellResult:
    """A cell, not a test cell, that raised: where, and the note that says so (with the tests it failed)."""

    raised: RaisedCell
    note: str


@dataclass
class CheckReport:
    tests: list[TestCellResult]  # one per test cell, in notebook order
    problem: Problem | None  # as autograde reports a lost kernel, a timeout, lost memory
    raised: list[RaisedCellResult] = field(default_factory=list)  # the other cells that raised, in notebook order


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
    errors = read_cell_errors(notebook)
    raised = [
        RaisedCellResult(cell, raised_note(cell, errors.dependents(cell.cell))) for cell in errors.raised.values()
    ]
    results = []
    for index, cell in enumerate(notebook.cells):
        if not utils.is_grade(cell) or utils.is_solution(cell) or cell.cell_type != "code":
            continue
        # The grader's rule for a test cell's visible part: it passes when it raised no error.
        name = cell.metadata.nbgrader.grade_id
        failed = errors.failed.get(name)
        error = "" if failed is None else caused_note(failed) if failed.cause is not None else str(failed.error)
        points = float(cell.metadata.nbgrader.points)
        passed = not any(output.output_type == "error" for output in cell.outputs)
        results.append(TestCellResult(name, points, passed, name in edited, error, index))
    return CheckReport(results, worst(session.problems), raised)


def format_report(report: CheckReport) -> str:
    """The test cells and the cells that raised, in notebook order, each failure's whole message wrapped under its row;
    what went wrong with the kernel if anything did; then a one-line summary."""
    width = max(40, shutil.get_terminal_size((100, 24)).columns)
    rows = sorted(
        [(result.index, "test", result) for result in report.tests]
        + [(raised.raised.index, "raised", raised) for raised in report.raised],
        key=lambda row: row[0],
    )
    lines, first_problem = [], None
    for _, kind, row in rows:
        if kind == "raised":
            where = "your code" if row.raised.answer else "given code"
            lines.append(f"ERROR {row.raised.cell:<32} {where}")
            lines += _wrapped(row.note, width)
            first_problem = first_problem or (row.raised.cause or row.raised).cell
            continue
        mark = "PASS" if row.passed else "FAIL"
        line = f"{mark}  {row.grade_id:<32} {row.points:g} point{'s' if row.points != 1 else ''}"
        if row.edited:
            line += "  [edited: grading restores the original test]"
        lines.append(line)
        lines += _wrapped(row.error, width)
        if not row.passed:
            first_problem = first_problem or row.grade_id
    if report.problem is not None:
        lines += textwrap.wrap(f"{report.problem.status}: {report.problem.message}", width, break_on_hyphens=False)
    passed = sum(result.passed for result in report.tests)
    points = sum(result.points for result in report.tests if result.passed)
    total = sum(result.points for result in report.tests)
    lines += textwrap.wrap(
        f"{passed} of {len(report.tests)} visible test cells pass ({points:g} of {total:g} visible points).", width
    )
    failed = [result.grade_id for result in report.tests if not result.passed]
    if len(failed) > 1:
        # Later parts call the learner's earlier functions here; the grader gives them correct ones instead.
        lines += textwrap.wrap(
            f"Start with {first_problem}: later parts call your earlier functions, so one bug can fail several tests "
            "here, while grading gives each part correct earlier functions and charges a bug to its own part.",
            width,
        )
    if passed == len(report.tests):
        lines.append("Hidden tests are added when the notebook is graded: make your code general.")
    return "\n".join(lines)


def _wrapped(message: str, width: int) -> list[str]:
    """``message`` whole, each of its lines wrapped to ``width`` columns under a row, keeping the line's own indentation
    (a tensor's rows stay aligned)."""
    lines = []
    for line in message.splitlines():
        text = line.lstrip()
        indent = INDENT + line[: len(line) - len(text)]
        lines += textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=indent, break_on_hyphens=False)
    return lines
