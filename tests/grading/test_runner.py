"""The grader's end of the runner: it reads plain outputs and never hangs, whatever the other end does."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from suite_layers import NBGRADER_MISSING

import transformer_course

pytest.importorskip("nbformat", reason=NBGRADER_MISSING)  # the runner's outputs are nbformat's

from transformer_course.grading.inside.probe import MIME
from transformer_course.grading.inside.runner import MAX_LINE, MAX_OUTPUTS, capped, trimmed
from transformer_course.grading.pipe import Runner, runner_command

PACKAGE_ROOT = Path(transformer_course.__file__).resolve().parents[1]


def _fake_runner(answer_code: str, grace_seconds: float = 5) -> Runner:
    """A runner whose answer to the first request is whatever ``answer_code`` prints."""
    script = (
        "import sys, json\nrequest = json.loads(sys.stdin.readline())\n"
        f"{answer_code}\nsys.stdout.flush()\nimport time\ntime.sleep(60)\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    return Runner(process, grace_seconds=grace_seconds)


@pytest.fixture
def runners():
    started = []
    yield lambda *arguments: started.append(_fake_runner(*arguments)) or started[-1]
    for runner in started:
        runner.process.kill()
        runner.process.wait()


def _answer(outputs) -> str:
    return f"print(json.dumps({{'id': request['id'], 'outputs': {outputs!r}, 'execution_count': 1, 'problem': None}}))"


def test_plain_text_and_images_are_kept_and_html_is_dropped(runners):
    outputs = [
        {
            "output_type": "display_data",
            "data": {"text/plain": "a table", "text/html": "<script>steal()</script>", "image/png": "iVBO"},
        }
    ]
    reply = runners(_answer(outputs)).execute("x", timeout=5, output_limit=10_000)
    assert reply.problem is None
    assert dict(reply.outputs[0]["data"]) == {"text/plain": "a table", "image/png": "iVBO"}


def test_an_answer_to_a_hidden_test_is_kept_only_when_one_was_asked_for(runners):
    outputs = [{"output_type": "display_data", "data": {MIME: {"result": 1}}}]
    assert MIME not in runners(_answer(outputs)).execute("x", timeout=5, output_limit=10_000).outputs[0]["data"]
    assert json.loads(
        runners(_answer(outputs)).execute("x", timeout=5, output_limit=10_000, answers=True).outputs[0]["data"][MIME]
    ) == {"result": 1}


def test_an_answer_longer_than_the_limit_breaks_the_protocol(runners):
    reply = runners(f"sys.stdout.write('x' * {MAX_LINE + 10} + '\\n')").execute("x", timeout=5, output_limit=10_000)
    assert reply.problem == "broken"


def test_an_answer_that_is_not_json_breaks_the_protocol(runners):
    assert runners("print('not json')").execute("x", timeout=5, output_limit=10_000).problem == "broken"


def test_a_runner_that_never_answers_is_given_up_after_the_timeout_and_grace(runners):
    reply = runners("pass", 1).execute("x", timeout=1, output_limit=10_000)
    assert reply.problem == "no_answer"


def test_a_runner_that_ends_is_a_lost_kernel(runners):
    runner = runners("sys.exit(0)")
    assert runner.execute("x", timeout=5, output_limit=10_000).problem == "kernel_died"


def test_image_data_that_is_not_base64_is_dropped(runners):
    # Image data lands inside an HTML attribute of the feedback page: a quote there would end it.
    outputs = [{"output_type": "display_data", "data": {"text/plain": "x", "image/png": '" onerror="alert(1)'}}]
    reply = runners(_answer(outputs)).execute("x", timeout=5, output_limit=10_000)
    assert dict(reply.outputs[0]["data"]) == {"text/plain": "x"}, reply.outputs


def test_answers_to_other_requests_are_ignored(runners):
    # The kernel can write to the runner's pipe; it cannot know the request's random id.
    forged = "for i in range(100): print(json.dumps({'id': i, 'outputs': [], 'problem': 'timeout'}))"
    reply = runners(forged + "\n" + _answer([{"output_type": "stream", "name": "stdout", "text": "real\n"}])).execute(
        "x", timeout=5, output_limit=10_000
    )
    assert reply.problem is None and reply.outputs[0]["text"] == "real\n", reply


def test_a_cell_answer_far_beyond_its_output_budget_breaks_the_protocol(runners):
    # The kernel shares the runner's sandbox and can write to its pipe: the grader reads no more than
    # a cell's budget asks for, whatever arrives.
    output = "{'output_type': 'stream', 'name': 'stdout', 'text': 'y' * 200_000}"
    answer = f"print(json.dumps({{'id': request['id'], 'outputs': [{output}]}}))"
    reply = runners(answer).execute("x", timeout=5, output_limit=10_000)
    assert reply.problem == "broken", f"expected 'broken', got {reply.problem!r}"


def test_thousands_of_outputs_are_kept_as_outputs_up_to_the_cap(runners):
    outputs = "[{'output_type': 'display_data', 'data': {'text/plain': str(i)}} for i in range(6000)]"
    reply = runners(f"print(json.dumps({{'id': request['id'], 'outputs': {outputs}, 'execution_count': 1}}))").execute(
        "x", timeout=5, output_limit=2**20
    )
    assert reply.problem is None, reply.problem
    assert len(reply.outputs) <= MAX_OUTPUTS, len(reply.outputs)
    assert all(output.output_type for output in reply.outputs), "every output must be an nbformat node"


def test_capping_outputs_says_how_many_were_dropped():
    kept = capped([{"output_type": "stream", "name": "stdout", "text": "a"}] * (MAX_OUTPUTS + 10))
    assert len(kept) == MAX_OUTPUTS and "11 more outputs dropped" in kept[-1]["text"], kept[-1]


def test_a_long_stream_is_cut_with_a_note_saying_how_much_was_printed():
    (output,) = trimmed([{"output_type": "stream", "name": "stdout", "text": "x" * 100_000}], 1_000)
    assert len(output["text"]) < 1_000 and "100,000 characters printed" in output["text"]


def test_outputs_beyond_the_budget_are_dropped_with_a_note():
    image = {"output_type": "display_data", "data": {"image/png": "A" * 50_000}}
    kept = trimmed([{"output_type": "stream", "name": "stdout", "text": "hello\n"}, image], 1_000)
    assert kept[0]["text"] == "hello\n" and "output dropped" in kept[1]["text"]


@pytest.fixture(scope="module")
def kernel_runner():
    """The real runner, unsandboxed: a Jupyter kernel that takes requests one cell at a time."""
    process = subprocess.Popen(
        runner_command(sys.executable, PACKAGE_ROOT),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    runner = Runner(process, grace_seconds=10)
    assert runner.execute("started = True", timeout=60, output_limit=10_000).problem is None, runner.stderr_tail()
    yield runner
    process.kill()
    process.wait()


@pytest.mark.needs_nbgrader  # a real Jupyter kernel
def test_a_cell_past_its_timeout_is_interrupted_and_answered_timeout(kernel_runner):
    reply = kernel_runner.execute("while True:\n    pass\n", timeout=2, output_limit=10_000)
    assert reply.problem == "timeout", f"expected the problem 'timeout', got {reply.problem!r} with {reply.outputs}"
    after = kernel_runner.execute("print(started)", timeout=10, output_limit=10_000)
    assert after.problem is None and after.outputs[0]["text"] == "True\n", f"the kernel should go on, got {after}"


@pytest.mark.needs_nbgrader  # a real Jupyter kernel
def test_a_keyboard_interrupt_the_cell_raises_itself_is_not_a_timeout(kernel_runner):
    reply = kernel_runner.execute("raise KeyboardInterrupt", timeout=10, output_limit=10_000)
    assert reply.problem is None, f"expected no problem, got {reply.problem!r}"
    assert reply.outputs[-1]["ename"] == "KeyboardInterrupt", reply.outputs


@pytest.mark.needs_nbgrader  # a real Jupyter kernel
def test_the_runner_starts_without_torch_the_course_package_or_jsonschemas_iri_parser():
    """Only the kernel needs torch and the course; nothing needs rfc3987_syntax, which jsonschema (under nbformat)
    would import for IRI checks. Each costs every submission seconds of CPU."""
    command = runner_command(sys.executable, PACKAGE_ROOT)
    started = subprocess.run(
        [command[0], "-X", "importtime", *command[1:]],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    imported = {
        line.rsplit("|", 1)[-1].strip() for line in started.stderr.splitlines() if line.startswith("import time:")
    }
    assert {"nbclient", "jsonschema"} <= imported, started.stderr[-2000:]
    # rfc3987_syntax's attempted import is listed even when refused; the Earley parsers it builds need lark.
    unwanted = {"torch", "transformer_course", "lark"} & imported
    assert not unwanted, f"the runner imported {sorted(unwanted)}"
