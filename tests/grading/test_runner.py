"""The runner inside the sandbox: what it keeps of a cell's outputs, how it answers a cell past its timeout, and what
it imports (only what a kernel's client needs)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from suite_layers import NBGRADER_MISSING

import transformer_course

pytest.importorskip("nbformat", reason=NBGRADER_MISSING)  # the runner's outputs are nbformat's

from transformer_course.grading.inside.runner import MAX_OUTPUTS, capped, trimmed
from transformer_course.grading.pipe import Runner, runner_command

PACKAGE_ROOT = Path(transformer_course.__file__).resolve().parents[1]


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
