"""Step 4 of :mod:`transformer_course.grading.autograde` for a class: each submission restored, run, reviewed,
recorded and given its feedback page, a few at a time (this is the one list of these steps, in their order).

:class:`ClassGrading` takes the class as intake took it in (one
:class:`~transformer_course.grading.submission.Submission` each) and passes each submission through its steps:

1. **restore** (:meth:`ClassGrading._restore`): what was handed in kept in ``submitted/`` (the earlier version
   beside it), manual scores no instructor saved removed, a manual score given to another version of a written
   answer said (or cleared, when asked: :mod:`transformer_course.grading.written_answers`), and the notebooks
   restored with nbgrader's steps (:mod:`transformer_course.grading.nbgrader_steps`);
2. **run** in a worker (:mod:`transformer_course.grading.workers`,
   :func:`transformer_course.grading.sandboxed_run.run_notebooks`), while a thread **reviews** the learner's
   cells (:func:`transformer_course.grading.review.bounded_review`);
3. **record** (:meth:`ClassGrading._finish`): the run's outcome written into the submission, which it ends (the
   run's worst problem, else ``tests_restored`` where intake gave back cells, else ``graded``), its grades into the
   gradebook and ``autograded/`` (nbgrader's steps again);
4. **feedback** (:meth:`ClassGrading._feedback`): the learner's page, once the run record holds the
   submission (the page reads its late penalty from there, as ``grades.csv`` does);

and keeps each one in the run record (:class:`transformer_course.grading.run_record.RunRecord`) as it ends: once,
and again only where its feedback page could not be made, which its message then says. :class:`FailedStarts`
counts the submissions in a row whose kernel could not start: past :data:`STOP_AFTER_FAILED_STARTS` the fault is the
grader's, and no further run is sent.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, replace

from tqdm.auto import tqdm

from .context import GradingContext
from .feedback import write_feedback
from .gradebook import clear_manual_scores, remove_unreviewed_manual_scores, reviewed_manual_scores
from .kept_submissions import keep_submitted
from .nbgrader_steps import NbgraderSteps
from .review import bounded_review
from .run_record import RunRecord
from .sandboxed_run import run_notebooks
from .status import Status, worst
from .submission import Submission
from .submission_run import SubmissionRun
from .workers import Workers
from .written_answers import WrittenAnswer, follow, written_answer_texts

# Submissions in a row whose kernel could not start before the run is stopped as the grader's fault.
STOP_AFTER_FAILED_STARTS = 3


class FailedStarts:
    """Counts submissions in a row whose kernel could not start; past the limit the run stops."""

    def __init__(self):
        self._lock = threading.Lock()
        self._in_a_row = 0
        self.stopped: str | None = None

    def count(self, submission: Submission) -> None:
        with self._lock:
            if submission.status != Status.KERNEL_NOT_STARTED:
                self._in_a_row = 0
                return
            self._in_a_row += 1
            if self._in_a_row >= STOP_AFTER_FAILED_STARTS and self.stopped is None:
                self.stopped = (
                    f"the kernel could not start in the sandbox for {self._in_a_row} submissions in a row "
                    f"({submission.message}); nothing was graded. Run `transformer-course self-test` to see why; "
                    "--no-sandbox grades without the sandbox, for submissions you trust"
                )


class ClassGrading:
    """Step 4 for the class: each submission restored, run in a worker, reviewed meanwhile, and recorded.

    Runs go to the workers a few at a time (one more than ``workers.slots``, so that a worker that
    finishes finds the next run waiting while the grader records the last), so that the results are
    recorded as they come and a run that is stopped (:class:`FailedStarts`) has sent no more.
    """

    def __init__(
        self,
        context: GradingContext,
        steps: NbgraderSteps,
        runs: dict[str, SubmissionRun],
        regrade_changed_answers: bool = False,
    ):
        self.context, self.steps, self.runs = context, steps, runs
        self.course, self.assignment = context.course, context.assignment
        self.regrade_changed_answers = regrade_changed_answers
        self.starts = FailedStarts()
        self.record = RunRecord.read(self.course.root, self.assignment)
        self.before = dict(self.record.students)  # each student's record from earlier runs

    def grade(self, submissions: list[Submission], workers: Workers, progress: bool) -> list[Submission]:
        graded: list[Submission] = []
        waiting = deque(submissions)
        in_flight: dict[Future, _InFlight] = {}
        bar = tqdm(total=len(submissions), desc=f"grading {self.assignment}", unit="submission", disable=not progress)
        with bar, ThreadPoolExecutor(max_workers=workers.slots) as reviewers:
            while waiting or in_flight:
                while waiting and len(in_flight) <= workers.slots:  # one waiting, for the first worker free
                    submission = waiting.popleft()
                    flight = self._start(submission, workers, reviewers)
                    if flight is None:
                        self._done(submission, False, graded, bar)
                    else:
                        in_flight[flight.run] = flight
                if in_flight:
                    finished, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                    for future in finished:
                        self._done(*self._finish(in_flight.pop(future)), graded, bar)
        return sorted(graded, key=lambda submission: submission.student_id)

    def _done(self, submission: Submission, recorded: bool, graded: list[Submission], bar) -> None:
        """A submission that has ended: counted, kept in the run record, and given its feedback page where its grades
        were recorded (the page reads the record: its times, its due date)."""
        self.starts.count(submission)
        self.record.keep(submission)
        # A page of the grader's own failure (a kernel that could not start) tells a learner nothing.
        if recorded and submission.status != Status.KERNEL_NOT_STARTED:
            self._feedback(submission)
        graded.append(submission)
        bar.update(1)
        failed = sum(submission.status not in (Status.GRADED, Status.TESTS_RESTORED) for submission in graded)
        bar.set_postfix(failed=failed, refresh=False)

    def _start(self, submission: Submission, workers: Workers, reviewers: ThreadPoolExecutor) -> _InFlight | None:
        """Restore a submission and hand its run to a worker, and its review to a thread; None where there is
        nothing to run (intake refused it, or the run has stopped), or nbgrader could not restore it."""
        if submission.status is not None:
            return None  # intake said why
        if self.starts.stopped is not None:
            submission.end(Status.NOT_GRADED, Status.NOT_GRADED.meaning)
            return None
        try:
            notebooks = self._restore(submission)
        except Exception as error:  # noqa: BLE001  (one submission's surprise must not stop the class)
            submission.end(Status.ERROR, f"nbgrader could not restore the notebook: {_named(error)}")
            return None
        runs = tuple(replace(self.runs[name], notebook=notebook) for name, notebook in notebooks.items())
        review = reviewers.submit(bounded_review, submission.learner_cells, submission.library_implementations)
        return _InFlight(submission, workers.submit(run_notebooks, runs), review, tuple(notebooks))

    def _restore(self, submission: Submission) -> dict[str, dict]:
        """What was handed in kept in ``submitted/``, manual scores nobody saved removed from the gradebook, and the
        notebooks restored with nbgrader's steps (returned by file name, to be run)."""
        started = time.perf_counter()
        keep_submitted(self.course.submitted_directory, submission)
        submission.findings += remove_unreviewed_manual_scores(
            self.context.db_url, self.course.course_id, self.assignment, submission.student_id
        )
        submission.findings += self._follow_written_answers(submission)
        notebooks = self.steps.restore(submission.student_id, submission.notebooks, submission.submitted_at)
        submission.seconds["gradebook"] = time.perf_counter() - started
        return notebooks

    def _follow_written_answers(self, submission: Submission) -> list[str]:
        """The written answers' versions into the submission; a finding for each manual score given to another
        version of its answer (cleared, with the run's ``regrade_changed_answers``)."""
        where = (self.context.db_url, self.course.course_id, self.assignment, submission.student_id)
        scores = reviewed_manual_scores(*where)
        before = self.before.get(submission.student_id)
        answers, changed = follow(
            before.written_answers if before else {}, written_answer_texts(submission.notebooks), scores
        )
        findings = []
        for key in changed:
            cell, score = key.partition("/")[2], scores[key].score
            given = f"{cell}: the written answer changed since its manual score of {score:g}"
            if self.regrade_changed_answers:
                answers[key] = WrittenAnswer(answers[key].graded)
                findings.append(f"{given} was given: score and comment cleared, to be graded again")
            else:
                findings.append(
                    f"{given} was given; the score stands: grade it again in formgrader, or autograde with "
                    "--regrade-changed-answers to clear it"
                )
        if self.regrade_changed_answers and changed:
            clear_manual_scores(*where, changed)
        submission.written_answers = answers
        return findings

    def _finish(self, flight: _InFlight) -> tuple[Submission, bool]:
        """A finished run's outcome written into its submission, which it ends: the review's findings first, then the
        run's; the grades recorded in the gradebook and ``autograded/``. Returns the submission and whether its grades
        were recorded."""
        submission = flight.submission
        submission.findings[:0] = flight.review.result()
        try:
            outcomes = flight.run.result()
        except Exception as error:  # noqa: BLE001  (a worker that died fails its own submission only)
            return submission.end(Status.ERROR, f"the sandboxed run failed: {_named(error)}"), False
        # what the run saw the learner's code do (a forbidden operator it reached), beside what the review read
        submission.findings += [finding for outcome in outcomes for finding in outcome.findings]
        for outcome in outcomes:
            for step, seconds in outcome.seconds.items():
                submission.seconds[step] = submission.seconds.get(step, 0.0) + seconds
        started = time.perf_counter()
        try:
            executed = {name: (outcome.notebook, outcome.verdicts) for name, outcome in zip(flight.names, outcomes)}
            self.steps.record(submission.student_id, executed)
        except Exception as error:  # noqa: BLE001
            return submission.end(Status.ERROR, f"nbgrader could not record the grades: {_named(error)}"), False
        submission.seconds["gradebook"] += time.perf_counter() - started
        problem = worst([outcome.problem for outcome in outcomes if outcome.problem is not None])
        if problem is not None:
            submission.end(problem.status, problem.message)
        elif submission.repairs:
            submission.end(Status.TESTS_RESTORED, submission.repairs)
        else:
            submission.end(Status.GRADED, "")
        return submission, True

    def _feedback(self, submission: Submission) -> None:
        """The learner's feedback page; what went wrong making it, in the submission's message (kept again)."""
        started = time.perf_counter()
        problem = write_feedback(self.context, submission.student_id)
        submission.seconds["feedback"] = time.perf_counter() - started
        if problem is not None:
            submission.message = "; ".join(filter(None, [submission.message, problem]))
            self.record.keep(submission)


@dataclass
class _InFlight:
    """A submission whose run a worker has, and what it waits for."""

    submission: Submission
    run: Future
    review: Future
    names: tuple[str, ...]  # its notebooks, in the order of the run's outcomes


def _named(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"[:500]
