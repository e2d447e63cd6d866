"""The sandboxed run: one submission's notebook executed in a fresh sandbox, its hidden tests judged.

A worker (:mod:`transformer_course.grading.workers`) is given a
:class:`~transformer_course.grading.submission_run.SubmissionRun`, plain data, and :func:`run_submission`

1. starts the runner (:mod:`transformer_course.grading.inside.runner`) in a sandbox of its own
   (:mod:`transformer_course.grading.sandbox`), in a cgroup of its own;
2. has the kernel import what every notebook imports (numpy, torch, matplotlib, the course package),
   outside the notebook's history;
3. runs the code cells in order (:func:`transformer_course.grading.execute.execute_notebook`); a test
   cell's visible tests run in the kernel, its hidden tests here, in the worker, asking the kernel
   questions (:func:`transformer_course.grading.judging.run_hidden_tests`);
4. when a test cell fails, runs the source notebook's answers to that part in the kernel (quietly: their
   outputs are not kept), so that every later part is graded with a correct answer to this one in place of
   the learner's: one bug, or a cell that does not even parse, costs its own part's points only;
5. returns the executed notebook and the grader's verdict on each test cell
   (:class:`~transformer_course.grading.submission_run.RunOutcome`).

Nothing of a run outlives it: its sandbox, every process in it and its cgroup end with it. The
worker keeps only the unpacked package (by the archive's digest, in a private folder of its own),
which no sandbox can write.
"""

from __future__ import annotations

import functools
import tempfile
import time
import uuid
from pathlib import Path

import nbformat
import torch
from nbformat import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Bool

from .context import AssignmentFacts
from .course import course_of_config
from .execute import (
    KERNEL_NOT_STARTED,
    SELF_TEST_CODE,
    error_output,
    execute_notebook,
    started,
)
from .gradebook import VERDICTS
from .hidden import Learner
from .judging import Judge
from .limits import GradingLimits
from .nbgrader_cells import answer_sources
from .sandbox import SandboxSpec, matplotlib_font_list, runner_launch
from .status import Problem, Status, worst
from .submission_run import STEPS, PackageArchive, RunOutcome, SubmissionRun, worker_folder


@functools.cache
def _font_list() -> Path | None:
    """matplotlib's font list for this process's sandboxes, made at its first submission (None where that failed)."""
    return matplotlib_font_list(worker_folder() / "matplotlib")


def run_submission(run: SubmissionRun) -> RunOutcome:
    """Run ``run``'s notebook in a sandbox of its own and judge its test cells (see the module docstring)."""
    torch.set_num_threads(run.limits.threads)
    notebook = nbformat.from_dict(run.notebook)
    outcome = RunOutcome(notebook, {}, dict.fromkeys(STEPS, 0.0))
    seconds = outcome.seconds
    with tempfile.TemporaryDirectory(prefix="sandbox-") as scratch:
        given = Path(scratch) / "given"
        given.mkdir()
        for name, data in {run.notebook_name: nbformat.writes(notebook).encode("utf-8"), **run.data_files}.items():
            (given / Path(name).name).write_bytes(data)
        spec = SandboxSpec(
            package_directory=run.package.unpacked(),
            notebook=given / Path(run.notebook_name).name,
            data_files=tuple(given / Path(name).name for name in run.data_files),
            hidden=tuple(Path(path) for path in run.hidden_paths),
            limits=run.limits,
            sandbox=run.sandbox,
            font_list=_font_list() if run.sandbox else None,
        )
        # Named without the student id, which the sandbox could read in /proc/self/cgroup.
        cgroup_name = f"{run.cgroup_prefix}-{uuid.uuid4().hex[:12]}" if run.cgroup_prefix else None
        start = time.perf_counter()
        with started(runner_launch(spec, Path(scratch)), run.limits, cgroup_name) as session:
            problem = session.start_problem()
            seconds["sandbox and kernel start"] = time.perf_counter() - start
            if problem is not None:
                message = f"the kernel did not start: {problem}"
                code_cells = [cell for cell in notebook.cells if cell.cell_type == "code"]
                for cell in code_cells:
                    cell.outputs = [error_output(KERNEL_NOT_STARTED, message)]
                outcome.verdicts = dict.fromkeys(run.tests, False)
                outcome.problem = Problem(Status.KERNEL_NOT_STARTED, message) if code_cells else None
                return outcome
            start = time.perf_counter()
            session.preload(SELF_TEST_CODE)
            seconds["imports"] = time.perf_counter() - start
            # The learner's answer cells, as handed in: what a hidden test may run again (Learner.rerun).
            answers = answer_sources(notebook, code_only=True)
            learner = Learner(session.ask, list(run.switched_off), list(run.forbidden_operators), answers)
            start = time.perf_counter()
            execute_notebook(notebook, session, Judge(run, session, learner, outcome))
            seconds["notebook cells"] = time.perf_counter() - start - seconds["hidden tests"]
            outcome.problem = worst(session.problems)
    return outcome


class SandboxedExecute(NbGraderPreprocessor):
    """nbgrader's execution step for ``nbgrader autograde`` run by hand (or from formgrader): the notebook is run
    and judged as ``transformer-course autograde`` runs it, with the default limits."""

    sandbox = Bool(True, help="run the kernel in bubblewrap's sandbox (False: as a plain process)").tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        course = course_of_config(self.config)
        facts = AssignmentFacts.read(course, resources["nbgrader"]["assignment"])
        with tempfile.TemporaryDirectory(prefix="package-") as scratch:
            package = PackageArchive.of(facts.redacted_package(Path(scratch)))
        run = SubmissionRun.of(
            facts,
            resources["nbgrader"]["notebook"],
            nb,
            package,
            GradingLimits(),
            hidden_paths=(str(course.root),),
            sandbox=self.sandbox,
        )
        outcome = run_submission(run)
        resources[VERDICTS] = outcome.verdicts
        return nbformat.from_dict(outcome.notebook), resources


def run_notebooks(runs: tuple[SubmissionRun, ...]) -> list[RunOutcome]:
    """Run a submission's notebooks, one after the other, each in a sandbox of its own: what a worker is given."""
    return [run_submission(run) for run in runs]
