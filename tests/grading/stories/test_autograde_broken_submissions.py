"""Grading a class that hands in broken notebooks: every broken one is reported, every good one graded,
and what a submission did is reported for review."""

from __future__ import annotations

import csv

import pytest
from grading_support import (
    exercise_notebook,
    full_marks,
    grade,
    partly_done_notebook,
    readme_grades_csv_columns,
    readme_statuses,
    solution_notebook,
    with_appended_code,
    write_submissions,
)
from nbgrader.api import Gradebook

pytestmark = [pytest.mark.needs_nbgrader, pytest.mark.needs_bwrap]  # grade in the sandbox

FIRST = "01-attention"


def _broken_class() -> dict:
    solution = solution_notebook(FIRST)
    other_assignment = exercise_notebook(FIRST)
    for cell in other_assignment["cells"]:
        if "nbgrader" in cell["metadata"]:
            cell["metadata"]["nbgrader"]["grade_id"] = "masks-" + cell["metadata"]["nbgrader"]["grade_id"]
    edited = solution_notebook(FIRST)
    for cell in edited["cells"]:
        if cell["id"] == "test-attention":
            cell["source"] = "assert True  # the test, emptied\n"
    edited["cells"] = [cell for cell in edited["cells"] if cell["id"] != "test-cosine"]
    stripped = solution_notebook(FIRST)
    for cell in stripped["cells"]:
        cell["metadata"].pop("nbgrader", None)
    retyped = solution_notebook(FIRST)
    for cell in retyped["cells"]:
        if cell["id"] == "test-softmax":
            cell.update(cell_type="markdown", source="the test, made a comment")
            del cell["outputs"], cell["execution_count"]
    return {
        "solution": solution,
        "partly-done": partly_done_notebook(FIRST),
        "invalid-json": '{"cells": [ this is not json',
        "not-a-notebook": '{"hello": "world"}',
        "other-assignment": ("masks.ipynb", other_assignment),
        "another-assignments-notebook": ("masks.ipynb", exercise_notebook("04-masks")),
        "edited-tests": edited,
        "metadata-stripped": stripped,
        "test-made-markdown": retyped,
        "nbgrader-layout": (f"{FIRST}/attention.ipynb", solution),
        "endless-loop": with_appended_code(solution, "softmax", "while True:\n    pass\n"),
        "exits-kernel": with_appended_code(solution, "softmax", "import os\nos._exit(1)\n"),
        "allocates-without-bound": with_appended_code(
            solution, "softmax", "hoard = []\nwhile True:\n    hoard.append(torch.empty(10**8))\n"
        ),
        "calls-the-reference": with_appended_code(
            solution,
            "attention",
            "import transformer_course\n"
            "def attention(query, key, value, mask=None, scale=True):\n"
            "    return transformer_course.scaled_dot_product_attention(query, key, value, mask)\n",
        ),
        "patches-comparisons": with_appended_code(
            solution, "project-qkv", "torch.testing.assert_close = lambda *args, **kwargs: None\n"
        ),
        "hangs-in-hidden-tests": with_appended_code(
            solution,
            "softmax",
            "import inspect\n"
            "_softmax = softmax\n"
            "def softmax(scores):  # hangs when a hidden test calls it (its question comes through the probe)\n"
            "    while any('probe' in frame.filename for frame in inspect.stack()):\n"
            "        pass\n"
            "    return _softmax(scores)\n",
        ),
        "uses-torch-softmax": with_appended_code(
            solution, "softmax", "def softmax(scores):\n    return torch.softmax(scores, dim=-1)\n"
        ),
    }


@pytest.fixture(scope="module")
def broken_class(course, tmp_path_factory):
    submissions = write_submissions(tmp_path_factory.mktemp("broken-class"), FIRST, _broken_class())
    out = submissions.parent / "grades.csv"
    return grade(course, FIRST, submissions, out=out), out


def test_good_submissions_are_graded_alongside_broken_ones(broken_class):
    results, _ = broken_class
    assert results["solution"].status == "graded" and results["solution"].score == full_marks(FIRST)
    assert 0 < results["partly-done"].score < results["partly-done"].max_score


def test_invalid_json_is_reported_not_graded(broken_class):
    result = broken_class[0]["invalid-json"]
    assert (result.status, result.score) == ("invalid_notebook", None)


def test_json_that_is_not_a_notebook_is_reported(broken_class):
    assert broken_class[0]["not-a-notebook"].status == "invalid_notebook"


def test_notebook_of_another_assignment_is_reported(broken_class):
    result = broken_class[0]["other-assignment"]
    assert result.status == "wrong_assignment" and "masks.ipynb" in result.message


def test_a_real_notebook_of_another_assignment_is_reported_although_headings_share_ids(broken_class):
    result = broken_class[0]["another-assignments-notebook"]
    assert (result.status, result.score) == ("wrong_assignment", None)


