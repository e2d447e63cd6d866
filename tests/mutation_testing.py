"""How strong the visible tests are, measured: mutation testing of the assignments' model answers.

Each answer cell's model answer (the code between nbgrader's ``### BEGIN SOLUTION`` and ``### END SOLUTION``) is
changed in one small way at a time by mutmut's mutation operators (a ``-`` for a ``+``, ``<`` for ``<=``, an
argument dropped or made ``None``, a number off by one, ``True`` for ``False``...): each change is a *mutant*, a
plausible slip of a learner who understood most of the part. Every mutant is then graded as a learner's notebook
is graded (:mod:`notebook_runs`): the notebook runs in order up to the mutant's part, and the part's cells run
with the mutant in place of the model answer. Its verdict is

- ``visible``: a visible test of its own part fails (the learner sees it when they run the tests, or ``check``);
  a mutant that runs past its time is counted here too, as the cell's timeout would show it;
- ``hidden``: its part's visible tests pass and its hidden tests fail (the learner hears of it from the grade);
- ``survived``: every test of its part passes.

A part is a test cell and the answer cells since the test cell before it (``solutions/*/grading.yml`` and the
notebooks' structure: each test cell grades the answers above it). A mutant that survives may be *equivalent*: it
does what the part asks just as the model answer does (``x.sum(dim=+1)`` for ``x.sum(dim=-1)`` on a matrix, say).
Those are listed, each with the reason, in ``benchmarks/mutants.yml``, a reviewed file; so are the few that only
the hidden tests catch, with the reason a visible test should not. The score of an assignment is the share of its
non-equivalent mutants that a visible test of their own part kills.

Each mutant runs in a process forked from the notebook's state just before its part's first answer cell, so the
cells before it run once, and nothing a mutant does (a parameter trained in place, a global seed drawn from, a
checkpoint written) reaches another.
"""

from __future__ import annotations

import contextlib
import datetime
import difflib
import importlib
import io
import json
import multiprocessing
import os
import resource
import shutil
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst
import torch
import yaml
from libcst.metadata import MetadataWrapper
from mutmut.mutation.file_mutation import MutationVisitor
from mutmut.mutation.mutators import mutation_operators
from mutmut.mutation.pragma_handling import IgnoredCode
from notebook_runs import code_cells, hidden_test_failure, namespace_learner, run_cell, with_answers

from transformer_course.grading.course import Course
from transformer_course.grading.nbgrader_cells import (
    answer_sources,
    grade_id,
    nbgrader_metadata,
    source_text,
    split_hidden_tests,
    test_sources,
)
from transformer_course.grading.policy import GradingPolicy

REPOSITORY = Path(__file__).resolve().parents[1]
REVIEWED = REPOSITORY / "benchmarks" / "mutants.yml"
BEGIN_SOLUTION, END_SOLUTION = "### BEGIN SOLUTION", "### END SOLUTION"
# A mutant's part may run this many times as long as the model answer's before it counts as timed out (and at
# least MINIMUM_TIMEOUT seconds): a loop whose step a mutant reversed never ends.
TIMEOUT_FACTOR, MINIMUM_TIMEOUT = 20, 20.0
# Memory a mutant's process may take beyond the notebook's (a mutated size can ask for terabytes).
MEMORY_ALLOWANCE = 6 * 2**30
# The parts that train a model for minutes per mutant (the final project's graded run): CI and a quick benchmark
# leave them to the full run.
TRAINING_PARTS = {"07-final-project": {"test-train-and-evaluate"}}


@dataclass(frozen=True)
class Mutant:
    """One mutation of one answer cell's model answer."""

    assignment: str
    cell: str  # the answer cell's grade_id
    part: str  # the grade_id of the test cell that grades it
    line: int  # the first changed line, counted in the cell from 1
    original: str  # the changed lines as the model answer has them (stripped, joined by newlines)
    mutated: str  # the same lines in the mutant
    source: str  # the whole cell, mutated

    @property
    def key(self) -> tuple[str, str, str, str]:
        """What names a mutant in the reviewed file: its assignment, its cell and its one change."""
        return self.assignment, self.cell, self.original, self.mutated

    def describe(self) -> str:
        return f"{self.cell} line {self.line}: `{self.original}` → `{self.mutated}`"


