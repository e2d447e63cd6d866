"""A grade row holds exactly grades.csv's columns, cannot be changed once made, and is written as a spreadsheet reads
it safely."""

from __future__ import annotations

import csv
import dataclasses
from datetime import UTC, datetime

import pytest

from transformer_course.grading.grade_row import CSV_COLUMNS, GradeRow, spreadsheet_safe, write_csv
from transformer_course.grading.status import Status


def test_the_rows_fields_are_the_csvs_columns_in_their_order():
    assert [field.name for field in dataclasses.fields(GradeRow)] == CSV_COLUMNS


def test_a_row_cannot_be_changed_once_made():
    row = GradeRow("alice", "01-attention", 15.0, 16.0, Status.GRADED)
    with pytest.raises(dataclasses.FrozenInstanceError):
        row.score = 16.0


def test_a_row_is_written_with_its_time_in_iso_form_and_blanks_for_what_it_lacks(tmp_path):
    moment = datetime(2026, 11, 20, 12, tzinfo=UTC)
    write_csv([GradeRow("alice", "01-attention", 15.0, 16.0, Status.GRADED, submitted_at=moment)], tmp_path / "g.csv")
    (row,) = csv.DictReader((tmp_path / "g.csv").open(encoding="utf-8"))
    assert (row["submitted_at"], row["status"], row["penalty"]) == ("2026-11-20T12:00:00+00:00", "graded", ""), row


@pytest.mark.parametrize("text", ["=1+1", "+1", "-1", "@SUM(A1)", "\tx", "\rx"])
def test_a_field_a_spreadsheet_would_run_gets_an_apostrophe(text):
    assert spreadsheet_safe(text) == "'" + text


def test_numbers_and_plain_text_are_left_as_they_are():
    assert (spreadsheet_safe(-1.5), spreadsheet_safe("cell x: meta-programming")) == (-1.5, "cell x: meta-programming")


def test_grades_csv_neutralises_fields_a_spreadsheet_would_run(tmp_path):
    results = [GradeRow("=2+5", "01-attention", None, None, "invalid_student_id", "@SUM(1)", "-cmd|x")]
    write_csv(results, tmp_path / "grades.csv")
    (row,) = csv.DictReader((tmp_path / "grades.csv").open(encoding="utf-8"))
    for column in ("student_id", "message", "review"):
        assert row[column][0] not in "=+-@", f"{column} starts with a formula character: {row[column]!r}"
    assert row["student_id"] == "'=2+5", row
