"""Everything around the sandbox trusts nothing a submission contains, names or prints.

Each attack is an ordinary submission folder, written from README's "What grading guarantees": the
kernel printing its own verdicts, student ids that are code, patterns or spreadsheet formulas, files
that stop or stall the whole class, output that floods the grader, feedback pages that show the hidden
tests or run the learner's HTML, links to the solutions, and what the sandbox shows of the grader. Two
more runs check the grader itself: installed under /tmp in a path with a space, and in an environment
whose sandbox cannot start a kernel. Honest classmates in every run keep their full marks.
"""

from __future__ import annotations

import ast
import copy
import csv
import html
import html.parser
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
from grading_support import (
    REPOSITORY,
    copy_course,
    exercise_notebook,
    full_marks,
    grade,
    hidden_lines,
    notebook_name,
    released_text,
    solution_notebook,
    with_appended_code,
    write_submissions,
)
from nbgrader.api import Gradebook, MissingEntry

from transformer_course.grading.autograde import GradingLimits
from transformer_course.grading.status import GRADED_STATUSES

pytestmark = [pytest.mark.needs_nbgrader, pytest.mark.needs_bwrap]  # grade in the sandbox

FIRST = "01-attention"
NOTEBOOK = notebook_name(FIRST)
LIMITS = GradingLimits(cell_timeout=30, submission_timeout=300, memory_limit_mb=2048)
LIMIT_OPTIONS = ["--cell-timeout", "30", "--submission-timeout", "300", "--memory-limit-mb", "2048"]
# Seconds a command-line run of a small class may take before it counts as stalled.
CLASS_RUN_SECONDS = 540
# The grader's own process (nbgrader with torch) holds about 0.4 GB; a submission may not grow it past this.
GRADER_MEMORY_LIMIT_KB = 1024 * 1024
HIDDEN_BLOCK = re.compile(r"### BEGIN HIDDEN TESTS\n(.*?)### END HIDDEN TESTS", re.DOTALL)
SPREADSHEET_FORMULA_STARTS = ("=", "+", "-", "@")


# ----------------------------------------------------------------------------- notebooks


def _nbgrader(cell: dict) -> dict:
    metadata = cell.get("metadata", {}).get("nbgrader", {})
    return metadata if isinstance(metadata, dict) else {}


def _with_cell_after(notebook: dict, grade_id: str, code: str, cell_type: str = "code") -> dict:
    """A copy of ``notebook`` with a new cell of ``code`` right after the cell ``grade_id`` (an nbgrader cell's
    grade_id, or the Jupyter id of a cell that is not nbgrader's, such as an instruction)."""
    notebook = copy.deepcopy(notebook)
    index = next(
        i for i, cell in enumerate(notebook["cells"]) if grade_id in (_nbgrader(cell).get("grade_id"), cell.get("id"))
    )
    cell = {"cell_type": cell_type, "id": f"added-{uuid.uuid4().hex[:8]}", "metadata": {}, "source": code}
    if cell_type == "code":
        cell.update(execution_count=None, outputs=[])
    notebook["cells"].insert(index + 1, cell)
    return notebook


def _with_answers(notebook: dict, answers: dict[str, str]) -> dict:
    """A copy of ``notebook`` whose answer cells named in ``answers`` hold that code instead."""
    notebook = copy.deepcopy(notebook)
    for cell in notebook["cells"]:
        if _nbgrader(cell).get("grade_id") in answers:
            cell["source"] = answers[_nbgrader(cell)["grade_id"]]
    return notebook


def _answer(notebook: dict, grade_id: str) -> str:
    return next("".join(cell["source"]) for cell in notebook["cells"] if _nbgrader(cell).get("grade_id") == grade_id)


def _hidden_code(assignment: str = FIRST) -> str:
    """Every hidden test of the assignment's source notebook, as one text."""
    return "\n".join(
        block
        for cell in solution_notebook(assignment)["cells"]
        for block in HIDDEN_BLOCK.findall("".join(cell["source"]))
    )


