"""The safeguards hidden tests rely on cannot be fooled by the notebook they run in."""

from __future__ import annotations

import builtins
import importlib

import pytest
import torch
import torch.nn.functional as F

import transformer_course
from transformer_course import scaled_dot_product_attention as aliased_attention
from transformer_course.grading import safeguards


def _raises_blocked(function, *args):
    with pytest.raises(RuntimeError, match="switched off while your own code is graded"):
        function(*args)


def test_canary_passes_when_nothing_was_patched():
    safeguards.check_comparisons_are_trustworthy()


@pytest.mark.parametrize("target", ["torch.testing.assert_close", "torch.allclose", "torch.equal"])
def test_canary_trips_when_a_comparison_was_patched(monkeypatch, target):
    owner, name = target.rsplit(".", 1)
    monkeypatch.setattr(importlib.import_module(owner), name, lambda *args, **kwargs: True if name != "assert_close" else None)
    with pytest.raises(AssertionError, match="replaced"):
        safeguards.check_comparisons_are_trustworthy()


@pytest.mark.parametrize("method", ["equal", "allclose", "all", "any", "__bool__"])
def test_canary_trips_when_a_tensor_method_was_patched(method):
    assert method not in vars(torch.Tensor)  # inherited from the C base class: deleting restores it
    setattr(torch.Tensor, method, lambda *args, **kwargs: True)
    try:
        with pytest.raises(AssertionError, match="replaced"):
            safeguards.check_comparisons_are_trustworthy()
    finally:
        delattr(torch.Tensor, method)


def _canary_message_with_builtin(monkeypatch, name, replacement):
    """The canary's complaint while builtins.<name> is replaced, or None. The built-in is given back
    before anything else runs: pytest itself relies on it."""
    monkeypatch.setattr(builtins, name, replacement)
    try:
        safeguards.check_comparisons_are_trustworthy()
    except AssertionError as error:
        return str(error)
    finally:
        monkeypatch.undo()
    return None


@pytest.mark.parametrize("name", ["abs", "sum", "max", "min", "len", "all", "any", "isinstance", "round"])
def test_canary_trips_when_a_builtin_was_patched_to_lie(monkeypatch, name):
    message = _canary_message_with_builtin(monkeypatch, name, lambda *args, **kwargs: 0)
    assert message is not None and "built-in" in message


def test_canary_trips_when_a_builtin_was_replaced_by_a_faithful_python_copy(monkeypatch):
    original = builtins.abs
    message = _canary_message_with_builtin(monkeypatch, "abs", lambda *args, **kwargs: original(*args, **kwargs))
    assert message is not None and "'abs' was replaced" in message


def _run_isolated_in(namespace: dict, test_source: str) -> None:
    """Define and run a hidden test in ``namespace``, as a notebook cell would."""
    namespace.setdefault("safeguards", safeguards)
    exec(f"@safeguards.run_isolated(globals())\ndef hidden_tests(notebook):\n{test_source}", namespace)


def test_isolated_checks_ignore_a_shadowing_cheat():
    notebook = {"abs": lambda *args, **kwargs: 0, "answer": 5.0}
    with pytest.raises(AssertionError):
        _run_isolated_in(notebook, "    assert abs(answer - 1.0) < 1e-3\n")


def test_isolated_checks_use_python_builtins_even_when_the_notebook_replaced_its_own():
    notebook = {"__builtins__": dict(vars(builtins), abs=lambda *args, **kwargs: 0), "answer": 5.0}
    with pytest.raises(AssertionError):
        _run_isolated_in(notebook, "    assert abs(answer - 1.0) < 1e-3\n")


def test_isolated_checks_survive_innocent_shadowing():
    notebook = {"max": 3, "sum": 0, "len": "a learner's variable", "weights": [0.2, 0.5, 0.3]}
    _run_isolated_in(notebook, "    assert max(weights) == 0.5 and len(weights) == 3\n    assert abs(sum(weights) - 1.0) < 1e-9\n")


def test_isolated_checks_leave_the_notebook_names_as_they_were():
    notebook = {"max": 3, "x": "the learner's x"}
    _run_isolated_in(notebook, "    x = 'set by the test'\n    expected = max(1, 2)\n")
    assert notebook["max"] == 3 and notebook["x"] == "the learner's x"
    assert "expected" not in notebook and notebook["hidden_tests"] is None


def test_learner_functions_called_by_isolated_checks_keep_their_own_names():
    notebook = {"max": lambda values: "the learner's max"}
    exec("def largest(values):\n    return max(values)\n", notebook)
    _run_isolated_in(notebook, "    assert largest([1, 2]) == \"the learner's max\" and max([1, 2]) == 2\n")


