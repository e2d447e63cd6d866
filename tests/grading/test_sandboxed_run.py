"""One submission's run, with the sandbox's session faked: a kernel that does not start fails every test cell and
says so in each code cell, and a notebook with no code has nothing to fail. Runs in a real sandbox are the
stories' (stories/test_untrusted_submissions.py and the others)."""

from __future__ import annotations

from contextlib import contextmanager
from types import SimpleNamespace

import pytest
from suite_layers import NBGRADER_MISSING

pytest.importorskip("nbgrader", reason=NBGRADER_MISSING)  # nbgrader's execution step is defined here too

from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from transformer_course.grading import sandboxed_run
from transformer_course.grading.execute import KERNEL_NOT_STARTED
from transformer_course.grading.limits import GradingLimits
from transformer_course.grading.status import Status
from transformer_course.grading.submission_run import PackageArchive, SubmissionRun

pytestmark = pytest.mark.needs_nbgrader


@pytest.fixture
def no_kernel(monkeypatch):
    """A session whose kernel did not start, saying why."""

    @contextmanager
    def started(launch, limits, cgroup_name=None):
        yield SimpleNamespace(start_problem=lambda: "the runner ended at once")

    monkeypatch.setattr(sandboxed_run, "started", started)
    monkeypatch.setattr(sandboxed_run, "runner_launch", lambda spec, scratch: None)


def _run(tmp_path, cells: list) -> SubmissionRun:
    (tmp_path / "package" / "transformer_course").mkdir(parents=True)
    (tmp_path / "package" / "transformer_course" / "__init__.py").write_text("", encoding="utf-8")
    return SubmissionRun(
        assignment="01-attention",
        notebook_name="attention.ipynb",
        notebook=new_notebook(cells=cells),
        tests={"test-a": ("", ""), "test-b": ("", "")},
        switched_off=(),
        limits=GradingLimits(),
        package=PackageArchive.of(tmp_path / "package"),
        sandbox=False,
    )


def test_a_kernel_that_does_not_start_fails_every_test_cell_and_says_so_in_each_code_cell(tmp_path, no_kernel):
    outcome = sandboxed_run.run_submission(_run(tmp_path, [new_markdown_cell("# Attention"), new_code_cell("x = 1")]))
    assert outcome.verdicts == {"test-a": False, "test-b": False}
    assert outcome.problem.status == Status.KERNEL_NOT_STARTED, outcome.problem
    (output,) = [cell.outputs for cell in outcome.notebook.cells if cell.cell_type == "code"][0]
    assert (output.ename, output.evalue) == (KERNEL_NOT_STARTED, "the kernel did not start: the runner ended at once")


def test_a_notebook_with_no_code_has_nothing_to_fail_when_the_kernel_does_not_start(tmp_path, no_kernel):
    outcome = sandboxed_run.run_submission(_run(tmp_path, [new_markdown_cell("# Attention")]))
    assert outcome.problem is None