def _hidden_lines_the_kernel_may_not_see(assignment: str = FIRST) -> list[str]:
    """The hidden tests' lines, stripped, that README says never reach the kernel: all of them while it says
    hidden tests never reach it; otherwise all but those of the functions a test runs there (``learner.run``) or
    puts in place of the learner's when it runs a cell again (``learner.rerun(..., reference=(...))``)."""
    readme = " ".join((REPOSITORY / "README.md").read_text(encoding="utf-8").split())
    lines, allowed = [], set()
    for cell in solution_notebook(assignment)["cells"]:
        for block in HIDDEN_BLOCK.findall("".join(cell["source"])):
            lines += [line.strip() for line in block.splitlines() if line.strip()]
            if "never reach the learner's kernel" in readme:
                continue
            tree = ast.parse(block)
            sent = {
                node.args[0].id
                for node in ast.walk(tree)
                if isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "run"
                and node.args
                and isinstance(node.args[0], ast.Name)
            }
            sent |= {
                element.id
                for node in ast.walk(tree)
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "rerun"
                for keyword in node.keywords
                if keyword.arg == "reference" and isinstance(keyword.value, ast.Tuple)
                for element in keyword.value.elts
                if isinstance(element, ast.Name)
            }
            for node in tree.body:
                if isinstance(node, ast.FunctionDef) and node.name in sent:
                    allowed.update(line.strip() for line in ast.get_source_segment(block, node).splitlines())
    return [line for line in lines if line not in allowed]


# A blank notebook whose kernel answers every cell with a result before the cell's own outputs:
# nbgrader gives a test cell the points of the first result it finds there (any text but a number: all).
CLAIMS_EVERY_RESULT = """
_shell = get_ipython()


def _claim(info):
    _shell.displayhook("'all tests passed'")


_shell.events.register("pre_run_cell", _claim)
"""

# Wrong answers of the right shapes, and the visible tests' helpers made to return a value: the test
# cells whose last line is a check_close(...) then end with a result.
RIGGED_HELPER = {
    "project-qkv": (
        "def check_close(*args, **kwargs):\n"
        "    return 'close enough'\n"
        "\n"
        "\n"
        "check_close_given_your_parts = check_close\n"
        "\n"
        "\n"
        "def project_qkv(x, w_q, w_k, w_v):\n"
        "    rows = x.shape[:-1]\n"
        "    q, k, v = (torch.zeros(*rows, w.shape[1]) for w in (w_q, w_k, w_v))\n"
        "    return q, k, v\n"
    ),
    "attention-scores": "def attention_scores(query, key):\n    return torch.zeros(*query.shape[:-1], key.shape[-2])\n",
    "scaling": "def scale_scores(scores, d_k):\n    return torch.zeros_like(scores)\n",
    "softmax": "def softmax(scores):\n    return torch.zeros_like(scores)\n",
    "apply-mask": "def apply_mask(scores, mask):\n    return scores\n",
    "attention": (
        "def attention(query, key, value, mask=None, scale=True):\n"
        "    rows = query.shape[:-1]\n"
        "    return torch.zeros(*rows, value.shape[-1]), torch.zeros(*rows, key.shape[-2])\n"
    ),
    "cosine": "def cosine_scores(query, key):\n    return torch.zeros(*query.shape[:-1], key.shape[-2])\n",
}

# Six thousand short outputs from an honest answer cell: more than a cell's output limit, in many pieces.
DISPLAYS_6000_LINES = "for line in range(6000):\n    display(line)\n"

LEARNER_HTML = (
    "My notes on attention.\n\n<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>\n\n"
    '<a href="javascript:alert(1)">a link</a>\n'
)

# What the kernel can read of the grader: /proc shows mounts, command lines and environments. The answer
# cells below fail their visible test when it finds the course's path or the student's id there.
READS_PROC = """
import os


def _grader_traces(needles):
    found = []
    paths = ["/proc/self/mountinfo", "/proc/self/cgroup", "/proc/self/environ"]
    for pid in filter(str.isdigit, os.listdir("/proc")):
        paths += [f"/proc/{pid}/cmdline", f"/proc/{pid}/environ"]
    for path in paths:
        try:
            with open(path, "rb") as file:
                text = file.read().decode("utf-8", "replace")
        except OSError:
            continue
        found += [f"{path} shows {needle!r}" for needle in needles if needle in text]
    return found


GRADER_TRACES = _grader_traces(NEEDLES)
"""

# Every code the kernel is asked to run, kept: its text and the strings inside it (a hidden test's
# request travels as a JSON string).
RECORDS_CODE = """
import ast
import json

RECEIVED = []


def _strings(value):
    if isinstance(value, str):
        yield value
        try:
            yield from _strings(json.loads(value))
        except ValueError:
            pass
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _record(info):
    RECEIVED.append(info.raw_cell)
    try:
        tree = ast.parse(info.raw_cell)
    except SyntaxError:
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            RECEIVED.extend(_strings(node.value))


get_ipython().events.register("pre_run_cell", _record)


def hidden_code_received():
    text = "\\n".join(RECEIVED)
    return [line for line in HIDDEN_LINES if line in text]
"""

