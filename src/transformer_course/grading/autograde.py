"""Autograde a class: every submission graded by nbgrader into the gradebook, with feedback.

    transformer-course autograde ASSIGNMENT SUBMISSIONS_DIR [--out grades.csv] [--jobs N]

``SUBMISSIONS_DIR`` holds ``<student_id>/<notebook>.ipynb`` (or nbgrader's own layout,
``<student_id>/<assignment>/<notebook>.ipynb``). A run is a chain of steps, each with one job:

1. **register** the assignment in the gradebook (nbgrader's ``generate_assignment``);
2. **self-test**: start one sandbox with the course's interpreter and import what a notebook
   imports (:func:`transformer_course.grading.execute.self_test`). If that fails, nothing is graded
   and the run stops with the reason;
3. **intake** each folder (:mod:`transformer_course.grading.intake`): a valid student id, regular
   files only, the notebook rebuilt from what grading needs, stripped nbgrader metadata given back,
   and copied to nbgrader's ``submitted/<student_id>/<assignment>/``;
4. **grade** the submissions in parallel, each by its own ``nbgrader autograde``:
   nbgrader restores test cells that were edited or deleted, and
   :mod:`transformer_course.grading.execute` runs the notebook in a sandbox and decides every test
   cell's points itself; the learner's cells are **reviewed** meanwhile, within a time and size
   bound (:func:`transformer_course.grading.review.bounded_review`);
5. **feedback**: ``nbgrader generate_feedback`` for the class, made safe to open and given the
   review's findings (:mod:`transformer_course.grading.feedback`);
6. **scores** read from the gradebook, and ``grades.csv`` written.

One broken or hostile submission — a folder name that is not an id, a link or a FIFO where the
notebook should be, invalid JSON, another assignment's notebook, an endless loop, a kernel that
exits, unbounded memory, a fork bomb, an attack on the grader — gets its own status and message;
all the others are graded, and nothing already in the gradebook is lost. When several submissions in
a row find that the kernel cannot even start, the grader is at fault, not they: the run stops
(:class:`GradingStopped`) instead of recording a class of zeros. Grading again gives the same grades.
"""

from __future__ import annotations

import copy
import csv
import json
import os
import shutil
import subprocess
import tempfile
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook, MissingEntry

from .course import Course, edited_locked_cells, read_json_notebook
from .execute import KERNEL_NOT_STARTED_STATUS, notebook_problem, self_test
from .feedback import finish_feedback_pages
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
from .release import setup_cell
from .review import bounded_review
from .sandbox import check_bubblewrap, remove_cgroups

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
    "error": "nbgrader could not grade the notebook",
    "not_graded": "not graded: the run stopped before this submission (see the error it ended with)",
}

# Statuses of submissions that nbgrader graded (possibly with failing cells).
GRADED_STATUSES = ("graded", "tests_restored", "timeout", "memory_limit", "kernel_died", KERNEL_NOT_STARTED_STATUS)

