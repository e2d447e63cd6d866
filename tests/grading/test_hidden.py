"""The grader's side of a hidden test: how it asks, how it reads answers, how it reports a failure."""

from __future__ import annotations

import json

import pytest
import torch

from transformer_course.grading.hidden import (
    Learner,
    LearnerError,
    NoAnswer,
    answer_in_outputs,
    assert_close,
    hidden_test,
    judging,
)
from transformer_course.grading.inside.plain_data import Raised, encode
from transformer_course.grading.inside.probe import MIME


def _answering(result) -> Learner:
    return Learner(lambda request: result, switched_off=[])


def test_a_builtin_exception_of_the_learner_is_raised_as_that_type():
    with pytest.raises(ValueError, match="d_model=10"):
        _answering(Raised("ValueError", "d_model=10 is not divisible by 3")).call("split_heads")


def test_an_exception_type_of_the_learners_own_is_a_learner_error():
    with pytest.raises(LearnerError, match="MyError: nope"):
        _answering(Raised("MyError", "nope")).call("f")


def test_run_refuses_a_function_that_uses_the_tests_local_variables():
    scale = 2.0

    def uses_a_local(x):
        return x * scale

    with pytest.raises(TypeError, match="pass them as arguments"):
        _answering(None).run(uses_a_local, 1.0)


def test_run_sends_the_functions_source_and_its_arguments():
    requests = []
    learner = Learner(lambda request: requests.append(request) or 0, switched_off=["torch.softmax"])

    def in_the_kernel(x):
        return x + 1

    learner.run(in_the_kernel, torch.ones(2))
    (request,) = requests
    assert (
        request["kind"] == "run"
        and request["name"] == "in_the_kernel"
        and request["source"].startswith("def in_the_kernel(x):")
    )
    assert request["switched_off"] == ["torch.softmax"]
    json.dumps(request)  # plain JSON


def _display(result) -> dict:
    return {"output_type": "display_data", "data": {MIME: json.dumps({"result": encode(result)})}}


def test_the_last_answer_in_the_outputs_counts():
    outputs = [_display(1), {"output_type": "stream", "name": "stdout", "text": "hi"}, _display(2)]
    assert answer_in_outputs(outputs) == 2


@pytest.mark.parametrize(
    "outputs",
    [
        [],
        [{"output_type": "stream", "name": "stdout", "text": "no answer"}],
        [{"output_type": "display_data", "data": {MIME: "{not json"}}],
    ],
    ids=["nothing", "only-printing", "malformed"],
)
def test_no_answer_is_a_failure_that_says_so(outputs):
    with pytest.raises(NoAnswer):
        answer_in_outputs(outputs)


def test_assert_close_names_the_shapes_when_they_differ():
    with pytest.raises(AssertionError, match=r"output has shape \(2, 3\), expected \(3, 2\)"):
        assert_close(torch.zeros(2, 3), torch.zeros(3, 2), name="output")


def test_assert_close_names_the_first_differing_position_and_both_values():
    actual = torch.zeros(2, 3)
    actual[1, 2] = 0.5
    with pytest.raises(AssertionError, match=r"first at index \(1, 2\): got 0\.5, expected 0"):
        assert_close(actual, torch.zeros(2, 3), name="weights")


def test_assert_close_refuses_what_is_not_a_tensor():
    with pytest.raises(AssertionError, match="should be a torch.Tensor, got list"):
        assert_close([0.0], torch.zeros(1))


def test_assert_close_accepts_nan_where_nan_is_expected_and_only_there():
    assert_close(torch.tensor([float("nan"), 1.0]), torch.tensor([float("nan"), 1.0]))
    with pytest.raises(AssertionError):
        assert_close(torch.tensor([float("nan"), 1.0]), torch.tensor([0.0, 1.0]))


def test_a_hidden_test_runs_at_once_against_the_learner_it_is_judged_with():
    seen = []
    with judging(_answering(41)):

        @hidden_test
        def adds_one(learner):
            seen.append(learner.value("answer") + 1)

    assert seen == [42]


def answer_of_the_notebook():  # a "notebook" global for the next test
    return 7


def test_outside_grading_a_hidden_test_asks_the_module_that_defines_it():
    results = []

    @hidden_test
    def reads_this_module(learner):
        results.append(learner.call("answer_of_the_notebook"))

    assert results == [7]


def test_assert_close_accepts_equal_infinities_where_they_are_expected():
    expected = torch.tensor([[1.0, float("-inf"), 3.0], [float("inf"), 0.0, float("-inf")]])
    assert_close(expected.clone(), expected, name="masked scores")


@pytest.mark.parametrize(
    ("actual", "expected"),
    [
        ([1.0, 5.0], [1.0, float("-inf")]),  # a finite value where -inf is expected
        ([1.0, float("-inf")], [1.0, 5.0]),  # -inf where a finite value is expected
        ([1.0, float("inf")], [1.0, float("-inf")]),  # the wrong sign of infinity
        ([1.0, float("nan")], [1.0, float("-inf")]),  # nan where -inf is expected
    ],
)
def test_assert_close_refuses_infinities_that_do_not_match_and_says_so(actual, expected):
    where = r"infinities and NaN must be where they are expected.*first at index \(1,\)"
    with pytest.raises(AssertionError, match=where):
        assert_close(torch.tensor(actual), torch.tensor(expected), name="masked scores")


def reference_double(x):  # a reference function a rerun puts in place of the learner's
    return 2 * x


def test_rerun_sends_the_learners_cell_the_seed_the_inputs_and_the_references():
    requests = []
    learner = Learner(lambda request: requests.append(request) or (1.0,), [], cells={"experiment": "y = double(x)\n"})
    learner.rerun("experiment", ("y",), seed=7, inputs={"x": 3.0}, reference=(reference_double,))
    (request,) = requests
    assert (request["kind"], request["source"], request["names"], request["seed"]) == (
        "cell",
        "y = double(x)\n",
        ["y"],
        7,
    )
    assert request["reference"] == [
        "def reference_double(x):  # a reference function a rerun puts in place of the learner's\n    return 2 * x\n"
    ]
    json.dumps(request)  # plain JSON


def test_rerun_of_a_cell_the_notebook_lacks_fails_saying_which():
    with pytest.raises(AssertionError, match="no answer cell experiment"):
        Learner(lambda request: None, [], cells={}).rerun("experiment", ("y",), seed=0)
