"""What crosses the sandbox wall: plain data in, plain data out, and nothing the kernel could have
given behaviour to."""

from __future__ import annotations

import json
import math

import pytest
import torch

from transformer_course.grading.inside.plain_data import LearnerObject, PlainDataError, Raised, decode, encode


def round_trip(value):
    return decode(json.loads(json.dumps(encode(value))))


@pytest.mark.parametrize(
    "value",
    [None, True, 3, -(2**70), 2.5, "text", [1, [2, "x"]], (1, (2, 3)), {"a": 1, (1, 2): [3]}, {}, []],
    ids=lambda value: type(value).__name__,
)
def test_python_values_come_back_equal_and_of_the_same_type(value):
    result = round_trip(value)
    assert result == value and type(result) is type(value)


@pytest.mark.parametrize("value", [math.inf, -math.inf])
def test_infinities_come_back(value):
    assert round_trip(value) == value


def test_nan_comes_back_as_nan():
    assert math.isnan(round_trip(math.nan))


@pytest.mark.parametrize(
    "tensor",
    [
        torch.randn(2, 3),
        torch.arange(6).reshape(3, 2),
        torch.tensor(4.5),
        torch.zeros(0, 3),
        torch.randn(4, dtype=torch.bfloat16),
        torch.tensor([True, False]),
        torch.randn(3, 2, dtype=torch.float64).T,
    ],
    ids=["float32", "int64", "scalar", "empty", "bfloat16", "bool", "float64-transposed"],
)
def test_tensors_come_back_with_their_dtype_shape_and_values(tensor):
    result = round_trip(tensor)
    assert type(result) is torch.Tensor
    assert result.dtype == tensor.dtype and result.shape == tensor.shape
    assert torch.equal(result, tensor)


def test_a_tensor_subclass_comes_back_as_a_plain_tensor():
    class Agreeable(torch.Tensor):
        def __eq__(self, other):
            return True

    result = round_trip(torch.ones(2).as_subclass(Agreeable))
    assert type(result) is torch.Tensor


def test_a_state_dict_comes_back_as_a_dict_of_tensors():
    state = torch.nn.Linear(2, 3).state_dict()
    result = round_trip(state)
    assert type(result) is dict and list(result) == ["weight", "bias"]
    assert torch.equal(result["weight"], state["weight"])


def test_what_is_not_plain_data_comes_back_as_a_learner_object_by_type_name():
    result = round_trip(torch.nn.ReLU())
    assert isinstance(result, LearnerObject) and result.type_name == "torch.nn.modules.activation.ReLU"
    assert result != torch.nn.ReLU()


def test_a_raised_exception_comes_back_by_type_name_and_message():
    assert round_trip(Raised("ValueError", "d_model must be divisible")) == Raised(
        "ValueError", "d_model must be divisible"
    )


def test_dtypes_come_back_as_torch_dtypes():
    assert round_trip(torch.float16) is torch.float16


@pytest.mark.parametrize(
    "data, problem",
    [
        ({"not": "tagged", "two": "keys"}, "tagged"),
        ({"tensor": ["float32", [2], "AAAAAA=="]}, "needs 8 bytes"),
        ({"tensor": ["object", [1], ""]}, "malformed tensor header"),
        ({"tensor": ["float32", [-1], ""]}, "malformed tensor header"),
        ({"pickle": "gASV"}, "unknown or malformed tag"),
        ({"dict": [[[1, 2], 3]]}, "unhashable"),
        ({"float": "1e400"}, "unknown or malformed tag"),
    ],
)
def test_malformed_data_is_refused_with_a_reason(data, problem):
    with pytest.raises(PlainDataError, match=problem):
        decode(data)


def test_data_nested_too_deep_is_refused():
    data = [1]
    for _ in range(100):
        data = [data]
    with pytest.raises(PlainDataError, match="deeper"):
        decode(data)