CSV_COLUMNS = ["student_id", "assignment", "score", "max_score", "status", "message", "review"]
# Seconds nbgrader may take around a notebook's own time limit (starting, hidden tests, saving).
NBGRADER_MARGIN = 600
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
) -> list[SubmissionResult]:
    """Grade every ``<student_id>/<notebook>.ipynb`` under ``submissions``; see the module docstring.

    Args:
        course: the course directory (its root holds ``nbgrader_config.py``).
        assignment: e.g. ``"01-attention"``.
        submissions: directory of one sub-directory per student.
        jobs: submissions graded at once (default: the number of CPU cores).
        limits: time, memory and process limits.
        db_url: SQLAlchemy URL of the gradebook (default: SQLite ``gradebook.db`` in the root).
        out: where to write the grades CSV (optional).
        sandbox: run each submission in bubblewrap's sandbox (False gives up its protection: the
            submission's code can then read and change everything the grader's user can).

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
    results = _grade_class(course, assignment, submissions, jobs, limits, db_url, sandbox)
    finish_feedback_pages(course, assignment, results, GRADED_STATUSES, db_url)
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
) -> list[SubmissionResult]:
    """The self-test, then intake and grading of every student folder (steps 2 to 4 of the module docstring)."""
    students = student_folders(submissions)
    cgroup_prefix = f"transformer-course-{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory(prefix="autograde-") as scratch:
        package = course.redacted_package(assignment, Path(scratch) / "package")
        settings = _GradingSettings(limits, _with_busy_timeout(db_url), package, cgroup_prefix, sandbox)
        problem = self_test(package, limits, sandbox, Path(scratch) / "self-test")
        if problem is not None:
            raise GradingStopped(problem)
        released = _register_assignment(course, assignment, db_url, Path(scratch))
        sources = {path.name: read_json_notebook(path) for path in course.source_notebooks(assignment)}
        prepared = [_prepare(course, assignment, submissions, student, released, sources) for student in students]
        starts = _FailedStarts()
        try:
            with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 1) as pool:
                results = list(pool.map(lambda item: _grade(course, assignment, item, settings, starts), prepared))
        finally:
            remove_cgroups(cgroup_prefix)
    if starts.stopped is not None:
        _forget(results, db_url, course.course_id, assignment)
        raise GradingStopped(starts.stopped)
    return results


@dataclass(frozen=True)
class _GradingSettings:
    """What every submission of one run is graded with."""

    limits: GradingLimits
    db_url: str
    package_directory: Path  # the course package without the exercise, shown to every sandbox
    cgroup_prefix: str
    sandbox: bool


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
    course.nbgrader_or_raise(
        "generate_assignment",
        assignment,
        "--force",
        f"--CourseDirectory.release_directory={scratch}",
        f"--CourseDirectory.db_url={db_url}",
    )
    return {path.name: read_json_notebook(path) for path in sorted((scratch / assignment).glob("*.ipynb"))}


def _prepare(
    course: Course, assignment: str, submissions: Path, student_id: str, released: dict[str, dict], sources: dict
) -> _Prepared:
    """Check one student's folder (:mod:`transformer_course.grading.intake`) and copy what it holds into
    nbgrader's ``submitted/`` directory; whatever goes wrong becomes this submission's status alone."""
    try:
        return _prepared(course, assignment, submissions, student_id, released, sources)
    except Refused as refusal:
        return _Prepared(student_id, (refusal.status, refusal.message))
    except Exception as error:  # noqa: BLE001  (one submission's surprise must not stop the class)
        return _Prepared(student_id, ("error", f"the submission could not be read: {type(error).__name__}: {error}"))


def _prepared(
    course: Course, assignment: str, submissions: Path, student_id: str, released: dict[str, dict], sources: dict
) -> _Prepared:
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
        learner_cells += _learner_cells(course, notebook, sources[name])
        repaired[name] = notebook
    target.mkdir(parents=True)
    for name, notebook in repaired.items():
        nbformat.write(nbformat.from_dict(notebook), target / name)
    timestamp = read_timestamp(student_directory / "timestamp.txt")
    if timestamp is not None:
        (target / "timestamp.txt").write_text(timestamp, encoding="utf-8")
    policy = course.policy(assignment)
    return _Prepared(
        student_id,
        restored_cells=tuple(restored_cells),
        restored_metadata=tuple(restored_metadata),
        learner_cells=learner_cells,
        library_implementations=policy.library_implementations + policy.learner_writes,
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


def _learner_cells(course: Course, notebook: dict, source: dict) -> list[tuple[str, str]]:
    """(label, source) of the code cells the learner wrote: answer cells and cells they added.

    Given cells (locked, restored by nbgrader from the source) and the setup cell that release puts
    first are not the learner's.
    """
    given = set(_nbgrader_cells(source, locked_only=True))
    setup = setup_cell(course).source
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


def _grade(
    course: Course, assignment: str, prepared: _Prepared, settings: _GradingSettings, starts: _FailedStarts
) -> SubmissionResult:
    """Autograde one prepared submission in its own nbgrader process, and review its cells meanwhile."""
    if prepared.rejection is not None:
        return SubmissionResult(prepared.student_id, assignment, None, None, *prepared.rejection)
    if starts.stopped is not None:
        return SubmissionResult(prepared.student_id, assignment, None, None, "not_graded", STATUSES["not_graded"])
    result = SubmissionResult(prepared.student_id, assignment, None, None, "graded", "")
    repairs = []
    if prepared.restored_metadata:
        repairs.append(f"gave back the nbgrader metadata of cells {', '.join(prepared.restored_metadata)}")
    if prepared.restored_cells:
        repairs.append(f"restored the original test cells {', '.join(prepared.restored_cells)}")
    if repairs:
        result.status, result.message = "tests_restored", "; ".join(repairs)
    removed = remove_unreviewed_manual_scores(settings.db_url, course.course_id, assignment, prepared.student_id)
    log_directory = course.autograded_directory / prepared.student_id
    log_directory.mkdir(parents=True, exist_ok=True)
    limits = settings.limits
    with ThreadPoolExecutor(max_workers=1) as reviewer:
        findings = reviewer.submit(bounded_review, prepared.learner_cells, prepared.library_implementations)
        try:
            run = course.nbgrader(
                "autograde",
                assignment,
                f"--student={prepared.student_id}",
                "--force",
                f"--CourseDirectory.db_url={settings.db_url}",
                f"--SandboxedExecute.limits={json.dumps(asdict(limits))}",
                f"--SandboxedExecute.sandbox={settings.sandbox}",
                f"--SandboxedExecute.package_directory={settings.package_directory}",
                f"--SandboxedExecute.cgroup_prefix={settings.cgroup_prefix}",
                timeout=limits.submission_timeout + NBGRADER_MARGIN,
                log_path=log_directory / f"{assignment}.log",
                environment={"OMP_NUM_THREADS": str(limits.threads), "MKL_NUM_THREADS": str(limits.threads)},
            )
        except subprocess.TimeoutExpired:
            run = None
        result.review = "; ".join(findings.result() + removed)
    if run is None:
        result.status, result.score = "timeout", 0.0
        result.message = f"grading took longer than {limits.submission_timeout + NBGRADER_MARGIN} s and was stopped"
    else:
        cell_problem = _problem_in_outputs(course.autograded_directory / prepared.student_id / assignment)
        if run.returncode != 0:
            result.status, result.message = _diagnose_failure(run.stdout, cell_problem)
        elif cell_problem is not None:
            result.status, result.message = cell_problem
    starts.record(result)
    return result


def _forget(results: list[SubmissionResult], db_url: str, course_id: str, assignment: str) -> None:
    """Remove from the gradebook the submissions a stopped run recorded: their zeros are the grader's fault."""
    with Gradebook(db_url, course_id=course_id) as gradebook:
        for result in results:
            if result.status == KERNEL_NOT_STARTED_STATUS:
                try:
                    gradebook.remove_submission(assignment, result.student_id)
                except MissingEntry:
                    pass


def _problem_in_outputs(autograded: Path) -> tuple[str, str] | None:
    """The worst problem recorded in the outputs of the autograded notebooks, if any."""
    return notebook_problem(
        cell for path in sorted(autograded.glob("*.ipynb")) for cell in read_json_notebook(path)["cells"]
    )


def _diagnose_failure(log: str, cell_problem: tuple[str, str] | None) -> tuple[str, str]:
    """Status and message for an nbgrader run that failed."""
    if cell_problem is not None:
        return cell_problem
    last_lines = [line for line in log.strip().splitlines() if line.strip()][-3:]
    return "error", " | ".join(last_lines)[-500:]


def _with_busy_timeout(db_url: str) -> str:
    """Let parallel nbgrader processes wait for SQLite's write lock instead of failing."""
    if db_url.startswith("sqlite:") and "timeout=" not in db_url:
        return db_url + ("&" if "?" in db_url else "?") + "timeout=120"
    return db_url


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
            writer.writerow({key: _spreadsheet_safe(value) for key, value in asdict(result).items()})


def _spreadsheet_safe(value):
    """OWASP's rule against CSV injection: a text field that a spreadsheet would read as a formula (starting
    with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return) is prefixed with an apostrophe."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value