def test_edited_and_deleted_tests_are_restored_and_graded_with_the_originals(broken_class):
    result = broken_class[0]["edited-tests"]
    assert result.status == "tests_restored"
    assert "test-attention" in result.message and "test-cosine" in result.message
    assert result.score == full_marks(FIRST)  # the solution passes the restored originals


def test_stripped_nbgrader_metadata_is_given_back_by_cell_id_and_graded(broken_class):
    result = broken_class[0]["metadata-stripped"]
    assert result.status == "tests_restored" and "metadata" in result.message and "test-softmax" in result.message
    assert result.score == full_marks(FIRST)


def test_a_test_cell_turned_into_markdown_is_restored_as_code(broken_class):
    result = broken_class[0]["test-made-markdown"]
    assert result.status == "tests_restored" and "test-softmax" in result.message
    assert result.score == full_marks(FIRST)


def test_nbgraders_own_student_assignment_layout_is_accepted(broken_class):
    result = broken_class[0]["nbgrader-layout"]
    assert result.status == "graded" and result.score == full_marks(FIRST)


def test_endless_loop_is_interrupted_and_the_rest_graded(broken_class):
    result = broken_class[0]["endless-loop"]
    assert result.status == "timeout" and "softmax" in result.message
    assert result.score == full_marks(FIRST)  # the loop came after the function it follows


def test_a_function_that_hangs_only_under_the_hidden_tests_is_interrupted_and_its_status_says_so(broken_class):
    result = broken_class[0]["hangs-in-hidden-tests"]
    assert result.status == "timeout" and "a hidden test" in result.message, (result.status, result.message)
    assert 0 < result.score < full_marks(FIRST), result.score  # softmax's part lost, the others graded


def test_kernel_exit_keeps_the_points_earned_before_it(broken_class):
    result = broken_class[0]["exits-kernel"]
    assert result.status == "kernel_died" and "softmax" in result.message
    assert 0 < result.score < result.max_score


def test_unbounded_allocation_hits_the_memory_limit(broken_class):
    assert broken_class[0]["allocates-without-bound"].status == "memory_limit"


def test_handing_in_the_reference_implementation_fails_the_hidden_test(course, broken_class):
    with Gradebook(course.default_db_url, course_id=course.course_id) as gradebook:
        test_attention = gradebook.find_grade("test-attention", "attention", FIRST, "calls-the-reference")
        assert test_attention.score == 0 and test_attention.max_score > 0
        test_softmax = gradebook.find_grade("test-softmax", "attention", FIRST, "calls-the-reference")
        assert test_softmax.score == test_softmax.max_score  # the learner's own parts still earn their points


def test_patching_the_kernels_comparisons_changes_no_verdict_and_is_reported(broken_class):
    result = broken_class[0]["patches-comparisons"]
    assert result.status == "graded" and result.score == full_marks(FIRST)  # the hidden tests compare in the grader
    assert result.review == "cell project-qkv: changes a library (torch.testing.assert_close)"


def test_handing_in_the_reference_is_reported_for_review(broken_class):
    assert (
        "cell attention: uses the library's own scaled_dot_product_attention"
        in broken_class[0]["calls-the-reference"].review
    )


def test_a_library_softmax_is_switched_off_while_graded_and_reported(course, broken_class):
    result = broken_class[0]["uses-torch-softmax"]
    assert "cell softmax: uses the library's own softmax" in result.review
    with Gradebook(course.default_db_url, course_id=course.course_id) as gradebook:
        assert gradebook.find_grade("test-softmax", "attention", FIRST, "uses-torch-softmax").score == 0


def test_an_honest_solution_has_nothing_to_review(broken_class):
    assert broken_class[0]["solution"].review == ""


def test_the_review_is_for_the_instructor_and_not_on_the_learners_feedback_page(course, broken_class):
    results, out = broken_class
    assert "uses the library's own softmax" in results["uses-torch-softmax"].review
    page = (course.feedback_directory / "uses-torch-softmax" / FIRST / "attention.html").read_text(encoding="utf-8")
    assert "library&#x27;s own softmax" not in page and "library's own softmax" not in page


def test_grades_csv_has_one_row_per_student_with_the_documented_columns(broken_class):
    results, out = broken_class
    with open(out, newline="", encoding="utf-8") as file:
        rows = list(csv.DictReader(file))
    assert list(rows[0]) == readme_grades_csv_columns()
    assert sorted(row["student_id"] for row in rows) == sorted(results)
    assert {row["status"] for row in rows} <= set(readme_statuses())


def test_grading_again_gives_the_same_grades_and_keeps_the_others(course, broken_class, tmp_path):
    first, _ = broken_class
    again = grade(
        course,
        FIRST,
        write_submissions(tmp_path, FIRST, {name: _broken_class()[name] for name in ("solution", "partly-done")}),
    )
    for student in again:
        assert again[student].score == first[student].score
    with Gradebook(course.default_db_url, course_id=course.course_id) as gradebook:
        graded = {submission.student.id for submission in gradebook.find_assignment(FIRST).submissions}
    assert {"edited-tests", "exits-kernel", "endless-loop"} <= graded
