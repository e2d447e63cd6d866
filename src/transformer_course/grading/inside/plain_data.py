"""Plain data across the sandbox wall: tensors, numbers, strings and containers as JSON, nothing else.

A hidden test hands its inputs to the learner's kernel and gets the results back through this
encoding. The grader trusts nothing that comes out of the kernel, so :func:`decode` builds only
exact built-in types and exact ``torch.Tensor`` objects from validated JSON: no pickle, no classes
of the learner's, no ``__eq__`` or ``__torch_function__`` that an earlier cell could have written.
Whatever the kernel cannot express this way arrives as a :class:`LearnerObject`, which compares
equal to nothing but itself.

Encoding (JSON values; a dict is always a one-key tag)::

    None, bool, int, float, str        as themselves (floats keep nan and ±inf)
    list                               [...]
    tuple (torch.Size, named tuples)   {"tuple": [...]}
    dict (OrderedDict, state_dict)     {"dict": [[key, value], ...]}   keys of any plain type
    torch.Tensor                       {"tensor": [dtype, shape, base64 bytes]}
    torch.dtype, torch.Size            {"dtype": "float32"}, {"tuple": [...]}
    an exception the learner raised    {"raised": [type name, message]}
    anything else                      {"object": [type name, short repr]}
"""

from __future__ import annotations

import base64
import math
from dataclasses import dataclass

import torch

# The tensor types that cross the wall, by name. Anything else is refused, not guessed at.
DTYPES = {
    name: getattr(torch, name)
    for name in (
        "float16",
        "bfloat16",
        "float32",
        "float64",
        "complex64",
        "complex128",
        "uint8",
        "int8",
        "int16",
        "int32",
        "int64",
        "bool",
    )
}
MAX_DEPTH = 32
MAX_TEXT = 4096  # characters kept of a message or a repr


class PlainDataError(ValueError):
    """The data is not in the plain encoding (or exceeds its limits)."""


@dataclass(frozen=True)
class LearnerObject:
    """Something the kernel returned that is not plain data: known by its type name and repr only."""

    type_name: str
    text: str

    def __repr__(self) -> str:
        return f"<{self.type_name} from the learner's kernel: {self.text}>"


@dataclass(frozen=True)
class Raised:
    """An exception raised by the learner's code, by its type name and message."""

    type_name: str
    message: str


def encode(value, depth: int = 0):
    """``value`` as JSON-compatible plain data (see the module docstring)."""
    if depth > MAX_DEPTH:
        raise PlainDataError(f"data nested deeper than {MAX_DEPTH} levels")
    if value is None or type(value) in (bool, int, str):
        return value
    if isinstance(value, (bool, int, str)):  # a subclass (numpy.int64 is none): send the plain value
        return type(value).__mro__[-2](value)
    if isinstance(value, float):
        value = float(value)
        return value if math.isfinite(value) else {"float": repr(value)}
    if isinstance(value, list):
        return [encode(item, depth + 1) for item in value]
    if isinstance(value, tuple):  # torch.Size and named tuples too
        return {"tuple": [encode(item, depth + 1) for item in value]}
    if isinstance(value, dict):  # a state_dict (an OrderedDict) too
        return {"dict": [[encode(key, depth + 1), encode(item, depth + 1)] for key, item in value.items()]}
    if isinstance(value, torch.Tensor) and not value.is_sparse:
        return {"tensor": _encode_tensor(value)}
    if isinstance(value, torch.dtype):
        return {"dtype": str(value).removeprefix("torch.")}
    if isinstance(value, Raised):
        return {"raised": [value.type_name, value.message[:MAX_TEXT]]}
    return {"object": [_type_name(value), _short_repr(value)]}


def _encode_tensor(tensor: torch.Tensor) -> list:
    tensor = torch.Tensor.detach(tensor).as_subclass(torch.Tensor).to("cpu").contiguous()
    name = str(tensor.dtype).removeprefix("torch.")
    if name not in DTYPES:
        raise PlainDataError(f"tensors of dtype {tensor.dtype} cannot be sent")
    raw = tensor.reshape(-1).view(torch.uint8).numpy().tobytes() if tensor.numel() else b""
    return [name, list(tensor.shape), base64.b64encode(raw).decode("ascii")]


def _type_name(value) -> str:
    kind = type(value)
    return f"{getattr(kind, '__module__', '?')}.{getattr(kind, '__qualname__', '?')}"[:200]


def _short_repr(value) -> str:
    try:
        return repr(value)[:200]
    except Exception:  # a learner's __repr__ may raise anything
        return "<no repr>"


def decode(data, depth: int = 0):
    """The value that :func:`encode` made, built from exact built-in types and plain tensors only.

    Raises:
        PlainDataError: ``data`` is not in the plain encoding.
    """
    if depth > MAX_DEPTH:
        raise PlainDataError(f"data nested deeper than {MAX_DEPTH} levels")
    if data is None or type(data) in (bool, int, str):
        return data
    if type(data) is float:
        return data
    if type(data) is list:
        return [decode(item, depth + 1) for item in data]
    if type(data) is not dict or len(data) != 1:
        raise PlainDataError(f"expected a tagged value, got {type(data).__name__}")
    ((tag, content),) = data.items()
    if tag == "tuple" and type(content) is list:
        return tuple(decode(item, depth + 1) for item in content)
    if tag == "dict" and type(content) is list:
        pairs = [_pair(item, depth) for item in content]
        return dict(pairs)
    if tag == "float" and content in ("nan", "inf", "-inf"):
        return float(content)
    if tag == "tensor":
        return _decode_tensor(content)
    if tag == "dtype" and content in DTYPES:
        return DTYPES[content]
    if tag == "raised" and _two_strings(content):
        return Raised(content[0][:200], content[1][:MAX_TEXT])
    if tag == "object" and _two_strings(content):
        return LearnerObject(content[0][:200], content[1][:200])
    raise PlainDataError(f"unknown or malformed tag {tag!r}")


def _pair(item, depth: int) -> tuple:
    if type(item) is not list or len(item) != 2:
        raise PlainDataError("a dict entry must be a [key, value] pair")
    key = decode(item[0], depth + 1)
    try:
        hash(key)
    except TypeError:
        raise PlainDataError(f"unhashable dict key of type {type(key).__name__}") from None
    return key, decode(item[1], depth + 1)


def _two_strings(content) -> bool:
    return type(content) is list and len(content) == 2 and all(type(part) is str for part in content)


def _decode_tensor(content) -> torch.Tensor:
    if type(content) is not list or len(content) != 3:
        raise PlainDataError("a tensor must be [dtype, shape, data]")
    name, shape, text = content
    if name not in DTYPES or type(shape) is not list or not all(type(size) is int and size >= 0 for size in shape):
        raise PlainDataError(f"malformed tensor header {name!r}, {shape!r}")
    if type(text) is not str:
        raise PlainDataError("tensor data must be base64 text")
    raw = base64.b64decode(text, validate=True)
    dtype = DTYPES[name]
    count = math.prod(shape)
    itemsize = torch.empty((), dtype=dtype).element_size()
    if len(raw) != count * itemsize:
        raise PlainDataError(f"a {name} tensor of shape {tuple(shape)} needs {count * itemsize} bytes, got {len(raw)}")
    if count == 0:
        return torch.empty(shape, dtype=dtype)
    return torch.frombuffer(bytearray(raw), dtype=torch.uint8).view(dtype).reshape(shape).clone()
