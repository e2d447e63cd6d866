"""The commands after ``autograde`` on a gradebook faked by hand: ``grades`` writes the class's rows in the format
asked for and says what the LMS will make of them, ``pending`` lists each written answer that waits, and ``feedback``
refuses an LMS without the zip it is for. The same commands on a class really graded are in
stories/test_instructor_term.py."""

from __future__ import annotations

import csv

import pytest
from suite_layers import NBGRADER_MISSING

pytest.importorskip("nbgrader", reason=NBGRADER_MISSING)  # the commands read nbgrader's gradebook

from transformer_course.cli import main
from transformer_course.grading import pending, report
from transformer_course.grading.context import GradingContext
from transformer_course.grading.grade_row import GradeRow
from transformer_course.grading.pending import PendingAnswer
from transformer_course.grading.status import Status

pytestmark = pytest.mark.needs_nbgrader

ROWS = [
    GradeRow("s001", "01-attention", 16.0, 14.0, Status.GRADED, bonus_score=2.0),
    GradeRow("s002", "01-attention", 0.0, 14.0, Status.MISSING, "nothing was handed in"),
]


@pytest.fixture
def course_root(tmp_path, monkeypatch):
    """A course directory whose gradebook holds :data:`ROWS` (no gradebook is read: the class's rows are faked)."""
    (tmp_path / "nbgrader_config.py").write_text("", encoding="utf-8")
    monkeypatch.setattr(
        GradingContext, "of", classmethod(lambda cls, course, assignment, db_url=None: cls(course, assignment, "-"))
    )
    monkeypatch.setattr(report, "class_rows", lambda context, due, roster: ROWS)
    return tmp_path


def test_grades_writes_the_class_rows_to_grades_csv(course_root, tmp_path, capsys):
    out = tmp_path / "grades.csv"
    assert main(["grades", "01-attention", "--course-root", str(course_root), "--out", str(out)]) == 0
    with open(out, newline="", encoding="utf-8") as file:
        written = [(row["student_id"], row["score"], row["status"]) for row in csv.DictReader(file)]
    assert written == [("s001", "16.0", "graded"), ("s002", "0.0", "missing")], written
    assert capsys.readouterr().out.splitlines()[-1] == f"2 students; grades written to {out} (csv)"


def test_grades_for_canvas_without_its_column_says_canvas_would_make_a_new_assignment(course_root, tmp_path, capsys):
    out = tmp_path / "canvas.csv"
    arguments = ["grades", "01-attention", "--course-root", str(course_root), "--out", str(out), "--format", "canvas"]
    assert main(arguments) == 0
    printed = capsys.readouterr().out
    assert "the column '01-attention' names no Canvas assignment" in printed, printed
    assert out.is_file()


def test_pending_lists_each_waiting_answer_with_its_points_and_text(course_root, monkeypatch, capsys):
    waiting = [PendingAnswer("s001", "attention.ipynb", "why-scale", 2.0, "Softmax saturates\nfor large d_k")]
    monkeypatch.setattr(pending, "pending_answers", lambda context: waiting)
    assert main(["pending", "01-attention", "--course-root", str(course_root)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["s001", "attention.ipynb/why-scale", "(2", "points)"], lines
    assert lines[1:3] == ["    Softmax saturates", "    for large d_k"], lines
    assert lines[3].startswith("1 written answers wait for a score: grade them in formgrader"), lines


def test_feedback_for_an_lms_without_the_zip_it_is_for_is_one_error_line(tmp_path):
    with pytest.raises(SystemExit) as ended:
        main(["feedback", "01-attention", "--lms", "moodle", "--course-root", str(tmp_path)])
    assert str(ended.value.code) == "error: --lms says which LMS --zip is for: give --zip DIR too"
