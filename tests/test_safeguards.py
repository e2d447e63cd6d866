"""The safeguards hidden tests rely on cannot be fooled by the notebook they run in."""

from __future__ import annotations

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
