"""README's grades.csv columns and status table are the code's own: what write_csv writes, and every
status a submission can end with in grades.csv."""

from __future__ import annotations

import csv

import pytest
from grading_support import readme_grades_csv_columns, readme_status_meanings, readme_statuses

from transformer_course.grading.autograde import GradeRow, write_csv
from transformer_course.grading.status import Status as STATUSES

pytestmark = pytest.mark.needs_nbgrader  # the autograde module imports nbgrader; nothing is graded here

# Statuses that never reach grades.csv: the submissions left when a run stops, which then raises
# GradingStopped and writes no grades.csv at all.
NEVER_IN_GRADES_CSV = {"not_graded"}


def test_readme_lists_the_columns_write_csv_writes(tmp_path):
    write_csv([GradeRow("alice", "01-attention", 1.0, 2.0, "graded", "", "")], tmp_path / "grades.csv")
    with open(tmp_path / "grades.csv", newline="", encoding="utf-8") as file:
        header = next(csv.reader(file))
    assert readme_grades_csv_columns() == header


def test_write_csvs_docstring_names_the_columns_it_writes():
    assert ", ".join(readme_grades_csv_columns()) in " ".join(write_csv.__doc__.split())


def test_readmes_status_table_has_every_status_of_grades_csv_once():
    documented = readme_statuses()
    assert len(documented) == len(set(documented)), f"a status is in README's table twice: {documented}"
    assert set(documented) == set(STATUSES) - NEVER_IN_GRADES_CSV


def test_readmes_status_table_says_what_each_status_of_the_enum_means():
    documented = readme_status_meanings()
    assert documented == {status.value: status.meaning for status in STATUSES if status not in NEVER_IN_GRADES_CSV}
