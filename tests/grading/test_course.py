"""The course directory as nbgrader sees it, found one way: by the commands from where they run, and by the plug-ins
nbgrader loads from the root it was given."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from scratch_course import ASSIGNMENT, write_course
from suite_layers import NBGRADER_MISSING

pytest.importorskip("nbgrader", reason=NBGRADER_MISSING)

from traitlets.config import Config  # noqa: E402

from transformer_course.grading.course import Course, course_of_config, find_course_root  # noqa: E402
from transformer_course.grading.errors import CourseError  # noqa: E402

pytestmark = pytest.mark.needs_nbgrader


def test_the_course_root_is_the_nearest_folder_holding_nbgrader_config(tmp_path):
    root = write_course(tmp_path)
    assert find_course_root(root / "source" / ASSIGNMENT) == root.resolve()


def test_outside_a_course_the_error_says_where_it_looked(tmp_path):
    with pytest.raises(CourseError, match="no nbgrader_config.py found in"):
        find_course_root(tmp_path)


def test_a_plug_in_finds_the_root_it_was_given_else_the_working_directory(tmp_path, monkeypatch):
    root = write_course(tmp_path)
    config = Config()
    config.CourseDirectory.root = str(root)
    assert course_of_config(config).root == root.resolve()
    monkeypatch.chdir(root / "source")
    assert course_of_config(Config()).root == root.resolve()


def test_the_directories_are_nbgraders_settings_or_its_defaults(tmp_path):
    course = Course(write_course(tmp_path))
    assert (course.source_directory.name, course.release_directory.name, course.course_id) == (
        "source",
        "release",
        "test",
    )


def test_the_assignments_are_the_source_folders_holding_a_notebook(tmp_path):
    course = Course(write_course(tmp_path))
    (course.source_directory / "notes").mkdir()
    assert course.assignments() == [ASSIGNMENT]
    with pytest.raises(CourseError, match=f"unknown assignment 'notes'; the assignments are: {ASSIGNMENT}"):
        course.check_assignment("notes")


def test_the_data_files_are_the_assignments_other_files(tmp_path):
    course = Course(write_course(tmp_path))
    (course.source_directory / ASSIGNMENT / "pairs.tsv").write_text("a\tb\n", encoding="utf-8")
    assert [path.name for path in course.data_files(ASSIGNMENT)] == ["pairs.tsv"]


def test_a_grading_yml_that_cannot_be_used_is_one_error_naming_it(tmp_path):
    course = Course(write_course(tmp_path, "cell_timeout: forever\n"))
    with pytest.raises(CourseError, match="cell_timeout must be a positive whole number"):
        course.policy(ASSIGNMENT)


def test_nbgrader_runs_with_this_environments_scripts_first_and_path_is_restored(monkeypatch):
    from transformer_course.grading import course as course_module

    monkeypatch.setenv("PATH", "/usr/bin")
    with course_module._this_environments_programs_first():
        assert os.environ["PATH"].split(os.pathsep)[0] == str(Path(sys.executable).parent)
    assert os.environ["PATH"] == "/usr/bin"
