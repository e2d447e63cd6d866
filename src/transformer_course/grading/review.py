"""What the sandbox cannot prevent is reported: code in a submission that an instructor should look at.

The sandbox keeps a submission from reaching anything but its own kernel, and the hidden tests are
judged outside it. Two things remain possible and are only found by reading the code:

* handing in a library's implementation of the exercise (``torch.softmax`` where the learner writes
  a softmax, ``nn.MultiheadAttention`` in the multi-head assignment): the assignment's
  ``grading.yml`` names them; and a library's private names (``torch._softmax``,
  ``torch._scaled_dot_product_attention_math``), which an honest answer never needs (the grader also
  refuses the operators they run while the hidden tests call the learner's code);
* meta-programming and system access (``importlib``, ``inspect``, ``exec``, ``sys.settrace``,
  ``get_ipython``, ``__torch_function__``, changing a library's attributes, files, processes,
  sockets), which an honest answer to these exercises never needs.

:func:`review` reads the cells a learner wrote (answer cells and cells they added; IPython's magics
and shell escapes included) with Python's ``ast`` and lists each finding, for ``grades.csv``'s
``review`` column and the feedback page. The score stands: the instructor decides.

Reading code is bounded like running it: :func:`bounded_review` reviews one submission in a process
of its own (this file run as an isolated script, ``python -I review.py``, which starts without the
course package and torch) with a time limit, and only up to
:data:`MAX_REVIEWED_BYTES` of the learner's code. A submission past either limit is not reviewed and
is flagged as such; it never holds up the class.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field

MAX_REVIEWED_BYTES = 256 * 2**10  # of learner code per submission: the course's answers are a few kB
REVIEW_SECONDS = 120  # per submission: generous, since a busy grading machine slows the review's start

# Names under which notebooks import libraries: an attribute reached through one of them is the library's.
LIBRARY_ALIASES = {
    "torch",
    "nn",
    "F",
    "math",
    "np",
    "numpy",
    "tc",
    "transformer_course",
    "builtins",
    "sys",
    "os",
    "IPython",
}
# Meta-programming: built-in functions and modules by their own name, and attributes that reach into code.
META_NAMES = {"exec", "eval", "compile", "__import__", "globals", "get_ipython", "__builtins__"}
META_MODULES = {"importlib", "inspect", "builtins", "ctypes", "gc", "sys", "types", "dis", "marshal"}
META_ATTRIBUTES = {
    "settrace",
    "setprofile",
    "_getframe",
    "__torch_function__",
    "__torch_dispatch__",
    "__code__",
    "__globals__",
    "__builtins__",
    "FunctionType",
    "CodeType",
    "get_ipython",
}
# File, process and network access.
SYSTEM_NAMES = {"open"}
SYSTEM_MODULES = {
    "os",
    "subprocess",
    "shutil",
    "pathlib",
    "socket",
    "signal",
    "multiprocessing",
    "threading",
    "sqlite3",
    "urllib",
    "requests",
    "http",
    "tempfile",
    "glob",
    "pty",
    "resource",
    "io",
}


def review(cells: Iterable[tuple[str, str]], library_implementations: list[str]) -> list[str]:
    """Findings in the learner's ``cells`` (label, source) worth an instructor's look, one per cell and kind.

    Args:
        cells: the learner's own code cells, as (label, source).
        library_implementations: dotted names (``torch.nn.functional.softmax``) of library functions
            and classes that compute what the assignment asks for. A method of ``torch.Tensor`` is
            found on any object (``scores.softmax(-1)``); anything else where it is reached through
            a module (``F.softmax``, ``tc.Transformer``), imported by name, or named in a string.
    """
    findings = []
    for label, source in cells:
        uses = _uses(source)
        if uses is None:
            continue
        library = sorted({path for path in library_implementations if uses.reaches(path)})
        if library:
            findings.append(
                f"{label}: uses the library's own {', '.join(sorted({path.rsplit('.', 1)[-1] for path in library}))} "
                f"({', '.join(library)})"
            )
        private = sorted(uses.private)
        if private:
            findings.append(f"{label}: uses a library's private names ({', '.join(private)})")
        if uses.patched:
            findings.append(f"{label}: changes a library ({', '.join(sorted(uses.patched))})")
        meta = sorted(
            (uses.names & META_NAMES)
            | (uses.modules & META_MODULES)
            | (uses.attributes & META_ATTRIBUTES)
            | (uses.defined & META_ATTRIBUTES)
        )
        if meta:
            findings.append(f"{label}: meta-programming ({', '.join(meta)})")
        system = sorted((uses.names & SYSTEM_NAMES) | (uses.modules & SYSTEM_MODULES))
        if system:
            findings.append(f"{label}: file, process or network access ({', '.join(system)})")
    return findings


def bounded_review(
    cells: list[tuple[str, str]],
    library_implementations: list[str],
    seconds: float = REVIEW_SECONDS,
    max_bytes: int = MAX_REVIEWED_BYTES,
) -> list[str]:
    """:func:`review` in a process of its own, given ``seconds``; a finding that says why where it could not be."""
    size = sum(len(source.encode("utf-8")) for _, source in cells)
    if size > max_bytes:
        return [f"not reviewed: the learner's cells hold {size:,} bytes of code, over the review's {max_bytes:,}"]
    request = json.dumps({"cells": cells, "library_implementations": library_implementations})
    try:
        done = subprocess.run(
            [sys.executable, "-I", __file__],
            input=request,
            capture_output=True,
            text=True,
            timeout=seconds,
        )
    except subprocess.TimeoutExpired:
        return [f"not reviewed: reading the learner's cells took longer than {seconds:g} s"]
    try:
        findings = json.loads(done.stdout)
        if done.returncode == 0 and isinstance(findings, list) and all(isinstance(item, str) for item in findings):
            return findings
    except ValueError:
        pass
    return [f"not reviewed: the review stopped ({(done.stderr.strip().splitlines() or ['no message'])[-1][:200]})"]


@dataclass
class _Uses:
    """What one cell's code refers to."""

    names: set[str] = field(default_factory=set)  # plain names it reads or calls
    defined: set[str] = field(default_factory=set)  # functions and classes it defines
    modules: set[str] = field(default_factory=set)  # every part of every module it imports
    imported: set[str] = field(default_factory=set)  # "module.name" of each `from module import name`
    local_names: set[str] = field(default_factory=set)  # the names those imports bind
    chains: list[tuple[str, str]] = field(default_factory=list)  # (root name, last attribute) of a.b.c
    attributes: set[str] = field(default_factory=set)  # every attribute name
    strings: set[str] = field(default_factory=set)  # string constants that are identifiers
    patched: set[str] = field(default_factory=set)  # library attributes it assigns or deletes
    private: set[str] = field(default_factory=set)  # a library's _names it reaches (torch._softmax)

    def reaches(self, path: str) -> bool:
        """Does the cell use ``path`` (``torch.nn.functional.softmax``)? See :func:`review`."""
        owner, _, name = path.rpartition(".")
        by_name = "getattr" in self.names and name in self.strings  # getattr(F, "softmax")
        if owner == "torch.Tensor":
            return name in self.attributes or by_name
        aliases = LIBRARY_ALIASES | self.modules | self.local_names
        library = path.split(".")[0]
        return (
            any(last == name and root in aliases for root, last in self.chains)
            or any(full.rsplit(".", 1)[-1] == name and full.split(".")[0] == library for full in self.imported)
            or by_name
        )


