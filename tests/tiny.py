"""The tiny model and task that the training tests share: a one-layer model 16 wide, the copy task
over six symbols. One definition here; ``conftest.py`` hands them out as the ``tiny_task`` and
``tiny_model`` fixtures, and a module that needs them at import time imports them from here."""

from __future__ import annotations

import functools
import json

from transformer_course.cli import main
from transformer_course.data import TranslationTask, copy_task
from transformer_course.training import ModelConfig

TINY_MODEL = ModelConfig(d_model=16, num_heads=2, num_layers=1, d_ff=32, dropout=0.1)
# The same sizes as command-line options of `transformer-course train`.
TINY_MODEL_OPTIONS = ["--d-model", "16", "--num-heads", "2", "--num-layers", "1", "--d-ff", "32"]
TINY_TASK_ARGUMENTS = dict(seed=0, vocabulary_size=6, max_length=6, train_size=400, validation_size=40, test_size=40)
# ... validated on a few examples (decoding the whole validation split is the slow part of a tiny run),
# without drawing the learning curves (which take longer than the run).
TINY_COMMAND_OPTIONS = [*TINY_MODEL_OPTIONS, "--validation-examples", "8", "--no-curves"]
# ... and, for a generated task (copy, reverse), as many training pairs as the tiny task: generating and
# encoding the task's default 20,000 took a third of each command.
TINY_GENERATED_TASK_OPTIONS = [*TINY_COMMAND_OPTIONS, "--train-size", str(TINY_TASK_ARGUMENTS["train_size"])]


@functools.cache
def tiny_task() -> TranslationTask:
    """The copy task of :data:`TINY_TASK_ARGUMENTS`, built once per process (tests only read it)."""
    return copy_task(**TINY_TASK_ARGUMENTS)


def train_tiny(capsys, task: str, steps: int, out, *options) -> tuple[int, dict]:
    """``transformer-course train`` of the tiny model on the generated ``task`` for ``steps`` steps into ``out``,
    with any further ``options``: its exit code and its results line."""
    argv = ["train", "--task", task, "--max-steps", steps, "--out", out, "--no-progress", *TINY_GENERATED_TASK_OPTIONS]
    return run_command(capsys, *argv, *options)


def run_command(capsys, *argv) -> tuple[int, dict]:
    """Run ``transformer-course *argv`` in this process: its exit code and its last line of output, as JSON."""
    code = main([str(argument) for argument in argv])
    lines = capsys.readouterr().out.strip().splitlines()
    return code, json.loads(lines[-1])