@dataclass
class Verdict:
    verdict: str  # "visible", "hidden" or "survived" (see the module's docstring), or "error": the runner's own fault
    message: str = ""  # the first line of the failure that killed it
    timed_out: bool = False


# ----------------------------------------------------------------------------- making mutants


def solution_lines(source: str) -> set[int]:
    """The 1-based lines of ``source`` between nbgrader's solution markers (the model answer's own lines)."""
    lines, inside = set(), False
    for number, line in enumerate(source.splitlines(), start=1):
        if BEGIN_SOLUTION in line:
            inside = True
        elif END_SOLUTION in line:
            inside = False
        elif inside:
            lines.add(number)
    return lines


def mutations_of(source: str, lines: set[int]) -> Iterator[str]:
    """Every mutant mutmut's operators make of the nodes that start on ``lines`` of ``source``: the mutated
    sources, in the order mutmut finds them, each once."""
    wrapper = MetadataWrapper(cst.parse_module(source))
    visitor = MutationVisitor(mutation_operators, IgnoredCode(set(), set(), set()), covered_lines=lines)
    module = wrapper.visit(visitor)
    seen = {source}
    for mutation in visitor.mutations:
        mutated = module.deep_replace(mutation.original_node, mutation.mutated_node).code
        if mutated not in seen:
            seen.add(mutated)
            yield mutated


def changed_lines(before: str, after: str) -> tuple[int, str, str]:
    """The first changed line (1-based) and the changed lines before and after, stripped and joined."""
    matcher = difflib.SequenceMatcher(a=before.splitlines(), b=after.splitlines(), autojunk=False)
    old_lines, new_lines, first = [], [], None
    for tag, a_start, a_end, b_start, b_end in matcher.get_opcodes():
        if tag != "equal":
            first = a_start + 1 if first is None else first
            old_lines += before.splitlines()[a_start:a_end]
            new_lines += after.splitlines()[b_start:b_end]
    return first or 1, "\n".join(line.strip() for line in old_lines), "\n".join(line.strip() for line in new_lines)


def parts(notebook: dict) -> dict[str, str]:
    """grade_id of each answer code cell -> the grade_id of the test cell that follows it (its part's)."""
    found, waiting = {}, []
    for cell in notebook["cells"]:
        metadata = nbgrader_metadata(cell)
        if cell["cell_type"] != "code":
            continue
        if metadata.get("grade"):
            found |= dict.fromkeys(waiting, metadata["grade_id"])
            waiting = []
        elif metadata.get("solution"):
            waiting.append(metadata["grade_id"])
    return found


def assignments() -> list[str]:
    return Course(REPOSITORY).assignments()


def source_notebook(assignment: str) -> dict:
    (path,) = Course(REPOSITORY).source_notebooks(assignment)
    return json.loads(path.read_text(encoding="utf-8"))


def exercise_notebook(assignment: str) -> dict:
    (path,) = Course(REPOSITORY).released_notebooks(assignment)
    return json.loads(path.read_text(encoding="utf-8"))


def mutants(assignment: str) -> list[Mutant]:
    """The mutants of every model answer of ``assignment``, in notebook order."""
    notebook = source_notebook(assignment)
    part_of = parts(notebook)
    made = []
    for cell in notebook["cells"]:
        name = grade_id(cell)
        if name not in part_of:
            continue
        source = source_text(cell)
        for mutated in mutations_of(source, solution_lines(source)):
            line, original, changed = changed_lines(source, mutated)
            made.append(Mutant(assignment, name, part_of[name], line, original, changed, mutated))
    return made


# ----------------------------------------------------------------------------- the reviewed judgements


@dataclass(frozen=True)
class Judgement:
    """A reviewer's word on one mutant: ``equivalent`` (it computes what the model answer computes) or
    ``hidden`` (only the hidden tests catch it, and a visible test should not), and why."""

    kind: str
    reason: str


