"""One grader process for the class: graded together, in workers, each submission gets what it gets alone.

A class of honest, broken and hostile submissions is graded once by the local pool (two workers),
once on a Dask cluster of two workers on this machine, and each submission alone in a class of one;
the gradebook's rows (every cell's score), the feedback pages and the results must agree.
"""

from __future__ import annotations

import re

import pytest
from grading_support import (
    answer_cell_ids,
    copy_course,
    exercise_notebook,
    grade,
    solution_notebook,
    with_appended_code,
    write_submissions,
)

pytestmark = [pytest.mark.needs_nbgrader, pytest.mark.needs_bwrap]  # grade in the sandbox

ASSIGNMENT = "01-attention"


def _submissions() -> dict[str, dict | str]:
    solution, exercise = solution_notebook(ASSIGNMENT), exercise_notebook(ASSIGNMENT)
    first_answer = answer_cell_ids(exercise)[0]
    return {
        "honest": solution,
        "untouched": exercise,
        "not-json": "{ this is not a notebook",
        "exits": with_appended_code(solution, first_answer, "import os\nos._exit(3)"),
        "publishes-a-score": with_appended_code(
            exercise, first_answer, "from IPython.display import display\ndisplay({'text/plain': '17.0'}, raw=True)"
        ),
    }


def _gradebook_rows(course, student_id: str) -> dict[str, tuple]:
    """grade_id -> (auto score, manual score, needs manual grade) of a student's submission."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(course.default_db_url, course_id=course.course_id) as gradebook:
        try:
            submission = gradebook.find_submission(ASSIGNMENT, student_id)
        except MissingEntry:
            return {}
        return {
            grade.name: (grade.auto_score, grade.manual_score, grade.needs_manual_grade)
            for notebook in submission.notebooks
            for grade in notebook.grades
        }


def _feedback(course, student_id: str) -> str:
    """The parts of a student's feedback page that say what was graded: each cell's score line, in order."""
    pages = sorted((course.feedback_directory / student_id / ASSIGNMENT).glob("*.html"))
    return "\n".join(
        " ".join(re.findall(r"Score: [0-9.]+ / [0-9.]+", page.read_text(encoding="utf-8"))) for page in pages
    )


def _graded(course, results) -> dict[str, tuple]:
    """What grading left for each student: the result's fields, the gradebook's rows and the feedback page."""
    return {
        student_id: (
            (result.score, result.max_score, result.status, result.review),
            _gradebook_rows(course, student_id),
            _feedback(course, student_id),
        )
        for student_id, result in results.items()
    }


@pytest.fixture(scope="module")
def class_graded_together(tmp_path_factory) -> dict[str, tuple]:
    course = copy_course(tmp_path_factory.mktemp("together"))
    submissions = write_submissions(tmp_path_factory.mktemp("class"), ASSIGNMENT, _submissions())
    return _graded(course, grade(course, ASSIGNMENT, submissions, jobs=2))


def test_the_class_graded_together_is_graded_as_each_submission_alone(class_graded_together, tmp_path_factory):
    alone = {}
    for student_id, notebook in _submissions().items():
        course = copy_course(tmp_path_factory.mktemp(f"alone-{student_id}"))
        submissions = write_submissions(
            tmp_path_factory.mktemp(f"one-{student_id}"), ASSIGNMENT, {student_id: notebook}
        )
        alone.update(_graded(course, grade(course, ASSIGNMENT, submissions, jobs=1)))
    for student_id, expected in alone.items():
        assert class_graded_together[student_id] == expected, (
            f"{student_id}: together {class_graded_together[student_id]}"
        )


def test_the_class_is_graded_as_its_submissions_deserve(class_graded_together):
    """The comparison above means something: the honest notebook scores, the others do not, each for its reason."""
    statuses = {student_id: graded[0][2] for student_id, graded in class_graded_together.items()}
    scores = {student_id: graded[0][0] for student_id, graded in class_graded_together.items()}
    assert statuses == {
        "honest": "graded",
        "untouched": "graded",
        "not-json": "invalid_notebook",
        "exits": "kernel_died",
        "publishes-a-score": "graded",
    }
    assert scores["honest"] > 0 and scores["untouched"] == scores["publishes-a-score"] == 0, scores
    assert class_graded_together["honest"][2].count("Score:") > 1, "the honest submission has a feedback page"


def test_a_dask_cluster_grades_the_class_as_the_local_pool(class_graded_together, tmp_path_factory):
    distributed = pytest.importorskip("distributed", reason="Dask's distributed package is not installed")
    course = copy_course(tmp_path_factory.mktemp("cluster"))
    submissions = write_submissions(tmp_path_factory.mktemp("class-on-cluster"), ASSIGNMENT, _submissions())
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        results = grade(course, ASSIGNMENT, submissions, scheduler=cluster.scheduler_address)
    assert _graded(course, results) == class_graded_together


def test_the_progress_bar_counts_the_class(tmp_path, capsys):
    course = copy_course(tmp_path / "course")
    submissions = write_submissions(tmp_path / "class", ASSIGNMENT, {"a": "{", "b": "{"})
    grade(course, ASSIGNMENT, submissions, progress=True)
    bar = capsys.readouterr().err
    assert f"grading {ASSIGNMENT}" in bar and "2/2" in bar and "failed=2" in bar, bar[-500:]
