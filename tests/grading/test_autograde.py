"""What ``autograde`` checks before it grades anyone, on a scratch course: a submissions folder that does not exist is
named, and a grader whose self-test fails grades nobody, writes no grades and says why. Classes graded end to end are
the stories' (stories/test_each_assignment_graded.py and the others)."""

from __future__ import annotations

import pytest
from scratch_course import ASSIGNMENT, write_course
from suite_layers import NBGRADER_MISSING

pytest.importorskip("nbgrader", reason=NBGRADER_MISSING)  # the gradebook is nbgrader's

from transformer_course.grading import autograde as autograde_module
from transformer_course.grading.autograde import GradingStopped, autograde
from transformer_course.grading.course import Course
from transformer_course.grading.workers import Workers

pytestmark = pytest.mark.needs_nbgrader


@pytest.fixture
def course(tmp_path) -> Course:
    (tmp_path / "course").mkdir()
    return Course(write_course(tmp_path / "course"))


def test_a_submissions_folder_that_does_not_exist_is_named(course, tmp_path):
    with pytest.raises(NotADirectoryError, match=r"submissions directory .*nowhere does not exist"):
        autograde(course, ASSIGNMENT, tmp_path / "nowhere", sandbox=False)


def test_a_grader_whose_self_test_fails_grades_nobody_writes_no_grades_and_says_why(course, tmp_path, monkeypatch):
    (tmp_path / "submissions" / "s001").mkdir(parents=True)
    (tmp_path / "submissions" / "s001" / "notebook.ipynb").write_text("{}", encoding="utf-8")
    why = "the sandbox could not import torch within 512 MB: raise --memory-mb"
    monkeypatch.setattr(autograde_module, "diagnosed_self_test", lambda *arguments: why)
    monkeypatch.setattr(Workers, "warm_up", lambda self, module: None)  # no worker is needed by a run that stops
    with pytest.raises(GradingStopped) as stopped:
        autograde(course, ASSIGNMENT, tmp_path / "submissions", jobs=1, sandbox=False, out=tmp_path / "grades.csv")
    assert str(stopped.value) == why
    assert not (tmp_path / "grades.csv").exists()
    assert not (course.root / "gradebook.db").exists(), "the assignment was registered in the gradebook"
