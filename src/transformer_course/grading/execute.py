"""Executing a notebook cell by cell in a started runner.

:func:`started` starts the runner (:mod:`transformer_course.grading.inside.runner`) as a launch says (in a
sandbox, :mod:`transformer_course.grading.sandbox`, for autograde; as a plain process for ``check``)
and gives a :class:`Session` that sends it the code cells one by one, within the limits, and answers a
hidden test's questions to the kernel. :func:`execute_notebook` runs a notebook's code cells in order,
asking a judge first (:class:`transformer_course.grading.judging.Judge`, which decides a test cell's
points); :mod:`transformer_course.grading.sandboxed_run` puts these together for one submission.

When the last cell has run, or the notebook's time is up, every process of the runner is killed;
only then are the grades written. A cell that runs too long is interrupted, a kernel that dies or
runs out of memory is shown in the cell where it happened (an error output, for the feedback page),
the cells after it are marked as not run, and the notebook is graded with what ran. What went wrong is
kept beside the notebook as data (:attr:`Session.problems`), never read back from those outputs.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from nbformat import NotebookNode
from nbformat.v4 import new_output

from .hidden import NoAnswer, answer_in_outputs
from .limits import GradingLimits
from .nbgrader_cells import grade_id
from .pipe import MAX_LINE, Reply, Runner, RunnerProblem
from .sandbox import Cgroup, Launch
from .status import Problem, Status

# The names of the errors this module writes into a cell, for the learner to read in the feedback page.
KERNEL_DIED = "DeadKernelError"
KERNEL_UNRESPONSIVE = "KernelUnresponsiveError"
MEMORY_LIMIT = "MemoryLimitError"
CELL_TIMEOUT = "CellTimeoutError"
NOTEBOOK_TIMEOUT = "NotebookTimeoutError"
NOT_RUN = "KernelLostError"
KERNEL_NOT_STARTED = "KernelNotStartedError"
TEST_FAILED = "TestFailedError"
PROBE = "transformer_course.grading.inside.probe"  # the kernel's side of a hidden test
KERNEL_START_SECONDS = 120  # for the kernel to start and run an empty cell, as the runner's startup_timeout
# What the grader asks a fresh sandbox to do before any submission: what every notebook does first.
SELF_TEST_CODE = "import numpy, torch, matplotlib, transformer_course\nprint(torch.__version__)"


@dataclass(frozen=True)
class Shown:
    """What a :class:`~transformer_course.grading.pipe.RunnerProblem` makes of a cell and its submission."""

    status: Status  # the submission's, unless a worse problem came before it
    error: str  # the name of the error the cell shows
    says: str  # what the error says ({cell_timeout}, {memory}, {last_words} are filled in)
    kernel_lost: bool  # the cells after it are not run


# Every problem of the runner, and what it shows and means: the one table from the runner's words to a Status.
PROBLEMS = {
    RunnerProblem.TIMEOUT: Shown(
        Status.TIMEOUT, CELL_TIMEOUT, "interrupted after the time limit of {cell_timeout} s per cell", False
    ),
    RunnerProblem.MEMORY: Shown(
        Status.MEMORY_LIMIT,
        MEMORY_LIMIT,
        "a process of this notebook was killed: together its processes used more than {memory}",
        False,
    ),
    RunnerProblem.MEMORY_DIED: Shown(
        Status.MEMORY_LIMIT,
        MEMORY_LIMIT,
        "the kernel was killed: the notebook's processes used more than {memory} together",
        True,
    ),
    RunnerProblem.KERNEL_DIED: Shown(
        Status.KERNEL_DIED,
        KERNEL_DIED,
        "the kernel died while this cell ran (exit(), a crash or the memory limit){last_words}",
        True,
    ),
    RunnerProblem.NO_ANSWER: Shown(
        Status.KERNEL_DIED, KERNEL_UNRESPONSIVE, "the kernel stopped responding while this cell ran", True
    ),
    RunnerProblem.BROKEN: Shown(
        Status.KERNEL_DIED,
        KERNEL_UNRESPONSIVE,
        "the kernel's answer broke the grader's limits (too much output at once)",
        True,
    ),
}


class Session:
    """A running runner: execute cells until the kernel is lost, then say why for every later cell."""

    def __init__(self, runner: Runner, cgroup: Cgroup | None, limits: GradingLimits):
        self.runner, self.cgroup, self.limits = runner, cgroup, limits
        self.lost_in: str | None = None  # where the kernel was lost, once it is
        self.problems: list[Problem] = []  # what went wrong in the notebook's cells, in the order it happened
        self.deadline = time.monotonic() + limits.submission_timeout
        self._output_left = limits.notebook_output_bytes

    def start_problem(self) -> str | None:
        """Why the kernel cannot run a first, empty cell (it did not start), or None if it can."""
        reply = self.runner.execute("pass", KERNEL_START_SECONDS, 2**12, answers=False)
        if reply.problem is None:
            return None
        detail = self._last_words()
        return reply.problem.replace("_", " ") + (f": {detail}" if detail else "")

    def _last_words(self) -> str:
        """The last line the runner wrote to standard error, once it has ended (why the kernel was lost)."""
        if self.runner.process.poll() is None:
            return ""
        lines = self.runner.stderr_tail().strip().splitlines()
        return lines[-1][:300] if lines else ""

    def preload(self, code: str) -> None:
        """Run ``code`` before the notebook, outside its history and outputs (the imports every notebook makes).

        A kernel lost here is recorded like one lost in a cell; any other error is left to the notebook's
        own cells to show.
        """
        reply = self._execute(code, KERNEL_START_SECONDS, 2**12, answers=False, store_history=False)
        self._keep_problem(reply, "the imports before the notebook")

    def run_cell(self, cell: NotebookNode, code: str, label: str) -> bool:
        """Execute ``code`` for ``cell``, putting its outputs there. Returns True if it ran without an error."""
        if self.lost_in is not None:
            cell.outputs = [error_output(NOT_RUN, f"not run: the kernel was lost in {self.lost_in}")]
            return False
        left = self.deadline - time.monotonic()
        if left <= 0:
            self.lost_in = f"{label} (the notebook's time limit)"
            cell.outputs = [
                error_output(
                    NOTEBOOK_TIMEOUT,
                    f"not run: the notebook ran past its time limit of {self.limits.submission_timeout} s",
                )
            ]
            self.problems.append(Problem(Status.TIMEOUT, f"the notebook ran past its time limit at {label}"))
            return False
        limit = min(self.limits.cell_output_bytes, self._output_left)
        reply = self._execute(code, min(self.limits.cell_timeout, left), limit, answers=False)
        cell.outputs = reply.outputs
        cell.execution_count = reply.execution_count
        self._output_left -= sum(len(json.dumps(output)) for output in reply.outputs)
        self.note_errors(reply.outputs, label)
        error = self._keep_problem(reply, label)
        if error is not None:
            cell.outputs.append(error)
        return not any(output.output_type == "error" for output in cell.outputs)

    def note_errors(self, outputs: list[NotebookNode], label: str) -> None:
        """Keep, among :attr:`problems`, each error of the learner's code in ``outputs`` that says memory ran out
        (Python's ``MemoryError``, or PyTorch's allocator failing)."""
        for output in outputs:
            if output.output_type == "error" and (output.ename == "MemoryError" or _says_out_of_memory(output.evalue)):
                self.problems.append(_out_of_memory(label, output.evalue))

    def run_quietly(self, code: str, label: str) -> None:
        """Run ``code`` outside the notebook's history and outputs, within the cell's limits: a correct answer put
        in the place of the learner's (a kernel lost here is recorded like one lost in a cell)."""
        left = self.deadline - time.monotonic()
        if self.lost_in is not None or left <= 0:
            return
        reply = self._execute(code, min(self.limits.cell_timeout, left), 2**12, answers=False, store_history=False)
        self._keep_problem(reply, label)

    def ask(self, request: dict):
        """Send a hidden test's request to the kernel and return its decoded answer."""
        if self.lost_in is not None:
            raise NoAnswer(f"the kernel was lost in {self.lost_in}")
        code = f"__import__({PROBE!r}, fromlist=['answer']).answer({json.dumps(request)!r})"
        reply = self._execute(
            code, min(self.limits.cell_timeout, max(1.0, self.deadline - time.monotonic())), MAX_LINE // 2, answers=True
        )
        error = self._keep_problem(reply, "a hidden test")
        if error is not None:
            raise NoAnswer(f"{error.ename}: {error.evalue}")
        return answer_in_outputs(reply.outputs)

    def _keep_problem(self, reply: Reply, label: str) -> NotebookNode | None:
        """Keep ``reply``'s problem, if it had one, among :attr:`problems` (wherever it happened: in a cell, the
        imports, a correct answer run quietly, a hidden test's question); return the error that says it, or None."""
        problem = self._problem(reply, label)
        if problem is None:
            return None
        error, found = problem
        self.problems.append(found)
        return error

    def _execute(
        self, code: str, timeout: float, output_limit: int, answers: bool, store_history: bool | None = None
    ) -> Reply:
        kills_before = self.cgroup.out_of_memory_kills() if self.cgroup else 0
        reply = self.runner.execute(code, timeout, output_limit, answers, store_history)
        if self.cgroup is not None and self.cgroup.out_of_memory_kills() > kills_before:
            died = reply.problem == RunnerProblem.KERNEL_DIED
            reply.problem = RunnerProblem.MEMORY_DIED if died else reply.problem or RunnerProblem.MEMORY
        return reply

    def _problem(self, reply: Reply, label: str) -> tuple[NotebookNode, Problem] | None:
        """The error to show for ``reply``'s problem, if it had one, and the problem itself (:data:`PROBLEMS`); a lost
        kernel is remembered."""
        if reply.problem is None:
            return None
        shown = PROBLEMS[reply.problem]
        if shown.kernel_lost:
            self.lost_in = label
        last_words = self._last_words() if reply.problem == RunnerProblem.KERNEL_DIED else ""
        says = shown.says.format(
            cell_timeout=self.limits.cell_timeout,
            memory=f"{self.limits.memory_limit_mb} MB",
            last_words=f"; {last_words}" if last_words else "",
        )
        error = error_output(shown.error, says)
        if shown.status == Status.MEMORY_LIMIT or _says_out_of_memory(says):  # the kernel's allocator failed
            return error, _out_of_memory(label, says)
        if shown.status == Status.TIMEOUT:
            return error, Problem(Status.TIMEOUT, f"{label} was interrupted after the time limit")
        return error, Problem(shown.status, f"{label}: {says}")


