"""Safeguards for hidden tests: trust no helper the learner could have changed, and grade the
learner's own code rather than the reference package.

A notebook runs the learner's code and the tests in one Python process, so a learner can (by
mistake or not) replace anything: ``torch.testing.assert_close = lambda *a, **k: None`` makes every
comparison pass, ``transformer_course.scaled_dot_product_attention = my_attention`` makes the
"expected" values equal to the learner's, and ``def attention(q, k, v): return
tc.scaled_dot_product_attention(q, k, v)`` hands in the reference as one's own. Hidden tests
defend against all three:

1. :func:`check_comparisons_are_trustworthy` — a canary: before any comparison is trusted, it must
   report a difference between clearly different tensors.
2. :func:`pristine` — expected values come from a fresh copy of a reference module, loaded from
   its file, untouched by whatever the notebook did to the imported one.
3. :func:`forbidden` — while the learner's function runs, the reference implementation of that
   same function (in the package and in PyTorch) raises instead of answering.

A hidden test cell therefore starts with::

    import importlib
    from transformer_course.grading import safeguards
    safeguards = importlib.reload(safeguards)  # undo any monkeypatching of this module
    safeguards.check_comparisons_are_trustworthy()
"""

from __future__ import annotations

import importlib
import importlib.util
import math
import sys
import types
from contextlib import contextmanager
from typing import Any, Callable, Iterator

import torch

def assert_close(actual: Any, expected: Any, *, atol: float = 1e-5, rtol: float = 1e-5, name: str = "result") -> None:
    """Assert that ``actual`` matches ``expected`` in shape and values, with a readable message.

    The check uses plain Python floats on top of ``torch.testing.assert_close``, so patching one
    of them is not enough to make a wrong answer pass.
    """
    if not isinstance(actual, torch.Tensor):
        raise AssertionError(f"{name} should be a torch.Tensor, got {type(actual).__name__}")
    expected = torch.as_tensor(expected)
    if tuple(actual.shape) != tuple(expected.shape):
        raise AssertionError(f"{name} has shape {tuple(actual.shape)}, expected {tuple(expected.shape)}")
    actual64 = actual.detach().to("cpu", torch.float64)
    expected64 = expected.detach().to("cpu", torch.float64)
    if actual64.numel() == 0:
        return
    if bool(torch.isnan(actual64).any()) and not bool(torch.isnan(expected64).any()):
        raise AssertionError(f"{name} contains NaN")
    difference = float((actual64 - expected64).abs().nan_to_num(nan=0.0).max())
    allowed = atol + rtol * float(expected64.abs().nan_to_num(nan=0.0).max())
    if not difference <= allowed:
        raise AssertionError(f"{name} differs from the expected values by up to {difference:.3g} (allowed {allowed:.3g})")
    torch.testing.assert_close(actual64, expected64, atol=atol, rtol=rtol, equal_nan=True)


def check_comparisons_are_trustworthy() -> None:
    """The canary: every comparison the hidden tests rely on must detect a clear difference.

    Raises:
        AssertionError: if ``assert_close``, ``torch.testing.assert_close``, ``torch.allclose``,
            ``torch.equal`` or ``math.isclose`` call clearly different values equal, which can
            only happen if they were replaced.
    """
    zeros, ones = torch.zeros(3), torch.ones(3)
    for compare in (assert_close, torch.testing.assert_close):
        try:
            compare(zeros, ones)
        except AssertionError:
            continue
        raise AssertionError(f"the comparison {getattr(compare, '__qualname__', compare)!r} was replaced: it accepted 0 == 1")
    if torch.allclose(zeros, ones) or torch.equal(zeros, ones) or math.isclose(0.0, 1.0):
        raise AssertionError("a comparison function of torch or math was replaced: it accepted 0 == 1")
    if not (torch.allclose(ones, ones) and torch.equal(ones, ones)):
        raise AssertionError("a comparison function of torch was replaced: it rejected 1 == 1")


