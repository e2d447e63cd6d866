"""The kernel's side of a hidden test: run the learner's code on the grader's inputs, answer with data.

The grader (:mod:`transformer_course.grading.hidden`) sends one request per question, as a cell of
code that calls :func:`answer`. The request names a function of the notebook, a variable, or the
source of a small function to run beside the learner's code, and carries its arguments as plain data
(:mod:`.plain_data`). :func:`answer` runs it in a copy of the notebook's
namespace, so nothing it defines replaces a learner's name, with PyTorch's random state restored
afterwards, and with the assignment's library implementations switched off (so that a learner who
called ``torch.softmax`` where the exercise asks for their own softmax sees it fail, as the notebook
warns). Names are one route to a library's implementation; what runs is the other: while the request
runs, a ``TorchDispatchMode`` watches every PyTorch operator, and the first of the assignment's forbidden
operators (``aten::_softmax``, however it was reached: ``torch._softmax``, a default argument, a private
helper) fails the request with an error of type :data:`FORBIDDEN_OPERATOR` that names it, even if the
learner's code caught it. It answers with one ``display_data`` output of type :data:`MIME`.

Nothing here is trusted: this module runs in the learner's process, where an earlier cell may have
changed anything. The grader only reads the data it answers with and judges it in its own process.
"""

from __future__ import annotations

import contextlib
import fnmatch
import importlib
import json
import sys
import textwrap
import types
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from .plain_data import Raised, decode, encode

MIME = "application/vnd.transformer-course.answer+json"
# The type of the error a request answers with when the learner's code ran a forbidden operator.
FORBIDDEN_OPERATOR = "ForbiddenOperatorError"


def answer(request_text: str) -> None:
    """Answer one request of the grader: a ``display_data`` output holding the encoded result."""
    result = evaluate(json.loads(request_text), _notebook_namespace())
    _display({MIME: {"result": encode(result)}})


def evaluate(request: dict, namespace: dict) -> Any:
    """The result of ``request`` against the notebook's ``namespace``.

    A :class:`Raised` if the learner's code raised, or ran one of the request's forbidden operators."""
    watch = ForbiddenOperators(request.get("forbidden_operators", []))
    try:
        with torch.random.fork_rng(devices=[]), switched_off(request.get("switched_off", []), namespace), watch:
            result = _evaluate(request, namespace)
    except BaseException as error:  # the learner's error is the answer (KeyboardInterrupt after a timeout too)
        result = Raised(type(error).__name__, str(error))
    return watch.refusal() or result


class ForbiddenOperators(TorchDispatchMode):
    """While active, the first PyTorch operator that matches one of ``patterns`` (``aten::_softmax``,
    ``aten::_scaled_dot_product_*``) raises, and is remembered (:meth:`refusal`) even if the code caught it."""

    def __init__(self, patterns: list[str]):
        super().__init__()
        self.patterns = list(patterns)
        self.used: str | None = None
        self._verdicts: dict[str, bool] = {}

    def __enter__(self):
        return super().__enter__() if self.patterns else self  # nothing to watch: no cost to every operator

    def __exit__(self, *exc_info):
        return super().__exit__(*exc_info) if self.patterns else None

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func._schema.name
        if name not in self._verdicts:
            self._verdicts[name] = any(fnmatch.fnmatchcase(name, pattern) for pattern in self.patterns)
        if self._verdicts[name]:
            self.used = self.used or name
            raise RuntimeError(self.refusal().message)
        return func(*args, **(kwargs or {}))

    def refusal(self) -> Raised | None:
        """The error of a request that ran a forbidden operator, naming it; None if it ran none."""
        if self.used is None:
            return None
        return Raised(
            FORBIDDEN_OPERATOR,
            f"your code ran PyTorch's {self.used}, its own implementation of what this part asks you to write: "
            "write it yourself from PyTorch basics",
        )


