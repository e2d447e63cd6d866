"""The code that runs inside the sandbox (``grading/inside/``) imports nothing of the grader's: read from its
source, so that a grading module imported there, even lazily inside a function, fails here."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import transformer_course.grading.inside as inside

INSIDE = Path(inside.__file__).parent
INSIDE_PACKAGE = "transformer_course.grading.inside"


def imported_modules(path: Path) -> list[str]:
    """Every module ``path`` imports, anywhere in it, as an absolute dotted name."""
    package = INSIDE_PACKAGE.split(".")
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            names += [module] if node.module else [f"{module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "__import__" and node.args:
            if isinstance(node.args[0], ast.Constant):
                names.append(node.args[0].value)
    return names


def grader_modules(names: list[str]) -> list[str]:
    """Those of ``names`` that are the course package's but not the in-sandbox package's."""
    return [
        name
        for name in names
        if name.split(".")[0] == "transformer_course" and not (name + ".").startswith(INSIDE_PACKAGE + ".")
    ]


@pytest.mark.parametrize("path", sorted(INSIDE.glob("*.py")), ids=lambda path: path.name)
def test_the_in_sandbox_package_imports_nothing_of_the_graders(path):
    assert grader_modules(imported_modules(path)) == []


def test_the_wall_check_sees_relative_lazy_and_dynamic_imports_of_the_grader(tmp_path):
    source = tmp_path / "leaky.py"
    source.write_text(
        "from .plain_data import encode\n"
        "from .. import hidden\n"
        "def f():\n"
        "    from ..execute import started\n"
        "    import transformer_course.grading.course\n"
        "    __import__('transformer_course.grading.sandbox')\n",
        encoding="utf-8",
    )
    assert grader_modules(imported_modules(source)) == [
        "transformer_course.grading.hidden",
        "transformer_course.grading.execute",
        "transformer_course.grading.course",
        "transformer_course.grading.sandbox",
    ]
