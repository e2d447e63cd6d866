"""Autograde a class: every submission graded into nbgrader's gradebook, with feedback, by one grader process.

    transformer-course autograde ASSIGNMENT SOURCE [--out grades.csv] [--jobs N] [--scheduler tcp://HOST:PORT]

``SOURCE`` holds ``<student_id>/<notebook>.ipynb`` or nbgrader's own layout,
``<student_id>/<assignment>/<notebook>.ipynb`` — nbgrader's ``submitted/`` itself, after ``nbgrader
collect`` or ``zip_collect``, is graded in place (with ``--lms``, an LMS's download is first taken into such a
folder: :mod:`transformer_course.grading.lms`). **Nothing in it is changed or removed.** A run is a
chain of steps, each with one job and each in a module of its own; this is the one list of them, in their order:

0. the assignment's **facts** (``grading.yml``, the source notebooks with their hidden tests, the bonus cells) are
   read once (:mod:`transformer_course.grading.context`) and handed to every step; a ``grading.yml`` that cannot be
   used stops the run before it starts;
1. **self-test**: start one sandbox with the course's interpreter and import what a notebook
   imports (:mod:`transformer_course.grading.self_test`). If that fails, nothing is graded and the
   run stops with the reason, naming the limit to raise where a limit was the cause;
2. **register** the assignment in the gradebook (nbgrader's ``generate_assignment``);
3. **intake** each folder (:mod:`transformer_course.grading.intake`): a valid student id, regular
   files only, the notebook rebuilt in memory from what grading needs, stripped nbgrader metadata
   given back, the submission time read; then what the **class list** and the LMS say of each
   (:mod:`transformer_course.grading.class_list`: the roster's extension, the LMS's time and files, the
   due date given), before anything is graded;
4. **grade** each submission, a few at a time (:mod:`transformer_course.grading.class_grading`, whose docstring
   details these): **restore** it (what was handed in kept in ``submitted/``, then nbgrader's sanitising steps),
   **run** it in a worker, in a fresh sandbox, where its hidden tests are **judged**, **review** the learner's cells
   meanwhile, **record** the grades in the gradebook and ``autograded/`` and the submission in the run record
   (:mod:`transformer_course.grading.run_record`), and make its **feedback** page. A progress bar counts the class;
5. **report**: a ``missing`` record for each student on the roster whom no run has graded, then
   ``grades.csv`` written from the gradebook and the run record (:mod:`transformer_course.grading.report`) — every
   student the assignment has, so that regrading some students keeps everyone else's row.

Only step 4's runs leave this process; the gradebook, ``autograded/``, the feedback and the CSV are
written here alone, after the run's processes are dead. One broken or hostile submission — a folder
name that is not an id, a link or a FIFO where the notebook should be, invalid JSON, another
assignment's notebook, an endless loop, a kernel that exits, unbounded memory, a fork bomb, an attack
on the grader — gets its own status and message; all the others are graded, and nothing already in
the gradebook is lost. When several submissions in a row find that the kernel cannot even start, the
grader is at fault, not they: the run stops (:class:`GradingStopped`) instead of recording a class of
zeros. Grading again gives the same grades.
"""

from __future__ import annotations

import tempfile
import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from .class_grading import ClassGrading
from .class_list import ClassList
from .context import GradingContext
from .course import Course
from .grade_row import CSV_COLUMNS, GradeRow, write_csv
from .intake import Given, student_folders, take_in
from .limits import GradingLimits
from .lms import Unpacked
from .nbgrader_cells import read_json_notebook
from .nbgrader_steps import NbgraderSteps, forget
from .release import setup_cell
from .report import class_rows
from .roster import Student
from .sandbox import check_bubblewrap, remove_cgroups
from .self_test import diagnosed_self_test
from .status import Status
from .submission import Submission
from .submission_run import PackageArchive, SubmissionRun
from .workers import Workers

