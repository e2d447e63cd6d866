"""Fixtures of the grading tests."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def course(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """This module's own scratch copy of the course (solutions, exercises, nbgrader config), with its own
    gradebook, feedback and autograded folders: no module reads the grades or files that another wrote,
    whatever order they run in, and the same student id in two modules is two students."""
    from grading_support import copy_course

    return copy_course(tmp_path_factory.mktemp(f"course-{request.module.__name__}"))


@pytest.fixture
def roster(request: pytest.FixtureRequest, tmp_path):
    """The test module's ``ROSTER`` (a roster file's text), written to a file and read as the commands read it."""
    from transformer_course.grading.roster import read_roster

    path = tmp_path / "roster.csv"
    path.write_text(request.module.ROSTER, encoding="utf-8")
    return read_roster(path)