def reviewed(path: Path = REVIEWED) -> dict[tuple[str, str, str, str], Judgement]:
    """The reviewed file's judgements, by mutant key.

    The file reads, per assignment and answer cell::

        01-attention:
          softmax:
            - change: ["shifted = scores - scores.max(dim=-1, keepdim=True).values", "..."]  # before, after
              equivalent: the reason
    """
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    judgements = {}
    for assignment, cells in data.items():
        for cell, entries in cells.items():
            for entry in entries:
                before, after = entry["change"]
                (kind,) = {"equivalent", "hidden"} & set(entry)
                judgements[assignment, cell, before, after] = Judgement(kind, entry[kind])
    return judgements


# ----------------------------------------------------------------------------- running mutants


@dataclass
class PartRun:
    """What the runner learned of one part: its mutants' verdicts and the model answer's seconds."""

    part: str
    seconds: float
    verdicts: dict[Mutant, Verdict] = field(default_factory=dict)


def _first_line(text: str) -> str:
    return next((line for line in str(text).splitlines() if line.strip()), "")[:300]


def _judge_part(
    assignment: str,
    cells: list[dict],
    answers: dict[str, str],
    hidden_code: str,
    policy,
    namespace: dict,
    mutant: Mutant | None,
    report=lambda phase: None,
) -> Verdict:
    """Run one part's cells in ``namespace`` with ``mutant`` in its cell's place, then its hidden tests (saying
    ``report("hidden")`` before them, so that a mutant that runs past its time there is counted as theirs)."""
    sources = dict(answers)
    if mutant is not None:
        sources[mutant.cell] = mutant.source
    for cell in cells:
        metadata = nbgrader_metadata(cell)
        error = run_cell(cell, namespace, sources.get(metadata.get("grade_id")))
        if error is not None and metadata.get("grade"):
            return Verdict("visible", f"{type(error).__name__}: {_first_line(error)}")
    test = nbgrader_metadata(cells[-1])["grade_id"]
    report("hidden")
    learner = namespace_learner(namespace, policy, sources)
    failure = hidden_test_failure(hidden_code, assignment, test, learner)
    if failure is not None:
        return Verdict("hidden", _first_line(failure.split("\n", 1)[-1]))
    return Verdict("survived")


def _in_child(connection, judge, files: tuple[Path, ...]) -> None:
    """A forked process's work, in a scratch folder of its own with the assignment's data files (nothing one
    mutant writes, a checkpoint, reaches another): judge, send the verdict, and leave without running the
    parent's exit handlers."""
    try:
        limit = _memory_in_use() + MEMORY_ALLOWANCE
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        with (
            tempfile.TemporaryDirectory(prefix="mutant-") as scratch,
            _working_directory(Path(scratch)),
            contextlib.redirect_stdout(io.StringIO()),
            contextlib.redirect_stderr(io.StringIO()),
        ):
            for path in files:
                shutil.copyfile(path, Path(scratch) / path.name)
            verdict = judge(connection.send)
        connection.send(verdict)
    except BaseException as error:  # the harness's own bug: say which
        connection.send(Verdict("error", f"{type(error).__name__}: {_first_line(error)}"))
    finally:
        connection.close()
        os._exit(0)


