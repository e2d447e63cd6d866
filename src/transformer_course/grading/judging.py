"""Judging a test cell, in one place: what its points depend on, from its visible tests to the gradebook.

A test cell passes when

1. its **visible tests** (what the learner saw) raised no error in the kernel, within the limits
   (:meth:`transformer_course.grading.execute.Session.run_cell`), and
2. its **hidden tests** (the part between nbgrader's markers, from the source notebook in ``solutions/``,
   never from the submission) pass here, in the grader's process, asking the kernel questions through
   :class:`transformer_course.grading.hidden.Learner` (:func:`run_hidden_tests`).

Then :class:`Judge`

3. puts a **correct answer** to a failed part in the kernel
   (:func:`transformer_course.grading.context.reference_answers`), so that every
   later part is graded with it in place of the learner's: one bug costs its own part's points only;
4. rewrites the cell's **outputs** so that nbgrader's rules read the same verdict (:func:`scored_outputs`),
   and puts its source back to the visible tests, so that the feedback page never shows the hidden ones;
5. leaves the **verdict** (grade_id → passed) in the run's outcome, which reaches nbgrader's resources under
   :data:`transformer_course.grading.gradebook.VERDICTS`, where
   :class:`transformer_course.grading.gradebook.SaveAutoGradesKeepingReviews` gives the cell all its points or none.
"""

from __future__ import annotations

import linecache
import random
import threading
import time
import traceback
import zlib
from dataclasses import dataclass

import torch
from nbformat import NotebookNode
from nbformat.v4 import new_output

from .execute import TEST_FAILED, Session, error_output
from .hidden import Learner, judging
from .nbgrader_cells import nbgrader_metadata
from .submission_run import RunOutcome, SubmissionRun

# What a failed test cell says when a correct answer to its part is put in place of the learner's.
REFERENCE_NOTE = "The later parts are graded with a correct answer to this part in place of yours.\n"

# Hidden tests seed torch's and Python's global generators and set the learner they judge: in a worker
# that runs several submissions in threads (a Dask worker with --nthreads above 1), one at a time.
JUDGING_LOCK = threading.Lock()


@dataclass
class Judge:
    """Asked by :func:`transformer_course.grading.execute.execute_notebook` for each code cell: a test cell's visible
    tests run in the kernel, its hidden tests here, and its verdict (and any finding) goes into ``outcome``."""

    run: SubmissionRun
    session: Session
    learner: Learner
    outcome: RunOutcome

    def __call__(self, cell: NotebookNode, label: str) -> bool:
        """Judge ``cell`` if it is a test cell (True), or leave it to the session (False)."""
        grade_id = nbgrader_metadata(cell).get("grade_id")
        if grade_id not in self.run.tests:
            return False
        visible, hidden_code = self.run.tests[grade_id]
        passed = self.session.run_cell(cell, visible, label)
        if passed and hidden_code:
            failure = self._hidden_tests(hidden_code, grade_id, label)
            if failure is not None:
                cell.outputs.append(failure)
                self.session.note_errors([failure], label)
                passed = False
        if not passed and grade_id in self.run.references and self.session.lost_in is None:
            self.session.run_quietly(self.run.references[grade_id], f"{label} (a correct answer in its place)")
            cell.outputs.append(new_output("stream", name="stdout", text=REFERENCE_NOTE))
        cell.outputs = scored_outputs(cell.outputs, passed)
        cell.source = visible
        self.outcome.verdicts[grade_id] = passed
        return True

    def _hidden_tests(self, hidden_code: str, grade_id: str, label: str) -> NotebookNode | None:
        """Run the cell's hidden tests: the error output of a failure, or None; a refused operator is a finding."""
        started_hidden = time.perf_counter()
        refused_before = len(self.learner.refused)
        with JUDGING_LOCK:
            failure = run_hidden_tests(hidden_code, f"{self.run.assignment}/{grade_id}", self.learner)
        if len(self.learner.refused) > refused_before:
            self.outcome.findings.append(f"{label}: {self.learner.refused[refused_before]}")
        self.outcome.seconds["hidden tests"] += time.perf_counter() - started_hidden
        return failure


def scored_outputs(outputs: list[NotebookNode], passed: bool) -> list[NotebookNode]:
    """A test cell's outputs, rewritten so that nbgrader's rules read the grader's verdict from them.

    nbgrader gives a test cell no points at its first error or standard-error stream, partial points
    from its first ``execute_result``, and all of them otherwise. So every ``execute_result`` becomes
    a display (a kernel may publish one before the tests run), a cell that passed keeps its standard
    error as ordinary text (a warning is not a failure), and a cell that failed starts with an error.
    """
    rewritten = []
    for output in outputs:
        if output.output_type == "execute_result":
            output = new_output("display_data", data=output.get("data", {}))
        elif passed and output.output_type == "stream" and output.get("name") == "stderr":
            output = new_output("stream", name="stdout", text=output.get("text", ""))
        rewritten.append(output)
    if not passed and not any(output.output_type == "error" for output in rewritten):
        rewritten.insert(0, error_output(TEST_FAILED, "the tests of this cell did not pass"))
    return rewritten


def run_hidden_tests(code: str, name: str, learner: Learner) -> NotebookNode | None:
    """Run a cell's hidden tests in this process against ``learner``; the error output if one fails.

    The tests draw their random inputs from a generator seeded by ``name``, so that grading again
    asks the same questions. A failure is told by the failing test's name and the message its author
    wrote (what was expected and what came): never a line of the hidden code, which the feedback page
    would show the learner.
    """
    filename = f"<hidden tests of {name}>"
    linecache.cache[filename] = (len(code), None, code.splitlines(keepends=True), filename)  # for inspect.getsource
    seed = zlib.crc32(name.encode("utf-8"))
    random.seed(seed)
    with torch.random.fork_rng(devices=[]), judging(learner):
        torch.manual_seed(seed)
        try:
            exec(compile(code, filename, "exec"), {"__name__": "__hidden_tests__"})
        except Exception as error:  # a failing check, or the learner's error re-raised: the test fails
            # The hidden code's own frames: the cell's module, then the test @hidden_test ran, then its helpers.
            frames = [frame for frame in traceback.extract_tb(error.__traceback__) if frame.filename == filename]
            test = f"hidden test {frames[1].name}" if len(frames) > 1 else "the hidden tests of this cell"
            message = str(error) or "(no message)"
            return error_output(type(error).__name__, message, [f"{test} failed", f"{type(error).__name__}: {message}"])
    return None
