"""Helpers for the grading tests: a scratch copy of the course, and submissions made from its notebooks.

They need nbgrader: where it is missing, a test module that imports this one is skipped, saying so."""

from __future__ import annotations

import copy
import csv
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from suite_layers import NBGRADER_MISSING

import transformer_course.grading  # noqa: F401  before nbgrader: it keeps jsonschema's slow IRI checker out

pytest.importorskip("nbgrader", reason=NBGRADER_MISSING)

from transformer_course.grading import course as course_directory
from transformer_course.grading.autograde import GradeRow, GradingLimits, autograde
from transformer_course.grading.course import Course

REPOSITORY = Path(__file__).resolve().parents[1]

# Limits small enough that broken submissions fail fast in tests.
TEST_LIMITS = GradingLimits(cell_timeout=10, submission_timeout=300, memory_limit_mb=3072)
# autograde's command-line options for a test of the records, not of the wall: no sandbox, one job, no progress bar,
# and the test memory limit.
UNSANDBOXED_AUTOGRADE_OPTIONS = (
    "--no-sandbox",
    "--no-progress",
    "--jobs",
    "1",
    "--memory-limit-mb",
    str(TEST_LIMITS.memory_limit_mb),
)
# Whole assignments are graded with the real limits (and the final project's longer cell time from its grading.yml):
# its graded run trains a fixed 250 updates in one cell, several times slower on a busy test machine.
CLASS_LIMITS = GradingLimits(memory_limit_mb=3072)


def readme_grades_csv_columns() -> list[str]:
    """The columns of ``grades.csv`` as README.md lists them ("`grades.csv` has one row per student: `…`")."""
    readme = " ".join((REPOSITORY / "README.md").read_text(encoding="utf-8").split())
    match = re.search(r"`grades\.csv` has one row per student: `([^`]+)`", readme)
    assert match, "README.md no longer lists grades.csv's columns where the tests look for them"
    return [column.strip() for column in match.group(1).split(",")]


def readme_statuses() -> list[str]:
    """The statuses in README.md's status table (its first column, several to a row where they share a meaning)."""
    lines = (REPOSITORY / "README.md").read_text(encoding="utf-8").splitlines()
    start = lines.index("| status | meaning |")
    statuses = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        statuses += re.findall(r"`([a-z_]+)`", line.split("|")[1])
    return statuses


def readme_status_meanings() -> dict[str, str]:
    """README.md's status table as status -> meaning, one row per status."""
    lines = (REPOSITORY / "README.md").read_text(encoding="utf-8").splitlines()
    start = lines.index("| status | meaning |")
    table = {}
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        _, statuses, meaning, _ = line.split("|")
        for status in re.findall(r"`([a-z_]+)`", statuses):
            table[status] = meaning.strip()
    return table


def run_nbgrader(folder: Path, *arguments: str) -> subprocess.CompletedProcess:
    """``nbgrader ARGUMENTS`` in ``folder``, as an instructor or learner runs it from the activated environment (whose
    scripts come first on PATH: nbgrader runs its ``alembic`` from there when it makes a gradebook)."""
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    return subprocess.run(
        [sys.executable, "-m", "nbgrader", *arguments],
        cwd=folder,
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": path},
    )


def run_command(course: Course, *arguments: str) -> subprocess.CompletedProcess:
    """``transformer-course ARGUMENTS --course-root COURSE`` in a fresh interpreter, as an instructor types it."""
    return subprocess.run(
        [sys.executable, "-m", "transformer_course.cli", *arguments, "--course-root", str(course.root)],
        capture_output=True,
        text=True,
        cwd=course.root,
    )


def csv_rows(path: Path) -> dict[str, dict]:
    """A grades CSV as student id → its row."""
    with open(path, newline="", encoding="utf-8") as file:
        return {row["student_id"]: row for row in csv.DictReader(file)}


def copy_course(target: Path) -> Course:
    """A copy of the repository's course files in ``target`` (grading writes into its root)."""
    return course_directory.copy_course(REPOSITORY, target)


def assignments() -> list[str]:
    return Course(REPOSITORY).assignments()