# The kernel writes straight into the pipe on which the grader reads the runner's answers (the
# runner's descriptors are reachable through /proc): first a valid answer with 150,000 empty outputs,
# which keeps the grader busy, then 2.5 GB of blank lines, which the grader reads meanwhile.
FLOODS_THE_GRADER = """
import fcntl
import json
import os
import sys


def _pipe_to_the_grader():
    parent = os.getppid()
    for number in os.listdir(f"/proc/{parent}/fd"):
        try:
            link = os.readlink(f"/proc/{parent}/fd/{number}")
            with open(f"/proc/{parent}/fdinfo/{number}") as info:
                flags = int(info.read().split()[3], 8)
        except (OSError, ValueError, IndexError):
            continue
        if number != "2" and link.startswith("pipe:") and flags & os.O_ACCMODE == os.O_WRONLY:
            return os.open(f"/proc/{parent}/fd/{number}", os.O_WRONLY)
    return None


def _flood():
    pipe = _pipe_to_the_grader()
    if pipe is None:
        return

    def send(data):
        view = memoryview(data)
        while view:
            view = view[os.write(pipe, view) :]

    try:
        fcntl.fcntl(pipe, 1031, 2**20)  # F_SETPIPE_SZ: a larger pipe is read faster
    except OSError:
        pass
    empty = {"output_type": "display_data", "data": {}, "metadata": {}}
    send((json.dumps({"outputs": [empty] * 150_000, "execution_count": 1, "problem": None}) + "\\n").encode())
    line = b" " * (2**20 - 1) + b"\\n"
    for _ in range(2500):
        send(line)


_flooded = False
_own_softmax = softmax


def softmax(scores):
    global _flooded
    frame = sys._getframe(1)
    while frame is not None and not frame.f_code.co_filename.endswith("probe.py"):
        frame = frame.f_back
    if frame is not None and not _flooded:  # asked by a hidden test: the grader waits for this answer
        _flooded = True
        try:
            _flood()
        except OSError:
            pass
    return _own_softmax(scores)
"""


def _promises_notebook(course_root: Path, student: str) -> dict:
    """The solution, plus checks that fail test-softmax if the sandbox shows the grader's paths or the student's
    id, and test-cosine if the kernel received code of the hidden tests that README says it never sees."""
    notebook = solution_notebook(FIRST)
    learner_text = HIDDEN_BLOCK.sub("", "\n".join("".join(cell["source"]) for cell in notebook["cells"]))
    hidden_lines = [
        line
        for line in _hidden_lines_the_kernel_may_not_see()
        if len(line) >= 20 and not line.startswith(("import ", "from ", "@", "#")) and line not in learner_text
    ]
    notebook = _with_cell_after(notebook, "imports", f"NEEDLES = {[str(course_root), student]!r}\n" + READS_PROC)
    notebook = _with_cell_after(notebook, "imports", f"HIDDEN_LINES = {hidden_lines!r}\n" + RECORDS_CODE)
    softmax_guard = (
        "\n_checked_softmax = softmax\n\n\ndef softmax(scores):\n"
        "    if GRADER_TRACES:\n"
        "        raise RuntimeError('the sandbox shows the grader: ' + '; '.join(GRADER_TRACES))\n"
        "    return _checked_softmax(scores)\n"
    )
    cosine_guard = (
        "\n_checked_cosine_scores = cosine_scores\n\n\ndef cosine_scores(query, key):\n"
        "    if hidden_code_received():\n"
        "        raise RuntimeError('the kernel received hidden tests: ' + ' | '.join(hidden_code_received()))\n"
        "    return _checked_cosine_scores(query, key)\n"
    )
    notebook = with_appended_code(notebook, "softmax", softmax_guard)
    return with_appended_code(notebook, "cosine", cosine_guard)


# ----------------------------------------------------------------------------- reading results


def _scores(course, student: str) -> dict[str, float]:
    """grade_id -> score of every test cell of the student's submission in the gradebook."""
    with Gradebook(course.default_db_url, course_id=course.course_id) as gradebook:
        notebook = gradebook.find_submission_notebook(Path(NOTEBOOK).stem, FIRST, student)
        return {grade_row.name: grade_row.score for grade_row in notebook.grades}