def _memory_in_use() -> int:
    """This process's virtual memory size in bytes (what RLIMIT_AS counts)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _forked_verdicts(judges: list, timeout: float, jobs: int, files: tuple[Path, ...] = ()) -> list[Verdict]:
    """Run each of ``judges`` in a process forked from this one, ``jobs`` at a time. A judge is called with a
    function that reports its phase ("hidden") and returns a Verdict; one still running after ``timeout`` seconds
    is killed, and timed out in the phase it reported last (its visible tests, if none)."""
    context = multiprocessing.get_context("fork")
    results: list[Verdict | None] = [None] * len(judges)
    pending = list(enumerate(judges))
    running = {}
    while pending or running:
        while pending and len(running) < jobs:
            index, judge = pending.pop(0)
            receive, send = context.Pipe(duplex=False)
            process = context.Process(target=_in_child, args=(send, judge, files), daemon=True)
            process.start()
            send.close()
            running[index] = (process, receive, time.monotonic(), ["visible"])
        for index, (process, receive, started, phase) in list(running.items()):
            if receive.poll(0.02):
                try:
                    message = receive.recv()
                except EOFError:
                    message = Verdict("error", f"the mutant's process died (exit code {process.exitcode})")
                if isinstance(message, str):
                    phase[0] = message
                    continue
                results[index] = message
            elif not process.is_alive() and not receive.poll(0):
                results[index] = Verdict("error", f"the mutant's process died (exit code {process.exitcode})")
            elif time.monotonic() - started > timeout:
                process.kill()
                results[index] = Verdict(phase[0], f"ran past {timeout:.0f} s", timed_out=True)
            else:
                continue
            process.join()
            receive.close()
            del running[index]
    return results


class HarnessError(RuntimeError):
    """The model answer does not pass its own part here: the runner, not the tests, is wrong."""


@dataclass
class _Grading:
    """What grading one assignment's mutants needs, read once."""

    assignment: str
    policy: GradingPolicy
    answers: dict[str, str]  # grade_id -> the model answer's source, of every answer cell
    hidden: dict[str, str]  # grade_id -> the hidden tests of every test cell
    files: tuple[Path, ...]  # the assignment's data files, put beside the notebook
    jobs: int

    def judge(self, cells: list[dict], namespace: dict, mutant: Mutant | None):
        """The function a forked process runs: ``cells`` (a part) with ``mutant`` in place, then its hidden tests."""
        hidden = self.hidden[grade_id(cells[-1])]
        return lambda report: _judge_part(
            self.assignment, cells, self.answers, hidden, self.policy, namespace, mutant, report
        )

    def run_here(self, cell: dict, namespace: dict) -> None:
        """Run ``cell`` with the model answers in this process, where it must not fail."""
        error = run_cell(cell, namespace)
        if error is not None:
            name = grade_id(cell) or "a cell without a grade_id"
            raise HarnessError(f"{self.assignment}: with the model answers, {name} fails: {error}")

    def part(self, cells: list[dict], namespace: dict, selected: list[Mutant]) -> PartRun:
        """Grade ``selected`` (mutants of the part ``cells``), after checking that the model answer passes it."""
        started = time.perf_counter()
        (clean,) = _forked_verdicts([self.judge(cells, namespace, None)], 3600, 1, self.files)
        seconds = time.perf_counter() - started
        if clean.verdict != "survived":
            raise HarnessError(f"{self.assignment}: the model answer fails {grade_id(cells[-1])}: {clean.message}")
        timeout = max(MINIMUM_TIMEOUT, TIMEOUT_FACTOR * seconds)
        verdicts = _forked_verdicts([self.judge(cells, namespace, m) for m in selected], timeout, self.jobs, self.files)
        return PartRun(grade_id(cells[-1]), seconds, dict(zip(selected, verdicts)))


