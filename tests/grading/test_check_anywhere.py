"""`transformer-course check` on every platform: without POSIX process groups it still runs and ends its
kernel, and where no Jupyter kernel can start it says so in one line."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from suite_layers import NBGRADER_MISSING

pytest.importorskip("nbgrader", reason=NBGRADER_MISSING)

import nbformat

from transformer_course.grading.check import check_notebook

pytestmark = pytest.mark.needs_nbgrader  # runs notebooks in Jupyter kernels, outside the sandbox


def _passing_notebook(directory):
    """A notebook with one graded test cell that passes, and a cell that leaves the kernel's pid behind."""
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    test = nbformat.v4.new_code_cell("assert 1 + 1 == 2")
    test.metadata["nbgrader"] = {
        "grade": True, "grade_id": "test-sum", "locked": True, "points": 1, "schema_version": 3, "solution": False,
        "task": False,
    }  # fmt: skip
    pid = nbformat.v4.new_code_cell(f"import os; open({str(directory / 'kernel.pid')!r}, 'w').write(str(os.getpid()))")
    notebook.cells = [test, pid]
    path = directory / "sum.ipynb"
    nbformat.write(notebook, path)
    return path


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_without_process_groups_check_runs_the_notebook(tmp_path, monkeypatch):
    monkeypatch.delattr(os, "killpg")  # as on Windows
    report = check_notebook(_passing_notebook(tmp_path))
    assert [(result.grade_id, result.passed) for result in report.tests] == [("test-sum", True)]


def test_without_process_groups_the_kernel_is_gone_when_check_returns(tmp_path, monkeypatch):
    monkeypatch.delattr(os, "killpg")  # as on Windows
    check_notebook(_passing_notebook(tmp_path))
    kernel = int((tmp_path / "kernel.pid").read_text())
    for _ in range(150):  # the kernel notices within seconds that its parent, the runner, is gone
        if not _alive(kernel):
            break
        time.sleep(0.2)
    assert not _alive(kernel), f"the kernel {kernel} outlived check"


def test_without_a_jupyter_kernel_check_says_so_in_one_line(tmp_path):
    hidden = tmp_path / "no-ipykernel"
    hidden.mkdir()
    # Python finds this module before the installed one: the kernel cannot start, as without ipykernel.
    (hidden / "ipykernel_launcher.py").write_text("raise ModuleNotFoundError(\"No module named 'ipykernel'\")\n")
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join([str(hidden), os.environ.get("PYTHONPATH", "")]))
    finished = subprocess.run(
        [sys.executable, "-m", "transformer_course.cli", "check", str(_passing_notebook(tmp_path))],
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
    )
    lines = finished.stderr.strip().splitlines()
    assert finished.returncode == 1 and len(lines) == 1, finished.stderr
    assert lines[0].startswith("error: no Jupyter kernel can run here, so sum.ipynb cannot be checked")
    assert "pip install ipykernel" in lines[0]