def _says_out_of_memory(message: str) -> bool:
    """Does an error's ``message`` say that memory ran out (PyTorch's allocator, or the C library's)?"""
    return "can't allocate memory" in message or "not enough memory" in message


def _out_of_memory(label: str, message: str) -> Problem:
    return Problem(Status.MEMORY_LIMIT, f"{label} ran out of memory: {message}"[:300])


@contextlib.contextmanager
def started(launch: Launch, limits: GradingLimits, cgroup_name: str | None = None) -> Iterator[Session]:
    """Start the runner as ``launch`` says (in a cgroup of its own if ``cgroup_name``); kill all of it on exit."""
    cgroup = Cgroup.create(cgroup_name, limits) if cgroup_name else None
    command = (cgroup.join_command() if cgroup is not None else []) + launch.command
    with tempfile.TemporaryFile() as arguments:
        if launch.bwrap_arguments:
            arguments.write(b"".join(argument.encode("utf-8") + b"\0" for argument in launch.bwrap_arguments))
            arguments.seek(0)
            command += ["--args", str(arguments.fileno())]
        process = subprocess.Popen(
            command + launch.program,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=launch.environment,
            cwd=launch.directory,
            start_new_session=True,
            pass_fds=(arguments.fileno(),) if launch.bwrap_arguments else (),
        )
    try:
        yield Session(Runner(process), cgroup, limits)
    finally:
        with contextlib.suppress(ProcessLookupError):
            if hasattr(os, "killpg"):  # POSIX: the runner and every process it started (its own session)
                os.killpg(process.pid, 9)
            else:  # Windows has no process groups: the kernel exits when its parent, the runner, is gone
                process.kill()
        if cgroup is not None:
            cgroup.remove()
        process.wait()
        for stream in (process.stdin, process.stdout, process.stderr):
            with contextlib.suppress(OSError):
                stream.close()


def execute_notebook(
    notebook: NotebookNode, session: Session, judge: Callable[[NotebookNode, str], bool] | None = None
) -> None:
    """Run every code cell of ``notebook`` in ``session``, in order.

    ``judge(cell, label)`` is asked first for each code cell (``label`` names it in messages, e.g.
    ``"cell test-softmax"``): it returns True when it has run the cell itself (a test cell with hidden
    tests, judged by the grader), False to leave the cell to ``session.run_cell``.
    """
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        label = f"cell {grade_id(cell) or cell.get('id') or index}"
        if judge is not None and judge(cell, label):
            continue
        session.run_cell(cell, cell.source, label)


def error_output(name: str, message: str, lines: list[str] | None = None) -> NotebookNode:
    """An ``error`` output: what this module writes into a cell when something went wrong."""
    return new_output("error", ename=name, evalue=message, traceback=lines or [f"{name}: {message}"])