def _errors_in_autograded(course, student: str) -> str:
    """The error messages in the student's autograded notebook, for assertion messages."""
    path = course.root / "autograded" / student / FIRST / NOTEBOOK
    if not path.is_file():
        return f"(no autograded notebook at {path})"
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return " | ".join(
        f"{output.get('ename')}: {output.get('evalue')}"[:400]
        for cell in cells
        for output in cell.get("outputs", [])
        if output.get("output_type") == "error"
    )


def _result_for_folder(results: dict, folder: str):
    """What became of the folder ``folder``: its row, or the row that names it (an id mapped to a safe one)."""
    if folder in results:
        return results[folder]
    naming = [result for result in results.values() if folder in f"{result.student_id} {result.message}"]
    return naming[0] if len(naming) == 1 else None


def _is_refused(result) -> bool:
    return result.status not in GRADED_STATUSES and result.score in (None, 0)


def _feedback_pages(course) -> dict[str, list[Path]]:
    return {
        directory.name: sorted((directory / FIRST).glob("*.html"))
        for directory in sorted(course.feedback_directory.glob("*"))
        if (directory / FIRST).is_dir()
    }


class _LivePage(html.parser.HTMLParser):
    """What of a page a browser would run: event-handler attributes, script bodies, javascript: links."""

    def __init__(self):
        super().__init__()
        self.handlers, self.scripts, self.links = [], [], []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self.handlers += [f"<{tag} {name}={value!r}>" for name, value in attrs if name.lower().startswith("on")]
        self.links += [value for name, value in attrs if name in ("href", "src") and "javascript:" in (value or "")]
        self._in_script = tag == "script"

    def handle_endtag(self, tag):
        self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.scripts.append(data)


class _GraderMemory:
    """The peak memory (VmHWM) of each nbgrader process grading one student of ``course``, sampled while it runs."""

    def __init__(self, course_root: Path):
        self.course_root = course_root.resolve()
        self.peaks: dict[str, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exception):
        self._stop.set()
        self._thread.join()

    def _watch(self):
        while not self._stop.is_set():
            for pid in filter(str.isdigit, os.listdir("/proc")):
                try:
                    arguments = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                    if (
                        b"nbgrader" not in b" ".join(arguments)
                        or Path(f"/proc/{pid}/cwd").resolve() != self.course_root
                    ):
                        continue
                    status = Path(f"/proc/{pid}/status").read_text()
                except (OSError, RuntimeError):
                    continue
                student = next(
                    (
                        argument[len(b"--student=") :].decode()
                        for argument in arguments
                        if argument.startswith(b"--student=")
                    ),
                    None,
                )
                match = re.search(r"VmHWM:\s+(\d+) kB", status)
                if student is not None and match:
                    self.peaks[student] = max(self.peaks.get(student, 0), int(match.group(1)))
            time.sleep(0.2)


# ----------------------------------------------------------------------------- the hostile class

SHELL_MARKER = Path("/tmp") / f"transformer-course-student-id-ran-{uuid.uuid4().hex[:12]}"
# A folder name cannot hold "/": printf writes the marker's path from octal escapes.
SHELL_ID = "$(touch $(printf '{}'))".format(str(SHELL_MARKER).replace("/", "\\057"))
FORMULA_IDS = ("=2+5", "@SUM(1)")
PROMISES = "keeps-promises-5c1e"


@pytest.fixture(scope="module")
def hostile_class(tmp_path_factory):
    """One class of honest and hostile submissions, graded together in one run as an instructor would."""
    course = copy_course(tmp_path_factory.mktemp("untrusted-course"))
    directory = tmp_path_factory.mktemp("untrusted-submissions")
    solution, blank = solution_notebook(FIRST), exercise_notebook(FIRST)
    submissions = {
        "honest": solution,
        "blank-claims-every-result": _with_cell_after(blank, "imports", CLAIMS_EVERY_RESULT),
        "prints-through-a-rigged-helper": _with_answers(blank, RIGGED_HELPER),
        SHELL_ID: blank,
        "honest ": blank,
        **{formula: blank for formula in FORMULA_IDS},
        "displays-6000-lines": with_appended_code(solution, "softmax", DISPLAYS_6000_LINES),
        "writes-html": _with_cell_after(blank, "intro", LEARNER_HTML, cell_type="markdown"),
        PROMISES: _promises_notebook(course.root, PROMISES),
        "floods-the-grader": _with_answers(blank, {"softmax": _answer(solution, "softmax") + FLOODS_THE_GRADER}),
    }
    write_submissions(directory, FIRST, submissions)
    (directory / "links-the-solution").mkdir()
    (directory / "links-the-solution" / NOTEBOOK).symlink_to(course.root / "solutions" / FIRST / NOTEBOOK)
    (directory / "alias-of-honest").symlink_to(directory / "honest", target_is_directory=True)
    out = course.root / "grades.csv"
    started = time.monotonic()
    try:
        with _GraderMemory(course.root) as memory:
            results = grade(course, FIRST, directory, LIMITS, out=out)
    finally:
        shell_ran = SHELL_MARKER.exists()
        SHELL_MARKER.unlink(missing_ok=True)
    print(f"hostile class graded in {time.monotonic() - started:.0f} s")
    return course, results, out, memory.peaks, shell_ran