__all__ = ["CSV_COLUMNS", "GradeRow", "GradingLimits", "Status", "autograde", "write_csv"]


class GradingStopped(RuntimeError):
    """The grader cannot run submissions here: nothing was graded, and the message says how to fix it."""


def autograde(
    course: Course,
    assignment: str,
    submissions: Path,
    *,
    jobs: int | None = None,
    limits: GradingLimits | None = None,
    db_url: str | None = None,
    out: Path | None = None,
    fresh: bool = False,
    roster: dict[str, Student] | None = None,
    download: Unpacked | None = None,
    due: datetime | None = None,
    times: dict[str, datetime] | None = None,
    regrade_changed_answers: bool = False,
    sandbox: bool = True,
    scheduler: str | None = None,
    progress: bool = False,
    timings: dict[str, dict[str, float]] | None = None,
) -> list[GradeRow]:
    """Grade every ``<student_id>/<notebook>.ipynb`` under ``submissions``; see the module docstring.

    Args:
        course, assignment: the course directory (its root holds ``nbgrader_config.py``) and one of its assignments.
        submissions: directory of one sub-directory per student; read, never written.
        jobs: submissions run at once (default: the number of CPU cores here, or the cluster's worker threads).
        limits: time, memory and process limits.
        db_url: SQLAlchemy URL of the gradebook (default: SQLite ``gradebook.db`` in the root).
        out: where to write the grades CSV (optional): a row for every student of the assignment, this run's
            updated and the others kept as the gradebook has them (``fresh``: this run's students only).
        roster: the class (:mod:`transformer_course.grading.class_list`): a student on it never graded gets a
            ``missing`` row with score 0 (one graded before keeps theirs); a folder of someone not on it is flagged.
        download, due, times: what the LMS says: what :func:`transformer_course.grading.lms.unpack` took from its
            download (``submissions`` is then the folder it wrote), the due date (in place of ``grading.yml``'s,
            kept in the run record) and each student's submission time (in place of ``timestamp.txt``).
        regrade_changed_answers: clear a manual score given to another version of the answer (else review names it).
        sandbox: run each submission in bubblewrap's sandbox (False gives up its protection).
        scheduler: a Dask scheduler (``tcp://HOST:PORT``) whose workers run the submissions (None: processes here).
        progress: show a progress bar over the class on standard error.
        timings: filled, where given, with each student's seconds by step (``benchmarks/autograde.py`` reads them).

    Returns:
        the row of ``grades.csv`` of each student of this run, sorted by student id.

    Raises:
        SandboxUnavailable: ``sandbox`` is asked for and bubblewrap is missing or cannot run.
        GradingStopped: the sandbox cannot start a kernel that imports the course; no grade is written.
    """
    context = GradingContext.of(course, assignment, db_url)
    _ = context.facts  # read once, for every step: a grading.yml that cannot be used stops the run before it starts
    submissions = Path(submissions)
    if not submissions.is_dir():
        raise NotADirectoryError(f"submissions directory {submissions} does not exist")
    if sandbox:
        check_bubblewrap()
    class_list = ClassList(roster, download, times or {}, due)
    options = _Options(jobs, limits or GradingLimits(), sandbox, scheduler, progress, regrade_changed_answers, timings)
    graded = _grade_class(context, submissions, class_list, options)
    graded += class_list.never_graded(context, graded)
    return _report(context, due, {submission.student_id for submission in graded}, out, fresh)


@dataclass(frozen=True)
class _Options:
    """How the class is graded, and what is told of it: the arguments of :func:`autograde` that say so."""

    jobs: int | None
    limits: GradingLimits
    sandbox: bool
    scheduler: str | None
    progress: bool
    regrade_changed_answers: bool
    timings: dict[str, dict[str, float]] | None


