"""The sandboxed run: one submission's notebook executed in a fresh sandbox, its hidden tests judged.

A :class:`SubmissionRun` is plain data (the restored notebook, its test cells' visible and hidden
parts, the limits, the redacted course package as an archive), so that the run can take place in
any worker: a process of the grader's own pool or a Dask worker on another machine
(:mod:`transformer_course.grading.workers`). :func:`run_submission`

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
5. returns the executed notebook and the grader's verdict on each test cell (:class:`RunOutcome`).

Nothing of a run outlives it: its sandbox, every process in it and its cgroup end with it. The
worker keeps only the unpacked package (by the archive's digest, in a private folder of its own),
which no sandbox can write.
"""

from __future__ import annotations

import functools
import hashlib
import io
import os
import tarfile
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import torch
from nbformat import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Bool

from .course import Course, split_hidden_tests
from .execute import (
    KERNEL_NOT_STARTED,
    SELF_TEST_CODE,
    error_output,
    execute_notebook,
    started,
)
from .hidden import Learner
from .judging import VERDICTS, Judge, reference_answers
from .limits import GradingLimits
from .nbgrader_cells import answer_sources
from .sandbox import SandboxSpec, matplotlib_font_list, runner_launch
from .status import Problem, Status, worst


@dataclass(frozen=True)
class PackageArchive:
    """The course package a sandbox sees (redacted for one assignment), as a tar archive and its digest."""

    data: bytes
    digest: str

    @staticmethod
    def of(directory: Path) -> PackageArchive:
        """Pack ``directory`` (which holds ``transformer_course/``), its byte code compiled ahead.

        Compiled once here, the package's modules load from ``__pycache__`` in every kernel instead of
        being compiled again from source in each sandbox, whose files are read-only.
        """
        import compileall
        import py_compile

        compileall.compile_dir(
            directory, quiet=2, invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH, workers=1
        )
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as archive:
            archive.add(directory / "transformer_course", arcname="transformer_course")
        data = buffer.getvalue()
        return PackageArchive(data, hashlib.sha256(data).hexdigest())

    def unpacked(self) -> Path:
        """The package unpacked (once per digest in this process) into a folder of this process's own, which
        only the grader's user can enter: no other user of the machine can put another package in its place."""
        if self.digest not in _UNPACKED:
            target = _private_folder() / self.digest
            with tarfile.open(fileobj=io.BytesIO(self.data)) as archive:
                archive.extractall(target, filter="data")
            for directory, _, files in os.walk(target):  # readable by the sandbox's user, which binds it read-only
                os.chmod(directory, 0o755)
                for name in files:
                    os.chmod(os.path.join(directory, name), 0o644)
            _UNPACKED[self.digest] = target
        return _UNPACKED[self.digest]


# The packages this process has unpacked, by digest, in its private folder (removed when the process ends).
_UNPACKED: dict[str, Path] = {}
_PRIVATE: tempfile.TemporaryDirectory | None = None


def _private_folder() -> Path:
    """This process's own folder (mode 0700, removed when the process ends): what its sandboxes are shown from."""
    global _PRIVATE
    if _PRIVATE is None:
        _PRIVATE = tempfile.TemporaryDirectory(prefix="transformer-course-worker-")
    return Path(_PRIVATE.name)


@functools.cache
def _font_list() -> Path | None:
    """matplotlib's font list for this process's sandboxes, made at its first submission (None where that failed)."""
    return matplotlib_font_list(_private_folder() / "matplotlib")