def test_honest_work_is_graded_in_full_beside_the_attacks(hostile_class):
    result = hostile_class[1]["honest"]
    assert (result.status, result.score) == ("graded", full_marks(FIRST)), f"expected full marks, got {result}"


def test_a_kernel_that_publishes_results_gains_no_points(hostile_class):
    result = hostile_class[1]["blank-claims-every-result"]
    assert result.score == 0, f"a blank notebook whose kernel emits a result before each test scored {result.score}"


def test_a_visible_tests_helper_made_to_return_a_value_gains_no_points(hostile_class):
    course, results = hostile_class[:2]
    result = results["prints-through-a-rigged-helper"]
    assert result.score == 0, (
        f"wrong answers with check_close returning a value scored {result.score}: {_scores(course, result.student_id)}"
    )


def test_a_student_id_is_never_run_as_a_command(hostile_class):
    assert not hostile_class[4], f"the folder name {SHELL_ID!r} ran as a command: {SHELL_MARKER} was created"


def test_a_student_id_outside_the_id_rule_is_refused_with_a_reason(hostile_class):
    results = hostile_class[1]
    for folder in (SHELL_ID, *FORMULA_IDS):
        result = _result_for_folder(results, folder)
        assert result is not None, f"no row says what became of the folder {folder!r}: {sorted(results)}"
        if result.student_id == folder:  # kept as it is: then it must be refused, saying why
            assert result.status not in GRADED_STATUSES and "id" in result.message.lower(), (
                f"the folder {folder!r} was expected to be refused with a message about student ids; got {result}"
            )


def test_a_folder_named_like_a_classmate_plus_a_space_leaves_the_classmate_graded(hostile_class):
    course, results = hostile_class[:2]
    honest = results["honest"]
    assert (honest.status, honest.score) == ("graded", full_marks(FIRST)), f"the classmate's result: {honest}"
    with Gradebook(course.default_db_url, course_id=course.course_id) as gradebook:
        recorded = gradebook.find_submission(FIRST, "honest").score
    assert recorded == full_marks(FIRST), f"the gradebook holds {recorded} for the classmate, expected full marks"


def test_no_grades_csv_field_starts_like_a_spreadsheet_formula(hostile_class):
    text = hostile_class[2].read_text(encoding="utf-8")
    rows = list(csv.reader(text.splitlines()))
    formulas = [field for row in rows for field in row if field.startswith(SPREADSHEET_FORMULA_STARTS)]
    assert not formulas, f"grades.csv fields a spreadsheet would run as formulas: {formulas}"


def test_an_honest_notebook_that_displays_6000_lines_is_graded_in_full(hostile_class):
    result = hostile_class[1]["displays-6000-lines"]
    assert (result.status, result.score) == ("graded", full_marks(FIRST)), f"expected full marks, got {result}"


def test_no_feedback_page_shows_the_hidden_tests(hostile_class):
    course = hostile_class[0]
    pages = _feedback_pages(course)
    assert pages.get("honest"), f"the honest learner has no feedback page: {pages}"
    # A failed hidden test is told by its name and its author's message: its code is what must not show.
    secret = sorted(hidden_lines(_hidden_code(), released_text(FIRST)))
    assert secret, "the source notebook should have hidden tests"
    shown = {
        page.relative_to(course.feedback_directory).as_posix(): [
            line
            for line in [*secret, "BEGIN HIDDEN TESTS"]
            if line in page.read_text(encoding="utf-8") or html.escape(line) in page.read_text(encoding="utf-8")
        ]
        for student, student_pages in pages.items()
        if student != PROMISES  # its own cells quote the hidden tests' lines it watches for
        for page in student_pages
    }
    shown = {page: found for page, found in shown.items() if found}
    assert not shown, f"feedback pages that show hidden tests: {shown}"


