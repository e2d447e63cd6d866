"""Autograde a class: every submission graded into nbgrader's gradebook, with feedback, by one grader process.

    transformer-course autograde ASSIGNMENT SUBMISSIONS_DIR [--out grades.csv] [--jobs N] [--scheduler tcp://HOST:PORT]

``SUBMISSIONS_DIR`` holds ``<student_id>/<notebook>.ipynb`` (or nbgrader's own layout,
``<student_id>/<assignment>/<notebook>.ipynb``). A run is a chain of steps, each with one job and
each in a module of its own:

1. **register** the assignment in the gradebook (nbgrader's ``generate_assignment``);
2. **self-test**: start one sandbox with the course's interpreter and import what a notebook
   imports (:func:`transformer_course.grading.execute.self_test`). If that fails, nothing is graded
   and the run stops with the reason;
3. **intake** each folder (:mod:`transformer_course.grading.intake`): a valid student id, regular
   files only, the notebook rebuilt from what grading needs, stripped nbgrader metadata given back,
   and copied to nbgrader's ``submitted/<student_id>/<assignment>/``;
4. **grade** each submission: **restore** it with nbgrader's sanitising steps, which put back test
   cells that were edited or deleted (:mod:`transformer_course.grading.nbgrader_steps`); **run** it in
   a worker (:mod:`transformer_course.grading.workers`: a process of this machine or a Dask worker),
   in a fresh sandbox, where its hidden tests are **judged** (:mod:`transformer_course.grading.sandboxed_run`);
   **review** the learner's cells meanwhile, within a time and size bound
   (:func:`transformer_course.grading.review.bounded_review`); **record** the grades in the gradebook
   and the notebook in ``autograded/`` (nbgrader's steps again). A progress bar counts the class;
5. **feedback**: each graded submission's nbgrader feedback page as soon as its grades are recorded, made
   safe to open and given the review's findings (:mod:`transformer_course.grading.feedback`);
6. **scores** read from the gradebook, and ``grades.csv`` written.

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

import copy
import csv
import os
import shutil
import tempfile
import threading
import time
import uuid
from collections import deque
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook, MissingEntry
from tqdm.auto import tqdm

from .course import Course, edited_locked_cells, read_json_notebook
from .execute import KERNEL_NOT_STARTED_STATUS, notebook_problem, self_test
from .feedback import write_feedback
from .gradebook import remove_unreviewed_manual_scores
from .intake import (
    Refused,
    check_student_id,
    parse_notebook,
    read_regular_file,
    read_timestamp,
    real_directory,
    student_folders,
)
from .limits import GradingLimits
from .nbgrader_steps import NbgraderSteps, forget
from .release import setup_cell
from .review import bounded_review
from .sandbox import check_bubblewrap, remove_cgroups
from .sandboxed_run import PackageArchive, run_notebooks, submission_run
from .workers import Workers

# Every status a submission can end with, and what it means.
STATUSES = {
    "graded": "graded",
    "tests_restored": "graded with the original tests: test cells (or their nbgrader metadata) had been edited or "
    "deleted",
    "missing": "no notebook of this assignment was submitted",
    "invalid_student_id": "not graded: the folder's name is not a student id (letters, digits, '.', '_', '-', '@')",
    "refused": "not graded: a link, a folder, a special file or an oversized file where the notebook should be",
    "invalid_notebook": "the file is not a valid Jupyter notebook",
    "wrong_assignment": "the notebook belongs to another assignment",
    "timeout": "a cell ran past the time limit and was interrupted, or the notebook ran past its own",
    "kernel_died": "the kernel stopped (exit(), a crash or the memory limit) before the notebook finished",
    KERNEL_NOT_STARTED_STATUS: "the kernel could not start in the sandbox: a fault of the grading machine",
    "memory_limit": "the notebook ran out of its memory limit",
    "error": "the grader could not grade the notebook (the message says which step failed)",
    "not_graded": "not graded: the run stopped before this submission (see the error it ended with)",
}

# Statuses of submissions that nbgrader graded (possibly with failing cells).
GRADED_STATUSES = ("graded", "tests_restored", "timeout", "memory_limit", "kernel_died", KERNEL_NOT_STARTED_STATUS)

CSV_COLUMNS = ["student_id", "assignment", "score", "max_score", "status", "message", "review"]
# Submissions in a row whose kernel could not start before the run is stopped as the grader's fault.
STOP_AFTER_FAILED_STARTS = 3


class GradingStopped(RuntimeError):
    """The grader cannot run submissions here: nothing was graded, and the message says how to fix it."""


@dataclass
class SubmissionResult:
    """One row of the grades CSV. ``review``: what the instructor should look at (the score stands)."""

    student_id: str
    assignment: str
    score: float | None
    max_score: float | None
    status: str
    message: str
    review: str = ""
    seconds: dict[str, float] = field(default_factory=dict, repr=False)  # by step, for benchmarks (not in the CSV)


def autograde(
    course: Course,
    assignment: str,
    submissions: Path,
    *,
    jobs: int | None = None,
    limits: GradingLimits | None = None,
    db_url: str | None = None,
    out: Path | None = None,
    sandbox: bool = True,
    scheduler: str | None = None,
    progress: bool = False,
) -> list[SubmissionResult]:
    """Grade every ``<student_id>/<notebook>.ipynb`` under ``submissions``; see the module docstring.

    Args:
        course: the course directory (its root holds ``nbgrader_config.py``).
        assignment: e.g. ``"01-attention"``.
        submissions: directory of one sub-directory per student.
        jobs: submissions run at once (default: the number of CPU cores here, or the cluster's worker threads).
        limits: time, memory and process limits.
        db_url: SQLAlchemy URL of the gradebook (default: SQLite ``gradebook.db`` in the root).
        out: where to write the grades CSV (optional).
        sandbox: run each submission in bubblewrap's sandbox (False gives up its protection: the
            submission's code can then read and change everything the grader's user can).
        scheduler: address of a Dask scheduler (``tcp://HOST:PORT``) whose workers run the submissions;
            None runs them in processes of this machine (:mod:`transformer_course.grading.workers`).
        progress: show a progress bar over the class on standard error.

    Returns:
        one result per student, sorted by student id.

    Raises:
        SandboxUnavailable: ``sandbox`` is asked for and bubblewrap is missing or cannot run.
        GradingStopped: the sandbox cannot start a kernel that imports the course (the self-test), or
            several submissions in a row found it so; no grade is written.
    """
    course.check_assignment(assignment)
    submissions = Path(submissions)
    if not submissions.is_dir():
        raise NotADirectoryError(f"submissions directory {submissions} does not exist")
    if sandbox:
        check_bubblewrap()
    limits = limits or GradingLimits()
    db_url = db_url or course.default_db_url
    results = _grade_class(course, assignment, submissions, jobs, limits, db_url, sandbox, scheduler, progress)
    _add_scores(results, db_url, course.course_id, assignment)
    if out is not None:
        write_csv(results, Path(out))
    return results


def _grade_class(
    course: Course,
    assignment: str,
    submissions: Path,
    jobs: int | None,
    limits: GradingLimits,
    db_url: str,
    sandbox: bool,
    scheduler: str | None,
    progress: bool,
) -> list[SubmissionResult]:
    """The self-test, then intake and grading of every student folder (steps 2 to 5 of the module docstring)."""
    students = student_folders(submissions)
    cgroup_prefix = f"transformer-course-{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory(prefix="autograde-") as scratch, ExitStack() as stack:
        package_directory = course.redacted_package(assignment, Path(scratch) / "package")
        # The self-test's kernel starts while the package is packed and the workers import what they run.
        with ThreadPoolExecutor(max_workers=1) as tester:
            test = tester.submit(self_test, package_directory, limits, sandbox, Path(scratch) / "self-test")
            package = PackageArchive.of(package_directory)
            workers = stack.enter_context(Workers(jobs, scheduler))
            workers.warm_up("transformer_course.grading.sandboxed_run")
            problem = test.result()
        if problem is not None:
            raise GradingStopped(problem)
        released = _register_assignment(course, assignment, db_url, Path(scratch))
        sources = {path.name: read_json_notebook(path) for path in course.source_notebooks(assignment)}
        runs = {
            path.stem: submission_run(course, assignment, path.stem, {}, package, limits, sandbox, cgroup_prefix)
            for path in course.source_notebooks(assignment)
        }
        policy = course.policy(assignment)
        given = _Given(
            released, sources, setup_cell(course).source, policy.library_implementations + policy.learner_writes
        )
        prepared = [_prepare(course, assignment, submissions, student, given) for student in students]
        grading = _ClassGrading(course, assignment, NbgraderSteps(course, assignment, db_url), runs, db_url)
        try:
            results = grading.grade(prepared, workers, progress)
        finally:
            remove_cgroups(cgroup_prefix)
    if grading.starts.stopped is not None:
        stopped = [result.student_id for result in results if result.status == KERNEL_NOT_STARTED_STATUS]
        forget(db_url, course.course_id, assignment, stopped)
        raise GradingStopped(grading.starts.stopped)
    return results


@dataclass(frozen=True)
class _Given:
    """What intake holds each submission against, read once per run: the released and source notebooks (by file
    name), the setup cell that release puts first, and what the review looks for (``grading.yml``)."""

    released: dict[str, dict]
    sources: dict[str, dict]
    setup_source: str
    library_implementations: list[str]


@dataclass
class _Prepared:
    student_id: str
    rejection: tuple[str, str] | None = None  # (status, message) when it cannot be graded at all
    restored_cells: tuple[str, ...] = ()  # test cells nbgrader will restore
    restored_metadata: tuple[str, ...] = ()  # cells whose stripped nbgrader metadata was given back
    learner_cells: list[tuple[str, str]] = field(default_factory=list)  # (label, source) for the review
    library_implementations: list[str] = field(default_factory=list)  # what the review looks for


class _FailedStarts:
    """Counts submissions in a row whose kernel could not start; past the limit the run stops."""

    def __init__(self):
        self._lock = threading.Lock()
        self._in_a_row = 0
        self.stopped: str | None = None

    def record(self, result: SubmissionResult) -> None:
        with self._lock:
            if result.status != KERNEL_NOT_STARTED_STATUS:
                self._in_a_row = 0
                return
            self._in_a_row += 1
            if self._in_a_row >= STOP_AFTER_FAILED_STARTS and self.stopped is None:
                self.stopped = (
                    f"the kernel could not start in the sandbox for {self._in_a_row} submissions in a row "
                    f"({result.message}); nothing was graded. Run `transformer-course check --sandbox` to see why; "
                    "--no-sandbox grades without the sandbox, for submissions you trust"
                )


def _register_assignment(course: Course, assignment: str, db_url: str, scratch: Path) -> dict[str, dict]:
    """Record the assignment's notebooks, cells and checksums in the gradebook (nbgrader's
    ``generate_assignment`` into a scratch release directory); return the released notebooks."""
    course.run_converter("GenerateAssignment", assignment_id=assignment, release_directory=str(scratch), db_url=db_url)
    return {path.name: read_json_notebook(path) for path in sorted((scratch / assignment).glob("*.ipynb"))}


def _prepare(course: Course, assignment: str, submissions: Path, student_id: str, given: _Given) -> _Prepared:
    """Check one student's folder (:mod:`transformer_course.grading.intake`) and copy what it holds into
    nbgrader's ``submitted/`` directory; whatever goes wrong becomes this submission's status alone."""
    try:
        return _prepared(course, assignment, submissions, student_id, given)
    except Refused as refusal:
        return _Prepared(student_id, (refusal.status, refusal.message))
    except Exception as error:  # noqa: BLE001  (one submission's surprise must not stop the class)
        return _Prepared(student_id, ("error", f"the submission could not be read: {type(error).__name__}: {error}"))


def _prepared(course: Course, assignment: str, submissions: Path, student_id: str, given: _Given) -> _Prepared:
    released, sources = given.released, given.sources
    check_student_id(student_id)
    student_directory = real_directory(submissions / student_id, f"the folder {student_id!r}")
    target = course.submitted_directory / student_id / assignment
    if target.exists():
        shutil.rmtree(target)
    names = {entry.name for entry in os.scandir(student_directory)}
    if not any(name.endswith(".ipynb") for name in names) and assignment in names:
        # nbgrader's own <student>/<assignment>/ layout
        student_directory = real_directory(student_directory / assignment, f"{student_id}/{assignment}")
        names = {entry.name for entry in os.scandir(student_directory)}
    notebooks = sorted(name for name in names if name.endswith(".ipynb"))
    expected_names = sorted(released)
    chosen = {name: student_directory / name for name in expected_names if name in names}
    if not chosen and len(notebooks) == 1 and len(expected_names) == 1:
        chosen = {expected_names[0]: student_directory / notebooks[0]}  # renamed: accepted if its cells belong here
    if not chosen:
        found = ", ".join(notebooks) or "no notebook"
        return _Prepared(student_id, ("missing", f"expected {', '.join(expected_names)}; found {found}"))

    repaired: dict[str, dict] = {}
    restored_cells: list[str] = []
    restored_metadata: list[str] = []
    learner_cells: list[tuple[str, str]] = []
    for name, path in chosen.items():
        notebook = parse_notebook(read_regular_file(path), path.name)
        restored_metadata += _restore_stripped_metadata(notebook, released[name])
        if not _answer_and_test_cells(notebook) & _answer_and_test_cells(released[name]):
            other = ", ".join(sorted(_answer_and_test_cells(notebook))[:3]) or "no nbgrader answer or test cells"
            message = f"{path.name} has none of the answer or test cells of {assignment}/{name} (it has {other})"
            return _Prepared(student_id, ("wrong_assignment", message))
        restored_cells += edited_locked_cells(notebook, released[name], sources[name])
        _unmark_duplicate_cells(notebook)
        learner_cells += _learner_cells(notebook, sources[name], given.setup_source)
        repaired[name] = notebook
    target.mkdir(parents=True)
    for name, notebook in repaired.items():
        nbformat.write(nbformat.from_dict(notebook), target / name)
    timestamp = read_timestamp(student_directory / "timestamp.txt")
    if timestamp is not None:
        (target / "timestamp.txt").write_text(timestamp, encoding="utf-8")
    return _Prepared(
        student_id,
        restored_cells=tuple(restored_cells),
        restored_metadata=tuple(restored_metadata),
        learner_cells=learner_cells,
        library_implementations=given.library_implementations,
    )


def _unmark_duplicate_cells(notebook: dict) -> None:
    """Take nbgrader's metadata off every cell that repeats an earlier cell's grade_id: it is the learner's copy."""
    seen = set()
    for cell in notebook.get("cells", []):
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if grade_id in seen:
            del cell["metadata"]["nbgrader"]
        elif grade_id is not None:
            seen.add(grade_id)


