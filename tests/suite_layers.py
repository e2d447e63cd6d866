"""The suite's layers: a test's markers say what it needs, and a test without them is a unit test.

- ``needs_nbgrader``: the grading extra (nbgrader, and the nbformat, nbclient and Jupyter kernel it
  brings); skipped, saying so, where nbgrader is not installed.
- ``needs_bwrap``: bubblewrap (``bwrap``) on PATH, the sandbox that autograde runs submissions in;
  skipped, saying so, without it (tests that grade in the sandbox carry both markers).
- ``book``: builds the book and reads it in a browser; ``slow``: trains on real data, starts several
  processes or regenerates every exercise.

A test with none of these is in the unit layer (``-m "not needs_nbgrader and not needs_bwrap and not
book and not slow"``) and fails after :data:`UNIT_TIMEOUT` seconds; the others keep pyproject.toml's
``timeout``. pyproject.toml loads this plugin for every run (``-p suite_layers``, with ``tests`` on
``pythonpath``): the layers are the suite's policy, kept beside pyproject's list of markers rather than
among tests/conftest.py's fixtures. A module that imports nbgrader itself skips at its top with
``pytest.importorskip("nbgrader", reason=NBGRADER_MISSING)`` (tests/grading_support.py does, for
the modules that import it); every test in such a module needs nbgrader, so a run whose ``-m`` leaves
out ``needs_nbgrader`` does not import the module at all (importing nbgrader costs each collecting
process seconds: a quarter of the unit layer's collection).
"""

from __future__ import annotations

import importlib.util
import itertools
import shutil
from pathlib import Path

import pytest
from _pytest.mark.expression import Expression

LAYER_MARKERS = ("needs_nbgrader", "needs_bwrap", "book", "slow")
# Seconds a unit test may take: the slowest take a few, and about 20 on a machine four times overcommitted.
UNIT_TIMEOUT = 60

NBGRADER_MISSING = 'needs nbgrader, the grading extra: pip install -e ".[grading]" from the repository'
BWRAP_MISSING = "needs bubblewrap for the grading sandbox: apt-get install bubblewrap"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    missing = {
        "needs_nbgrader": NBGRADER_MISSING if importlib.util.find_spec("nbgrader") is None else None,
        "needs_bwrap": BWRAP_MISSING if shutil.which("bwrap") is None else None,
    }
    for item in items:
        for marker, reason in missing.items():
            if reason is not None and item.get_closest_marker(marker) is not None:
                item.add_marker(pytest.mark.skip(reason=reason))
        in_a_layer = any(item.get_closest_marker(marker) is not None for marker in LAYER_MARKERS)
        if not in_a_layer and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(UNIT_TIMEOUT))


# What marks a test module as needing nbgrader throughout (see the module docstring).
NEEDS_NBGRADER_MODULE = ('pytest.importorskip("nbgrader"', "from grading_support import", "import grading_support")


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Skip importing a module that needs nbgrader when the run's ``-m`` selects no test that needs it."""
    expression = config.getoption("markexpr", default="")
    if not expression or collection_path.suffix != ".py" or not collection_path.name.startswith("test_"):
        return None
    source = collection_path.read_text(encoding="utf-8")
    if not any(sign in source for sign in NEEDS_NBGRADER_MODULE):
        return None
    return True if not _may_select_a_test_needing_nbgrader(expression) else None


def _may_select_a_test_needing_nbgrader(expression: str) -> bool:
    """Whether ``-m expression`` selects a test marked needs_nbgrader, whatever its other markers."""
    compiled = Expression.compile(expression)
    others = [marker for marker in (*LAYER_MARKERS, "cuda") if marker != "needs_nbgrader"]
    for values in itertools.product((False, True), repeat=len(others)):
        marked = {"needs_nbgrader", *(marker for marker, value in zip(others, values) if value)}
        if compiled.evaluate(marked.__contains__):
            return True
    return False
