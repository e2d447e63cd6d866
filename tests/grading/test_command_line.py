"""What every grading command shares: a user's mistake ends in one ``error:`` line, the command line starts without
nbgrader (as on Colab, where only the package is installed), and an option several commands take is one option,
declared once, with one help text."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest

import transformer_course
from transformer_course.cli import main
from transformer_course.grading.command_line import UserError, command
from transformer_course.grading.limits import GradingLimits

REPOSITORY = Path(__file__).resolve().parents[2]


def test_a_user_error_is_one_error_line_and_exit_code_1():
    def mistaken(arguments):
        raise UserError("--lms needs --roster")

    with pytest.raises(SystemExit) as ended:
        command(mistaken)(argparse.Namespace())
    assert str(ended.value.code) == "error: --lms needs --roster"


def test_a_bug_is_not_hidden_behind_an_error_line():
    def broken(arguments):
        raise KeyError("a bug")

    with pytest.raises(KeyError):
        command(broken)(argparse.Namespace())


# A flag that names another thing in one command: what it names there.
ANOTHER_OPTION_OF_THE_SAME_NAME = {
    ("similarity", "--out"): "the similarity report it writes, not grades.csv",
    ("feedback", "--lms"): "the LMS whose bulk upload the feedback zip is for, not a download to read",
    ("check", "--cell-timeout"): "the learner's own limit (600 s), not the grader's",
}


def _option_helps() -> dict[str, set[str]]:
    """Every option of the grading commands, by its flag → its help texts across the commands that take it (for
    ``--roster``, the text they share before what it does for each command)."""
    parser = argparse.ArgumentParser()
    subcommands = parser.add_subparsers()
    from transformer_course.grading import commands

    commands.register(subcommands)
    helps: dict[str, set[str]] = {}
    for name, command_parser in subcommands.choices.items():
        for action in command_parser._actions:
            for flag in action.option_strings:
                if flag.startswith("--") and flag != "--help" and (name, flag) not in ANOTHER_OPTION_OF_THE_SAME_NAME:
                    helps.setdefault(flag, set()).add(action.help.split(":")[0] if flag == "--roster" else action.help)
    return helps


def test_an_option_several_commands_take_has_one_help_text():
    differing = {flag: helps for flag, helps in _option_helps().items() if len(helps) > 1}
    assert differing == {}, differing


@pytest.mark.needs_nbgrader
def test_autograding_outside_a_course_says_where_it_looked(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit, match=r"^error: no nbgrader_config.py found in"):
        main(["autograde", "01-attention", str(tmp_path)])


BLOCK_GRADING_PACKAGES = """
import sys
from dataclasses import fields
for name in ("nbgrader", "nbformat", "nbclient", "nbconvert", "yaml", "traitlets"):
    sys.modules[name] = None  # as if not installed
from transformer_course.cli import main
from transformer_course.grading.limits import GradingLimits
"""


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ), timeout=120
    )


@pytest.fixture(scope="module")
def without_grading_packages() -> subprocess.CompletedProcess:
    """One fresh interpreter without the grading packages: ``train --help`` (saying how it exited), then
    ``check``, whose exit is the interpreter's."""
    commands = """
try:
    main(["train", "--help"])
except SystemExit as done:
    print("train --help exited with", done.code)
main(["check", "attention.ipynb"])
"""
    return _python(BLOCK_GRADING_PACKAGES + commands)


def test_the_command_line_and_train_start_without_the_grading_packages(without_grading_packages):
    run = without_grading_packages
    assert "train --help exited with 0" in run.stdout, run.stdout[-2000:] + run.stderr[-2000:]
    assert "--task" in run.stdout


def test_a_grading_command_without_the_grading_packages_names_the_install_that_works_here(without_grading_packages):
    """This environment installs the course editable from its clone (requirements.txt's ``-e .``): the line is
    that clone's (the one the package is imported from), never the registry name ``transformer-course[grading]``,
    which no registry holds."""
    run = without_grading_packages
    clone = Path(transformer_course.__file__).resolve().parents[2]
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    assert f'pip install -e "{clone}[grading]"' in run.stderr, run.stderr
    assert "'transformer-course[grading]'" not in run.stderr, run.stderr


@pytest.mark.needs_nbgrader
def test_every_grading_limit_is_an_option_of_autograde(tmp_path, monkeypatch):
    from transformer_course.grading import autograde as autograde_module

    asked = {}
    monkeypatch.setattr(
        autograde_module, "autograde", lambda *arguments, limits, **options: asked.update(limits=limits) or []
    )
    monkeypatch.chdir(REPOSITORY)
    chosen = GradingLimits(**{limit.name: limit.default + 1 for limit in fields(GradingLimits)})
    options = [f"--{limit.name.replace('_', '-')}={getattr(chosen, limit.name)}" for limit in fields(GradingLimits)]
    main(["autograde", "01-attention", str(tmp_path), "--out", str(tmp_path / "grades.csv"), *options])
    assert asked["limits"] == chosen