def _grade_class(
    context: GradingContext, submissions: Path, class_list: ClassList, options: _Options
) -> list[Submission]:
    """Steps 1 to 4 of the module docstring, for every student folder under ``submissions`` (each one's seconds by
    step into ``options.timings``, where given)."""
    course, assignment, limits, sandbox = context.course, context.assignment, options.limits, options.sandbox
    cgroup_prefix = f"transformer-course-{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory(prefix="autograde-") as scratch, ExitStack() as stack:
        workers = stack.enter_context(Workers(options.jobs, options.scheduler))
        package = _self_tested_package(context, limits, sandbox, workers, Path(scratch))
        released = _register_assignment(context, Path(scratch))
        taken_in = [class_list.apply(submission) for submission in _intake(context, submissions, released)]
        taken_in += [class_list.apply(submission) for submission in class_list.unreadable(assignment)]
        runs = {
            name: SubmissionRun.of(
                context.facts,
                name,
                {},
                package,
                limits,
                hidden_paths=(str(course.root),),
                sandbox=sandbox,
                cgroup_prefix=cgroup_prefix,
            )
            for name in (file_name.removesuffix(".ipynb") for file_name in context.facts.sources)
        }
        class_grading = ClassGrading(context, NbgraderSteps(context), runs, options.regrade_changed_answers)
        try:
            graded = class_grading.grade(taken_in, workers, options.progress)
        finally:
            remove_cgroups(cgroup_prefix)
    if class_grading.starts.stopped is not None:
        stopped = [submission.student_id for submission in graded if submission.status == Status.KERNEL_NOT_STARTED]
        forget(context.db_url, course.course_id, assignment, stopped)
        raise GradingStopped(class_grading.starts.stopped)
    if options.timings is not None:
        options.timings.update({submission.student_id: dict(submission.seconds) for submission in graded})
    return graded


def _self_tested_package(
    context: GradingContext, limits: GradingLimits, sandbox: bool, workers: Workers, scratch: Path
) -> PackageArchive:
    """Step 1: the course package without the assignment's answers, packed for the workers, once a sandbox has
    imported it; :class:`GradingStopped` with the reason where it could not."""
    package_directory = context.facts.redacted_package(scratch / "package")
    # The self-test's kernel starts while the package is packed and the workers import what they run.
    with ThreadPoolExecutor(max_workers=1) as tester:
        test = tester.submit(diagnosed_self_test, package_directory, limits, sandbox, scratch / "self-test")
        package = PackageArchive.of(package_directory)
        workers.warm_up("transformer_course.grading.sandboxed_run")
        problem = test.result()
    if problem is not None:
        raise GradingStopped(problem)
    return package


def _register_assignment(context: GradingContext, scratch: Path) -> dict[str, dict]:
    """Step 2: record the assignment's notebooks, cells and checksums in the gradebook (nbgrader's
    ``generate_assignment`` into a scratch release directory); return the released notebooks."""
    context.course.run_converter(
        "GenerateAssignment", assignment_id=context.assignment, release_directory=str(scratch), db_url=context.db_url
    )
    return {path.name: read_json_notebook(path) for path in sorted((scratch / context.assignment).glob("*.ipynb"))}


def _intake(context: GradingContext, submissions: Path, released: dict[str, dict]) -> list[Submission]:
    """Step 3: every student folder under ``submissions`` taken in, each against what was released."""
    facts = context.facts
    given = Given(
        released,
        facts.sources,
        setup_cell(context.course).source,
        facts.policy.library_implementations + facts.policy.learner_writes,
    )
    return [take_in(submissions, student, context.assignment, given) for student in student_folders(submissions)]


def _report(
    context: GradingContext, due: datetime | None, students: set[str], out: Path | None, fresh: bool
) -> list[GradeRow]:
    """Step 5: the rows of this run's ``students``, their points from the gradebook, and ``out`` written (the class,
    or this run's students when ``fresh``)."""
    rows = class_rows(context, due)
    graded = [row for row in rows if row.student_id in students]
    if out is not None:
        write_csv(graded if fresh else rows, Path(out))
    return graded
