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
the modules that import it).
"""

from __future__ import annotations

import importlib.util
import shutil

import pytest

LAYER_MARKERS = ("needs_nbgrader", "needs_bwrap", "book", "slow")
# Seconds a unit test may take: the slowest take a few, and about 20 on a machine four times overcommitted.
UNIT_TIMEOUT = 60

NBGRADER_MISSING = "needs nbgrader, the grading extra: pip install 'transformer-course[grading]'"
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
