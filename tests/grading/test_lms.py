"""The LMS's own downloads and imports: Canvas's and Moodle's files as they come, mapped through a roster, and the CSVs
each LMS imports, read back with the LMS's documented columns. These tests grade nothing: the class graded from a
Canvas download is in stories/test_instructor_term.py."""

from __future__ import annotations

import csv
import hashlib
import json
import zipfile
from pathlib import Path

import pytest
from suite_layers import NBGRADER_MISSING

pytest.importorskip("nbgrader", reason=NBGRADER_MISSING)  # the grades come from nbgrader's gradebook

from transformer_course.grading.errors import CourseError
from transformer_course.grading.exports import canvas_column, write_canvas, write_moodle
from transformer_course.grading.grade_row import GradeRow
from transformer_course.grading.lms import unpack
from transformer_course.grading.roster import RosterError, read_roster

pytestmark = pytest.mark.needs_nbgrader

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


@pytest.fixture
def roster(tmp_path):
    path = tmp_path / "roster.csv"
    path.write_text(ROSTER, encoding="utf-8")
    return read_roster(path)


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


def _rows() -> list[GradeRow]:
    return [
        GradeRow("s001", "01-attention", 16.0, 14.0, "graded", "", "", 0.0, 2.0),
        GradeRow("s002", "01-attention", 9.0, 14.0, "graded", "", "", 2.0, 0.0),
        GradeRow("s003", "01-attention", 0.0, 14.0, "missing", "nothing was handed in"),
        GradeRow("s009", "01-attention", 12.0, 14.0, "graded", "", "", 0.0, 0.0),  # graded, on no roster row
    ]


def _read(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as file:
        return list(csv.reader(file))


def test_canvas_import_has_canvas_header_and_points_possible_and_extra_credit(tmp_path, roster):
    write_canvas(_rows(), roster, "Attention (1)", tmp_path / "canvas.csv")
    header, points, jane, *_ = _read(tmp_path / "canvas.csv")
    assert header == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Attention (1)"]
    assert points[0] == "Points Possible" and points[-1] == "14"
    assert jane == ["Jane Doe", "48213", "s001", "jane@uni.edu", "A", "16"], "bonus is extra credit: 16 of 14"


def test_canvas_import_gives_nothing_handed_in_a_zero(tmp_path, roster):
    write_canvas(_rows(), roster, "Attention (1)", tmp_path / "canvas.csv")
    john = next(row for row in _read(tmp_path / "canvas.csv") if row[2] == "s003")
    assert john[-1] == "0", john


def test_the_canvas_file_holds_the_rosters_students_only(tmp_path, roster):
    notes = write_canvas(_rows(), roster, "Attention (1)", tmp_path / "canvas.csv")
    assert "s009" not in {row[2] for row in _read(tmp_path / "canvas.csv")}
    assert any("s009" in note for note in notes), notes


def test_a_learner_whose_written_answers_wait_has_no_row_in_canvass_file(tmp_path, roster):
    notes = write_canvas(_rows(), roster, "Attention (1)", tmp_path / "canvas.csv")
    assert "s002" not in {row[2] for row in _read(tmp_path / "canvas.csv")}, "a blank cell would clear Canvas's grade"
    assert any("s002" in note for note in notes), notes


def test_moodle_import_has_an_identifier_a_grade_and_feedback(tmp_path, roster):
    write_moodle(_rows(), roster, "Attention", tmp_path / "moodle.csv")
    header, jane, *_ = _read(tmp_path / "moodle.csv")
    assert header == ["Full name", "Email address", "ID number", "Attention", "Feedback"]
    assert jane[2:4] == ["s001", "16"] and "bonus 2" in jane[4], jane


def test_moodle_import_gives_nothing_handed_in_a_zero(tmp_path, roster):
    write_moodle(_rows(), roster, "Attention", tmp_path / "moodle.csv")
    john = next(row for row in _read(tmp_path / "moodle.csv") if row[2] == "s003")
    assert john[3:] == ["0", "Nothing was handed in."], john


def test_the_moodle_file_holds_the_rosters_students_only(tmp_path, roster):
    notes = write_moodle(_rows(), roster, "Attention", tmp_path / "moodle.csv")
    assert "s009" not in {row[2] for row in _read(tmp_path / "moodle.csv")}, "Moodle aborts at an unknown ID number"
    assert any("s009" in note for note in notes), notes


def test_a_learner_whose_written_answers_wait_has_no_row_in_moodles_file(tmp_path, roster):
    write_moodle(_rows(), roster, "Attention", tmp_path / "moodle.csv")
    assert "s002" not in {row[2] for row in _read(tmp_path / "moodle.csv")}, "Moodle reads a blank cell as no grade"


def test_moodles_notes_give_the_item_maximum_and_say_how_it_bounds_a_bonus(tmp_path, roster):
    notes = " ".join(write_moodle(_rows(), roster, "Attention", tmp_path / "moodle.csv"))
    assert "maximum grade to 14" in notes and "Unlimited grades" in notes and "s001" in notes, notes


def test_exports_neutralise_fields_a_spreadsheet_would_run(tmp_path):
    (tmp_path / "roster.csv").write_text("student_id,name\ns001,=HYPERLINK(1)\n", encoding="utf-8")
    write_canvas(_rows()[:1], read_roster(tmp_path / "roster.csv"), "A", tmp_path / "canvas.csv")
    assert _read(tmp_path / "canvas.csv")[2][0] == "'=HYPERLINK(1)"


CANVAS_EXPORT = (
    "Student,ID,SIS User ID,SIS Login ID,Section,Week 1: Attention (4821),Week 2: Multi-head (4822),Current Score\n"
    "    Points Possible,,,,,14.00,16.00,(read only)\n"
    "Jane Doe,48213,s001,jane@uni.edu,A,,,\n"
)


def test_the_canvas_column_is_taken_from_a_canvas_gradebook_export(tmp_path):
    (tmp_path / "export.csv").write_text(CANVAS_EXPORT, encoding="utf-8")
    assert canvas_column(tmp_path / "export.csv", "01-attention", None) == "Week 1: Attention (4821)"


def test_the_canvas_column_may_be_chosen_from_the_export_by_part_of_its_name(tmp_path):
    (tmp_path / "export.csv").write_text(CANVAS_EXPORT, encoding="utf-8")
    assert canvas_column(tmp_path / "export.csv", "02-multi-head", "Multi-head") == "Week 2: Multi-head (4822)"


def test_a_canvas_export_without_the_assignments_column_is_one_error_listing_its_columns(tmp_path):
    (tmp_path / "export.csv").write_text(CANVAS_EXPORT, encoding="utf-8")
    with pytest.raises(CourseError, match=r"Week 1: Attention \(4821\), Week 2: Multi-head \(4822\)"):
        canvas_column(tmp_path / "export.csv", "05-training", None)
