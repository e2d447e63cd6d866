"""A partial regrade loses no grade, however it is run: a folder or an LMS's download, with or without a roster.

A class of three is graded once, with a roster that also names dave, who never hands anything in. Each test then
regrades bob alone, one way each, and checks that alice's and carol's rows (score, status, message, review) are what
they were, and that dave, on the roster and never graded, is ``missing``. The runs are not sandboxed: what is tested
is the class list, not the wall (tests/grading/stories/test_instructor_term.py grades a term in the sandbox).
"""

from __future__ import annotations

import csv
import json
import zipfile
from pathlib import Path

import pytest
from grading_support import (
    UNSANDBOXED_AUTOGRADE_OPTIONS,
    csv_rows,
    exercise_notebook,
    full_marks,
    grade,
    run_command,
    solution_notebook,
    write_submissions,
)

from transformer_course.grading.roster import read_roster

pytestmark = pytest.mark.needs_nbgrader

ASSIGNMENT, NOTEBOOK = "01-attention", "attention.ipynb"
ROSTER = """student_id,name,email,lms_id
alice,Alice Liddell,alice@uni.edu,1001
bob,Bob Marley,bob@uni.edu,1002
carol,Carol King,carol@uni.edu,1003
dave,Dave Brubeck,dave@uni.edu,1004
"""
COURSE_ID = "attention-is-all-you-need"
WRITTEN_ANSWERS = ("notes-written", "cosine-written")  # one core point, one bonus point: graded by hand
ALICES_SCORE = full_marks(ASSIGNMENT) + len(WRITTEN_ANSWERS)  # every test passed, each written answer given 1
KEPT = ("score", "max_score", "status", "message", "review", "bonus_score", "pending_manual_points")


def _rows(path: Path) -> dict[str, dict]:
    return {student: {column: row[column] for column in KEPT} for student, row in csv_rows(path).items()}


@pytest.fixture(scope="module")
def term(course, tmp_path_factory):
    """alice and carol complete, bob with nothing done, dave nothing handed in: graded once through the roster."""
    folder = tmp_path_factory.mktemp("term")
    roster = folder / "roster.csv"
    roster.write_text(ROSTER, encoding="utf-8")
    class_folder = write_submissions(
        folder / "class",
        ASSIGNMENT,
        {
            "alice": solution_notebook(ASSIGNMENT),
            "bob": exercise_notebook(ASSIGNMENT),
            "carol": exercise_notebook(ASSIGNMENT),
        },
    )
    out = course.root / "grades.csv"
    grade(course, ASSIGNMENT, class_folder, sandbox=False, roster=read_roster(roster), out=out)
    _grade_alices_written_answers(course)
    assert run_command(course, "grades", ASSIGNMENT, "--out", str(out)).returncode == 0
    return {"roster": roster, "out": out, "before": _rows(out)}


def _grade_alices_written_answers(course) -> None:
    """An instructor's scores for alice's two written answers, as formgrader saves them."""
    from nbgrader.api import Gradebook

    with Gradebook(course.default_db_url, course_id=COURSE_ID) as gradebook:
        for cell in WRITTEN_ANSWERS:
            written = gradebook.find_grade(cell, NOTEBOOK.removesuffix(".ipynb"), ASSIGNMENT, "alice")
            written.manual_score, written.needs_manual_grade = 1.0, False
        gradebook.db.commit()


def _assert_nobody_else_changed(term, after: dict[str, dict]) -> None:
    for student in ("alice", "carol"):
        assert after[student] == term["before"][student], f"{student}'s row changed: {after[student]}"
    assert (after["dave"]["status"], after["dave"]["score"]) == ("missing", "0.0"), after["dave"]


def test_the_class_as_first_graded(term):
    statuses = {student: row["status"] for student, row in term["before"].items()}
    assert statuses == {"alice": "graded", "bob": "graded", "carol": "graded", "dave": "missing"}, statuses
    alice = term["before"]["alice"]
    assert (alice["score"], alice["pending_manual_points"]) == (f"{ALICES_SCORE:.1f}", "0.0"), alice


def test_regrading_one_student_from_a_folder_keeps_everyone_elses_row(course, term, tmp_path):
    folder = write_submissions(tmp_path / "late", ASSIGNMENT, {"bob": solution_notebook(ASSIGNMENT)})
    grade(course, ASSIGNMENT, folder, sandbox=False, out=term["out"])
    _assert_nobody_else_changed(term, _rows(term["out"]))


def test_regrading_one_student_from_a_folder_with_the_roster_keeps_everyone_elses_row(course, term, tmp_path):
    folder = write_submissions(tmp_path / "late", ASSIGNMENT, {"bob": solution_notebook(ASSIGNMENT)})
    grade(course, ASSIGNMENT, folder, sandbox=False, roster=read_roster(term["roster"]), out=term["out"])
    _assert_nobody_else_changed(term, _rows(term["out"]))


def _regraded_from(course, term, download: Path, lms: str, out: Path) -> dict[str, dict]:
    """grades.csv after ``autograde`` of an LMS's download through the roster, as an instructor runs it."""
    arguments = ["--lms", lms, "--roster", str(term["roster"]), "--out", str(out), *UNSANDBOXED_AUTOGRADE_OPTIONS]
    finished = run_command(course, "autograde", ASSIGNMENT, str(download), *arguments)
    assert finished.returncode == 0, finished.stdout + finished.stderr
    return _rows(out)


def test_regrading_one_student_from_a_canvas_download_keeps_everyone_elses_row(course, term, tmp_path):
    download = tmp_path / "submissions.zip"
    with zipfile.ZipFile(download, "w") as archive:
        archive.writestr(f"marleybob_LATE_1002_5001_{NOTEBOOK}", json.dumps(solution_notebook(ASSIGNMENT)))
    _assert_nobody_else_changed(term, _regraded_from(course, term, download, "canvas", tmp_path / "grades.csv"))


def test_regrading_one_student_from_a_moodle_download_keeps_everyone_elses_row(course, term, tmp_path):
    folder = tmp_path / "moodle" / "Bob Marley_1002_assignsubmission_file_"
    folder.mkdir(parents=True)
    (folder / NOTEBOOK).write_text(json.dumps(solution_notebook(ASSIGNMENT)), encoding="utf-8")
    rows = _regraded_from(course, term, tmp_path / "moodle", "moodle", tmp_path / "grades.csv")
    _assert_nobody_else_changed(term, rows)


def test_the_lms_export_after_a_partial_regrade_keeps_everyone_elses_grade(course, term, tmp_path):
    folder = write_submissions(tmp_path / "late", ASSIGNMENT, {"bob": solution_notebook(ASSIGNMENT)})
    grade(course, ASSIGNMENT, folder, sandbox=False, roster=read_roster(term["roster"]), out=term["out"])
    out = tmp_path / "canvas.csv"
    finished = run_command(
        course, "grades", ASSIGNMENT, "--format", "canvas", "--roster", str(term["roster"]), "--out", str(out)
    )
    assert finished.returncode == 0, finished.stdout + finished.stderr
    with open(out, newline="", encoding="utf-8") as file:
        grades = {row["SIS User ID"]: row[ASSIGNMENT] for row in csv.DictReader(file) if row["SIS User ID"]}
    assert grades["alice"] == f"{ALICES_SCORE:g}", grades
