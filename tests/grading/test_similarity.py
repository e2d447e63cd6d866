"""The similarity report: a copy with its names changed and its functions reordered is found, two learners who wrote
the same short function from the same instructions are not reported, and no score changes."""

from __future__ import annotations

import json
import re

import pytest
from grading_support import exercise_notebook, solution_notebook, write_submissions

from transformer_course.grading.run_record import read_records
from transformer_course.grading.similarity import similarity_report

pytestmark = pytest.mark.needs_nbgrader

ASSIGNMENT = "01-attention"


def _disguised(notebook: dict) -> dict:
    """A copy of ``notebook`` with the answers' names changed and each cell's functions in reverse order."""
    notebook = json.loads(json.dumps(notebook))
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code" and cell.get("metadata", {}).get("nbgrader", {}).get("solution"):
            source = "".join(cell["source"])
            for old, new in [("scores", "s_mat"), ("weights", "attn_w"), ("mask", "m"), ("query", "qq")]:
                source = re.sub(rf"\b{old}\b", new, source)
            cell["source"] = "\n".join(reversed(re.split(r"\n(?=def )", source)))
    return notebook


def _one_answer(grade_id: str) -> dict:
    """The exercise with the one answer ``grade_id`` written as the solution writes it."""
    answer = next(
        cell["source"]
        for cell in solution_notebook(ASSIGNMENT)["cells"]
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id
    )
    notebook = exercise_notebook(ASSIGNMENT)
    for cell in notebook["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id:
            cell["source"] = answer
    return notebook


@pytest.fixture(scope="module")
def report(course, tmp_path_factory):
    submissions = write_submissions(
        tmp_path_factory.mktemp("similar"),
        ASSIGNMENT,
        {
            "alice": solution_notebook(ASSIGNMENT),
            "bob": _disguised(solution_notebook(ASSIGNMENT)),
            "carol": _one_answer("scaling"),
            "dave": _one_answer("scaling"),
            "erin": exercise_notebook(ASSIGNMENT),
        },
    )
    out = tmp_path_factory.mktemp("report") / "similarity.html"
    return similarity_report(course, ASSIGNMENT, submissions, out), out


def test_a_copy_with_renamed_names_and_reordered_functions_is_found(report):
    pairs, _ = report
    assert ("alice", "bob") in {(pair.first, pair.second) for pair in pairs}, pairs


def test_the_same_short_function_written_from_the_same_instructions_is_not_a_copy(report):
    pairs, _ = report
    reported = {(pair.first, pair.second) for pair in pairs}
    assert ("carol", "dave") not in reported and all("erin" not in pair for pair in reported), pairs


def test_the_report_shows_the_pairs_side_by_side(report):
    _, out = report
    page = out.read_text(encoding="utf-8")
    assert "alice" in page and "bob" in page and "<html" in page.lower()


def test_the_pairs_go_into_the_review_and_no_score_is_given(course, report):
    records = read_records(course.root, ASSIGNMENT)
    alice, bob = (" ".join(records[student].similarity) for student in ("alice", "bob"))
    assert "bob" in alice and "alice" in bob, records
    assert "carol" not in records, records