def test_learner_markdown_does_not_run_in_the_feedback_page(hostile_class):
    course = hostile_class[0]
    pages = _feedback_pages(course).get("writes-html")
    assert pages, "the learner who wrote HTML has no feedback page"
    page = _LivePage()
    page.feed(pages[0].read_text(encoding="utf-8"))
    live = page.handlers + [script for script in page.scripts if "alert(1)" in script] + page.links
    assert not live, f"the learner's HTML is live in the feedback page: {live}"


def test_a_notebook_that_links_to_the_solutions_is_refused_not_followed(hostile_class):
    result = hostile_class[1].get("links-the-solution")
    assert result is not None, "the folder holding a link was not reported"
    assert result.score != full_marks(FIRST) and _is_refused(result), (
        f"a symbolic link to solutions/ was expected to be refused; got {result}"
    )


def test_a_student_folder_that_links_to_a_classmates_is_not_graded_as_its_own(hostile_class):
    result = hostile_class[1].get("alias-of-honest")
    assert result is None or _is_refused(result), (
        f"a folder that is a link to another student's folder was graded from that student's work: {result}"
    )


def test_the_sandbox_does_not_show_the_course_path_or_the_student_id(hostile_class):
    course, results = hostile_class[:2]
    scores = _scores(course, PROMISES)
    assert scores["test-softmax"] > 0, (
        f"the kernel found the grader's course path or the student id: {_errors_in_autograded(course, PROMISES)}"
    )


def test_the_kernel_receives_only_what_readme_says_of_the_hidden_tests(hostile_class):
    course, results = hostile_class[:2]
    scores = _scores(course, PROMISES)
    assert scores["test-cosine"] > 0, f"the kernel received hidden test code: {_errors_in_autograded(course, PROMISES)}"


def test_a_kernel_that_floods_the_grader_does_not_grow_the_graders_memory(hostile_class):
    peaks = hostile_class[3]
    flood, honest = peaks.get("floods-the-grader", 0), peaks.get("honest", 0)
    assert flood < GRADER_MEMORY_LIMIT_KB, (
        f"the grader process of the flooding submission peaked at {flood // 1024} MB "
        f"(the honest one's at {honest // 1024} MB; limit {GRADER_MEMORY_LIMIT_KB // 1024} MB)"
    )


# ----------------------------------------------------------------------------- one submission never stops the class

# A cell whose metadata nests deeper than Python's JSON reader goes.
TOO_DEEP = '{"cells": [{"cell_type": "code", "metadata": {"x": ' + "[" * 100_000 + "]" * 100_000 + "}}]}"
# Many IPython shell escapes in one cell of about a megabyte: each makes IPython's transformers read the
# whole cell again.
STALLS_THE_REVIEW = "listing = !ls\n" * 400 + "padding = 1\n" * 85_000
HOGS_THE_CPU = """
import os
import time

for _ in range(4):
    if os.fork() == 0:
        while True:
            pass
time.sleep(5)
"""


def _run_autograde(course_root: Path, submissions: Path, out: Path, python: str = sys.executable, **options):
    """``transformer-course autograde`` as an instructor runs it; a run past CLASS_RUN_SECONDS is stopped."""
    command = [python, "-m", "transformer_course.cli", "autograde", FIRST, str(submissions), "--out", str(out)]
    command += ["--course-root", str(course_root), *LIMIT_OPTIONS]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True, **options
    )
    try:
        stdout, stderr = process.communicate(timeout=CLASS_RUN_SECONDS)
        timed_out = False
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, 9)
        stdout, stderr = process.communicate()
        timed_out = True
    return process.returncode, stdout, stderr, timed_out


def _rows(out: Path) -> dict[str, dict]:
    if not out.is_file():
        return {}
    with open(out, newline="", encoding="utf-8") as file:
        return {row["student_id"]: row for row in csv.DictReader(file)}


@pytest.fixture(scope="module")
def unstoppable_class(tmp_path_factory):
    """A class with files that once stopped or stalled the whole run, graded by the command."""
    root = tmp_path_factory.mktemp("unstoppable")
    course = copy_course(root / "course")
    submissions = root / "submissions"
    blank = exercise_notebook(FIRST)
    # A cell the learner added and marked through JupyterLab's metadata editor, with a string for a mapping.
    string_metadata = _with_cell_after(blank, "softmax", "def helper():\n    return 1\n")
    next(cell for cell in string_metadata["cells"] if cell["id"].startswith("added-"))["metadata"]["nbgrader"] = (
        "solution"
    )
    write_submissions(
        submissions,
        FIRST,
        {
            "honest": solution_notebook(FIRST),
            "metadata-is-a-string": string_metadata,
            "nested-too-deep": TOO_DEEP,
            "stalls-the-review": _with_answers(blank, {"softmax": STALLS_THE_REVIEW}),
            "hogs-the-cpu": _with_cell_after(blank, "imports", HOGS_THE_CPU),
        },
    )
    (submissions / "folder-for-a-notebook" / NOTEBOOK).mkdir(parents=True)
    (submissions / "special-file-for-a-notebook").mkdir()
    os.mkfifo(submissions / "special-file-for-a-notebook" / NOTEBOOK)
    out = root / "grades.csv"
    started = time.monotonic()
    returncode, stdout, stderr, timed_out = _run_autograde(course.root, submissions, out)
    print(f"unstoppable class graded in {time.monotonic() - started:.0f} s")
    return returncode, stdout, stderr, timed_out, _rows(out)


