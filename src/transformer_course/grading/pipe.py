"""The grader's end of the runner's pipes: send code, get a :class:`Reply`, never hang.

The runner (:mod:`transformer_course.grading.inside.runner`) executes one request per line of its
standard input in the sandbox's kernel and answers one JSON line; its docstring has the protocol.
What went wrong is a :class:`RunnerProblem`: the runner's own (``timeout``, ``kernel_died``, the words of its
protocol), or the grader's (``no_answer``: nothing came back within the timeout and the grace period; ``broken``:
the answer broke the protocol, too long, not JSON, or of the wrong shape). What each one makes of a submission is
:data:`transformer_course.grading.execute.PROBLEMS`'s, in one table.

The grader trusts nothing the runner says (the kernel shares its sandbox and can write to its pipes):
:class:`Runner` holds at most one unread answer, reads at most a few times the output budget it asked
for (:data:`MAX_LINE` for a hidden test's data), drops answers that do not carry the random id of the
request it made, waits at most the timeout it asked for (plus a grace period) and keeps only plain
text and images of what the cells printed, cut to the output budgets.
"""

from __future__ import annotations

import base64
import binascii
import json
import queue
import secrets
import subprocess
import threading
import time
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

import nbformat

from .inside.probe import MIME
from .inside.runner import MAX_LINE, capped, trimmed

MAX_LISTS = 100_000  # JSON lists in such an answer (real data is a few tensors of base64 text)
GRACE_SECONDS = 20  # beyond a cell's timeout, for the interrupt to land and the outputs to arrive
KEPT_MIME_TYPES = ("text/plain", "image/png", "image/jpeg")  # what the feedback page may show of a learner's output


def runner_command(python: Path | str, package_root: Path | str) -> list[str]:
    """How to start the runner of the course package that lies in ``package_root`` (a script, isolated: see
    :mod:`transformer_course.grading.inside.runner`)."""
    return [str(python), "-I", str(Path(package_root) / "transformer_course" / "grading" / "inside" / "runner.py")]


class RunnerProblem(StrEnum):
    """What went wrong with one request to the runner (its value is the runner's word, where it is the runner's)."""

    TIMEOUT = "timeout"  # the runner's: the cell ran past its time and was interrupted
    KERNEL_DIED = "kernel_died"  # the runner's, or the grader's when the runner ended
    NO_ANSWER = "no_answer"  # nothing came back within the timeout and the grace period
    BROKEN = "broken"  # the answer broke the protocol
    MEMORY = "memory"  # the sandbox's cgroup killed a process for memory; the kernel lives on
    MEMORY_DIED = "memory_died"  # the cgroup killed the kernel itself for memory


# The problems the runner itself may report in an answer; any other word there is not believed.
RUNNERS_OWN = (RunnerProblem.TIMEOUT, RunnerProblem.KERNEL_DIED)


@dataclass
class Reply:
    """What one executed cell left: outputs (sanitised nbformat outputs) and what went wrong, if anything."""

    outputs: list[dict] = field(default_factory=list)
    execution_count: int | None = None
    problem: RunnerProblem | None = None


