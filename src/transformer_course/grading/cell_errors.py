"""What went wrong in an executed learner notebook, said at the cell where it happened.

A cell that raises leaves undefined the names it had not yet defined, and the test cell after it then fails
with an error that seems to have nothing to do with it: assignment 3's answer cell ``gaps`` raising a
``RuntimeError`` halfway shows at ``test-gaps`` as ``NameError: name 'gap_with_positions' is not defined``.
:func:`read_cell_errors` reads an executed notebook's outputs and finds

* every code cell other than a test cell that raised (the learner's answer cells and the given ones), with
  the part of the notebook it is in (its ``## N.`` heading) and its error;
* every test cell that failed, with its error, and the cell it failed only because of: its error is a
  ``NameError`` for a name that a cell above it would have defined had that cell not raised, or, where no
  cell that raised defines it, one that names it (an answer cell left as released, ``raise
  NotImplementedError()`` before the line that prints the name); followed back to the first cell of such a
  chain: a given cell that fails on an answer cell's missing name leads to the answer cell.

``transformer-course check`` prints these and the learner's feedback page shows them, at the same cells and in
the same sentences (:func:`raised_note`, :func:`caused_note`); both show every error whole.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from dataclasses import dataclass

from .execute import NOT_RUN, NOTEBOOK_TIMEOUT
from .nbgrader_cells import grade_id, nbgrader_metadata, source_text

# A part's heading: "## 3. Without positions, …", "## 9 (bonus). …", and the Chinese notebooks' "## 3\. …".
PART_HEADING = re.compile(r"^##\s+(\d+)\b")
# Python's message for a name nothing defined ("…is not defined", "…is not defined. Did you mean: 'x'?").
UNDEFINED_NAME = re.compile(r"^name '([^']+)' is not defined")
NAME = re.compile(r"[A-Za-z_]\w*")
# Errors the grader writes into cells it did not run: they say nothing the cell's code did.
NOT_RUN_ERRORS = frozenset({NOT_RUN, NOTEBOOK_TIMEOUT})


@dataclass(frozen=True)
class CellError:
    """The first error in a cell's outputs: the exception's name and its whole message."""

    name: str
    message: str

    def __str__(self) -> str:
        return f"{self.name}: {self.message}" if self.message else self.name


@dataclass(frozen=True)
class RaisedCell:
    """A code cell, not a test cell, that raised."""

    cell: str  # its grade_id, or its id
    index: int  # its place among the notebook's cells
    part: int | None  # the number of the part it is in; None before the first part
    answer: bool  # the learner's answer cell (nbgrader's ``solution``), not a given one
    error: CellError
    cause: RaisedCell | None  # the cell above that it failed only because of, if any

    def described(self) -> str:
        """ "your cell gaps (part 3)", or "the given cell encoder-setup (part 3)"."""
        part = f" (part {self.part})" if self.part is not None else ""
        return f"{'your cell' if self.answer else 'the given cell'} {self.cell}{part}"


@dataclass(frozen=True)
class FailedTest:
    """A test cell whose outputs hold an error."""

    grade_id: str
    index: int  # its place among the notebook's cells
    error: CellError
    cause: RaisedCell | None  # the cell it failed only because of, if any


@dataclass
class CellErrors:
    """What went wrong in a notebook, by cell: the cells that raised and the test cells that failed."""

    raised: dict[str, RaisedCell]  # cell -> what it raised, in notebook order
    failed: dict[str, FailedTest]  # test cell's grade_id -> how it failed, in notebook order

    def dependents(self, cell: str) -> list[str]:
        """The test cells that failed only because ``cell`` raised, in notebook order."""
        return [test.grade_id for test in self.failed.values() if test.cause is not None and test.cause.cell == cell]

    def notes(self) -> dict[int, str]:
        """The note each cell shows, by its place in the notebook: every cell that raised, and every test cell that
        failed only because of one."""
        notes = {cell.index: raised_note(cell, self.dependents(cell.cell)) for cell in self.raised.values()}
        return notes | {test.index: caused_note(test) for test in self.failed.values() if test.cause is not None}


def read_cell_errors(notebook: Mapping) -> CellErrors:
    """The cells of an executed ``notebook`` that raised and the test cells that failed, and why (module docstring)."""
    raised: dict[str, RaisedCell] = {}
    failed: dict[str, FailedTest] = {}
    # Each cell that raised, with the names its code would define and every name it holds.
    defines: list[tuple[RaisedCell, set[str], set[str]]] = []
    part = None
    for index, cell in enumerate(notebook.get("cells", [])):
        if cell.get("cell_type") == "markdown":
            heading = PART_HEADING.match(source_text(cell))
            part = int(heading.group(1)) if heading else part
            continue
        if cell.get("cell_type") != "code":
            continue
        error = first_error(cell)
        if error is None or error.name in NOT_RUN_ERRORS:
            continue
        cause = _cause(error, defines)
        nbgrader = nbgrader_metadata(cell)
        if nbgrader.get("grade") and not nbgrader.get("solution"):
            failed[nbgrader["grade_id"]] = FailedTest(nbgrader["grade_id"], index, error, cause)
            continue
        name = grade_id(cell) or cell.get("id") or f"number {index}"
        raised[name] = RaisedCell(name, index, part, bool(nbgrader.get("solution")), error, cause)
        source = source_text(cell)
        defines.append((raised[name], defined_names(source), set(NAME.findall(source))))
    return CellErrors(raised, failed)


def first_error(cell: Mapping) -> CellError | None:
    """The first error among ``cell``'s outputs, or None."""
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            return CellError(str(output.get("ename", "")), str(output.get("evalue", "")))
    return None


