"""Run code cells one request at a time in a fresh Jupyter kernel: the program inside the sandbox.

    python -m transformer_course.grading.runner

It starts a kernel with nbclient (as nbgrader does) and then reads one JSON request per line on
standard input, ``{"code": "...", "timeout": seconds}``, executes the code as a cell, and answers one
JSON line on standard output::

    {"outputs": [...], "execution_count": 3, "problem": null}      # or "timeout", "kernel_died"

A cell that runs past its timeout is interrupted (its answer says ``"timeout"``) and the
kernel goes on; once the kernel has died every later request is answered ``kernel_died``.

:class:`Runner` is the grader's end of the pipe. The grader trusts nothing the runner says: it reads
at most :data:`MAX_LINE` bytes per answer, waits at most the timeout it asked for (plus a grace
period) and keeps only plain text and images of what the cells printed, cut to the output budgets.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

MAX_LINE = 32 * 2**20  # bytes of one answer: outputs of one cell, or a hidden test's data
GRACE_SECONDS = 20  # beyond a cell's timeout, for the interrupt to land and the outputs to arrive
KEPT_MIME_TYPES = ("text/plain", "image/png", "image/jpeg")  # what the feedback page may show of a learner's output


# ----------------------------------------------------------------------------- inside the sandbox


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
    import nbformat
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
            outputs = trimmed([dict(output) for output in cell.outputs], request.get("output_limit", MAX_LINE // 2))
            answer = {"outputs": outputs, "execution_count": cell.get("execution_count"), "problem": problem}
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
        self._lines: queue.Queue = queue.Queue()
        self._stderr: list[bytes] = []
        threading.Thread(target=self._read_answers, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def execute(self, code: str, timeout: float, output_limit: int, answers: bool = False) -> Reply:
        """Run ``code`` as a cell; wait at most ``timeout`` + the grace period.

        Outputs are cut to ``output_limit`` bytes; hidden-test answers are kept only if ``answers``.
        """
        try:
            request = json.dumps(
                {
                    "code": code,
                    "timeout": max(1, int(timeout)),
                    "output_limit": output_limit,
                    "store_history": not answers,
                }
            )
            self.process.stdin.write(request.encode("utf-8") + b"\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            return Reply(problem="kernel_died")
        try:
            line = self._lines.get(timeout=timeout + self.grace_seconds)
        except queue.Empty:
            return Reply(problem="no_answer")
        if line is None:  # the runner ended: killed, out of memory, or never started
            return Reply(problem="kernel_died")
        if line is _TOO_LONG:
            return Reply(problem="broken")
        try:
            answer = json.loads(line)
            outputs = trimmed([_sanitised(output, answers) for output in answer["outputs"]], output_limit)
            return Reply(outputs, _integer(answer.get("execution_count")), _problem(answer.get("problem")))
        except (ValueError, KeyError, TypeError, AttributeError):
            return Reply(problem="broken")

    def stderr_tail(self) -> str:
        """The last lines the runner (or the sandbox around it) wrote to standard error."""
        return b"".join(self._stderr).decode("utf-8", errors="replace")[-2000:]

    def _read_answers(self) -> None:
        stream = self.process.stdout
        while True:
            try:
                line = stream.readline(MAX_LINE + 1)
            except (OSError, ValueError):  # closed by the grader: the runner is gone
                line = b""
            if not line or not line.endswith(b"\n") and len(line) <= MAX_LINE:  # the runner ended, perhaps mid-line
                self._lines.put(None)
                return
            if len(line) > MAX_LINE:
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
    import nbformat

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
        from .probe import MIME

        if answers and MIME in data:
            kept[MIME] = json.dumps(data[MIME])  # a hidden test's answer: JSON text, decoded strictly by the grader
        if kind == "execute_result":
            return nbformat.v4.new_output(
                "execute_result", data=kept, execution_count=_integer(output.get("execution_count"))
            )
        return nbformat.v4.new_output("display_data", data=kept)
    return nbformat.v4.new_output("stream", name="stderr", text="[an output of an unknown kind was dropped]\n")


def _text(value) -> str:
    if type(value) is str:
        return value
    if type(value) is list and all(type(part) is str for part in value):
        return "".join(value)
    return ""


if __name__ == "__main__":
    serve()