def _learner_cells(notebook: dict, source: dict, setup: str) -> list[tuple[str, str]]:
    """(label, source) of the code cells the learner wrote: answer cells and cells they added.

    Given cells (locked, restored by nbgrader from the source) and the setup cell that release puts
    first are not the learner's.
    """
    given = set(_nbgrader_cells(source, locked_only=True))
    cells = []
    for index, cell in enumerate(notebook.get("cells", [])):
        if cell.get("cell_type") != "code":
            continue
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        text = "".join(cell.get("source", ""))
        if grade_id in given or (grade_id is None and text == setup):
            continue
        cells.append((f"cell {grade_id}" if grade_id else f"added cell {index + 1}", text))
    return cells


def _restore_stripped_metadata(submitted: dict, released: dict) -> list[str]:
    """Give back the nbgrader metadata of cells that lost it, matching cells by their Jupyter id.

    Without it nbgrader would not know which cell holds which answer, and would put the test cells
    back at the top of the notebook, before the code they test. Returns the grade_ids restored.
    """
    present = set(_nbgrader_cells(submitted))
    by_id = {
        cell["id"]: cell["metadata"]["nbgrader"]
        for cell in released.get("cells", [])
        if "id" in cell and "grade_id" in cell.get("metadata", {}).get("nbgrader", {})
    }
    restored = []
    for cell in submitted.get("cells", []):
        metadata = by_id.get(cell.get("id"))
        if (
            metadata is None
            or "grade_id" in cell.get("metadata", {}).get("nbgrader", {})
            or metadata["grade_id"] in present
        ):
            continue
        cell.setdefault("metadata", {})["nbgrader"] = copy.deepcopy(metadata)
        restored.append(metadata["grade_id"])
    return restored


