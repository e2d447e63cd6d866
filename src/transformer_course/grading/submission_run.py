"""What crosses to a worker and back: a :class:`SubmissionRun`, plain data, and the :class:`RunOutcome` it returns.

A run can take place in any worker, a process of the grader's own pool or a Dask worker on another machine
(:mod:`.workers`), so what it is given holds no path into the course: the restored notebook, its test cells' visible
and hidden parts, each part's correct answers, the limits, the assignment's data files and the redacted course
package as an archive (:class:`PackageArchive`, unpacked once per worker, where no one else can write). What comes
back is the executed notebook, the grader's verdict on each test cell, what the run's steps took, the findings for
the review and what went wrong, if anything did. :mod:`.sandboxed_run` runs it; :mod:`.judging` judges its tests.
"""

from __future__ import annotations

import compileall
import hashlib
import io
import os
import py_compile
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from .context import AssignmentFacts
from .limits import GradingLimits
from .status import Problem


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
            target = worker_folder() / self.digest
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


def worker_folder() -> Path:
    """This process's own folder (mode 0700, removed when the process ends): what its sandboxes are shown from."""
    global _PRIVATE
    if _PRIVATE is None:
        _PRIVATE = tempfile.TemporaryDirectory(prefix="transformer-course-worker-")
    return Path(_PRIVATE.name)


@dataclass(frozen=True)
class SubmissionRun:
    """Everything a worker needs to run one submission's notebook: plain data, with no path into the course.

    Attributes:
        assignment: the assignment's name; with a test cell's grade_id it seeds that cell's hidden tests.
        notebook_name: the notebook's file name, as the kernel sees it in its working directory.
        notebook: the notebook, restored by the grader (nbformat's JSON).
        tests: grade_id -> (visible tests, hidden tests) of each test cell, from the source notebook.
        references: grade_id of a test cell -> the source notebook's answer cells of its part, run in the
            kernel when that test cell fails and a later one follows
            (:func:`transformer_course.grading.context.reference_answers`).
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
        facts: AssignmentFacts,
        notebook_name: str,
        notebook: dict,
        package: PackageArchive,
        limits: GradingLimits,
        *,
        hidden_paths: tuple[str, ...] = (),
        sandbox: bool = True,
        cgroup_prefix: str | None = None,
    ) -> SubmissionRun:
        """The run of ``notebook`` (the notebook ``notebook_name`` of the assignment, without ``.ipynb``, restored),
        from the assignment's ``facts``: its test cells from the source notebook, its limits with the assignment's
        ``grading.yml`` applied."""
        policy = facts.policy
        return SubmissionRun(
            assignment=facts.assignment,
            notebook_name=f"{notebook_name}.ipynb",
            notebook=notebook,
            tests=facts.tests(notebook_name),
            switched_off=tuple(policy.library_implementations),
            forbidden_operators=tuple(policy.forbidden_operators),
            references=facts.references(notebook_name),
            limits=policy.applied_to(limits),
            package=package,
            data_files=dict(facts.data_files),
            hidden_paths=hidden_paths,
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
