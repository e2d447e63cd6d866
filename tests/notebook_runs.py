"""A course notebook run in this process, cell by cell, as the grader runs it, but without a kernel or a sandbox.

The grader runs a submission's cells in order in one kernel; an answer cell that raises goes on to the next cell,
a test cell passes when its visible tests raise nothing and then its hidden tests (from the source notebook) pass,
judged in the grader's process through a :class:`transformer_course.grading.hidden.Learner`. Here the cells run
with ``exec`` in one namespace (all but the setup cell, which installs the package on Colab), and the hidden tests
ask that namespace through the same encoding the sandbox wall uses
(:func:`transformer_course.grading.inside.probe.evaluate`), with the assignment's library implementations switched
off and its forbidden operators refused. These are the course's own notebooks, so nothing here needs the sandbox:
it is for tests that run the notebooks many times (a wrong answer in each part, a mutant of each answer).
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
from typing import Any

import torch

from transformer_course.grading.hidden import Learner
from transformer_course.grading.inside.plain_data import decode, encode
from transformer_course.grading.inside.probe import evaluate
from transformer_course.grading.judging import run_hidden_tests
from transformer_course.grading.nbgrader_cells import nbgrader_metadata, source_text
from transformer_course.grading.policy import GradingPolicy


def with_answers(notebook: dict, answers: dict[str, str]) -> dict:
    """A copy of ``notebook`` whose answer cells named in ``answers`` (by grade_id) hold that code."""
    notebook = copy.deepcopy(notebook)
    unknown = set(answers)
    for cell in notebook["cells"]:
        grade_id = nbgrader_metadata(cell).get("grade_id")
        if grade_id in answers:
            assert nbgrader_metadata(cell).get("solution"), f"{grade_id} is not an answer cell"
            cell["source"] = answers[grade_id]
            unknown.discard(grade_id)
    assert not unknown, f"no answer cells {sorted(unknown)}"
    return notebook


def code_cells(notebook: dict) -> list[dict]:
    """The code cells the grader runs, in notebook order: all but the setup cell that release puts first (it
    installs the package on Colab)."""
    return [
        cell
        for cell in notebook["cells"]
        if cell["cell_type"] == "code" and "setup" not in cell.get("metadata", {}).get("tags", [])
    ]


def run_cell(cell: dict, namespace: dict, source: str | None = None) -> Exception | None:
    """Run ``cell`` (or ``source`` in its place) in ``namespace``: the exception it raised, or None.

    A given cell of nbgrader's (locked) that raises is the notebook's own fault, not the learner's: that error
    propagates. An answer cell, a test cell or a cell without nbgrader's marks (a plot of the learner's results)
    that raises goes on, as the grader does."""
    metadata = nbgrader_metadata(cell)
    try:
        code = source_text(cell) if source is None else source
        exec(compile(code, metadata.get("grade_id", "cell"), "exec"), namespace)
    except Exception as error:
        if metadata.get("locked") and not metadata.get("grade"):
            raise
        return error
    return None


def visible_test_failures(notebook: dict) -> dict[str, str]:
    """grade_id -> "ErrorName: message" of each test cell whose visible tests fail when the notebook's code cells
    run in order.

    Runs in this process, in a namespace of its own; an answer cell that raises goes on to the next cell, as in
    the grader.
    """
    namespace: dict = {"__name__": "__notebook__"}
    failures = {}
    with torch.random.fork_rng(devices=[]), contextlib.redirect_stdout(io.StringIO()):
        for cell in code_cells(notebook):
            error = run_cell(cell, namespace)
            if error is not None and nbgrader_metadata(cell).get("grade"):
                failures[nbgrader_metadata(cell)["grade_id"]] = f"{type(error).__name__}: {error}"
    return failures


def failing_visible_tests(notebook: dict) -> set[str]:
    """grade_ids of the test cells whose visible tests fail (:func:`visible_test_failures`)."""
    return set(visible_test_failures(notebook))


def namespace_learner(namespace: dict, policy: GradingPolicy, answer_cells: dict[str, str]) -> Learner:
    """The notebook whose cells ran in ``namespace`` as a hidden test sees it: each question and answer crosses
    the same JSON encoding as the sandbox wall, and ``answer_cells`` (grade_id -> source) are what
    ``Learner.rerun`` runs again."""

    def ask(request: dict) -> Any:
        crossed = json.loads(json.dumps(request))
        return decode(json.loads(json.dumps(encode(evaluate(crossed, namespace)))))

    return Learner(ask, policy.library_implementations, policy.forbidden_operators, answer_cells)


def hidden_test_failure(hidden_code: str, assignment: str, grade_id: str, learner: Learner) -> str | None:
    """Run the hidden tests of the test cell ``grade_id`` as the grader does (seeded by the cell's name): the
    failure's message, or None when they pass."""
    failure = run_hidden_tests(hidden_code, f"{assignment}/{grade_id}", learner)
    return None if failure is None else "\n".join(failure.get("traceback", [])) or failure.get("evalue", "")