def test_the_class_run_finishes_whatever_files_are_handed_in(unstoppable_class):
    returncode, stdout, stderr, timed_out, _ = unstoppable_class
    assert not timed_out, f"the run was still going after {CLASS_RUN_SECONDS} s: {stdout[-1500:]} {stderr[-1500:]}"
    assert returncode == 0, f"autograde stopped (exit {returncode}): {stderr[-3000:]}"


def test_honest_work_is_graded_in_full_beside_files_that_break_readers(unstoppable_class):
    rows = unstoppable_class[4]
    assert "honest" in rows, f"the honest learner has no row: {unstoppable_class[2][-2000:]}"
    row = rows["honest"]
    assert row["status"] == "graded" and float(row["score"]) == full_marks(FIRST), f"expected full marks: {row}"


@pytest.mark.parametrize(
    "student", ["nested-too-deep", "metadata-is-a-string", "folder-for-a-notebook", "special-file-for-a-notebook"]
)
def test_a_file_that_breaks_a_reader_is_that_submissions_status_alone(unstoppable_class, student):
    rows = unstoppable_class[4]
    assert student in rows, f"no row for {student}: {unstoppable_class[2][-2000:]}"
    row = rows[student]
    assert row["status"] == "graded" or row["message"], f"expected a status, and a message unless graded: {row}"
    if student in ("folder-for-a-notebook", "special-file-for-a-notebook"):
        assert row["status"] not in GRADED_STATUSES, f"expected a refusal: {row}"


def test_a_notebook_that_stalls_the_review_is_graded_within_the_run(unstoppable_class):
    rows = unstoppable_class[4]
    assert "stalls-the-review" in rows, f"no row for the stalling notebook: {unstoppable_class[2][-2000:]}"
    assert rows["stalls-the-review"]["status"], rows["stalls-the-review"]


def test_a_submission_that_forks_busy_processes_is_graded_alone(unstoppable_class):
    rows = unstoppable_class[4]
    assert "hogs-the-cpu" in rows, f"no row for the CPU hog: {unstoppable_class[2][-2000:]}"
    assert rows["hogs-the-cpu"]["status"] in GRADED_STATUSES, rows["hogs-the-cpu"]


# ----------------------------------------------------------------------------- the grader installed elsewhere


def _course_files(source: Path, target: Path) -> None:
    """The repository's files as a fresh clone has them: no environment, build or grading output."""
    ignored = shutil.ignore_patterns(
        ".git", ".venv", "venv", "_build", "__pycache__", "*.egg-info", ".pytest_cache", "gradebook.db*",
        "submitted", "autograded", "feedback", "release", "source", "runs", "checkpoints",
    )  # fmt: skip
    shutil.copytree(source, target, ignore=ignored, symlinks=True)


@pytest.fixture(scope="module")
def installed_under_tmp(tmp_path_factory):
    """The course and its virtual environment under /tmp, in a path with a space, graded with the sandbox."""
    root = tmp_path_factory.mktemp("installed") / "course with space"
    clone = root / "attention"
    _course_files(REPOSITORY, clone)
    # Hard links where the file system allows them: a copy of the environment without copying its gigabytes.
    if subprocess.run(["cp", "-al", sys.prefix, str(clone / ".venv")], capture_output=True).returncode != 0:
        shutil.rmtree(clone / ".venv", ignore_errors=True)
        subprocess.run(["cp", "-a", sys.prefix, str(clone / ".venv")], check=True)
    python = clone / ".venv" / "bin" / "python"
    offline = ["--no-deps", "--no-build-isolation", "--no-index"]
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", *offline, "-e", str(clone)],
        capture_output=True,
        text=True,
    )
    assert install.returncode == 0, install.stderr[-2000:]
    where = subprocess.run(
        [str(python), "-c", "import transformer_course; print(transformer_course.__file__)"],
        capture_output=True,
        text=True,
        cwd=root,
    ).stdout.strip()
    assert where.startswith(str(clone)), f"the clone's environment imports the package from {where}"
    submissions = write_submissions(
        root / "submissions", FIRST, {"honest": solution_notebook(FIRST), "blank": exercise_notebook(FIRST)}
    )
    out = root / "grades.csv"
    started = time.monotonic()
    returncode, stdout, stderr, _ = _run_autograde(clone, submissions, out, python=str(python), cwd=root)
    print(f"class graded from under /tmp in {time.monotonic() - started:.0f} s")
    yield returncode, stdout, stderr, _rows(out)
    shutil.rmtree(root, ignore_errors=True)


