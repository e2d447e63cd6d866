"""The grader's end of the runner's pipes: it keeps plain outputs and never hangs, whatever the other end does (the
other end here is a fake runner, a script that answers as it likes)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from suite_layers import NBGRADER_MISSING

pytest.importorskip("nbformat", reason=NBGRADER_MISSING)  # the runner's outputs are nbformat's

from transformer_course.grading.inside.probe import MIME
from transformer_course.grading.inside.runner import MAX_LINE, MAX_OUTPUTS
from transformer_course.grading.pipe import Runner


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