def _uses(source: str) -> _Uses | None:
    tree = _parse(source)
    if tree is None:
        return None
    uses = _Uses()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            uses.names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            uses.defined.add(node.name)
        elif isinstance(node, ast.Attribute):
            uses.attributes.add(node.attr)
            root = node.value
            while isinstance(root, (ast.Attribute, ast.Call, ast.Subscript)):
                root = root.func if isinstance(root, ast.Call) else root.value
            if isinstance(root, ast.Name):
                uses.chains.append((root.id, node.attr))
                if root.id in LIBRARY_ALIASES and _private(node.attr):
                    plain = ast.unparse(node).replace(".", "").replace("_", "").isalnum()  # names and dots only
                    uses.private.add(ast.unparse(node) if plain else f"{root.id}….{node.attr}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                uses.modules.update(alias.name.split("."))
                uses.modules.add(alias.asname or alias.name.split(".")[0])
                parts = alias.name.split(".")
                if parts[0] in LIBRARY_ALIASES and any(_private(part) for part in parts):
                    uses.private.add(alias.name)
        elif isinstance(node, ast.ImportFrom) and node.module:
            uses.modules.update(node.module.split("."))
            uses.imported.update(f"{node.module}.{alias.name}" for alias in node.names)
            if node.module.split(".")[0] in LIBRARY_ALIASES:
                if any(_private(part) for part in node.module.split(".")):
                    uses.private.add(node.module)
                uses.private.update(f"{node.module}.{alias.name}" for alias in node.names if _private(alias.name))
            uses.local_names.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            uses.strings.add(node.value)
        if isinstance(node, (ast.Assign, ast.Delete, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            for target in targets:
                root = target
                while isinstance(root, (ast.Attribute, ast.Subscript)):
                    root = root.value
                if isinstance(target, ast.Attribute) and isinstance(root, ast.Name) and root.id in LIBRARY_ALIASES:
                    uses.patched.add(ast.unparse(target))
    return uses


def _private(name: str) -> bool:
    """A private name by Python's convention: one leading underscore, not a ``__dunder__``."""
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _parse(source: str) -> ast.Module | None:
    """``source`` parsed as Python, after IPython's magics and !shell lines become ``get_ipython()`` calls."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager

        source = TransformerManager().transform_cell(source)
    except Exception:  # IPython missing, or a cell its transformer cannot read: parse it as it is
        pass
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


if __name__ == "__main__":
    arguments = json.load(sys.stdin)
    json.dump(review([tuple(cell) for cell in arguments["cells"]], arguments["library_implementations"]), sys.stdout)
