"""Points for work only, and nothing of the hidden tests in return: real submissions of assignment 1 graded end
to end in the sandbox, each trying one way to score without the work (a library's softmax reached through a
private name, typed-in numbers where the part asks for an experiment or a computation) or one way to read the
hidden tests (a function written to pass the visible tests only, whose hidden test then fails)."""

from __future__ import annotations

import json

import pytest
from grading_support import (
    full_marks,
    grade,
    hidden_lines,
    released_text,
    solution_notebook,
    write_submissions,
)

from transformer_course.grading import nbgrader_cells
from transformer_course.grading.nbgrader_cells import split_hidden_tests

pytestmark = [pytest.mark.needs_nbgrader, pytest.mark.needs_bwrap]  # grade in the sandbox

FIRST = "01-attention"


def _nbgrader(cell: dict) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def with_answers(answers: dict[str, str]) -> dict:
    """The solution of assignment 1 with the answer cells named in ``answers`` holding that code instead."""
    notebook = solution_notebook(FIRST)
    for cell in notebook["cells"]:
        if _nbgrader(cell).get("grade_id") in answers:
            cell["source"] = answers[_nbgrader(cell)["grade_id"]]
    return notebook


def points(*grade_ids: str) -> float:
    cells = solution_notebook(FIRST)["cells"]
    return sum(_nbgrader(cell).get("points", 0) for cell in cells if _nbgrader(cell).get("grade_id") in grade_ids)


SUBMISSIONS = {
    "honest": {},
    # Right on the visible tests' inputs only: the hidden test fails, and its failure must not show its code.
    "visible-only-scaling": {
        "scaling": "def scale_scores(scores, d_k):\n"
        "    if d_k in (16, 9, 64):  # the visible tests' and the experiment's\n"
        "        return scores / math.sqrt(d_k)\n"
        "    return scores\n"
    },
    # The library's softmax, reached where no name of grading.yml is: a private name, a default argument.
    "private-softmax": {"softmax": "def softmax(scores):\n    return torch._softmax(scores, -1, False)\n"},
    "default-argument-softmax": {
        "softmax": "def softmax(scores, _impl=torch.softmax):\n    return _impl(scores, dim=-1)\n"
    },
    "math-attention": {
        "attention": "def attention(query, key, value, mask=None, scale=True):\n"
        "    additive = None if mask is None else torch.zeros(mask.shape).masked_fill(~mask, float('-inf'))\n"
        "    return torch._scaled_dot_product_attention_math(\n"
        "        query, key, value, attn_mask=additive, scale=None if scale else 1.0)\n"
    },
    # Numbers typed in where the part asks for an experiment or a computation.
    "typed-variances": {"variance-experiment": "unscaled_variance, scaled_variance = 64.0, 1.0\n"},
    "typed-winners": {"winners": "dot_winner, cosine_winner, tie_factor = 0, 1, 2.0\n"},
    "typed-saturation": {
        "saturation-experiment": "largest_weight = {'unscaled': [0.49, 0.74, 0.86, 0.93, 0.96], 'scaled': [0.31] * 5}\n"
        "jacobian_norm = {'unscaled': [0.34, 0.25, 0.16, 0.09, 0.05], 'scaled': [0.35] * 5}\n"
    },
    "zero-attention-and-typed-dog": {
        "attention": "def attention(query, key, value, mask=None, scale=True):\n"
        "    weights = torch.zeros(*query.shape[:-1], key.size(-2))\n"
        "    return weights @ value, weights\n",
        "dog-chased-ball": "weights_unscaled, weights_scaled = torch.zeros(3), torch.zeros(3)\n"
        "output_scaled = torch.zeros(4)\n",
    },
    # The same wrong attention with the worked example done honestly: the example keeps its points.
    "zero-attention": {
        "attention": "def attention(query, key, value, mask=None, scale=True):\n"
        "    weights = torch.zeros(*query.shape[:-1], key.size(-2))\n"
        "    return weights @ value, weights\n",
    },
}


@pytest.fixture(scope="module")
def graded(course, tmp_path_factory):
    notebooks = {student: with_answers(answers) for student, answers in SUBMISSIONS.items()}
    submissions = write_submissions(tmp_path_factory.mktemp("work"), FIRST, notebooks)
    return grade(course, FIRST, submissions, jobs=2)


def expect_score(result, lost: float) -> None:
    assert result.status == "graded", result.message
    assert result.score == full_marks(FIRST) - lost, (
        f"{result.student_id} scored {result.score}, expected {full_marks(FIRST) - lost} (full marks less {lost})"
    )


def test_honest_work_scores_full_marks_with_nothing_to_review(graded):
    expect_score(graded["honest"], 0)
    assert graded["honest"].review == ""


def test_a_failed_hidden_test_shows_none_of_its_code_in_the_feedback_or_the_autograded_notebook(course, graded):
    expect_score(graded["visible-only-scaling"], points("test-scaling"))
    hidden = "".join(
        split_hidden_tests(text)[1] for text in nbgrader_cells.test_sources(solution_notebook(FIRST)).values()
    )
    secret = hidden_lines(hidden, released_text(FIRST))
    page = (course.feedback_directory / "visible-only-scaling" / FIRST / "attention.html").read_text(encoding="utf-8")
    autograded = course.autograded_directory / "visible-only-scaling" / FIRST / "attention.ipynb"
    outputs = json.dumps([cell.get("outputs", []) for cell in json.loads(autograded.read_text())["cells"]])
    assert "scaling_divides_by_the_square_root_of_d_k" in page, "the feedback does not name the failed hidden test"
    for shown, where in ((page, "the feedback page"), (outputs, "the autograded notebook's outputs")):
        leaked = sorted(line for line in secret if line in shown or json.dumps(line)[1:-1] in shown)
        assert not leaked, f"{where} shows lines of the hidden tests: {leaked}"


@pytest.mark.parametrize("student", ["private-softmax", "default-argument-softmax"])
def test_the_librarys_softmax_however_reached_loses_the_softmax_part_only_and_is_named(course, graded, student):
    expect_score(graded[student], points("test-softmax"))
    page = (course.feedback_directory / student / FIRST / "attention.html").read_text(encoding="utf-8")
    assert "aten::_softmax" in page, "the feedback does not name the operator that was refused"


def test_a_private_name_is_flagged_for_review(graded):
    assert "private names (torch._softmax)" in graded["private-softmax"].review


def test_the_librarys_attention_through_its_math_path_loses_the_attention_part_only(graded):
    expect_score(graded["math-attention"], points("test-attention"))


def test_typed_in_variances_earn_nothing(graded):
    expect_score(graded["typed-variances"], points("test-variance-experiment"))


def test_typed_in_winners_earn_nothing(graded):
    expect_score(graded["typed-winners"], points("test-winners"))


def test_typed_in_saturation_numbers_earn_nothing(graded):
    expect_score(graded["typed-saturation"], points("test-saturation-experiment"))


def test_an_attention_of_zeros_with_typed_in_zeros_earns_neither_part(graded):
    expect_score(graded["zero-attention-and-typed-dog"], points("test-attention", "test-dog-chased-ball"))


def test_a_wrong_attention_costs_its_own_part_only_when_the_example_is_done(graded):
    expect_score(graded["zero-attention"], points("test-attention"))
