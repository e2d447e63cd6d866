"""Hidden tests that the learner's kernel cannot fool: the kernel answers, the grader judges.

A hidden test lives in a test cell of the source notebook, between nbgrader's ``### BEGIN HIDDEN
TESTS`` and ``### END HIDDEN TESTS``. When the notebook is graded, that code never reaches the
learner's kernel: the grader runs it in its own process, after the kernel has run the cell's
visible tests. The test asks the kernel questions through a :class:`Learner` and gets plain data
back (:mod:`transformer_course.grading.inside.plain_data`): exact tensors, numbers, strings. Expected
values come from the course package in the grader's process, which the learner cannot reach, and
every comparison runs there too. So no built-in, torch function, import hook, input transformer,
tracing hook or tensor subclass in the kernel can change a verdict; the kernel can only answer the
questions, and answering them right is the exercise.

A hidden test reads::

    ### BEGIN HIDDEN TESTS
    import torch

    from transformer_course.attention import scaled_dot_product_attention
    from transformer_course.grading.hidden import assert_close, hidden_test


    @hidden_test
    def attention_matches_the_reference_with_masks(learner):
        query, key, value = torch.randn(2, 3, 5, 8), torch.randn(2, 3, 7, 8), torch.randn(2, 3, 7, 4)
        output, weights = learner.call("attention", query, key, value)           # runs in the kernel
        expected_output, expected_weights = scaled_dot_product_attention(query, key, value)
        assert_close(weights, expected_weights, name="weights")                    # judged here
    ### END HIDDEN TESTS

``learner.call(name, ...)`` calls a function of the notebook, ``learner.value(name)`` reads a
variable, ``learner.run(function, ...)`` runs a small function of the test beside the
learner's code (to build a learner's class, train it a step, and return numbers), and
``learner.rerun(grade_id, names, seed=..., inputs=...)`` runs one of the learner's answer cells again
on the grader's seed and inputs and returns the variables it sets (an experiment's numbers are then
the work of its code, not values typed in). Errors the
learner's code raises come back as the same built-in exception (``ValueError``...), so ``try`` /
``except ValueError`` reads as it would in the kernel.

Run in an ordinary Jupyter session (an instructor working on ``solutions/``), ``@hidden_test``
runs the test at once against the notebook's own namespace, through the same encoding, so a test
can be written and tried where it is used.
"""

from __future__ import annotations

import builtins
import contextlib
import inspect
import json
import sys
import textwrap
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import torch

from .inside.plain_data import LearnerObject, Raised, decode, encode
from .inside.probe import FORBIDDEN_OPERATOR, MIME, evaluate
from .nbgrader_cells import answer_sources

__all__ = ["LearnerError", "Learner", "assert_close", "hidden_test", "judging"]


class LearnerError(Exception):
    """The learner's code raised an exception that is not one of Python's built-in ones."""


class NoAnswer(AssertionError):
    """The kernel gave no answer: it timed out, died, or printed something else instead."""


