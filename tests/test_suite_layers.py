"""The suite's layers (tests/suite_layers.py): a run that leaves out needs_nbgrader imports no module that needs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from suite_layers import NEEDS_NBGRADER_MODULE, _may_select_a_test_needing_nbgrader

TESTS = Path(__file__).parent
UNIT_LAYER = "not needs_nbgrader and not needs_bwrap and not book and not slow"


@pytest.mark.parametrize("expression", [UNIT_LAYER, "not needs_nbgrader", "slow and not needs_nbgrader"])
def test_an_expression_that_leaves_out_needs_nbgrader_selects_none_of_its_tests(expression):
    assert not _may_select_a_test_needing_nbgrader(expression)


@pytest.mark.parametrize(
    "expression", ["needs_nbgrader and not needs_bwrap", "needs_bwrap or not needs_nbgrader", "not book", "cuda"]
)
def test_an_expression_that_may_select_a_needs_nbgrader_test_keeps_its_modules(expression):
    assert _may_select_a_test_needing_nbgrader(expression)


@pytest.mark.needs_nbgrader
def test_every_test_of_a_module_that_needs_nbgrader_is_marked_so():
    """What lets the layers skip importing those modules: none of their tests belongs to a run without nbgrader."""
    modules = [
        str(path)
        for path in sorted(TESTS.rglob("test_*.py"))
        if any(sign in path.read_text(encoding="utf-8") for sign in NEEDS_NBGRADER_MODULE)
    ]
    assert modules, "no test module needs nbgrader: the check below would check nothing"
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:suite_layers", "-p", "no:cacheprovider",
         "-m", "not needs_nbgrader", *modules],
        capture_output=True, text=True, timeout=300, cwd=TESTS.parent,
    )  # fmt: skip
    selected = [line for line in collected.stdout.splitlines() if "::" in line]
    assert "deselected" in collected.stdout, collected.stdout[-2000:] + collected.stderr[-2000:]
    assert selected == [], f"tests without the needs_nbgrader marker in modules that need nbgrader: {selected}"


@pytest.mark.needs_nbgrader  # where nbgrader is missing, nothing could import it
def test_collecting_the_unit_layer_imports_no_nbgrader():
    """Importing nbgrader costs each collecting process more than a second, for no test of the unit layer."""
    program = (
        "import sys, pytest\n"
        f"code = pytest.main(['--collect-only', '-q', '-p', 'no:cacheprovider', '-m', {UNIT_LAYER!r}])\n"
        "print('NBGRADER', sorted(name for name in sys.modules if name.split('.')[0] == 'nbgrader')[:5])\n"
        "sys.exit(code)\n"
    )
    collected = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=300, cwd=TESTS.parent
    )
    assert collected.returncode == 0, collected.stdout[-2000:] + collected.stderr[-2000:]
    assert collected.stdout.strip().splitlines()[-1] == "NBGRADER []", collected.stdout.strip().splitlines()[-1]