def _evaluate(request: dict, namespace: dict) -> Any:
    args, kwargs = decode(request["args"]), decode(request["kwargs"])
    if request["kind"] == "value":
        if request["name"] not in namespace:
            raise NameError(f"name {request['name']!r} is not defined")
        return namespace[request["name"]]
    if request["kind"] == "call":
        if request["name"] not in namespace:
            raise NameError(f"name {request['name']!r} is not defined")
        return namespace[request["name"]](*args, **kwargs)
    if request["kind"] == "cell":
        # One of the learner's answer cells again, on the grader's seed and inputs (``kwargs``), with the
        # test's reference functions in place of the learner's: the values of the variables it sets.
        scope = {**namespace, **kwargs}
        for source in request["reference"]:
            exec(compile(textwrap.dedent(source), "<hidden test>", "exec"), scope)
        torch.manual_seed(request["seed"])
        exec(compile(_as_python(request["source"]), "<your answer cell>", "exec"), scope)
        missing = [name for name in request["names"] if name not in scope]
        if missing:
            raise NameError(f"your cell did not set {', '.join(missing)}")
        return tuple(scope[name] for name in request["names"])
    # "run": a function the hidden test wrote, defined beside the learner's code and called.
    scope = dict(namespace)
    exec(compile(textwrap.dedent(request["source"]), "<hidden test>", "exec"), scope)
    return scope[request["name"]](*args, **kwargs)


def _as_python(source: str) -> str:
    """A cell's source as the kernel runs it: IPython's magics and shell escapes become Python."""
    shell = sys.modules.get("IPython") and sys.modules["IPython"].get_ipython()
    return shell.transform_cell(source) if shell is not None else source


def _notebook_namespace() -> dict:
    """The globals of the notebook's cells (IPython's user namespace; ``__main__`` outside IPython)."""
    shell = sys.modules.get("IPython") and sys.modules["IPython"].get_ipython()
    return shell.user_ns if shell is not None else vars(sys.modules["__main__"])


def _display(bundle: dict) -> None:
    try:
        from IPython.display import display

        display(bundle, raw=True)
    except ImportError:
        print(json.dumps(bundle))


@contextlib.contextmanager
def switched_off(paths: list[str], learner_namespace: dict | None = None) -> Iterator[None]:
    """Make library implementations raise while the ``with`` block runs.

    Args:
        paths: dotted names: ``"torch.softmax"``, ``"torch.Tensor.softmax"``,
            ``"torch.nn.MultiheadAttention"`` (a class: all its Python methods).
        learner_namespace: the notebook's globals; a name there bound to a switched-off function
            (``from torch.nn.functional import softmax``) is switched off too.

    A Python function is switched off wherever it is referenced, by swapping its code; a built-in
    function where it is reachable by name. Paths that do not resolve are ignored.
    """
    restore: list[Callable[[], None]] = []
    try:
        for path in paths:
            resolved = _resolve(path)
            if resolved is None:
                continue
            owner, attribute, value = resolved
            functions = [value]
            if isinstance(value, type):
                functions = [member for member in vars(value).values() if isinstance(member, types.FunctionType)]
            swappable = [
                function
                for function in functions
                if isinstance(function, types.FunctionType) and not function.__code__.co_freevars
            ]
            restore.extend(_swap_code(function) for function in swappable)
            if not swappable:
                restore.append(_replace_attribute(owner, attribute))
                for name, bound in list((learner_namespace or {}).items()):
                    if bound is value:
                        restore.append(_replace_attribute(learner_namespace, name))
        yield
    finally:
        for undo in reversed(restore):
            undo()


def _switched_off(*args, **kwargs):
    # Swapped in as the code of switched-off Python functions, whose globals are not this module's:
    # it may use nothing but built-ins and literals.
    raise RuntimeError(
        "This library implementation is switched off while your own code is graded: "
        "write it yourself from PyTorch basics."
    )


def _resolve(path: str) -> tuple[Any, str, Any] | None:
    """``"torch.nn.functional.softmax"`` → (the object holding it, attribute name, current value)."""
    parts = path.split(".")
    for split in range(len(parts) - 1, 0, -1):
        try:
            owner: Any = importlib.import_module(".".join(parts[:split]))
            for attribute in parts[split:-1]:
                owner = getattr(owner, attribute)
            return owner, parts[-1], getattr(owner, parts[-1])
        except (ImportError, AttributeError):
            continue
    return None


def _swap_code(function: types.FunctionType) -> Callable[[], None]:
    code = function.__code__
    function.__code__ = _switched_off.__code__

    def undo() -> None:
        function.__code__ = code

    return undo


def _replace_attribute(owner: Any, name: str) -> Callable[[], None]:
    if isinstance(owner, dict):
        value = owner[name]
        owner[name] = _switched_off
        return lambda: owner.__setitem__(name, value)
    inherited = isinstance(owner, type) and name not in vars(owner)  # e.g. torch.Tensor.softmax
    value = getattr(owner, name)
    setattr(owner, name, _switched_off)

    def undo() -> None:
        if inherited:
            delattr(owner, name)
        else:
            setattr(owner, name, value)

    return undo