class Learner:
    """The learner's notebook as a hidden test sees it: questions in, plain data out.

    ``ask(request)`` sends one request (a dict, see :mod:`transformer_course.grading.inside.probe`) and
    returns the decoded answer. Each request switches off the library implementations ``switched_off``
    (dotted names) and refuses the ``forbidden_operators`` (``aten::_softmax``...); :attr:`refused` lists
    what the kernel said of each request that ran one of them, for the instructor's review.
    """

    def __init__(
        self,
        ask: Callable[[dict], Any],
        switched_off: list[str],
        forbidden_operators: list[str] = (),
        cells: dict[str, str] | None = None,
    ):
        self._ask = ask
        self._switched_off = list(switched_off)
        self._forbidden_operators = list(forbidden_operators)
        self._cells = dict(cells or {})  # grade_id -> source of the learner's answer cells, for rerun
        self.refused: list[str] = []

    def call(self, name: str, *args, **kwargs) -> Any:
        """``name(*args, **kwargs)`` in the notebook, with the assignment's library implementations switched off."""
        return self._answer({"kind": "call", "name": name}, args, kwargs)

    def value(self, name: str) -> Any:
        """The value of the notebook's variable ``name``."""
        return self._answer({"kind": "value", "name": name}, (), {})

    def values(self, *names: str) -> tuple:
        """The values of several of the notebook's variables."""
        return tuple(self.value(name) for name in names)

    def run(self, function: types.FunctionType, *args, **kwargs) -> Any:
        """Run ``function(*args, **kwargs)`` in the kernel, beside the learner's code, and return its result.

        ``function`` is a plain ``def`` of the hidden test; its global names are looked up in the
        notebook (the learner's classes, ``torch``...). It may not use the test's local variables:
        pass what it needs as arguments.
        """
        if function.__code__.co_freevars:
            raise TypeError(
                f"{function.__name__} uses local variables of the test ({', '.join(function.__code__.co_freevars)}): "
                "pass them as arguments"
            )
        source = textwrap.dedent(inspect.getsource(function))
        return self._answer({"kind": "run", "name": function.__name__, "source": source}, args, kwargs)

    def rerun(
        self,
        grade_id: str,
        names: tuple[str, ...],
        *,
        seed: int,
        inputs: dict[str, Any] | None = None,
        reference: tuple[types.FunctionType, ...] = (),
    ) -> tuple:
        """Run the learner's answer cell ``grade_id`` again and return the values of the variables ``names`` it set.

        It runs in a copy of the notebook's namespace (nothing of the notebook changes), after
        ``torch.manual_seed(seed)``, with the notebook's variables ``inputs`` given the grader's values, and
        with each function of ``reference`` (plain functions of the hidden test) in place of the learner's
        function of that name: a bug in an earlier part then costs that part's points only.
        """
        if grade_id not in self._cells:
            raise AssertionError(f"the notebook has no answer cell {grade_id}: was it deleted?")
        for function in reference:
            if function.__code__.co_freevars:
                raise TypeError(f"{function.__name__} uses local variables of the test: it cannot be sent")
        request = {
            "kind": "cell",
            "source": self._cells[grade_id],
            "names": list(names),
            "seed": int(seed),
            "reference": [textwrap.dedent(inspect.getsource(function)) for function in reference],
        }
        return self._answer(request, (), dict(inputs or {}))

    def _answer(self, request: dict, args: tuple, kwargs: dict) -> Any:
        request = dict(
            request,
            args=encode(list(args)),
            kwargs=encode(dict(kwargs)),
            switched_off=self._switched_off,
            forbidden_operators=self._forbidden_operators,
        )
        result = self._ask(request)
        if isinstance(result, Raised):
            if result.type_name == FORBIDDEN_OPERATOR:
                self.refused.append(result.message)
            raise _exception(result)
        return result


def _exception(raised: Raised) -> Exception:
    """The learner's exception as the grader raises it: the built-in type of that name, or LearnerError."""
    kind = getattr(builtins, raised.type_name, None)
    if isinstance(kind, type) and issubclass(kind, Exception) and kind not in (NoAnswer,):
        try:
            return kind(raised.message)
        except Exception:  # a built-in whose constructor wants other arguments (UnicodeDecodeError...)
            pass
    return LearnerError(f"{raised.type_name}: {raised.message}")


def answer_in_outputs(outputs: list[dict]) -> Any:
    """The decoded answer carried by a probe's outputs (the last one of type :data:`MIME`).

    Raises:
        NoAnswer: no output carries an answer.
    """
    for output in reversed(outputs):
        if output.get("output_type") == "display_data" and MIME in output.get("data", {}):
            try:
                content = json.loads(output["data"][MIME])
                if type(content) is dict and "result" in content:
                    return decode(content["result"])
            except (TypeError, ValueError) as error:  # PlainDataError is a ValueError
                raise NoAnswer(f"the kernel's answer to a hidden test was malformed: {error}") from None
    raise NoAnswer("the notebook gave no answer to a hidden test: did a cell change how the kernel runs code?")


# ----------------------------------------------------------------------------- running hidden tests