def test_isolated_checks_receive_the_notebook_namespace_itself():
    notebook = {"answer": 1}
    _run_isolated_in(notebook, "    notebook['seen'] = notebook['answer']\n")
    assert notebook["seen"] == 1


def test_isolated_checks_restore_the_random_state():
    torch.manual_seed(0)
    expected = torch.rand(3)
    torch.manual_seed(0)
    _run_isolated_in({"torch": torch}, "    torch.manual_seed(123)\n    torch.rand(100)\n")
    torch.testing.assert_close(torch.rand(3), expected)


def test_reloading_undoes_patches_of_the_safeguards_module(monkeypatch):
    monkeypatch.setattr(safeguards, "assert_close", lambda *args, **kwargs: None)
    fresh = importlib.reload(safeguards)
    with pytest.raises(AssertionError):
        fresh.assert_close(torch.zeros(2), torch.ones(2))


def test_assert_close_reports_shape_and_value_differences():
    with pytest.raises(AssertionError, match=r"shape \(2,\), expected \(3,\)"):
        safeguards.assert_close(torch.zeros(2), torch.zeros(3), name="x")
    with pytest.raises(AssertionError, match="differs"):
        safeguards.assert_close(torch.zeros(2), torch.tensor([0.0, 1.0]))
    safeguards.assert_close(torch.ones(2), torch.ones(2) + 1e-7)


def test_pristine_module_ignores_monkeypatching(monkeypatch):
    monkeypatch.setattr(transformer_course.attention, "scaled_dot_product_attention", lambda *args, **kwargs: "patched")
    reference = safeguards.pristine("transformer_course.attention")
    query = torch.randn(2, 3, 4)
    output, weights = reference.scaled_dot_product_attention(query, query, query)
    assert output.shape == (2, 3, 4) and weights.shape == (2, 3, 3)


@pytest.mark.parametrize(
    "module_name",
    [
        "transformer_course.attention",
        "transformer_course.multi_head_attention",  # defines a dataclass (KeyValueCache)
        "transformer_course.positional_encoding",
        "transformer_course.masks",
        "transformer_course.decoder",  # defines a dataclass (DecoderLayerCache)
    ],
)
def test_pristine_copies_every_reference_module(module_name):
    copy = safeguards.pristine(module_name)
    assert copy is not importlib.import_module(module_name) and copy.__name__.startswith("_pristine_")


def test_forbidden_python_function_raises_through_every_alias():
    query = torch.randn(1, 2, 4)
    with safeguards.forbidden("transformer_course.scaled_dot_product_attention"):
        _raises_blocked(aliased_attention, query, query, query)
        _raises_blocked(transformer_course.attention.scaled_dot_product_attention, query, query, query)
    assert aliased_attention(query, query, query)[0].shape == (1, 2, 4)  # restored afterwards


def test_forbidden_builtin_is_replaced_in_its_module_and_the_learner_namespace():
    namespace = {"my_softmax": torch.softmax}
    scores = torch.randn(2, 3)
    with safeguards.forbidden("torch.softmax", learner_namespace=namespace):
        _raises_blocked(torch.softmax, scores, -1)
        _raises_blocked(namespace["my_softmax"], scores, -1)
    assert namespace["my_softmax"] is torch.softmax
    torch.testing.assert_close(torch.softmax(scores, -1).sum(-1), torch.ones(2))


def test_forbidden_tensor_method_is_restored_to_the_inherited_one():
    scores = torch.randn(2, 3)
    with safeguards.forbidden("torch.Tensor.softmax"):
        _raises_blocked(scores.softmax, -1)
    assert "softmax" not in vars(torch.Tensor)
    torch.testing.assert_close(scores.softmax(-1), F.softmax(scores, -1))


def test_forbidden_class_blocks_its_methods():
    module = transformer_course.MultiHeadAttention(8, 2)
    x = torch.randn(1, 3, 8)
    with safeguards.forbidden("transformer_course.MultiHeadAttention"):
        _raises_blocked(module.forward, x, x, x)
        _raises_blocked(module.split_heads, x)
    assert module(x, x, x).shape == (1, 3, 8)


def test_forbidden_restores_everything_when_the_learner_code_raises():
    with pytest.raises(ZeroDivisionError):
        with safeguards.forbidden("torch.softmax", "transformer_course.scaled_dot_product_attention"):
            1 / 0
    query = torch.randn(1, 2, 4)
    assert aliased_attention(query, query, query)[0].shape == (1, 2, 4)
    assert torch.softmax(query, -1).shape == (1, 2, 4)
