"""The course package as the sandbox sees it: everything but what the assignment asks the learner to write.

Switching the reference implementation off while a hidden test runs cannot work in the learner's own
process: a reload, a clone of the function made earlier, or ``exec`` of its source brings it back. So
the sandbox gets a copy of the package in which those definitions are not there at all: each named
function or class is replaced by a stub that raises ``NotImplementedError`` with a message saying
why, and its code, docstring and helpers-in-the-body are gone from the files the kernel can read. The
rest of the package stays, so that later assignments still build on the earlier chapters (a learner
writing multi-head attention still has the package's scaled dot-product attention).
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import transformer_course

STUB_MESSAGE = (
    "{name} is what this assignment asks you to write: the course package leaves it out while your notebook is graded"
)


class RedactionError(ValueError):
    """A name to leave out does not name a top-level function or class of the package."""


def redacted_package(names: list[str], target: Path) -> Path:
    """Copy the installed package into ``target/transformer_course`` without the definitions ``names``.

    Args:
        names: dotted names of top-level functions or classes, e.g.
            ``"transformer_course.attention.scaled_dot_product_attention"``.
        target: an empty directory; it becomes the sandbox's ``PYTHONPATH`` entry.

    Returns:
        ``target``.
    """
    source = Path(transformer_course.__file__).resolve().parent
    copy = target / "transformer_course"
    shutil.copytree(source, copy, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    by_module: dict[Path, list[str]] = {}
    for name in names:
        module, _, definition = name.rpartition(".")
        path = _module_file(copy, module)
        if path is None:
            raise RedactionError(f"{name}: {module} is not a module of the course package")
        by_module.setdefault(path, []).append(definition)
    for path, definitions in by_module.items():
        path.write_text(_without(path.read_text(encoding="utf-8"), definitions, path), encoding="utf-8")
    return target


def _module_file(copy: Path, module: str) -> Path | None:
    parts = module.split(".")
    if parts[0] != "transformer_course":
        return None
    base = copy.joinpath(*parts[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _without(source: str, definitions: list[str], path: Path) -> str:
    """``source`` with each top-level def/class in ``definitions`` replaced by a stub."""
    tree = ast.parse(source)
    missing = set(definitions)
    body = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name in definitions:
            body.append(_stub(node))
            missing.discard(node.name)
        else:
            body.append(node)
    if missing:
        raise RedactionError(f"{path.name} defines no top-level function or class named {', '.join(sorted(missing))}")
    tree.body = body
    header = "# The course package, without what the assignment being graded asks the learner to write."
    return f"{header}\n{ast.unparse(tree)}\n"


def _stub(node: ast.AST) -> ast.stmt:
    message = STUB_MESSAGE.format(name=node.name)
    if isinstance(node, ast.ClassDef):
        stub = (
            f"class {node.name}:\n"
            "    def __init__(self, *args, **kwargs):\n"
            f"        raise NotImplementedError({message!r})\n"
        )
    else:
        stub = f"def {node.name}(*args, **kwargs):\n    raise NotImplementedError({message!r})\n"
    return ast.parse(stub).body[0]
