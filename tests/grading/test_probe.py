"""The kernel's side of a hidden test refuses the assignment's forbidden operators by what runs, not by name:
``torch._softmax``, a private helper or a default argument reach ``aten::_softmax`` as ``torch.softmax`` does."""

from __future__ import annotations

import torch

from transformer_course.grading.hidden import Learner, LearnerError
from transformer_course.grading.inside.plain_data import Raised, encode
from transformer_course.grading.inside.probe import FORBIDDEN_OPERATOR, evaluate

SOFTMAX = ["aten::_softmax", "aten::_safe_softmax", "aten::_scaled_dot_product_*"]


def private_softmax(scores):
    return torch._softmax(scores, -1, False)


def default_argument_softmax(scores, _impl=torch.softmax):
    return _impl(scores, dim=-1)


def math_attention(scores):
    return torch._scaled_dot_product_attention_math(scores, scores, scores)[0]


def fused_attention(scores):
    return torch.nn.functional.scaled_dot_product_attention(scores, scores, scores)


def caught_softmax(scores):
    try:
        return torch._softmax(scores, -1, False)
    except RuntimeError:
        return scores.exp() / scores.exp().sum(dim=-1, keepdim=True)


def own_softmax(scores):
    shifted = (scores - scores.amax(dim=-1, keepdim=True)).exp()
    return shifted / shifted.sum(dim=-1, keepdim=True)


def ask(name: str, forbidden: list[str]):
    """The kernel's answer to a request that calls ``name`` on random scores while ``forbidden`` is refused."""
    return evaluate(
        {
            "kind": "call",
            "name": name,
            "args": encode([torch.randn(2, 3, 4)]),
            "kwargs": encode({}),
            "forbidden_operators": forbidden,
        },
        globals(),
    )


def test_each_route_to_a_forbidden_operator_fails_the_call_naming_it():
    for name, operator in (
        ("private_softmax", "aten::_softmax"),
        ("default_argument_softmax", "aten::_softmax"),
        ("math_attention", "aten::_safe_softmax"),
        ("fused_attention", "aten::_safe_softmax"),  # a dispatch mode sends it down the math path
    ):
        answer = ask(name, SOFTMAX)
        assert isinstance(answer, Raised) and answer.type_name == FORBIDDEN_OPERATOR, f"{name}: {answer!r}"
        assert operator in answer.message, f"{name}: {answer.message}"


def test_catching_the_refusal_does_not_hide_it():
    answer = ask("caught_softmax", SOFTMAX)
    assert isinstance(answer, Raised) and answer.type_name == FORBIDDEN_OPERATOR and "aten::_softmax" in answer.message


def test_code_built_from_basics_runs_under_the_watch():
    answer = ask("own_softmax", SOFTMAX)
    assert isinstance(answer, torch.Tensor) and torch.allclose(answer.sum(dim=-1), torch.ones(2, 3))


def test_an_operator_not_forbidden_in_this_assignment_runs():
    answer = ask("private_softmax", ["aten::native_layer_norm"])
    assert isinstance(answer, torch.Tensor)


def test_the_grader_raises_the_refusal_and_keeps_it_for_the_review():
    learner = Learner(lambda request: evaluate(request, globals()), switched_off=[], forbidden_operators=SOFTMAX)
    scores = torch.randn(2, 5)
    try:
        learner.call("private_softmax", scores)
    except LearnerError as error:
        assert "aten::_softmax" in str(error)
    else:
        raise AssertionError("a call that ran aten::_softmax was answered")
    assert len(learner.refused) == 1 and "aten::_softmax" in learner.refused[0]
    assert torch.allclose(learner.call("own_softmax", scores), scores.softmax(dim=-1))
    assert len(learner.refused) == 1


def double(x):  # the learner's function, which the reference below replaces
    return x + x + 1


def test_a_rerun_cell_sees_the_graders_inputs_seed_and_references_and_changes_nothing():
    request = {
        "kind": "cell",
        "source": "y = double(x)\nsample = torch.rand(1).item()\n",
        "names": ["y", "sample"],
        "seed": 5,
        "reference": ["def double(x):\n    return 2 * x\n"],
        "args": encode([]),
        "kwargs": encode({"x": 4.0}),
    }
    namespace = {"torch": torch, "double": double, "x": 1.0}
    y, sample = evaluate(request, namespace)
    torch.manual_seed(5)
    assert (y, sample) == (8.0, torch.rand(1).item())
    assert namespace == {"torch": torch, "double": double, "x": 1.0}


def test_a_rerun_cell_that_does_not_set_a_name_answers_a_name_error():
    request = {
        "kind": "cell",
        "source": "z = 1\n",
        "names": ["y"],
        "seed": 0,
        "reference": [],
        "args": encode([]),
        "kwargs": encode({}),
    }
    answer = evaluate(request, {})
    assert isinstance(answer, Raised) and answer.type_name == "NameError" and "did not set y" in answer.message