def _answer_and_test_cells(notebook: dict) -> set[str]:
    """grade_ids of the cells that identify an assignment: its answers and its tests (every
    assignment has its own; headings such as ``intro`` or ``part-1`` recur in all of them)."""
    return {
        cell["metadata"]["nbgrader"]["grade_id"]
        for cell in notebook.get("cells", [])
        if any(cell.get("metadata", {}).get("nbgrader", {}).get(flag) for flag in ("solution", "grade"))
        and "grade_id" in cell["metadata"]["nbgrader"]
    }


def _nbgrader_cells(notebook: dict, locked_only: bool = False) -> dict[str, tuple[str, str]]:
    """grade_id → (cell type, source text) of a notebook's nbgrader cells (only the locked,
    non-answer ones if asked)."""
    cells = {}
    for cell in notebook.get("cells", []):
        metadata = cell.get("metadata", {}).get("nbgrader", {})
        if "grade_id" in metadata and (not locked_only or (metadata.get("locked") and not metadata.get("solution"))):
            cells[metadata["grade_id"]] = (cell.get("cell_type"), "".join(cell.get("source", "")))
    return cells


class _ClassGrading:
    """Step 4 for the class: each submission restored, run in a worker, reviewed meanwhile, and recorded.

    Runs go to the workers a few at a time (one more than ``workers.slots``, so that a worker that
    finishes finds the next run waiting while the grader records the last), so that the results are
    recorded as they come and a run that is stopped (:class:`_FailedStarts`) has sent no more.
    """

    def __init__(self, course: Course, assignment: str, steps: NbgraderSteps, runs: dict, db_url: str):
        self.course, self.assignment, self.steps, self.runs, self.db_url = course, assignment, steps, runs, db_url
        self.starts = _FailedStarts()

    def grade(self, prepared: list[_Prepared], workers: Workers, progress: bool) -> list[SubmissionResult]:
        results: list[SubmissionResult] = []
        waiting = deque(prepared)
        in_flight: dict[Future, _InFlight] = {}
        bar = tqdm(total=len(prepared), desc=f"grading {self.assignment}", unit="submission", disable=not progress)
        with bar, ThreadPoolExecutor(max_workers=workers.slots) as reviewers:
            while waiting or in_flight:
                while waiting and len(in_flight) <= workers.slots:  # one waiting, for the first worker free
                    flight = self._start(waiting.popleft(), workers, reviewers)
                    if isinstance(flight, SubmissionResult):
                        self._done(flight, results, bar)
                    else:
                        in_flight[flight.run] = flight
                if in_flight:
                    finished, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                    for future in finished:
                        self._done(self._finish(in_flight.pop(future)), results, bar)
        return sorted(results, key=lambda result: result.student_id)

    def _done(self, result: SubmissionResult, results: list[SubmissionResult], bar) -> None:
        self.starts.record(result)
        results.append(result)
        bar.update(1)
        failed = sum(result.status not in ("graded", "tests_restored") for result in results)
        bar.set_postfix(failed=failed, refresh=False)

    def _start(self, prepared: _Prepared, workers: Workers, reviewers: ThreadPoolExecutor):
        """Restore a submission and hand its run to a worker; the result already, where there is nothing to run."""
        student_id = prepared.student_id
        if prepared.rejection is not None:
            return SubmissionResult(student_id, self.assignment, None, None, *prepared.rejection)
        if self.starts.stopped is not None:
            return SubmissionResult(student_id, self.assignment, None, None, "not_graded", STATUSES["not_graded"])
        result = SubmissionResult(student_id, self.assignment, None, None, "graded", "")
        repairs = []
        if prepared.restored_metadata:
            repairs.append(f"gave back the nbgrader metadata of cells {', '.join(prepared.restored_metadata)}")
        if prepared.restored_cells:
            repairs.append(f"restored the original test cells {', '.join(prepared.restored_cells)}")
        if repairs:
            result.status, result.message = "tests_restored", "; ".join(repairs)
        started = time.perf_counter()
        try:
            removed = remove_unreviewed_manual_scores(self.db_url, self.course.course_id, self.assignment, student_id)
            notebooks = self.steps.restore(student_id)
        except Exception as error:  # noqa: BLE001  (one submission's surprise must not stop the class)
            result.status, result.message = "error", f"nbgrader could not restore the notebook: {_named(error)}"
            return result
        result.seconds["gradebook"] = time.perf_counter() - started
        runs = tuple(replace(self.runs[name], notebook=notebook) for name, notebook in notebooks.items())
        review = reviewers.submit(bounded_review, prepared.learner_cells, prepared.library_implementations)
        return _InFlight(result, workers.submit(run_notebooks, runs), review, removed, tuple(notebooks))

    def _finish(self, flight: _InFlight) -> SubmissionResult:
        """Record a finished run in the gradebook and ``autograded/``, with its problems and the review's findings."""
        result = flight.result
        result.review = "; ".join(flight.review.result() + flight.removed_scores)
        try:
            outcomes = flight.run.result()
        except Exception as error:  # noqa: BLE001  (a worker that died fails its own submission only)
            result.status, result.message = "error", f"the sandboxed run failed: {_named(error)}"
            return result
        for outcome in outcomes:
            for step, seconds in outcome.seconds.items():
                result.seconds[step] = result.seconds.get(step, 0.0) + seconds
        started = time.perf_counter()
        try:
            executed = {name: (outcome.notebook, outcome.verdicts) for name, outcome in zip(flight.names, outcomes)}
            self.steps.record(result.student_id, executed)
        except Exception as error:  # noqa: BLE001
            result.status, result.message = "error", f"nbgrader could not record the grades: {_named(error)}"
            return result
        result.seconds["gradebook"] += time.perf_counter() - started
        problem = notebook_problem(cell for outcome in outcomes for cell in outcome.notebook["cells"])
        if problem is not None:
            result.status, result.message = problem
        if result.status != KERNEL_NOT_STARTED_STATUS:  # a page of the grader's own failure tells a learner nothing
            started = time.perf_counter()
            write_feedback(self.course, self.assignment, result, self.db_url)
            result.seconds["feedback"] = time.perf_counter() - started
        return result


