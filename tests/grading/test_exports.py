"""The CSVs each LMS imports, written from the class's rows and read back with the LMS's documented columns: Canvas's
gradebook import and Moodle's grade import, their notes on what they leave out, and the Canvas column an export names.
The rows are written by hand here; a class graded and exported is in stories/test_instructor_term.py."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from transformer_course.grading.errors import CourseError
from transformer_course.grading.exports import canvas_column, write_canvas, write_moodle
from transformer_course.grading.grade_row import GradeRow
from transformer_course.grading.roster import read_roster

ROSTER = """student_id,name,email,lms_id,section,extension
s001,Jane Doe,jane@uni.edu,48213,A,
s002,李雷,lei@uni.edu,,B,2
s003,John Smith,john@uni.edu,48215,A,
s004,Ann Lee,ann@uni.edu,48216,B,
s005,Ann Lee,ann2@uni.edu,48217,B,
"""


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
