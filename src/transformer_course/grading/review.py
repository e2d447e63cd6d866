"""What the sandbox cannot prevent is reported: code in a submission that an instructor should look at.

The sandbox keeps a submission from reaching anything but its own kernel, and the hidden tests are
judged outside it. Two things remain possible and are only found by reading the code:

* handing in a library's implementation of the exercise (``torch.softmax`` where the learner writes
  a softmax, ``nn.MultiheadAttention`` in the multi-head assignment): the assignment's
  ``library_implementations`` in ``grading.yml`` name them;
* meta-programming and system access (``importlib``, ``inspect``, ``exec``, ``sys.settrace``,
  ``get_ipython``, ``__torch_function__``, changing a library's attributes, files, processes,
  sockets), which an honest answer to these exercises never needs.

:func:`review` reads the cells a learner wrote (answer cells and cells they added; IPython's magics
and shell escapes included) with Python's ``ast`` and lists each finding, for ``grades.csv``'s
``review`` column and the feedback page. The score stands: the instructor decides.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

META_PROGRAMMING = {
    "importlib", "inspect", "exec", "eval", "compile", "__import__", "builtins", "__builtins__", "ctypes", "gc",
    "settrace", "setprofile", "gettrace", "_getframe", "get_ipython", "__torch_function__", "__torch_dispatch__",
    "__code__", "__globals__", "FunctionType", "CodeType", "sys",
}
# Names under which notebooks import libraries: assigning to one of their attributes changes the library.
LIBRARY_ALIASES = {"torch", "nn", "F", "math", "np", "numpy", "tc", "transformer_course", "builtins", "sys", "os", "IPython"}
SYSTEM_ACCESS = {
    "open", "os", "subprocess", "shutil", "pathlib", "Path", "socket", "signal", "multiprocessing", "sqlite3",
    "urllib", "requests", "http", "io", "tempfile", "glob", "pty", "resource",
}


def review(cells: Iterable[tuple[str, str]], library_implementations: list[str]) -> list[str]:
    """Findings in the learner's ``cells`` (label, source) worth an instructor's look, one per cell and kind.

    Args:
        cells: the learner's own code cells, as (label, source).
        library_implementations: dotted names (``torch.nn.functional.softmax``) of library functions
            that compute what the assignment asks for.
    """
    library = {}
    for path in library_implementations:
        library.setdefault(path.rsplit(".", 1)[-1], []).append(path)
    findings = []
    for label, source in cells:
        found = _names(source)
        if found is None:
            continue
        names, reached = found
        used = sorted(name for name in reached if name in library)
        if used:
            paths = sorted({path for name in used for path in library[name]})
            findings.append(f"{label}: uses the library's own {', '.join(used)} ({', '.join(paths)})")
        meta = sorted(names & META_PROGRAMMING)
        patched = _patched_libraries(source)
        if patched:
            findings.append(f"{label}: changes a library ({', '.join(patched)})")
        if meta:
            findings.append(f"{label}: meta-programming ({', '.join(meta)})")
        system = sorted(names & SYSTEM_ACCESS)
        if system:
            findings.append(f"{label}: file, process or network access ({', '.join(system)})")
    return findings


def _patched_libraries(source: str) -> list[str]:
    """The library attributes ``source`` assigns or deletes (``torch.testing.assert_close = ...``)."""
    tree = _parse(source)
    patched = set()
    for node in ast.walk(tree) if tree is not None else ():
        targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
        for target in targets:
            root = target
            while isinstance(root, (ast.Attribute, ast.Subscript)):
                root = root.value
            if isinstance(target, ast.Attribute) and isinstance(root, ast.Name) and root.id in LIBRARY_ALIASES:
                patched.add(ast.unparse(target))
    return sorted(patched)


def _parse(source: str) -> ast.Module | None:
    """``source`` parsed as Python, after IPython's magics and !shell lines become ``get_ipython()`` calls."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager

        source = TransformerManager().transform_cell(source)
    except Exception:
        pass
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _names(source: str) -> tuple[set[str], set[str]] | None:
    """The names ``source`` uses: (all of them, those reached through a module or object).

    The second set holds attributes (``torch.softmax``, ``x.softmax``), names imported from a
    module and string constants (``getattr(F, "softmax")``), but not plain names: a learner's own
    ``softmax`` is not the library's.
    """
    tree = _parse(source)
    if tree is None:
        return None
    names: set[str] = set()
    reached: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            reached.add(node.attr)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [alias.name for alias in node.names] + ([node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
            for module in modules:
                reached.update(module.split("."))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            reached.add(node.value)
    return names | reached, reached
