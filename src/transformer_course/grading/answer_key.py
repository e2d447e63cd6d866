"""The course's answers as publish looks for them: by content, wherever a file lies.

The source notebooks (``solutions/``) hold what a learner must never receive, and a copy of it can turn up
in any file (a test, a benchmark, a notebook someone filled in):

* **model answers**: the code between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` of an answer cell
  (nbgrader's ``solution`` cell), or the whole cell where it has no markers;
* **hidden tests**: what lies between ``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN TESTS`` of a test cell;
* **alternative solutions**: code written another way that still fills an answer cell, recognised by what it
  defines: a function or class with the name and parameters of one an answer cell defines, or a value only an
  answer cell assigns (``base_crossover = ...``), in a program or in a string meant for a notebook cell.

:class:`AnswerKey` reads the source and released notebooks once and says which answers a file holds. A line of
a model answer or hidden test counts only when nothing public holds it too (the released notebooks, the
reference package, the book: ``return scores / math.sqrt(d_k)`` is on a book page by design), and a definition
only when no released notebook gives it. The reference package is public by design and implements several
parts (the book shows its code): publish does not look for answers there, nor in the book.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from nbgrader.preprocessors import ClearSolutions

from .course import Course
from .errors import CourseError
from .nbgrader_cells import (
    BEGIN_HIDDEN_TESTS,
    END_HIDDEN_TESTS,
    grade_id,
    nbgrader_metadata,
    source_text,
    split_at_markers,
    split_hidden_tests,
)

BEGIN_SOLUTION, END_SOLUTION = "BEGIN SOLUTION", "END SOLUTION"
MARKERS = ("### BEGIN SOLUTION", "### BEGIN HIDDEN TESTS", "### BEGIN MARK SCHEME")
# A line shorter than this, an import or a comment says too little to be anyone's answer.
DISTINCTIVE_LENGTH = 25


@dataclass(frozen=True)
class Part:
    """What a file holds of one cell of an assignment's source notebook: its answer, or its hidden tests."""

    assignment: str
    grade_id: str
    kind: str = "answer"

    def __str__(self) -> str:
        return f"the {self.kind} of {self.assignment} `{self.grade_id}`"


def read_notebook(path: Path, shown_as: Path | str) -> dict:
    """The notebook at ``path`` as JSON, or one :class:`CourseError` naming it (``shown_as``) when it is none."""
    try:
        notebook = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CourseError(f"{shown_as} is not a notebook: it is not JSON ({error})") from None
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        raise CourseError(f"{shown_as} is not a notebook: its JSON holds no list of cells")
    return notebook


def holds_a_marker(notebook: dict) -> bool:
    """Whether a line of a cell of ``notebook`` starts with one of nbgrader's markers (a source notebook's copy)."""
    return any(
        line.strip().startswith(MARKERS) for cell in notebook["cells"] for line in source_text(cell).splitlines()
    )


def has_nbgrader_cells(notebook: dict) -> bool:
    return any(nbgrader_metadata(cell) for cell in notebook["cells"])


class AnswerKey:
    """What each assignment's answers and hidden tests look like, read from ``course``'s notebooks."""

    def __init__(self, course: Course) -> None:
        self.course = course
        released = [
            read_notebook(path, path.relative_to(course.root))
            for assignment in course.assignments()
            for path in course.released_notebooks(assignment)
        ]
        given = [
            cell for notebook in released for cell in notebook["cells"] if not nbgrader_metadata(cell).get("solution")
        ]
        given_definitions = {definition for cell in given for definition in _definitions(source_text(cell))}
        given_values = {name for cell in given for name in _assigned_names(source_text(cell))}
        public = _stripped_lines(source_text(cell) for notebook in released for cell in notebook["cells"])
        public |= _stripped_lines(path.read_text(encoding="utf-8") for path in _public_sources(course.root))
        # (name, parameters) -> part: the functions and classes an answer cell defines and no released notebook gives.
        self.functions: dict[tuple[str, tuple[str, ...]], Part] = {}
        self.values: dict[str, Part] = {}  # names only answer cells assign
        self.secrets: dict[Part, set[str]] = {}  # a part's model answer or hidden tests: their distinctive lines
        self.given_lines: dict[tuple[str, str, str], set[str]] = {}  # (assignment, notebook, grade_id) -> lines
        for assignment in course.assignments():
            for path in course.source_notebooks(assignment):
                for cell in read_notebook(path, path.relative_to(course.root))["cells"]:
                    self._learn(assignment, path.stem, cell, given_definitions, given_values, public)

    def _learn(self, assignment: str, notebook: str, cell: dict, given_definitions, given_values, public) -> None:
        name, metadata, source = grade_id(cell), nbgrader_metadata(cell), source_text(cell)
        part = Part(assignment, name)
        if metadata.get("solution"):
            given, answer = split_solution(source)
            self.given_lines[assignment, notebook, name] = _stripped_lines([given])
            self.secrets.setdefault(part, set()).update(_distinctive(answer, public))
            if cell.get("cell_type") == "code":
                for definition in _definitions(source) - given_definitions:
                    self.functions.setdefault(definition, part)
                for value in _assigned_names(source) - given_values:
                    self.values.setdefault(value, part)
        elif metadata.get("grade"):
            _, hidden = split_hidden_tests(source)
            self.secrets.setdefault(Part(assignment, name, "hidden tests"), set()).update(_distinctive(hidden, public))

    def found_in_program(self, source: str) -> list[Part]:
        """The parts whose answer or hidden tests the Python program ``source`` holds: a definition that fills an
        answer cell (in its code or in a string of code), or lines of a model answer or hidden test."""
        try:
            tree = ast.parse(source)
        except SyntaxError:
            return self.found_in_text(source)
        found = [part for node in ast.walk(tree) if (part := self._defined_answer(node)) is not None]
        strings = [
            node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)
        ]
        for text in strings:
            found += self._answers_in_cell_code(text)
        found += self.found_in_text("\n".join([source, *strings]))
        return sorted(set(found), key=str)

    def found_in_text(self, text: str) -> list[Part]:
        """The parts of which ``text`` holds a model answer or hidden test: two of its distinctive lines (its only
        one, where it has one)."""
        lines = _stripped_lines([text])
        return sorted(
            (part for part, secret in self.secrets.items() if secret and len(secret & lines) >= min(2, len(secret))),
            key=str,
        )

    def filled_cells(self, notebook: dict, assignment: str, name: str) -> list[str]:
        """grade_ids of the answer cells of ``notebook`` (a copy of ``assignment``'s notebook ``name``) that hold
        more than its release gives: the cell's given lines and nbgrader's stub."""
        stubs = _stripped_lines(_stubs(self.course))
        filled = []
        for cell in notebook["cells"]:
            if not nbgrader_metadata(cell).get("solution"):
                continue
            allowed = self.given_lines.get((assignment, name, grade_id(cell)), set()) | stubs
            if not _stripped_lines([source_text(cell)]) <= allowed:
                filled.append(grade_id(cell))
        return filled

    def _defined_answer(self, node: ast.AST) -> Part | None:
        """The part whose answer cell defines what ``node`` defines (the same name and parameters), if any."""
        return self.functions.get(_definition(node))

    def _answers_in_cell_code(self, text: str) -> list[Part]:
        """The parts that ``text``, read as the code of a notebook cell, answers."""
        if "\n" not in text and "=" not in text:
            return []
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            return []
        found = [part for node in tree.body if (part := self._defined_answer(node)) is not None]
        return found + [self.values[name] for name in _assigned_names(text) if name in self.values]


