"""The grading commands on the command line: user mistakes end in one clear line, and the command
line itself starts without nbgrader (as on Colab, where only the package is installed)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest

from transformer_course.cli import main
from transformer_course.grading.limits import GradingLimits

REPOSITORY = Path(__file__).resolve().parents[2]


@pytest.mark.needs_nbgrader
@pytest.mark.needs_solutions
def test_releasing_an_unknown_assignment_is_one_line_naming_the_known_ones(monkeypatch):
    monkeypatch.chdir(REPOSITORY)
    with pytest.raises(SystemExit, match=r"^error: unknown assignment '99-nothing'; the assignments are: 01-attention"):
        main(["release", "99-nothing"])


@pytest.mark.needs_nbgrader
def test_autograding_outside_a_course_says_where_it_looked(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit, match=r"^error: no nbgrader_config.py found in"):
        main(["autograde", "01-attention", str(tmp_path)])


@pytest.mark.needs_nbgrader
@pytest.mark.needs_solutions
def test_autograding_a_missing_submissions_directory_names_it(tmp_path, monkeypatch):
    monkeypatch.chdir(REPOSITORY)
    with pytest.raises(SystemExit, match=r"^error: submissions directory .*nowhere does not exist"):
        main(["autograde", "01-attention", str(tmp_path / "nowhere")])


@pytest.mark.needs_nbgrader
def test_checking_a_missing_notebook_names_it(tmp_path):
    with pytest.raises(SystemExit, match=r"^error: .*No such file.*absent\.ipynb"):
        main(["check", str(tmp_path / "absent.ipynb")])


@pytest.mark.needs_nbgrader
def test_checking_a_file_that_is_not_json_says_so(tmp_path):
    broken = tmp_path / "attention.ipynb"
    broken.write_text('{"cells": [', encoding="utf-8")
    with pytest.raises(SystemExit, match=r"^error: Notebook does not appear to be JSON"):
        main(["check", str(broken)])


def _autograde_with_grading_yml(tmp_path: Path, policy: str) -> SystemExit:
    """What ``autograde`` ends with in a copy of the course whose 01-attention/grading.yml reads ``policy``."""
    from transformer_course.grading.course import copy_course

    course = copy_course(REPOSITORY, tmp_path / "course")
    (course.source_directory / "01-attention" / "grading.yml").write_text(policy, encoding="utf-8")
    (tmp_path / "submissions" / "alice").mkdir(parents=True)
    arguments = ["autograde", "01-attention", str(tmp_path / "submissions"), "--course-root", str(course.root)]
    with pytest.raises(SystemExit) as ended:
        main([*arguments, "--no-sandbox", "--out", str(tmp_path / "grades.csv"), "--no-progress"])
    return ended.value


@pytest.mark.needs_nbgrader
@pytest.mark.needs_solutions
def test_a_grading_yml_that_is_not_yaml_is_one_error_line_naming_the_file_and_line(tmp_path):
    ended = _autograde_with_grading_yml(tmp_path, "learner_writes: [\n")
    assert re.fullmatch(r"error: [^\n]*01-attention/grading\.yml\", line 2[^\n]*", str(ended.code)), ended.code


@pytest.mark.needs_nbgrader
@pytest.mark.needs_solutions
def test_a_grading_yml_whose_learner_writes_the_package_lacks_is_one_error_line(tmp_path):
    ended = _autograde_with_grading_yml(tmp_path, "learner_writes:\n  - transformer_course.attention.no_such_thing\n")
    assert str(ended.code) == (
        "error: 01-attention/grading.yml: learner_writes: attention.py defines no top-level function or class named "
        "no_such_thing"
    )


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
    that clone's, never the registry name ``transformer-course[grading]``, which no registry holds."""
    run = without_grading_packages
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    assert f'pip install -e "{REPOSITORY}[grading]"' in run.stderr, run.stderr
    assert "'transformer-course[grading]'" not in run.stderr, run.stderr


@pytest.mark.needs_nbgrader
@pytest.mark.needs_solutions
def test_autograding_without_bubblewrap_is_one_line_naming_the_package(tmp_path, monkeypatch):
    monkeypatch.chdir(REPOSITORY)
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap anywhere on it
    (tmp_path / "student").mkdir()
    with pytest.raises(
        SystemExit, match=r"^error: bubblewrap is not installed: .*apt-get install bubblewrap.*--no-sandbox"
    ):
        main(["autograde", "01-attention", str(tmp_path)])


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


@pytest.mark.needs_nbgrader
@pytest.mark.needs_bwrap
def test_self_test_says_in_one_line_that_the_grader_can_run_here(capsys):
    assert main(["self-test"]) == 0
    output = capsys.readouterr().out.strip()
    assert output == "the sandbox works: a kernel started in it and imported the course package", output


def test_check_without_a_notebook_says_what_to_name():
    with pytest.raises(SystemExit, match=r"^error: name the notebook to check"):
        main(["check"])