def _cause(error: CellError, defines: list[tuple[RaisedCell, set[str], set[str]]]) -> RaisedCell | None:
    """The cell above that ``error`` comes from: the last cell that raised before defining the name ``error`` says is
    undefined (else the last that names it), followed back to the first cell of the chain; None when the error is not
    such a ``NameError``."""
    undefined = UNDEFINED_NAME.match(error.message) if error.name == "NameError" else None
    if undefined is None:
        return None
    for names_of in (lambda row: row[1], lambda row: row[2]):
        for row in reversed(defines):
            if undefined.group(1) in names_of(row):
                return row[0].cause or row[0]
    return None


def defined_names(source: str) -> set[str]:
    """The names a cell's code defines at the notebook's top level (assignments, ``def``, ``class``, ``import``,
    loop and ``with`` targets); for code that does not parse, every name it holds, since what it meant to define
    cannot be read."""
    code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set(NAME.findall(source))
    names: set[str] = set()
    _collect_bound(tree, names)
    return names


def _collect_bound(node: ast.AST, names: set[str]) -> None:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(child.name)  # its body's names are its own
        elif isinstance(child, ast.Lambda | ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp):
            continue  # a scope of its own
        elif isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
            names.add(child.id)
        elif isinstance(child, ast.alias):
            names.add((child.asname or child.name).split(".")[0])
        elif isinstance(child, ast.ExceptHandler) and child.name:
            names.add(child.name)
        if not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            _collect_bound(child, names)


def raised_note(raised: RaisedCell, dependents: list[str]) -> str:
    """What a cell that raised says, at that cell: where it is, its whole error, and the test cells that failed only
    because of it (or the cell it raised only because of)."""
    described = raised.described()
    note = f"{described[0].upper()}{described[1:]} raised {raised.error}"
    if raised.cause is not None:
        note += f"\nIt raised only because {raised.cause.described()} raised {raised.cause.error.name} above."
    if dependents:
        tests = ", ".join(dependents)
        note += f"\nThe test cell{'s' if len(dependents) > 1 else ''} {tests} fail{'' if len(dependents) > 1 else 's'}"
        note += " only because of it."
    return note


def caused_note(test: FailedTest) -> str:
    """What a test cell that failed only because a cell above raised (``test.cause``) says: that cell, then its own
    error."""
    return (
        f"Failed only because {test.cause.described()} raised {test.cause.error.name} above: fix that cell first. "
        f"Here: {test.error}"
    )
