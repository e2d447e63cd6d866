"""Run code cells one request at a time in a fresh Jupyter kernel: the program inside the sandbox.

    python -I <package root>/transformer_course/grading/inside/runner.py

(:func:`transformer_course.grading.pipe.runner_command` says so.) It runs as a script, isolated (``-I``),
not as ``-m``: so it starts without the course package's ``__init__``, which imports torch (seconds of
CPU per submission), and it imports nothing but the standard library, nbformat and nbclient. Only the
kernel needs the package, and the learner's notebook imports it there.

It starts a kernel with nbclient (as nbgrader does) and then reads one JSON request per line on
standard input, executes its code as a cell, and answers one JSON line on standard output::

    {"id": "5f1c…", "code": "...", "timeout": 30, "output_limit": 100000, "store_history": true}
    {"id": "5f1c…", "outputs": [...], "execution_count": 3, "problem": null}   # or "timeout", "kernel_died"

``timeout`` is in seconds; ``output_limit`` (bytes, default ``MAX_LINE // 2``) is what the answer's
outputs are cut to; ``store_history`` (default true) is false for a hidden test's question, which
then takes no execution count and stays out of the kernel's ``In``/``Out`` history. A cell that runs
past its timeout is interrupted (its answer says ``"timeout"``) and the kernel goes on; once the
kernel has died every later request is answered ``kernel_died``. The grader's end of the pipes is
:mod:`transformer_course.grading.pipe`, which trusts nothing said here.
"""

from __future__ import annotations

import json
import os
import sys
import time

# nbformat validates with jsonschema, which imports rfc3987_syntax for its "iri" format checks; that module
# builds some thirty Earley parsers at import, about 1.6 s of CPU on the course's machine, paid by every
# sandbox's runner (python-jsonschema/jsonschema#1428). No notebook schema uses those formats: marked
# absent, the module is never imported and jsonschema leaves the two checks out.
sys.modules.setdefault("rfc3987_syntax", None)

import nbformat  # noqa: E402  (after the line above)

MAX_LINE = 32 * 2**20  # bytes of one answer carrying a hidden test's data
MAX_OUTPUTS = 1_000  # outputs of one cell kept (one display() call is one output)
# Messages between the runner and the kernel larger than this are sent by pyzmq without copying, through a thread it
# starts on first use. Both ends copy every message instead: a submission that has spent the sandbox's process limit
# leaves no room for that thread, and a hidden test's inputs (megabytes of tensors) would then kill the run.
ALWAYS_COPY = 2**62


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
        extra_arguments=["--HistoryManager.hist_file=:memory:", f"--Session.copy_threshold={ALWAYS_COPY}"],
        startup_timeout=120,
        resources={"metadata": {"path": os.getcwd()}},
    )
    with client.setup_kernel():
        client.kc.session.copy_threshold = ALWAYS_COPY
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


if __name__ == "__main__":
    serve()