@dataclass(frozen=True)
class SubmissionRun:
    """Everything a worker needs to run one submission's notebook: plain data, with no path into the course.

    Attributes:
        assignment: the assignment's name; with a test cell's grade_id it seeds that cell's hidden tests.
        notebook_name: the notebook's file name, as the kernel sees it in its working directory.
        notebook: the notebook, restored by the grader (nbformat's JSON).
        tests: grade_id -> (visible tests, hidden tests) of each test cell, from the source notebook.
        references: grade_id of a test cell -> the source notebook's answer cells of its part, run in the
            kernel when that test cell fails and a later one follows (see :func:`reference_answers`).
        switched_off: the library implementations a hidden test's call switches off in the kernel.
        forbidden_operators: the PyTorch operators a hidden test's call may not run (``aten::_softmax``...).
        limits: what the sandbox may use (the assignment's ``grading.yml`` applied).
        package: the course package without what the learner writes.
        data_files: file name -> bytes of the files the assignment ships beside its notebook.
        hidden_paths: paths of the grader's machine the sandbox must not see (the course root).
        sandbox: False runs the kernel as a plain process (``--no-sandbox``).
        cgroup_prefix: name prefix of the run's cgroup (None: no cgroup).
    """

    assignment: str
    notebook_name: str
    notebook: dict
    tests: dict[str, tuple[str, str]]
    switched_off: tuple[str, ...]
    limits: GradingLimits
    package: PackageArchive
    data_files: dict[str, bytes] = field(default_factory=dict)
    hidden_paths: tuple[str, ...] = ()
    sandbox: bool = True
    cgroup_prefix: str | None = None
    forbidden_operators: tuple[str, ...] = ()
    references: dict[str, str] = field(default_factory=dict)

    @staticmethod
    def of(
        course: Course,
        assignment: str,
        notebook_name: str,
        notebook: NotebookNode,
        package: PackageArchive,
        limits: GradingLimits,
        sandbox: bool = True,
        cgroup_prefix: str | None = None,
    ) -> SubmissionRun:
        """The run of ``notebook`` (the notebook ``notebook_name`` of ``assignment``, restored), read from ``course``:
        its test cells from the source notebook, its limits with the assignment's ``grading.yml`` applied."""
        policy = course.policy(assignment)
        source = course.source_notebook(assignment, notebook_name)
        return SubmissionRun(
            assignment=assignment,
            notebook_name=f"{notebook_name}.ipynb",
            notebook=notebook,
            tests={grade_id: split_hidden_tests(text) for grade_id, text in course.test_cells(source).items()},
            switched_off=tuple(policy.library_implementations),
            forbidden_operators=tuple(policy.forbidden_operators),
            references=reference_answers(source),
            limits=policy.applied_to(limits),
            package=package,
            data_files={path.name: path.read_bytes() for path in course.data_files(assignment)},
            hidden_paths=(str(course.root),),
            sandbox=sandbox,
            cgroup_prefix=cgroup_prefix,
        )


# What a run's time is spent on, for benchmarks/autograde.py.
STEPS = ("sandbox and kernel start", "imports", "notebook cells", "hidden tests")


@dataclass
class RunOutcome:
    """An executed notebook (nbformat's JSON), the verdict on each test cell, seconds by step (:data:`STEPS`),
    findings for the instructor's review (each test cell whose hidden tests saw the learner's code run a forbidden
    operator, and which), and what went wrong while it ran, if anything did (the worst, see
    :func:`transformer_course.grading.status.worst`)."""

    notebook: dict
    verdicts: dict[str, bool]
    seconds: dict[str, float]
    findings: list[str] = field(default_factory=list)
    problem: Problem | None = None


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
        course = Course(Path.cwd())  # nbgrader runs in the course root
        assignment, notebook_name = resources["nbgrader"]["assignment"], resources["nbgrader"]["notebook"]
        with tempfile.TemporaryDirectory(prefix="package-") as scratch:
            package = PackageArchive.of(course.redacted_package(assignment, Path(scratch)))
        run = SubmissionRun.of(course, assignment, notebook_name, nb, package, GradingLimits(), self.sandbox)
        outcome = run_submission(run)
        resources[VERDICTS] = outcome.verdicts
        return nbformat.from_dict(outcome.notebook), resources


def run_notebooks(runs: tuple[SubmissionRun, ...]) -> list[RunOutcome]:
    """Run a submission's notebooks, one after the other, each in a sandbox of its own: what a worker is given."""
    return [run_submission(run) for run in runs]
