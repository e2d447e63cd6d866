"""The LMS's own downloads: Canvas's and Moodle's files as they come, mapped through a roster (the CSVs each LMS
imports are test_exports.py's). These tests grade nothing: the class graded from a Canvas download is in
stories/test_instructor_term.py."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

import pytest
from suite_layers import NBGRADER_MISSING

pytest.importorskip("nbformat", reason=NBGRADER_MISSING)  # the download is read as intake reads a folder

from transformer_course.grading.lms import unpack
from transformer_course.grading.roster import RosterError, read_roster

NOTEBOOK = "attention.ipynb"
ROSTER = """student_id,name,email,lms_id,section,extension
s001,Jane Doe,jane@uni.edu,48213,A,
s002,李雷,lei@uni.edu,,B,2
s003,John Smith,john@uni.edu,48215,A,
s004,Ann Lee,ann@uni.edu,48216,B,
s005,Ann Lee,ann2@uni.edu,48217,B,
"""


def _notebook(tag: str) -> bytes:
    return json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5, "tag": tag}).encode()


def _canvas_download(folder: Path) -> Path:
    """What Canvas's "Download Submissions" gives, flat: name, _LATE, user id, submission id, file name."""
    folder.mkdir()
    files = {
        "doejane_48213_90001_attention.ipynb": _notebook("jane first"),
        "doejane_48213_90002_attention-1.ipynb": _notebook("jane resubmitted"),
        "smithjohn_LATE_48215_90003_attention.ipynb": _notebook("john late"),
        "李雷_99999_90004_attention.ipynb": _notebook("lei by name"),
        "mallorymallory_77777_90005_attention.ipynb": _notebook("nobody"),
    }
    for name, content in files.items():
        (folder / name).write_bytes(content)
    return folder


def _tags(target: Path) -> dict[str, str]:
    return {path.parent.name: json.loads(path.read_text())["tag"] for path in sorted(target.glob(f"*/{NOTEBOOK}"))}


def test_a_canvas_download_maps_files_by_user_id_and_name_and_takes_the_resubmission(tmp_path, roster):
    unpack(_canvas_download(tmp_path / "canvas"), "canvas", roster, [NOTEBOOK], tmp_path / "out")
    assert _tags(tmp_path / "out") == {"s001": "jane resubmitted", "s002": "lei by name", "s003": "john late"}


def test_canvas_late_marker_is_kept(tmp_path, roster):
    unpacked = unpack(_canvas_download(tmp_path / "canvas"), "canvas", roster, [NOTEBOOK], tmp_path / "out")
    assert unpacked.late == {"s003"}, unpacked.late


def test_a_file_nobody_on_the_roster_sent_is_reported_by_name_and_graded_nowhere(tmp_path, roster):
    unpacked = unpack(_canvas_download(tmp_path / "canvas"), "canvas", roster, [NOTEBOOK], tmp_path / "out")
    assert [line.split(":")[0] for line in unpacked.unmatched] == ["mallorymallory_77777_90005_attention.ipynb"]
    assert "nobody on the roster" in unpacked.unmatched[0], unpacked.unmatched


def test_a_canvas_zip_is_read_as_the_folder_and_left_unchanged(tmp_path, roster):
    folder = _canvas_download(tmp_path / "canvas")
    archive = tmp_path / "submissions.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        for path in sorted(folder.iterdir()):
            bundle.write(path, path.name)
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    unpack(archive, "canvas", roster, [NOTEBOOK], tmp_path / "out")
    assert _tags(tmp_path / "out")["s001"] == "jane resubmitted"
    assert hashlib.sha256(archive.read_bytes()).hexdigest() == digest


def test_a_moodle_download_maps_folders_by_participant_id_and_a_chinese_name(tmp_path, roster):
    download = tmp_path / "moodle"
    for folder, tag in {
        "Jane Doe_48213_assignsubmission_file_": "jane",
        "李雷_50001_assignsubmission_file_": "lei",
    }.items():
        (download / folder).mkdir(parents=True)
        (download / folder / NOTEBOOK).write_bytes(_notebook(tag))
    unpack(download, "moodle", roster, [NOTEBOOK], tmp_path / "out")
    assert _tags(tmp_path / "out") == {"s001": "jane", "s002": "lei"}


def test_a_name_two_students_share_is_not_guessed(tmp_path, roster):
    download = tmp_path / "moodle"
    (download / "Ann Lee_60000_assignsubmission_file_").mkdir(parents=True)
    (download / "Ann Lee_60000_assignsubmission_file_" / NOTEBOOK).write_bytes(_notebook("which ann"))
    unpacked = unpack(download, "moodle", roster, [NOTEBOOK], tmp_path / "out")
    assert not _tags(tmp_path / "out"), "a file of an LMS id on nobody's row was credited to an Ann Lee"
    assert unpacked.unmatched[0].startswith("Ann Lee_60000_assignsubmission_file_/"), unpacked.unmatched


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("name,email\nJane,jane@uni.edu\n", "no student_id column"),
        ("student_id,name\nJane Doe,Jane\n", "is not a student id"),
        ("student_id\ns001\ns001\n", "twice"),
        ("student_id,extension\ns001,two days\n", "not a number of days"),
        ("student_id,grade\ns001,A\n", "columns it does not know"),
    ],
)
def test_a_roster_that_cannot_be_used_is_one_error_naming_what_is_wrong(tmp_path, text, complaint):
    path = tmp_path / "roster.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(RosterError, match=complaint):
        read_roster(path)