def full_marks(assignment: str) -> float:
    """What the autograder gives a complete, correct notebook: the points of its test cells. Written answers
    (manually graded markdown cells) count in max_score too, but score 0 until an instructor grades them."""
    return sum(
        cell["metadata"]["nbgrader"].get("points", 0)
        for cell in solution_notebook(assignment)["cells"]
        if cell["cell_type"] == "code" and cell.get("metadata", {}).get("nbgrader", {}).get("grade")
    )


def max_score(assignment: str) -> float:
    """grades.csv's max_score for ``assignment``: the points of every graded cell, code or written, but the bonus's."""
    bonus = set(Course(REPOSITORY).policy(assignment).bonus)
    cells = (cell.get("metadata", {}).get("nbgrader", {}) for cell in solution_notebook(assignment)["cells"])
    return sum(cell["points"] for cell in cells if cell.get("grade") and cell.get("grade_id") not in bonus)


def notebook_name(assignment: str) -> str:
    (path,) = Course(REPOSITORY).source_notebooks(assignment)
    return path.name


def solution_notebook(assignment: str) -> dict:
    return json.loads((REPOSITORY / "solutions" / assignment / notebook_name(assignment)).read_text(encoding="utf-8"))


def exercise_notebook(assignment: str) -> dict:
    return json.loads((REPOSITORY / "exercises" / assignment / notebook_name(assignment)).read_text(encoding="utf-8"))


def answer_cell_ids(notebook: dict) -> list[str]:
    """grade_ids of the cells a learner fills in, in notebook order."""
    return [
        cell["metadata"]["nbgrader"]["grade_id"]
        for cell in notebook["cells"]
        if cell.get("metadata", {}).get("nbgrader", {}).get("solution")
    ]


def partly_done_notebook(assignment: str) -> dict:
    """The learner notebook with the first half of its answer cells filled in from the solution."""
    solution = {cell["id"]: cell for cell in solution_notebook(assignment)["cells"]}
    notebook = exercise_notebook(assignment)
    answers = answer_cell_ids(notebook)
    done = set(answers[: (len(answers) + 1) // 2])
    for cell in notebook["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") in done:
            cell["source"] = copy.deepcopy(solution[cell["id"]]["source"])
    return notebook


def with_appended_code(notebook: dict, grade_id: str, code: str) -> dict:
    """A copy of ``notebook`` with ``code`` added at the end of the cell ``grade_id``."""
    notebook = copy.deepcopy(notebook)
    for cell in notebook["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id:
            cell["source"] = "".join(cell["source"]) + "\n" + code
            return notebook
    raise KeyError(grade_id)


def write_submissions(directory: Path, assignment: str, submissions: dict[str, dict | str]) -> Path:
    """``directory/<student>/<notebook>.ipynb`` for each student (a dict is a notebook, a str raw file text)."""
    name = notebook_name(assignment)
    for student, content in submissions.items():
        filename = name
        if isinstance(content, tuple):  # (relative path, content): a notebook under another name or folder
            filename, content = content
        path = directory / student / filename
        path.parent.mkdir(parents=True, exist_ok=True)
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        path.write_text(text, encoding="utf-8")
    return directory


def grade(
    course: Course, assignment: str, submissions: Path, limits: GradingLimits = TEST_LIMITS, **options
) -> dict[str, GradeRow]:
    if os.environ.get("PYTEST_XDIST_WORKER"):  # the workers grade at the same time: one job each fills the cores
        options.setdefault("jobs", 1)
    results = autograde(course, assignment, submissions, limits=limits, **options)
    return {result.student_id: result for result in results}


def hidden_lines(hidden_code: str, released: str) -> set[str]:
    """The lines of ``hidden_code`` that only the hidden tests hold: not blank, not a bare keyword or bracket,
    and not also in the ``released`` notebook's text (an ``import torch`` the learner sees anyway)."""
    return {
        line.strip() for line in hidden_code.splitlines() if len(line.strip()) >= 12 and line.strip() not in released
    }


def released_text(assignment: str) -> str:
    """The sources of the released notebook's cells, one after the other."""
    return "\n".join("".join(cell["source"]) for cell in exercise_notebook(assignment)["cells"])