@dataclass
class _InFlight:
    """A submission whose run a worker has: the result so far and what it waits for."""

    result: SubmissionResult
    run: Future
    review: Future
    removed_scores: list[str]
    names: tuple[str, ...]  # its notebooks, in the order of the run's outcomes


def _named(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"[:500]


def _add_scores(results: list[SubmissionResult], db_url: str, course_id: str, assignment: str) -> None:
    """Fill in score and max_score from the gradebook for every graded submission."""
    with Gradebook(db_url, course_id=course_id) as gradebook:
        max_score = gradebook.find_assignment(assignment).max_score
        for result in results:
            result.max_score = max_score
            if result.status in GRADED_STATUSES and result.score is None:
                try:
                    result.score = gradebook.find_submission(assignment, result.student_id).score
                except MissingEntry:
                    result.score = 0.0


def write_csv(results: list[SubmissionResult], path: Path) -> None:
    """Write ``path``: a header of :data:`CSV_COLUMNS` (``student_id, assignment, score, max_score, status,
    message, review``, as README documents them) and one row per result. A text field that a spreadsheet
    would read as a formula (see :func:`_spreadsheet_safe`) is written with a leading ``'``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as file:
        writer = csv.DictWriter(file, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        for result in results:
            row = asdict(result)
            writer.writerow({column: _spreadsheet_safe(row[column]) for column in CSV_COLUMNS})


def _spreadsheet_safe(value):
    """OWASP's rule against CSV injection: a text field that a spreadsheet would read as a formula (starting
    with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return) is prefixed with an apostrophe."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value
