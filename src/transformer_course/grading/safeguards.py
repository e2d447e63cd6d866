"""Safeguards for hidden tests: trust no helper the learner could have changed, and grade the
learner's own code rather than the reference package.

A notebook runs the learner's code and the tests in one Python process, so a learner can (by
mistake or not) replace anything: ``torch.testing.assert_close = lambda *a, **k: None`` makes every
comparison pass, ``abs = lambda *a: 0`` makes ``assert abs(answer - expected) < 1e-3`` pass,
an innocent ``max = weights.max()`` makes a check that calls ``max`` crash,
``transformer_course.scaled_dot_product_attention = my_attention`` makes the "expected" values
equal to the learner's, and ``def attention(q, k, v): return tc.scaled_dot_product_attention(q, k,
v)`` hands in the reference as one's own. Hidden tests defend against all of these:

1. :func:`check_comparisons_are_trustworthy` — a canary: before any comparison is trusted, it must
   report a difference between clearly different values, and Python's built-ins (``abs``,
   ``sum``, ``max``, ``isinstance``…) must be the interpreter's own and behave.
2. :func:`run_isolated` — the checks run in a function whose globals are a copy of the notebook's
   without the names that shadow a built-in, so ``abs``, ``sum``, ``max``, ``ValueError``… in a
   check are Python's, whatever the notebook bound to those names. The learner's functions that
   the checks call still run in the notebook's namespace, exactly as the learner wrote and
   checked them. What the checks assign stays inside the function, and PyTorch's random state is
   restored afterwards, so the cells after a hidden test run as they did without it.
3. :func:`pristine` — expected values come from a fresh copy of a reference module, loaded from
   its file, untouched by whatever the notebook did to the imported one. They never come from
   the notebook's own variables, which the learner can edit.
4. :func:`forbidden` — while the learner's function runs, the reference implementation of that
   same function (in the package and in PyTorch) raises instead of answering.

A hidden test (between nbgrader's ``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN TESTS``, after
the visible tests of the cell) therefore reads::

    import importlib
    from transformer_course.grading import safeguards
    safeguards = importlib.reload(safeguards)  # undo any change made to the grading helpers
    safeguards.check_comparisons_are_trustworthy()


    @safeguards.run_isolated(globals())
    def hidden_tests(notebook):  # notebook: the notebook's own globals(), for forbidden()
        expected = safeguards.pristine("transformer_course.attention").scaled_dot_product_attention(q, k, v)
        with safeguards.forbidden("transformer_course.scaled_dot_product_attention", learner_namespace=notebook):
            actual = attention(q, k, v)
        safeguards.assert_close(actual[0], expected[0], name="output")

These defences turn cheating from a one-liner into deliberate work; code that runs in the same
process as the tests can, with enough effort, still fool them (an answer of a class whose ``==``
always agrees, for instance).
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


# The interpreter's own built-ins: an imported module's ``__builtins__`` is the interpreter's dict.
# A notebook can rebind its own ``__builtins__``, or ``sys.modules["builtins"]``, but not which dict
# this is; changing the dict itself (``builtins.abs = ...``) is what the canary detects.
_PYTHON_BUILTINS: dict = __builtins__ if isinstance(__builtins__, dict) else vars(__builtins__)

# The built-ins whose identity the canary checks: those hidden tests call.
_CHECKED_BUILTINS = (
    "abs", "all", "any", "bool", "dict", "enumerate", "float", "getattr", "int", "isinstance", "len", "list",
    "max", "min", "range", "round", "set", "sorted", "str", "sum", "tuple", "type", "zip",
)
_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: set on classes defined in Python, not on built-in types


def check_comparisons_are_trustworthy() -> None:
    """The canary: every comparison the hidden tests rely on must detect a clear difference.

    Raises:
        AssertionError: if ``assert_close``, ``torch.testing.assert_close``, ``torch.allclose``,
            ``torch.equal``, ``Tensor.allclose``, ``Tensor.equal``, ``Tensor.all``, ``Tensor.any``,
            the truth value of a tensor or ``math.isclose`` call clearly different values equal,
            or if a built-in such as ``abs``, ``sum`` or ``max`` was replaced in the ``builtins``
            module (which every module, these safeguards included, would then see).
    """
    _check_builtins()
    zeros, ones = torch.zeros(3), torch.ones(3)
    for compare in (assert_close, torch.testing.assert_close):
        try:
            compare(zeros, ones)
        except AssertionError:
            continue
        raise AssertionError(f"the comparison {getattr(compare, '__qualname__', compare)!r} was replaced: it accepted 0 == 1")
    accepted = {
        "torch.allclose": torch.allclose(zeros, ones),
        "torch.equal": torch.equal(zeros, ones),
        "torch.Tensor.allclose": zeros.allclose(ones),
        "torch.Tensor.equal": zeros.equal(ones),
        "torch.Tensor.all": (zeros == ones).all(),
        "torch.Tensor.any": (zeros == ones).any(),
        "the truth value of a tensor": torch.tensor(False),
        "math.isclose": math.isclose(0.0, 1.0),
    }
    for name, verdict in accepted.items():
        if verdict:
            raise AssertionError(f"{name} was replaced: it accepted 0 == 1")
    rejected = {
        "torch.allclose": torch.allclose(ones, ones),
        "torch.equal": torch.equal(ones, ones),
        "torch.Tensor.allclose": ones.allclose(ones),
        "torch.Tensor.equal": ones.equal(ones),
        "torch.Tensor.all": (ones == ones).all(),
    }
    for name, verdict in rejected.items():
        if not verdict:
            raise AssertionError(f"{name} was replaced: it rejected 1 == 1")


def _check_builtins() -> None:
    """Python's built-ins must be the interpreter's own, and behave."""
    for name in _CHECKED_BUILTINS:
        if not _is_genuine_builtin(name, _PYTHON_BUILTINS.get(name)):
            raise AssertionError(f"the built-in {name!r} was replaced in the builtins module")
    behaves = {
        "abs": abs(-2) == 2 and abs(2.5) == 2.5,
        "sum": sum([1, 2, 3]) == 6,
        "max": max(1, 3) == 3 and max([4, 2]) == 4,
        "min": min(1, 3) == 1 and min([4, 2]) == 2,
        "len": len([0, 0, 0]) == 3,
        "all": all([True, False]) is False and all([True]) is True,
        "any": any([False, False]) is False and any([False, True]) is True,
        "isinstance": isinstance(1.5, int) is False and isinstance(1.5, float) is True,
        "round": round(2.6) == 3 and round(0.125, 2) == 0.12,
    }
    for name, correct in behaves.items():
        if correct is not True:
            raise AssertionError(f"the built-in {name!r} was replaced: it gives wrong answers")


def _is_genuine_builtin(name: str, value: Any) -> bool:
    """Is ``value`` the interpreter's built-in ``name``: a function written in C that belongs to
    the ``builtins`` module, or a built-in (not Python-defined) type of that name?"""
    if isinstance(value, types.BuiltinFunctionType):
        return value.__name__ == name and getattr(value.__self__, "__name__", None) == "builtins"
    if isinstance(value, type):
        return value.__name__ == name and value.__module__ == "builtins" and not value.__flags__ & _HEAP_TYPE
    return False


def run_isolated(namespace: dict) -> Callable[[types.FunctionType], Any]:
    """Decorator: run the decorated hidden test at once, shielded from the notebook's names.

    The function runs with globals of its own: a copy of ``namespace`` (the notebook's
    ``globals()``) without the names that shadow a Python built-in, and with the interpreter's
    built-ins. It receives ``namespace`` itself as its one argument, to hand to
    :func:`forbidden` as ``learner_namespace``. Everything it assigns stays local to it, and
    PyTorch's (CPU) random state is restored when it ends, however it ends.

    Returns:
        the decorator. It returns the value the function's name had in ``namespace`` (``None``
        if it had none), so that defining a hidden test rebinds no name the notebook uses.
    """

    def decorator(function: types.FunctionType) -> Any:
        if function.__code__.co_freevars:
            raise ValueError("run_isolated needs a function defined at the top level of a cell")
        isolated_globals = {name: value for name, value in namespace.items() if not _shadows_builtin(name)}
        isolated_globals["__builtins__"] = _PYTHON_BUILTINS
        isolated = types.FunctionType(function.__code__, isolated_globals, function.__name__, function.__defaults__)
        isolated.__kwdefaults__ = function.__kwdefaults__
        with torch.random.fork_rng(devices=[]):
            isolated(namespace)
        return namespace.get(function.__name__)

    return decorator


def _shadows_builtin(name: str) -> bool:
    # Module dunders (__name__, __doc__...) are not the learner's doing: they stay.
    return name in _PYTHON_BUILTINS and not (name.startswith("__") and name.endswith("__"))


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
