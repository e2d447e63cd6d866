"""Run code cells one request at a time in a fresh Jupyter kernel: the program inside the sandbox.

    python -I <package root>/transformer_course/grading/runner.py      (see :func:`runner_command`)

It starts a kernel with nbclient (as nbgrader does) and then reads one JSON request per line on
standard input, executes its code as a cell, and answers one JSON line on standard output::

    {"id": "5f1c…", "code": "...", "timeout": 30, "output_limit": 100000, "store_history": true}
    {"id": "5f1c…", "outputs": [...], "execution_count": 3, "problem": null}   # or "timeout", "kernel_died"

``timeout`` is in seconds; ``output_limit`` (bytes, default ``MAX_LINE // 2``) is what the answer's
outputs are cut to; ``store_history`` (default true) is false for a hidden test's question, which
then takes no execution count and stays out of the kernel's ``In``/``Out`` history. A cell that runs
past its timeout is interrupted (its answer says ``"timeout"``) and the kernel goes on; once the
kernel has died every later request is answered ``kernel_died``. The grader's :class:`Reply` adds two
problems of its own: ``"no_answer"`` (nothing came back within the timeout and the grace period) and
``"broken"`` (the answer broke the protocol: too long, not JSON, or of the wrong shape).

:class:`Runner` is the grader's end of the pipe. The grader trusts nothing the runner says (the
kernel shares its sandbox and can write to its pipes): it holds at most one unread answer, reads
at most a few times the output budget it asked for (:data:`MAX_LINE` for a hidden test's data),
drops answers that do not carry the random id of the request it made, waits at most the timeout
it asked for (plus a grace period) and keeps only plain text and images of what the cells printed,
cut to the output budgets.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import queue
import secrets
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

# nbformat validates with jsonschema, which imports rfc3987_syntax for its "iri" format checks; that module
# builds some thirty Earley parsers at import, about 1.6 s of CPU on the course's machine, paid by every
# sandbox's runner (python-jsonschema/jsonschema#1428). No notebook schema uses those formats: marked
# absent, the module is never imported and jsonschema leaves the two checks out.
sys.modules.setdefault("rfc3987_syntax", None)

import nbformat  # noqa: E402  (after the line above)

MAX_LINE = 32 * 2**20  # bytes of one answer carrying a hidden test's data
MAX_LISTS = 100_000  # JSON lists in such an answer (real data is a few tensors of base64 text)
MAX_OUTPUTS = 1_000  # outputs of one cell kept (one display() call is one output)
GRACE_SECONDS = 20  # beyond a cell's timeout, for the interrupt to land and the outputs to arrive
KEPT_MIME_TYPES = ("text/plain", "image/png", "image/jpeg")  # what the feedback page may show of a learner's output


# ----------------------------------------------------------------------------- inside the sandbox


def runner_command(python: Path | str, package_root: Path | str) -> list[str]:
    """How to start the runner of the course package that lies in ``package_root``.

    It runs as a script, isolated (``-I``), not as ``-m transformer_course.grading.runner``: so it starts
    without the package's ``__init__``, which imports torch (seconds of CPU per submission). Only the
    kernel needs the package, and the learner's notebook imports it there.
    """
    return [str(python), "-I", str(Path(package_root) / "transformer_course" / "grading" / "runner.py")]


def serve() -> None:
    """Start a kernel and answer the requests on standard input (JSON lines) until they end.

    The pipes to the grader are moved to descriptors the kernel does not inherit, and standard input
    and output become /dev/null: what the kernel's own subprocesses print cannot garble the answers.
    """
    requests, answers = os.fdopen(os.dup(0), "r", encoding="utf-8"), os.fdopen(os.dup(1), "w", encoding="utf-8")
    nothing = os.open(os.devnull, os.O_RDWR)
    os.dup2(nothing, 0)
    os.dup2(nothing, 1)
    sys.stdout = open(os.devnull, "w")
    from nbclient import NotebookClient
    from nbclient.exceptions import DeadKernelError

    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    client = NotebookClient(
        notebook,
        kernel_name="python3",
        allow_errors=True,
        interrupt_on_timeout=True,  # and then wait for the interrupted cell's reply (the grader's grace bounds that)
        extra_arguments=["--HistoryManager.hist_file=:memory:"],
        startup_timeout=120,
        resources={"metadata": {"path": os.getcwd()}},
    )
    with client.setup_kernel():
        dead = False
        for line in requests:
            request = json.loads(line)
            cell = nbformat.v4.new_code_cell(request["code"])
            notebook.cells = [cell]
            problem = "kernel_died" if dead else None
            if not dead:
                client.timeout = request["timeout"]
                started = time.monotonic()
                try:
                    client.execute_cell(cell, 0, store_history=request.get("store_history", True))
                except DeadKernelError:
                    problem, dead = "kernel_died", True
                # nbclient interrupts a cell that runs past its timeout and keeps the KeyboardInterrupt it
                # ends with; only the time taken tells that apart from a KeyboardInterrupt the cell raised.
                if problem is None and time.monotonic() - started >= request["timeout"]:
                    problem = "timeout"
            outputs = trimmed(
                capped([dict(output) for output in cell.outputs]), request.get("output_limit", MAX_LINE // 2)
            )
            answer = {
                "id": request.get("id"),
                "outputs": outputs,
                "execution_count": cell.get("execution_count"),
                "problem": problem,
            }
            answers.write(json.dumps(answer, default=str) + "\n")
            answers.flush()


# ----------------------------------------------------------------------------- the grader's end


@dataclass
class Reply:
    """What one executed cell left: outputs (sanitised nbformat outputs) and what went wrong, if anything."""

    outputs: list[dict] = field(default_factory=list)
    execution_count: int | None = None
    # None, "timeout", "kernel_died", "no_answer" (silent past its time), "broken" (the runner broke the protocol)
    problem: str | None = None


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
            return Reply(problem="kernel_died")
        deadline = time.monotonic() + timeout + self.grace_seconds
        while True:
            self._permits.put(line_limit)
            try:
                line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return Reply(problem="no_answer")
            if line is None:  # the runner ended: killed, out of memory, or never started
                return Reply(problem="kernel_died")
            if line is _TOO_LONG or (answers and line.count(b"[") > MAX_LISTS):
                return Reply(problem="broken")
            try:
                answer = json.loads(line)
                if type(answer) is not dict or answer.get("id") != request_id:
                    continue  # not the answer to this request: written by something else in the sandbox
                outputs = [_sanitised(output, answers) for output in capped(answer["outputs"])]
                outputs = [nbformat.from_dict(output) for output in trimmed(outputs, output_limit)]
                return Reply(outputs, _integer(answer.get("execution_count")), _problem(answer.get("problem")))
            except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
                return Reply(problem="broken")

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


def _problem(value) -> str | None:
    return value if value in ("timeout", "kernel_died") else None


def capped(outputs: list) -> list:
    """At most :data:`MAX_OUTPUTS` of ``outputs``, the last of them a note of how many more there were."""
    if len(outputs) <= MAX_OUTPUTS:
        return outputs
    note = {
        "output_type": "stream",
        "name": "stderr",
        "text": f"[... {len(outputs) - MAX_OUTPUTS + 1:,} more outputs dropped: {MAX_OUTPUTS:,} are kept per cell]\n",
    }
    return outputs[: MAX_OUTPUTS - 1] + [note]


def trimmed(outputs: list[dict], limit: int) -> list[dict]:
    """``outputs`` cut to about ``limit`` bytes: long text is shortened, large images dropped, with a note."""
    kept, used = [], 0
    for output in outputs:
        size = len(json.dumps(output, default=str))
        if used + size <= limit:
            kept.append(output)
            used += size
            continue
        room = max(0, limit - used)
        if output.get("output_type") == "stream" and room > 200:
            text = output.get("text", "")
            text = text if isinstance(text, str) else "".join(text)
            output = dict(
                output,
                text=text[: room - 200]
                + f"\n[... output cut: {len(text):,} characters printed, the first {room - 200:,} kept]\n",
            )
            kept.append(output)
        else:
            kept.append(
                {
                    "output_type": "stream",
                    "name": "stderr",
                    "text": f"[... output dropped: {size:,} bytes over the limit of {limit:,}]\n",
                }
            )
        used = limit
    return kept


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
        from .probe import MIME

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


if __name__ == "__main__":
    serve()
