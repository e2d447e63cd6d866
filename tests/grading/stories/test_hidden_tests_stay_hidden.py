"""No line of a hidden test reaches what the learner sees: a failed hidden test is told by its name and its
author's message. Every hidden test of every assignment is run here, in this process, against learners that
answer wrong, and what the grader would write into the cell is searched for the hidden test's own lines."""

from __future__ import annotations

import pytest
from grading_support import assignments, hidden_lines, released_text, solution_notebook

from transformer_course.grading import nbgrader_cells
from transformer_course.grading.hidden import Learner
from transformer_course.grading.inside.plain_data import Raised
from transformer_course.grading.judging import run_hidden_tests
from transformer_course.grading.nbgrader_cells import split_hidden_tests

pytestmark = pytest.mark.needs_nbgrader


def hidden_test_cells() -> list[tuple[str, str, str]]:
    """(assignment, grade_id, hidden code) of every test cell that has hidden tests."""
    cells = []
    for assignment in assignments():
        for grade_id, source in nbgrader_cells.test_sources(solution_notebook(assignment)).items():
            _, hidden = split_hidden_tests(source)
            if hidden.strip():
                cells.append((assignment, grade_id, hidden))
    return cells


# Learners whose answers fail the hidden tests in different places: at the first question, or at a check.
WRONG_LEARNERS = {
    "raises": lambda request: Raised("ValueError", "not written yet"),
    "answers 0": lambda request: 0,
    "answers None": lambda request: None,
}


CELLS = hidden_test_cells()


@pytest.mark.parametrize(("assignment", "grade_id", "hidden"), CELLS, ids=[f"{a}/{g}" for a, g, _ in CELLS])
def test_a_failed_hidden_test_shows_none_of_its_code(assignment, grade_id, hidden):
    secret = hidden_lines(hidden, released_text(assignment))
    for kind, ask in WRONG_LEARNERS.items():
        failure = run_hidden_tests(hidden, f"{assignment}/{grade_id}", Learner(ask, switched_off=[]))
        assert failure is not None, f"{assignment} {grade_id}: the hidden tests passed a learner that {kind}"
        shown = "\n".join([failure.ename, failure.evalue, *failure.traceback])
        leaked = sorted(line for line in secret if line in shown)
        assert not leaked, f"{assignment} {grade_id} (a learner that {kind}): the failure shows hidden code {leaked}"
        assert failure.traceback[0].startswith(("hidden test ", "the hidden tests of this cell")), failure.traceback