def pristine(module_name: str) -> types.ModuleType:
    """A fresh copy of ``module_name``, executed from its source file under a private name.

    Monkeypatching the imported module (``transformer_course.attention.x = ...``) does not reach
    this copy, so it computes the true expected values.
    """
    module = importlib.import_module(module_name)
    spec = importlib.util.spec_from_file_location(
        f"_pristine_{module_name.replace('.', '_')}", module.__file__, submodule_search_locations=None
    )
    copy = importlib.util.module_from_spec(spec)
    copy.__package__ = module.__package__  # so that relative imports resolve to the real package
    # Registered under its private name while it runs, as an import would: a module defining a
    # dataclass needs to find itself in sys.modules. Each call replaces the previous copy.
    sys.modules[spec.name] = copy
    spec.loader.exec_module(copy)
    return copy


def _blocked(*args, **kwargs):
    # Swapped in as the code of forbidden Python functions, whose globals are not ours: so it
    # may use nothing but built-ins and literals.
    raise RuntimeError(
        "This reference implementation is switched off while your own code is graded: "
        "implement it yourself from PyTorch basics."
    )


def _resolve(path: str) -> tuple[Any, str, Any]:
    """``"torch.nn.functional.softmax"`` → (the object holding it, attribute name, current value)."""
    parts = path.split(".")
    for split in range(len(parts) - 1, 0, -1):
        try:
            owner: Any = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for attribute in parts[split:-1]:
            owner = getattr(owner, attribute)
        return owner, parts[-1], getattr(owner, parts[-1])
    raise ValueError(f"cannot resolve {path!r}")


@contextmanager
def forbidden(*paths: str, learner_namespace: dict | None = None) -> Iterator[None]:
    """Switch reference implementations off for the duration of the ``with`` block.

    Args:
        paths: dotted names, e.g. ``"transformer_course.scaled_dot_product_attention"``,
            ``"torch.nn.functional.scaled_dot_product_attention"``, ``"torch.Tensor.softmax"``,
            or a class such as ``"transformer_course.MultiHeadAttention"`` (all its methods).
        learner_namespace: the notebook's globals (``globals()``); any name there bound to a
            forbidden object is switched off too (``from x import f as g`` makes such a name).

    A Python function is switched off everywhere at once by swapping its code object, so even
    references taken before the block (aliases, closures) raise. A built-in function is replaced
    where it is reachable: its module attribute and the learner's namespace.
    """
    restore: list[Callable[[], None]] = []
    try:
        for path in paths:
            owner, attribute, value = _resolve(path)
            functions = [value]
            if isinstance(value, type):
                functions = [member for member in vars(value).values() if isinstance(member, types.FunctionType)]
            swappable = [function for function in functions if _can_swap_code(function)]
            for function in swappable:
                restore.append(_swap_code(function))
            if not swappable:
                restore.append(_replace_attribute(owner, attribute))
                if learner_namespace is not None:
                    for name, bound in list(learner_namespace.items()):
                        if bound is value:
                            restore.append(_replace_attribute(learner_namespace, name))
        yield
    finally:
        for undo in reversed(restore):
            undo()


def _can_swap_code(function: Any) -> bool:
    return isinstance(function, types.FunctionType) and not function.__code__.co_freevars


def _swap_code(function: types.FunctionType) -> Callable[[], None]:
    """Make ``function`` raise wherever it is referenced; return the undo."""
    code = function.__code__
    function.__code__ = _blocked.__code__

    def undo() -> None:
        function.__code__ = code

    return undo


def _replace_attribute(owner: Any, name: str) -> Callable[[], None]:
    """Replace ``owner.name`` (or ``owner[name]`` for a dict) by a blocker; return the undo."""
    if isinstance(owner, dict):
        value = owner[name]
        owner[name] = _blocked
        return lambda: owner.__setitem__(name, value)
    inherited = isinstance(owner, type) and name not in vars(owner)  # e.g. torch.Tensor.softmax
    value = getattr(owner, name)
    setattr(owner, name, _blocked)

    def undo() -> None:
        if inherited:
            delattr(owner, name)
        else:
            setattr(owner, name, value)

    return undo