def split_solution(source: str) -> tuple[str, str]:
    """An answer cell's source as (what its release keeps, the model answer). Without markers, nbgrader replaces
    the whole cell: all of it is the answer."""
    if BEGIN_SOLUTION not in source:
        return "", source
    return split_at_markers(source, BEGIN_SOLUTION, END_SOLUTION)


def _public_sources(root: Path) -> Iterator[Path]:
    """The reference package's modules and the book's pages: public by design."""
    yield from (root / "src").rglob("*.py")
    yield from (root / "book").rglob("*.md")


def _stubs(course: Course) -> list[str]:
    """What nbgrader's ClearSolutions writes in place of an answer, as the course configures it."""
    settings = course.nbgrader_config.get("ClearSolutions", {})
    traits = ClearSolutions.class_traits()
    code_stubs = settings.get("code_stub", traits["code_stub"].default())
    return [*code_stubs.values(), settings.get("text_stub", traits["text_stub"].default())]


def _stripped_lines(texts: Iterable[str]) -> set[str]:
    return {line.strip() for text in texts for line in text.splitlines() if line.strip()}


def _distinctive(code: str, public: set[str]) -> set[str]:
    """The lines of ``code`` that could only come from it: long, not an import, comment or marker, not public."""
    lines = set()
    for line in _stripped_lines([code]):
        if len(line) < DISTINCTIVE_LENGTH or line.startswith(("import ", "from ", "#", "@")) or line in public:
            continue
        if BEGIN_HIDDEN_TESTS in line or END_HIDDEN_TESTS in line:
            continue
        lines.add(line)
    return lines


def _definition(node: ast.AST) -> tuple[str, tuple[str, ...]] | None:
    """(name, parameter names) of a function, or of a class with its ``__init__``'s; None for anything else."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        arguments = node.args
        names = [*arguments.posonlyargs, *arguments.args, arguments.vararg, *arguments.kwonlyargs, arguments.kwarg]
        return node.name, tuple(argument.arg for argument in names if argument is not None)
    if isinstance(node, ast.ClassDef):
        inits = [
            _definition(item) for item in node.body if isinstance(item, ast.FunctionDef) and item.name == "__init__"
        ]
        return node.name, inits[0][1] if inits else ()
    return None


def _definitions(source: str) -> set[tuple[str, tuple[str, ...]]]:
    """The functions and classes a cell defines at its top level."""
    tree = _parsed_cell(source)
    return {definition for node in tree.body if (definition := _definition(node)) is not None} if tree else set()


def _assigned_names(source: str) -> set[str]:
    """The names a cell assigns at its top level."""
    tree = _parsed_cell(source)
    names = set()
    for node in tree.body if tree else []:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            names |= {name.id for target in targets for name in ast.walk(target) if isinstance(name, ast.Name)}
    return names


def _parsed_cell(source: str) -> ast.Module | None:
    """A code cell's source as Python, IPython's magics (``%timeit``) left out; None where it is not Python."""
    try:
        return ast.parse("\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))))
    except SyntaxError:
        return None
