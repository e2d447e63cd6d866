"""The grading commands themselves: a mistake in what was asked for (an unknown assignment, a missing directory or
notebook, a grading.yml that cannot be used, no bubblewrap) ends in one line that names it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from transformer_course.cli import main

REPOSITORY = Path(__file__).resolve().parents[2]


@pytest.mark.needs_nbgrader
@pytest.mark.needs_solutions
def test_releasing_an_unknown_assignment_is_one_line_naming_the_known_ones(monkeypatch):
    monkeypatch.chdir(REPOSITORY)
    with pytest.raises(SystemExit, match=r"^error: unknown assignment '99-nothing'; the assignments are: 01-attention"):
        main(["release", "99-nothing"])


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
@pytest.mark.needs_bwrap
def test_self_test_says_in_one_line_that_the_grader_can_run_here(capsys):
    assert main(["self-test"]) == 0
    output = capsys.readouterr().out.strip()
    assert output == "the sandbox works: a kernel started in it and imported the course package", output


def test_check_without_a_notebook_says_what_to_name():
    with pytest.raises(SystemExit, match=r"^error: name the notebook to check"):
        main(["check"])