def run_mutants(assignment: str, selected: Iterable[Mutant], jobs: int = 1) -> list[PartRun]:
    """Grade each of ``selected`` (mutants of ``assignment``) by its own part's visible and hidden tests.

    The notebook runs in this process, in a scratch folder, as the grader runs it (``NBGRADER_EXECUTION`` set), with
    the model answers. A part's cells (from its first answer cell to its test cell) that have mutants run once in a
    forked process with no mutant, which must pass (else :class:`HarnessError`), then once per mutant, ``jobs`` at a
    time. Parts after the last selected mutant's are not run.
    """
    course = Course(REPOSITORY)
    source = source_notebook(assignment)
    answers = answer_sources(source, code_only=True)
    grading = _Grading(
        assignment,
        course.policy(assignment),
        answers,
        {test: split_hidden_tests(text)[1] for test, text in test_sources(source).items()},
        tuple(course.data_files(assignment)),
        jobs,
    )
    by_part: dict[str, list[Mutant]] = {}
    for mutant in selected:
        by_part.setdefault(mutant.part, []).append(mutant)
    runs, namespace, cells = [], {"__name__": "__notebook__"}, []
    importlib.import_module("torch._dynamo")  # what a tensor made under the forbidden-operator watch imports: once
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a forked process must not inherit a busy thread pool; and the cores are shared
    try:
        with (
            tempfile.TemporaryDirectory(prefix="mutants-") as scratch,
            _working_directory(Path(scratch)),
            _environment(NBGRADER_EXECUTION="autograde", MPLBACKEND="Agg"),
            torch.random.fork_rng(devices=[]),
            contextlib.redirect_stdout(io.StringIO()),
        ):
            for cell in code_cells(with_answers(exercise_notebook(assignment), answers)):
                if not cells and not nbgrader_metadata(cell).get("solution"):
                    grading.run_here(cell, namespace)  # before a part's first answer: the same for every mutant
                    continue
                cells.append(cell)  # the part: its answer cells and what lies between them, then its test cell
                if not nbgrader_metadata(cell).get("grade"):
                    continue
                if grade_id(cell) in by_part:
                    runs.append(grading.part(cells, namespace, by_part.pop(grade_id(cell))))
                if not by_part:
                    break
                for given in cells:  # the model answers, in this process: the state the next part starts from
                    grading.run_here(given, namespace)
                cells = []
    finally:
        torch.set_num_threads(threads)
    return runs


@contextlib.contextmanager
def _environment(**variables: str) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in variables}
    os.environ.update(variables)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextlib.contextmanager
def _working_directory(path: Path) -> Iterator[None]:
    previous = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(previous)


# ----------------------------------------------------------------------------- samples and reports


def daily_sample(made: list[Mutant], size: int, day: datetime.date) -> list[Mutant]:
    """``size`` of ``made``, every k-th from an offset that moves by one each day: over k days, every mutant."""
    if size >= len(made):
        return list(made)
    stride = -(-len(made) // size)
    return made[day.toordinal() % stride :: stride]


def score_rows(
    assignment: str, runs: list[PartRun], judgements: dict[tuple[str, str, str, str], Judgement]
) -> tuple[dict, list[dict], list[str]]:
    """The assignment's row, its parts' rows (made, equivalent, visible, hidden, survived, score) and the Markdown
    lists of its surviving, hidden-only and equivalent mutants. A mutant judged equivalent that a test kills is
    counted by its verdict, and listed as a wrong judgement."""
    rows, listed = [], {"surviving": [], "killed only by hidden tests": [], "equivalent": [], "errors": []}
    for run in runs:
        row = dict.fromkeys(("made", "equivalent", "visible", "hidden", "survived"), 0) | {"name": run.part}
        for mutant, verdict in run.verdicts.items():
            row["made"] += 1
            judgement = judgements.get(mutant.key)
            if verdict.verdict == "error":
                listed["errors"].append(f"- {mutant.describe()}: {verdict.message}")
                continue
            if judgement is not None and judgement.kind == "equivalent":
                if verdict.verdict == "survived":
                    row["equivalent"] += 1
                    listed["equivalent"].append(f"- {mutant.describe()}: {judgement.reason}")
                    continue
                listed["errors"].append(
                    f"- {mutant.describe()}: judged equivalent, but a {verdict.verdict} test kills it"
                )
            row[verdict.verdict] += 1
            if verdict.verdict == "survived":
                listed["surviving"].append(f"- {mutant.describe()}")
            elif verdict.verdict == "hidden":
                reason = f": {judgement.reason}" if judgement is not None and judgement.kind == "hidden" else ""
                listed["killed only by hidden tests"].append(f"- {mutant.describe()} ({verdict.message}){reason}")
        rows.append(row)
    total = {key: sum(row[key] for row in rows) for key in ("made", "equivalent", "visible", "hidden", "survived")}
    for row in [*rows, total]:
        row["score"] = 100 * row["visible"] / max(1, row["made"] - row["equivalent"])
    total["name"] = assignment
    text = [
        f"\n{assignment}, {title} ({len(lines)}):\n\n" + "\n".join(lines) for title, lines in listed.items() if lines
    ]
    return total, rows, text
