"""``nbgrader autograde``, run by hand or from formgrader, grades as ``transformer-course autograde`` does: the course's
nbgrader_config.py puts :class:`SandboxedExecute` in nbgrader's Execute's place, so the notebook runs in the sandbox
and the gradebook gets the grader's verdicts, hidden tests judged in the grader's process."""

from __future__ import annotations

import copy
import json

import pytest
from grading_support import (
    copy_course,
    full_marks,
    notebook_name,
    run_nbgrader,
    solution_notebook,
    with_appended_code,
)

from transformer_course.grading.sandbox import WORKING_DIRECTORY

pytestmark = [pytest.mark.needs_nbgrader, pytest.mark.needs_bwrap]  # nbgrader_config.py's SandboxedExecute sandboxes

FIRST = "01-attention"
VISIBLE_ONLY_SCALING = (
    "def scale_scores(scores, d_k):\n"
    "    if d_k in (16, 9, 64):  # the visible tests' and the experiment's\n"
    "        return scores / math.sqrt(d_k)\n"
    "    return scores\n"
)


def _nbgraders_own(course, *arguments: str) -> None:
    finished = run_nbgrader(course.root, *arguments)
    assert finished.returncode == 0, finished.stdout[-4000:] + finished.stderr[-4000:]


def _with_answer(grade_id: str, code: str) -> dict:
    notebook = copy.deepcopy(solution_notebook(FIRST))
    for cell in notebook["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id:
            cell["source"] = code
            return notebook
    raise KeyError(grade_id)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """A course copy where ``nbgrader generate_assignment`` and ``nbgrader autograde`` ran on two submissions: an
    honest one that prints its working directory, and one whose scaling passes the visible tests only."""
    from nbgrader.api import Gradebook

    course = copy_course(tmp_path_factory.mktemp("course"))
    _nbgraders_own(course, "generate_assignment", FIRST, "--force")
    submissions = {
        "honest": with_appended_code(
            solution_notebook(FIRST), "softmax", "import os\nprint('working in', os.getcwd())"
        ),
        "visible-only-scaling": _with_answer("scaling", VISIBLE_ONLY_SCALING),
    }
    for student, notebook in submissions.items():
        folder = course.submitted_directory / student / FIRST
        folder.mkdir(parents=True)
        (folder / notebook_name(FIRST)).write_text(json.dumps(notebook), encoding="utf-8")
    _nbgraders_own(course, "autograde", FIRST, "--force")
    with Gradebook(course.default_db_url, course_id=course.course_id) as gradebook:
        grades = {
            student: {
                grade.name: grade.score or 0.0
                for notebook in gradebook.find_submission(FIRST, student).notebooks
                for grade in notebook.grades
            }
            for student in submissions
        }
    autograded = {
        student: json.loads((course.autograded_directory / student / FIRST / notebook_name(FIRST)).read_text())
        for student in submissions
    }
    return grades, autograded


def _outputs(notebook: dict) -> str:
    return json.dumps([cell.get("outputs", []) for cell in notebook["cells"]])


def test_nbgrader_autograde_gives_an_honest_notebook_full_marks(graded):
    grades, _ = graded
    assert sum(grades["honest"].values()) == full_marks(FIRST), grades["honest"]


def test_nbgrader_autograde_runs_the_notebook_in_the_sandbox(graded):
    _, autograded = graded
    assert f"working in {WORKING_DIRECTORY}\\n" in _outputs(autograded["honest"])


def test_nbgrader_autograde_takes_the_points_of_a_failed_hidden_test_and_names_the_test(graded):
    grades, autograded = graded
    assert grades["visible-only-scaling"]["test-scaling"] == 0.0
    assert sum(grades["visible-only-scaling"].values()) == full_marks(FIRST) - grades["honest"]["test-scaling"]
    assert "hidden test scaling_divides_by_the_square_root_of_d_k failed" in _outputs(
        autograded["visible-only-scaling"]
    )
