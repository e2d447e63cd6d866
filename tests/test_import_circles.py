"""No two modules of the package import each other, however roundabout the loop and wherever the import stands.

Read from the source, so that an import inside a function (which runs late, and can hide a loop that an import at
the top would show) and one under ``if TYPE_CHECKING:`` count as much as one at the top of the file.
"""

from __future__ import annotations

import ast
from pathlib import Path

import transformer_course

PACKAGE = Path(transformer_course.__file__).parent
NAME = "transformer_course"


def _modules() -> dict[str, Path]:
    """Dotted name → file of every module of the package (a package is its ``__init__.py``)."""
    modules = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = (NAME, *path.relative_to(PACKAGE).with_suffix("").parts)
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def _imports(module: str, path: Path, modules: dict[str, Path]) -> dict[str, int]:
    """The package's modules that ``module`` imports, each with the line of its first import there, wherever it stands:
    at the top, in a function or under ``if TYPE_CHECKING:``."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: dict[str, int] = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            # `from . import tasks` names a module; `from .course import Course` names what a module defines
            submodules = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in modules]
            targets = submodules if len(submodules) == len(node.names) else [base, *submodules]
        for target in targets:
            if target in modules and target != module:
                found.setdefault(target, node.lineno)
    return found


def _circles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for imported in graph.get(module, {}):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return circles


def _graph() -> dict[str, dict[str, int]]:
    modules = _modules()
    return {module: _imports(module, path, modules) for module, path in modules.items()}


def test_no_modules_of_the_package_import_each_other():
    graph = _graph()
    described = []
    for circle in _circles(graph):
        ties = [
            f"{module} -> {imported} (line {line})"
            for module in circle
            for imported, line in graph[module].items()
            if imported in circle
        ]
        described.append("; ".join(ties))
    assert described == [], "import circles:\n" + "\n".join(described)


def test_a_loop_closed_inside_a_function_is_found(tmp_path):
    first = tmp_path / "first.py"
    first.write_text("from .second import helper\n", encoding="utf-8")
    second = tmp_path / "second.py"
    second.write_text("def helper():\n    from .first import thing  # late, and still a loop\n", encoding="utf-8")
    modules = {"transformer_course.first": first, "transformer_course.second": second}
    graph = {module: _imports(module, path, modules) for module, path in modules.items()}
    assert _circles(graph) == [["transformer_course.first", "transformer_course.second"]]


def test_importing_a_sibling_module_through_its_package_ties_it_to_that_module_alone(tmp_path):
    tasks = tmp_path / "tasks.py"
    tasks.write_text("from . import numbers\n", encoding="utf-8")
    modules = {"transformer_course.data": tmp_path / "__init__.py", "transformer_course.data.tasks": tasks}
    modules["transformer_course.data.numbers"] = tmp_path / "numbers.py"
    assert _imports("transformer_course.data.tasks", tasks, modules) == {"transformer_course.data.numbers": 1}