_learner: Learner | None = None


@contextlib.contextmanager
def judging(learner: Learner) -> Iterator[None]:
    """While the grader runs a cell's hidden tests, ``@hidden_test`` puts ``learner`` in front of them."""
    global _learner
    previous, _learner = _learner, learner
    try:
        yield
    finally:
        _learner = previous


def hidden_test(function: Callable[[Learner], None]) -> Callable[[Learner], None]:
    """Decorator: run the hidden test ``function(learner)`` now.

    While grading, ``learner`` is the sandboxed kernel (see :func:`judging`). In a plain Jupyter
    session it is the notebook that defines the test, asked through the same encoding.
    """
    learner = _learner or _local_learner(sys._getframe(1).f_globals)
    function(learner)
    return function


def _local_learner(namespace: dict) -> Learner:
    """A learner that answers from ``namespace`` in this process (for writing and trying tests)."""
    policy = Path("grading.yml")
    switched, forbidden = [], []
    if policy.is_file():
        from .policy import GradingPolicy

        read = GradingPolicy.from_file(policy)
        switched, forbidden = read.library_implementations, read.forbidden_operators

    def ask(request: dict) -> Any:
        crossed = json.loads(json.dumps(request))  # what crosses the wall is JSON, both ways
        return decode(json.loads(json.dumps(encode(evaluate(crossed, namespace)))))

    return Learner(ask, switched, forbidden, _answer_cells_here())


def _answer_cells_here() -> dict[str, str]:
    """grade_id -> source of the answer cells of the one notebook in this folder (an instructor's session in
    ``solutions/<assignment>/``), as saved; none where the folder holds no notebook or several."""
    notebooks = list(Path.cwd().glob("*.ipynb"))
    if len(notebooks) != 1:
        return {}
    return answer_sources(json.loads(notebooks[0].read_text(encoding="utf-8")))


# ----------------------------------------------------------------------------- comparisons


def assert_close(actual: Any, expected: Any, *, atol: float = 1e-5, rtol: float = 1e-5, name: str = "result") -> None:
    """Assert that the learner's tensor ``actual`` matches ``expected`` in shape and values.

    Values compare as ``torch.testing.assert_close(actual, expected, atol=atol, rtol=rtol, equal_nan=True)``
    compares them: an infinity matches only the same infinity (an exact ``-inf`` where ``-inf`` is expected
    passes, a finite value there fails), and NaN matches only where NaN is expected. The message says what
    was expected and what came: the shapes, or the largest difference and the first position where the
    values differ.
    """
    if isinstance(actual, LearnerObject) or not isinstance(actual, torch.Tensor):
        raise AssertionError(f"{name} should be a torch.Tensor, got {_describe(actual)}")
    expected = torch.as_tensor(expected)
    if tuple(actual.shape) != tuple(expected.shape):
        raise AssertionError(f"{name} has shape {tuple(actual.shape)}, expected {tuple(expected.shape)}")
    if actual.numel() == 0:
        return
    actual64, expected64 = actual.detach().cpu().to(torch.float64), expected.detach().cpu().to(torch.float64)
    wrong = ~torch.isclose(actual64, expected64, rtol=rtol, atol=atol, equal_nan=True)
    if bool(wrong.any()):
        position = tuple(int(index) for index in wrong.nonzero()[0])
        finite = actual64.isfinite() & expected64.isfinite()
        difference = (actual64 - expected64).abs().masked_fill(~finite, float("inf")).masked_fill(~wrong, 0.0)
        raise AssertionError(
            f"{name} differs from the expected values by up to {float(difference.max()):.3g} "
            f"(allowed {atol:g} + {rtol:g}·|expected|; infinities and NaN must be where they are expected); "
            f"first at index {position}: got {float(actual64[position]):.6g}, "
            f"expected {float(expected64[position]):.6g}"
        )


def _describe(value: Any) -> str:
    if isinstance(value, LearnerObject):
        return f"an object of type {value.type_name}"
    return f"{type(value).__name__} {value!r}"[:200]