class Runner:
    """The grader's end of a runner process: send code, get a :class:`Reply` or a problem, never hang."""

    def __init__(self, process: subprocess.Popen, grace_seconds: float = GRACE_SECONDS):
        self.process = process
        self.grace_seconds = grace_seconds
        # The reader reads one line for each permit (the most bytes that line may have), so nothing
        # arrives that the grader did not ask for: unasked-for lines wait in the pipe.
        self._permits: queue.Queue = queue.Queue()
        self._lines: queue.Queue = queue.Queue()
        self._stderr: list[bytes] = []
        threading.Thread(target=self._read_answers, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def execute(
        self, code: str, timeout: float, output_limit: int, answers: bool = False, store_history: bool | None = None
    ) -> Reply:
        """Run ``code`` as a cell; wait at most ``timeout`` + the grace period.

        Outputs are cut to ``output_limit`` bytes; hidden-test answers are kept only if ``answers``.
        ``store_history`` (default: not ``answers``) counts the cell in the kernel's history.
        """
        # A fresh random id per request: the kernel, which can write to this pipe, cannot guess the next one.
        request_id = secrets.token_hex(16)
        # JSON can take up to six bytes for one character of output, plus the outputs' own fields.
        line_limit = MAX_LINE if answers else 6 * output_limit + 2**16
        try:
            request = json.dumps(
                {
                    "id": request_id,
                    "code": code,
                    "timeout": max(1, int(timeout)),
                    "output_limit": output_limit,
                    "store_history": not answers if store_history is None else store_history,
                }
            )
            self.process.stdin.write(request.encode("utf-8") + b"\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            return Reply(problem=RunnerProblem.KERNEL_DIED)
        deadline = time.monotonic() + timeout + self.grace_seconds
        while True:
            self._permits.put(line_limit)
            try:
                line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return Reply(problem=RunnerProblem.NO_ANSWER)
            if line is None:  # the runner ended: killed, out of memory, or never started
                return Reply(problem=RunnerProblem.KERNEL_DIED)
            if line is _TOO_LONG or (answers and line.count(b"[") > MAX_LISTS):
                return Reply(problem=RunnerProblem.BROKEN)
            try:
                answer = json.loads(line)
                if type(answer) is not dict or answer.get("id") != request_id:
                    continue  # not the answer to this request: written by something else in the sandbox
                outputs = [_sanitised(output, answers) for output in capped(answer["outputs"])]
                outputs = [nbformat.from_dict(output) for output in trimmed(outputs, output_limit)]
                return Reply(outputs, _integer(answer.get("execution_count")), _problem(answer.get("problem")))
            except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
                return Reply(problem=RunnerProblem.BROKEN)

    def stderr_tail(self) -> str:
        """The last lines the runner (or the sandbox around it) wrote to standard error."""
        return b"".join(self._stderr).decode("utf-8", errors="replace")[-2000:]

    def _read_answers(self) -> None:
        stream = self.process.stdout
        while True:
            limit = self._permits.get()
            try:
                line = stream.readline(limit + 1)
            except (OSError, ValueError):  # closed by the grader: the runner is gone
                line = b""
            if not line or not line.endswith(b"\n") and len(line) <= limit:  # the runner ended, perhaps mid-line
                self._lines.put(None)
                return
            if len(line) > limit:
                self._lines.put(_TOO_LONG)
                return
            self._lines.put(line)

    def _read_stderr(self) -> None:
        try:
            for chunk in iter(lambda: self.process.stderr.read1(4096), b""):
                self._stderr = (self._stderr + [chunk])[-4:]
        except (OSError, ValueError):  # closed by the grader: the runner is gone
            pass


_TOO_LONG = object()


def _integer(value) -> int | None:
    return value if type(value) is int else None


def _problem(value) -> RunnerProblem | None:
    return RunnerProblem(value) if type(value) is str and value in RUNNERS_OWN else None


def _sanitised(output, answers: bool) -> dict:
    """An nbformat output built from the fields of ``output`` that a feedback page may show safely."""
    kind = output.get("output_type") if type(output) is dict else None
    if kind == "stream":
        name = output.get("name") if output.get("name") in ("stdout", "stderr") else "stdout"
        return nbformat.v4.new_output("stream", name=name, text=_text(output.get("text")))
    if kind == "error":
        traceback = output.get("traceback")
        lines = [_text(line) for line in traceback[:200]] if type(traceback) is list else []
        return nbformat.v4.new_output(
            "error", ename=_text(output.get("ename"))[:200], evalue=_text(output.get("evalue")), traceback=lines
        )
    if kind in ("display_data", "execute_result"):
        data = output.get("data") if type(output.get("data")) is dict else {}
        kept = {mime: _text(value) for mime, value in data.items() if mime in KEPT_MIME_TYPES}
        kept = {mime: value for mime, value in kept.items() if mime == "text/plain" or _is_base64(value)}
        if answers and MIME in data:
            kept[MIME] = json.dumps(data[MIME])  # a hidden test's answer: JSON text, decoded strictly by the grader
        if kind == "execute_result":
            return nbformat.v4.new_output(
                "execute_result", data=kept, execution_count=_integer(output.get("execution_count"))
            )
        return nbformat.v4.new_output("display_data", data=kept)
    return nbformat.v4.new_output("stream", name="stderr", text="[an output of an unknown kind was dropped]\n")


def _is_base64(text: str) -> bool:
    """Is ``text`` plain base64 (what an image's data must be: it lands inside an HTML attribute)?"""
    try:
        base64.b64decode("".join(text.split()), validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _text(value) -> str:
    if type(value) is str:
        return value
    if type(value) is list and all(type(part) is str for part in value):
        return "".join(value)
    return ""