def test_a_course_installed_under_tmp_in_a_path_with_a_space_grades_honest_work_in_full(installed_under_tmp):
    returncode, stdout, stderr, rows = installed_under_tmp
    assert "honest" in rows, f"no grades (exit {returncode}): {stdout[-1500:]} {stderr[-1500:]}"
    honest, blank = rows["honest"], rows["blank"]
    assert honest["status"] == "graded" and float(honest["score"]) == full_marks(FIRST), (
        f"expected full marks for the honest submission: {honest}"
    )
    assert blank["status"] == "graded" and float(blank["score"]) == 0, f"expected a graded 0: {blank}"


# ----------------------------------------------------------------------------- a grader that cannot run

# bubblewrap as found on PATH: the real one, but every sandbox that runs a program gets the Python
# environment covered by an empty directory, as where the environment is not visible in the sandbox.
# The paths are written into the script: autograde starts bubblewrap with an environment of PATH alone.
BROKEN_BWRAP = """#!/bin/bash
arguments=()
covered=0
for argument in "$@"; do
    if [ $covered = 0 ] && {{ [ "$argument" = "--" ] || [[ "$argument" == *python* ]]; }}; then
        arguments+=(--tmpfs {hidden})
        covered=1
    fi
    arguments+=("$argument")
done
exec {real} "${{arguments[@]}}"
"""


@pytest.fixture(scope="module")
def sandbox_cannot_start(tmp_path_factory):
    real = shutil.which("bwrap")
    assert real is not None, "bubblewrap is needed for this test"
    root = tmp_path_factory.mktemp("cannot-start")
    course = copy_course(root / "course")
    wrappers = root / "bin"
    wrappers.mkdir()
    hidden = shlex.quote(str(Path(sys.prefix).resolve()))
    (wrappers / "bwrap").write_text(BROKEN_BWRAP.format(real=shlex.quote(real), hidden=hidden), encoding="utf-8")
    (wrappers / "bwrap").chmod(0o755)
    submissions = write_submissions(
        root / "submissions",
        FIRST,
        {"honest": solution_notebook(FIRST), "blank": exercise_notebook(FIRST), "other": exercise_notebook(FIRST)},
    )
    environment = dict(os.environ, PATH=f"{wrappers}{os.pathsep}{os.environ.get('PATH', '')}")
    out = root / "grades.csv"
    started = time.monotonic()
    returncode, stdout, stderr, timed_out = _run_autograde(course.root, submissions, out, env=environment)
    print(f"run whose sandbox cannot start took {time.monotonic() - started:.0f} s")
    return course, out, returncode, stdout, stderr, timed_out


def test_a_grader_whose_sandbox_cannot_start_stops_with_one_error_line(sandbox_cannot_start):
    _, _, returncode, stdout, stderr, timed_out = sandbox_cannot_start
    assert not timed_out and returncode != 0, f"autograde ended with exit {returncode}: {stdout[-1500:]}"
    errors = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, f"expected one error: line, got {errors} in {stderr[-2000:]}"
    assert "--no-sandbox" in errors[0], f"the error should say how to go on (--no-sandbox...): {errors[0]}"


def test_a_grader_whose_sandbox_cannot_start_records_no_grade(sandbox_cannot_start):
    course, out, *_ = sandbox_cannot_start
    assert not out.exists(), f"grades.csv was written: {out.read_text(encoding='utf-8')[:1000]}"
    if Path(course.root / "gradebook.db").exists():
        with Gradebook(course.default_db_url, course_id=course.course_id) as gradebook:
            try:
                graded = [submission.student.id for submission in gradebook.find_assignment(FIRST).submissions]
            except MissingEntry:
                graded = []
        assert not graded, f"the gradebook holds grades for {graded}"
