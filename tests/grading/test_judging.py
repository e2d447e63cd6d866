"""Judging a test cell in one place: its points depend on the grader's verdict alone (visible tests in the kernel,
hidden tests here), a failed part gets a correct answer in its place, and the cell keeps its visible tests only.
A fake session stands in for the kernel; the hidden tests run here, as they do when grading."""

from __future__ import annotations

import pytest
from nbformat.v4 import new_code_cell, new_output
from suite_layers import NBGRADER_MISSING

pytest.importorskip("nbgrader", reason=NBGRADER_MISSING)

from transformer_course.grading.hidden import Learner  # noqa: E402
from transformer_course.grading.inside.plain_data import Raised, decode  # noqa: E402
from transformer_course.grading.judging import REFERENCE_NOTE, Judge, run_hidden_tests, scored_outputs  # noqa: E402
from transformer_course.grading.limits import GradingLimits  # noqa: E402
from transformer_course.grading.submission_run import PackageArchive, RunOutcome, SubmissionRun  # noqa: E402

pytestmark = pytest.mark.needs_nbgrader

HIDDEN = """\
from transformer_course.grading.hidden import hidden_test


@hidden_test
def doubles_a_number_it_never_saw(learner):
    assert learner.call("double", 21) == 42, "double(21) should be 42"
"""


class FakeSession:
    """Runs a cell's visible tests as passing (or not), and keeps what is run quietly."""

    def __init__(self, visible_passes: bool = True):
        self.visible_passes, self.quietly, self.lost_in = visible_passes, [], None

    def run_cell(self, cell, code, label) -> bool:
        cell.outputs = (
            [] if self.visible_passes else [new_output("error", ename="AssertionError", evalue="", traceback=[])]
        )
        return self.visible_passes

    def note_errors(self, outputs, label) -> None:
        pass

    def run_quietly(self, code, label) -> None:
        self.quietly.append(code)


def _learner(double) -> Learner:
    def ask(request):
        try:
            return double(*decode(request["args"])) if request["name"] == "double" else None
        except Exception as error:  # what the kernel would send back
            return Raised(type(error).__name__, str(error))

    return Learner(ask, [])


def _judged(double, visible_passes: bool = True) -> tuple[bool, object, FakeSession, RunOutcome]:
    run = SubmissionRun(
        assignment="01-test",
        notebook_name="notebook.ipynb",
        notebook={},
        tests={"test-double": ("assert double(1) == 2\n", HIDDEN)},
        switched_off=(),
        limits=GradingLimits(),
        package=PackageArchive(b"", ""),
        references={"test-double": "def double(x):\n    return 2 * x"},
    )
    session, outcome = FakeSession(visible_passes), RunOutcome({}, {}, {"hidden tests": 0.0})
    cell = new_code_cell(
        "assert double(1) == 2\n### BEGIN HIDDEN TESTS\n...", metadata={"nbgrader": {"grade_id": "test-double"}}
    )
    judged = Judge(run, session, _learner(double), outcome)(cell, "cell test-double")
    return judged, cell, session, outcome


def test_a_cell_whose_hidden_tests_pass_is_passed_and_shows_its_visible_tests_only():
    judged, cell, session, outcome = _judged(lambda x: 2 * x)
    assert (judged, outcome.verdicts, cell.source, session.quietly) == (
        True,
        {"test-double": True},
        "assert double(1) == 2\n",
        [],
    )


def test_a_cell_whose_hidden_tests_fail_fails_by_the_tests_name_and_gets_a_correct_answer_in_place():
    _, cell, session, outcome = _judged(lambda x: x + 1)
    assert outcome.verdicts == {"test-double": False}
    assert (
        cell.outputs[0].output_type == "error"
        and "hidden test doubles_a_number_it_never_saw failed" in cell.outputs[0].traceback
    )
    assert session.quietly == ["def double(x):\n    return 2 * x"] and cell.outputs[-1].text == REFERENCE_NOTE


def test_a_cell_whose_visible_tests_fail_is_not_asked_its_hidden_ones():
    asked = []
    _, _, _, outcome = _judged(lambda x: asked.append(x) or 2 * x, visible_passes=False)
    assert (outcome.verdicts, asked) == ({"test-double": False}, [])


def test_a_cell_that_is_no_test_cell_is_left_to_the_session():
    run = SubmissionRun("01-test", "notebook.ipynb", {}, {}, (), GradingLimits(), PackageArchive(b"", ""))
    judge = Judge(run, FakeSession(), _learner(lambda x: x), RunOutcome({}, {}, {}))
    assert judge(new_code_cell("x = 1"), "cell 1") is False


def test_the_hidden_tests_tell_a_failure_by_its_message_never_by_a_line_of_their_code():
    failure = run_hidden_tests(HIDDEN, "01-test/test-double", _learner(lambda x: 0))
    assert failure.evalue == "double(21) should be 42" and "learner.call" not in "".join(failure.traceback)


def test_a_published_result_earns_no_partial_credit_in_a_failing_test_cell():
    outputs = [
        new_output("execute_result", data={"text/plain": "15"}, execution_count=1),
        new_output("error", ename="AssertionError", evalue="wrong", traceback=[]),
    ]
    rewritten = scored_outputs(outputs, passed=False)
    assert [output.output_type for output in rewritten] == ["display_data", "error"], rewritten


def test_a_failing_test_cell_starts_with_an_error_even_when_the_kernel_printed_none():
    rewritten = scored_outputs([new_output("stream", name="stdout", text="all good\n")], passed=False)
    assert rewritten[0].output_type == "error", rewritten


def test_a_passing_test_cell_keeps_its_warnings_as_text_not_as_a_failure():
    rewritten = scored_outputs([new_output("stream", name="stderr", text="UserWarning: x\n")], passed=True)
    assert rewritten[0].output_type == "stream" and rewritten[0].name == "stdout", rewritten
