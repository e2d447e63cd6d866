"""Feedback zips an LMS takes in bulk: each page is named as Canvas's re-upload and Moodle's "upload multiple feedback
files in a zip" match a file to a learner (their matching rules, from their source, are written out below), and a
learner the zip cannot name for that LMS is said, not guessed. Nothing is graded: the pages and run record are
made by hand."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import pytest

from transformer_course.grading.status import Status
from transformer_course.grading.submission import Submission

pytestmark = pytest.mark.needs_nbgrader  # the course directory is nbgrader's

ASSIGNMENT = "01-attention"


@pytest.fixture
def course(tmp_path):
    from transformer_course.grading.course import Course
    from transformer_course.grading.run_record import keep_in_run_record

    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\n", encoding="utf-8")
    course = Course(tmp_path)
    downloads = {
        "s001": ["doejane_LATE_48213_90211_attention.ipynb"],
        "s002": ["Li Lei_50017_assignsubmission_file_/attention.ipynb"],
        "s003": [],  # graded from a folder
    }
    for student_id, files in downloads.items():
        pages = course.feedback_directory / student_id / ASSIGNMENT
        pages.mkdir(parents=True)
        (pages / "attention.html").write_text(f"<p>{student_id}</p>", encoding="utf-8")
        keep_in_run_record(course.root, Submission(student_id, ASSIGNMENT, Status.GRADED, lms_files=files))
    return course


def _canvas_match(path: str) -> tuple[str, str] | None:
    """Canvas's infer_comment_context_from_filename: the first two all-digit parts of the base name, split at "_"."""
    numbers = [part for part in Path(path).name.split("_") if re.fullmatch(r"\d+", part)][:2]
    return tuple(numbers) if len(numbers) == 2 else None


def _moodle_match(path: str) -> str | None:
    """Moodle's is_valid_filename_for_import: the participant id of the first path part that reads as
    name_id_plugintype_pluginname with the assignment's file submission plugin."""
    for part in path.split("/"):
        info = part.split("_", 4)
        if len(info) >= 4 and info[1].isdigit() and (info[2], info[3]) == ("assignsubmission", "file"):
            return info[1]
    return None


def test_canvas_feedback_files_carry_the_user_and_file_ids_canvas_matches(course, tmp_path):
    from transformer_course.grading.lms_feedback import zip_for_lms

    written = zip_for_lms(course, ASSIGNMENT, "canvas", tmp_path / "zips")
    with zipfile.ZipFile(written.archive) as bundle:
        assert [_canvas_match(name) for name in bundle.namelist()] == [("48213", "90211")], bundle.namelist()


def test_moodle_feedback_files_sit_in_the_folder_moodle_matches(course, tmp_path):
    from transformer_course.grading.lms_feedback import zip_for_lms

    written = zip_for_lms(course, ASSIGNMENT, "moodle", tmp_path / "zips")
    with zipfile.ZipFile(written.archive) as bundle:
        assert [_moodle_match(name) for name in bundle.namelist()] == ["50017"], bundle.namelist()


def test_a_learner_the_lms_cannot_be_told_of_is_named_not_guessed(course, tmp_path):
    from transformer_course.grading.lms_feedback import zip_for_lms

    written = zip_for_lms(course, ASSIGNMENT, "canvas", tmp_path / "zips")
    assert written.students == ["s001"] and [line.split(":")[0] for line in written.left_out] == ["s002", "s003"]


def test_the_roster_gives_moodle_the_participant_id_of_a_learner_graded_from_a_folder(course, tmp_path):
    from transformer_course.grading.lms_feedback import zip_for_lms
    from transformer_course.grading.roster import Student

    roster = {"s003": Student("s003", "Wang_Fang", lms_id="50018")}
    written = zip_for_lms(course, ASSIGNMENT, "moodle", tmp_path / "zips", roster)
    with zipfile.ZipFile(written.archive) as bundle:
        assert sorted(_moodle_match(name) for name in bundle.namelist()) == ["50017", "50018"], bundle.namelist()
