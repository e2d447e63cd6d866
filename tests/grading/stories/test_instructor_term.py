"""An instructor's term with nothing lost: a class collected the way nbgrader users collect one (``submitted/<id>/
<assignment>/`` with ``timestamp.txt`` and ``submission_secret.txt``) is graded in place, every point is accounted
for, written answers are graded by hand and shown, feedback goes back through nbgrader's exchange and as zips, and
a late student is regraded without touching the others."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile
from datetime import datetime
from pathlib import Path

import pytest
from grading_support import (
    TEST_LIMITS,
    csv_rows,
    exercise_notebook,
    run_command,
    run_nbgrader,
    solution_notebook,
    with_appended_code,
)

from transformer_course.grading.autograde import autograde
from transformer_course.grading.course import copy_course

pytestmark = [pytest.mark.needs_nbgrader, pytest.mark.needs_bwrap]

ASSIGNMENT, NOTEBOOK = "01-attention", "attention"
COURSE_ID = "attention-is-all-you-need"
# What `nbgrader submit` writes (its default timestamp_format), and two other forms nbgrader and hand-made files use.
TIMESTAMPS = {
    "alice": "2026-11-20 12:00:00.000000 UTC",
    "bob": "2026-11-20 13:00:00.000000+01:00",
    "carol": "2026-11-20 12:00:00",
}
# The same moment, 12:00 UTC, in each form.
SUBMITTED_AT_UTC = datetime(2026, 11, 20, 12, 0)
WRITTEN_ANSWER = "notes-written"  # one point, core, graded by the instructor
BONUS_WRITTEN_ANSWER = "cosine-written"  # one point of bonus, graded by the instructor


def _collected(submitted: Path, student: str, notebook: dict) -> None:
    """``student``'s submission as ``nbgrader collect`` leaves it."""
    folder = submitted / student / ASSIGNMENT
    folder.mkdir(parents=True)
    (folder / f"{NOTEBOOK}.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    (folder / "timestamp.txt").write_text(TIMESTAMPS[student], encoding="utf-8")
    (folder / "submission_secret.txt").write_text(hashlib.sha1(student.encode()).hexdigest(), encoding="utf-8")


def _fingerprint(folder: Path) -> dict[str, str]:
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


@pytest.fixture(scope="module")
def term(course):
    """The class graded once from nbgrader's own submitted/: alice complete (and using the library's softmax in an
    added cell, for the review), bob with nothing done, carol complete."""
    submitted = course.submitted_directory
    review_bait = with_appended_code(solution_notebook(ASSIGNMENT), "softmax", "import torch\n_ = torch.softmax")
    _collected(submitted, "alice", review_bait)
    _collected(submitted, "bob", exercise_notebook(ASSIGNMENT))
    _collected(submitted, "carol", solution_notebook(ASSIGNMENT))
    before = _fingerprint(submitted)
    results = autograde(course, ASSIGNMENT, submitted, limits=TEST_LIMITS, out=course.root / "grades.csv", jobs=2)
    return {"before": before, "results": {result.student_id: result for result in results}}


def test_grading_nbgraders_submitted_folder_in_place_changes_no_file_in_it(course, term):
    assert _fingerprint(course.submitted_directory) == term["before"]


def test_a_class_graded_in_place_is_graded_not_missing(term):
    statuses = {student: result.status for student, result in term["results"].items()}
    assert statuses == {"alice": "graded", "bob": "graded", "carol": "graded"}, statuses


def test_grades_csv_counts_the_bonus_as_extra_credit_and_the_ungraded_written_answers_as_pending(course, term):
    carol = csv_rows(course.root / "grades.csv")["carol"]
    # 01: 16 core points (15 in test cells, one written answer) and 3 of bonus (two test cells, one written answer).
    expected = {"score": "17.0", "max_score": "16.0", "bonus_score": "2.0", "pending_manual_points": "2.0"}
    assert {key: carol[key] for key in expected} == expected, carol


@pytest.mark.parametrize("student", sorted(TIMESTAMPS))
def test_every_form_of_nbgraders_timestamp_reaches_the_gradebook(course, term, student):
    from nbgrader.api import Gradebook

    with Gradebook(course.default_db_url, course_id=COURSE_ID) as gradebook:
        stored = gradebook.find_submission(ASSIGNMENT, student).timestamp
    assert stored == SUBMITTED_AT_UTC, f"{TIMESTAMPS[student]!r} was stored as {stored}"


def test_the_learners_page_shows_no_instructor_review(course, term):
    assert "softmax" in term["results"]["alice"].review, term["results"]["alice"].review
    page = (course.feedback_directory / "alice" / ASSIGNMENT / f"{NOTEBOOK}.html").read_text(encoding="utf-8")
    assert "review" not in page.lower() and "library" not in page, "the instructor's review is on the learner's page"


def test_the_feedback_page_renders_math_without_a_network(course, term):
    page = (course.feedback_directory / "carol" / ASSIGNMENT / f"{NOTEBOOK}.html").read_text(encoding="utf-8")
    assert "<math" in page and "mathjax" not in page.lower(), "math should be MathML, with no MathJax to fetch"


def test_an_ungraded_written_answer_says_not_graded_yet_on_the_learners_page(course, term):
    page = (course.feedback_directory / "carol" / ASSIGNMENT / f"{NOTEBOOK}.html").read_text(encoding="utf-8")
    assert "not graded yet" in page, "a written answer nobody graded should not show 0"


def test_feedback_goes_back_through_nbgraders_exchange(course, term, tmp_path):
    exchange = tmp_path / "exchange"
    exchange.mkdir()
    released = run_nbgrader(course.root, "release_feedback", ASSIGNMENT, f"--Exchange.root={exchange}")
    assert released.returncode == 0, released.stdout + released.stderr
    pages = list((exchange / COURSE_ID / "feedback").glob("*.html"))
    assert len(pages) == 3, f"one page per student expected in the exchange, found {pages}"


def test_the_grades_command_rewrites_the_csv_with_a_manual_score_and_no_run(course, term, tmp_path):
    from nbgrader.api import Gradebook

    with Gradebook(course.default_db_url, course_id=COURSE_ID) as gradebook:
        grade = gradebook.find_grade(WRITTEN_ANSWER, NOTEBOOK, ASSIGNMENT, "carol")
        grade.manual_score, grade.needs_manual_grade = 1.0, False
        gradebook.db.commit()
    autograded = course.autograded_directory / "carol" / ASSIGNMENT / f"{NOTEBOOK}.ipynb"
    graded_at = autograded.stat().st_mtime_ns
    out = tmp_path / "grades.csv"
    finished = run_command(course, "grades", ASSIGNMENT, "--out", str(out))
    assert finished.returncode == 0, finished.stderr
    carol = csv_rows(out)["carol"]
    assert (carol["score"], carol["pending_manual_points"]) == ("18.0", "1.0"), carol
    assert autograded.stat().st_mtime_ns == graded_at, "the grades command ran the notebook again"


def test_the_feedback_command_shows_the_manual_score_and_zips_a_page_per_student(course, term, tmp_path):
    from nbgrader.api import Gradebook

    with Gradebook(course.default_db_url, course_id=COURSE_ID) as gradebook:
        grade = gradebook.find_grade(WRITTEN_ANSWER, NOTEBOOK, ASSIGNMENT, "alice")
        grade.manual_score, grade.needs_manual_grade = 1.0, False
        gradebook.db.commit()
    finished = run_command(course, "feedback", ASSIGNMENT, "--zip", str(tmp_path / "zips"))
    assert finished.returncode == 0, finished.stderr
    page = (course.feedback_directory / "alice" / ASSIGNMENT / f"{NOTEBOOK}.html").read_text(encoding="utf-8")
    assert "score 16 of 16" in page, "alice's page should count her graded written answer"
    archives = sorted(path.name for path in (tmp_path / "zips").glob("*.zip"))
    assert archives == ["alice.zip", "bob.zip", "carol.zip"], archives
    with zipfile.ZipFile(tmp_path / "zips" / "alice.zip") as bundle:
        assert bundle.namelist() == [f"{ASSIGNMENT}/{NOTEBOOK}.html"], bundle.namelist()


def test_regrading_one_student_updates_their_row_and_keeps_the_others_manual_scores(course, term, tmp_path):
    from nbgrader.api import Gradebook

    with Gradebook(course.default_db_url, course_id=COURSE_ID) as gradebook:
        grade = gradebook.find_grade(BONUS_WRITTEN_ANSWER, NOTEBOOK, ASSIGNMENT, "carol")
        grade.manual_score, grade.needs_manual_grade = 1.0, False
        gradebook.db.commit()
    late = tmp_path / "late"
    (late / "bob").mkdir(parents=True)
    (late / "bob" / f"{NOTEBOOK}.ipynb").write_text(json.dumps(solution_notebook(ASSIGNMENT)), encoding="utf-8")
    out = course.root / "grades.csv"
    collected = _fingerprint(course.submitted_directory / "bob" / ASSIGNMENT)
    autograde(course, ASSIGNMENT, late, limits=TEST_LIMITS, out=out, jobs=1)
    after = csv_rows(out)
    earlier = course.submitted_directory / "bob" / ".earlier" / ASSIGNMENT / "1"
    assert _fingerprint(earlier) == collected, "the collected submission was not kept, byte for byte, beside the new"
    assert set(after) == {"alice", "bob", "carol"}, sorted(after)
    assert after["bob"]["score"] == "17.0", after["bob"]
    assert after["carol"]["bonus_score"] == "3.0", after["carol"]


def test_the_fresh_flag_writes_this_runs_students_alone(course, term, tmp_path):
    late = tmp_path / "late"
    (late / "dave").mkdir(parents=True)
    (late / "dave" / f"{NOTEBOOK}.ipynb").write_text(json.dumps(exercise_notebook(ASSIGNMENT)), encoding="utf-8")
    out = tmp_path / "fresh.csv"
    autograde(course, ASSIGNMENT, late, limits=TEST_LIMITS, out=out, fresh=True, jobs=1)
    assert set(csv_rows(out)) == {"dave"}


def test_nbgraders_own_generate_assignment_makes_what_release_makes(tmp_path):
    from grading_support import REPOSITORY

    copy = copy_course(REPOSITORY, tmp_path / "course")
    generated = run_nbgrader(copy.root, "generate_assignment", ASSIGNMENT, "--force")
    assert generated.returncode == 0, generated.stdout + generated.stderr
    released = REPOSITORY / "exercises" / ASSIGNMENT
    made = copy.release_directory / ASSIGNMENT
    assert _fingerprint(made) == _fingerprint(released), "formgrader's Generate should keep the setup cell and zh_CN"


def test_publishing_leaves_out_every_solution_and_hidden_test(tmp_path):
    from grading_support import REPOSITORY

    from transformer_course.grading.course import Course
    from transformer_course.grading.publish import publish

    if not (REPOSITORY / ".git").exists():
        pytest.skip("publish copies what git tracks: this copy of the course is not a git checkout")
    published = tmp_path / "public"
    publish(Course(REPOSITORY), published)
    assert not (published / "solutions").exists()
    assert (published / "exercises" / ASSIGNMENT / f"{NOTEBOOK}.ipynb").is_file()
    leaks = [
        str(path.relative_to(published))
        for path in published.rglob("*")
        if path.is_file()
        and "BEGIN HIDDEN TESTS" in path.read_text(encoding="utf-8", errors="ignore")
        and path.suffix == ".ipynb"
    ]
    assert not leaks, f"hidden tests published in {leaks}"
    texts = [path.read_text(encoding="utf-8", errors="ignore") for path in published.rglob("*") if path.is_file()]
    published_lines = [line for line in _hidden_test_lines() if any(line in text for text in texts)]
    assert not published_lines, f"hidden tests' lines were published: {published_lines[:3]}"


def _hidden_test_lines() -> list[str]:
    """Distinctive lines of assignment 1's hidden tests."""
    from transformer_course.grading.nbgrader_cells import split_hidden_tests

    lines = []
    for cell in solution_notebook(ASSIGNMENT)["cells"]:
        _, hidden = split_hidden_tests("".join(cell["source"]))
        lines += [line.strip() for line in hidden.splitlines() if "learner." in line and len(line.strip()) > 40]
    assert lines, "assignment 1 has hidden tests that call the learner's code"
    return lines


def test_publishing_into_a_folder_holding_other_work_is_refused(tmp_path):
    from grading_support import REPOSITORY

    from transformer_course.grading.course import Course
    from transformer_course.grading.errors import CourseError
    from transformer_course.grading.publish import publish

    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(CourseError, match="not empty"):
        publish(Course(REPOSITORY), tmp_path)
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "mine"


def test_the_sandbox_check_names_the_memory_limit_that_stops_it(tmp_path):
    finished = subprocess.run(
        [sys.executable, "-m", "transformer_course.cli", "self-test", "--memory-limit-mb", "200"],
        capture_output=True,
        text=True,
        env=dict(os.environ),
    )
    assert finished.returncode != 0
    assert "--memory-limit-mb 200" in finished.stderr and "Raise it" in finished.stderr, finished.stderr


@pytest.mark.skipif(shutil.which("chromium") is None, reason="needs Chromium: apt-get install chromium chromium-driver")
def test_a_browser_reads_graded_points_for_a_manually_graded_answer_on_a_page_axe_finds_no_fault_in(
    course, term, tmp_path
):
    from axe_check import axe_violations
    from axe_check import summary as axe_summary
    from nbgrader.api import Gradebook
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By

    with Gradebook(course.default_db_url, course_id=COURSE_ID) as gradebook:
        grade = gradebook.find_grade(WRITTEN_ANSWER, NOTEBOOK, ASSIGNMENT, "carol")
        grade.manual_score, grade.needs_manual_grade = 1.0, False
        gradebook.db.commit()
    assert run_command(course, "feedback", ASSIGNMENT).returncode == 0
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"):
        options.add_argument(flag)
    options.add_argument("--disable-component-update")
    options.add_argument("--disable-sync")
    options.add_argument(f"--user-data-dir={tmp_path / 'profile'}")
    driver = webdriver.Chrome(options=options, service=Service(executable_path="/usr/bin/chromedriver"))
    try:
        page = course.feedback_directory / "carol" / ASSIGNMENT / f"{NOTEBOOK}.html"
        driver.get(page.as_uri())
        heading = driver.find_element(By.ID, WRITTEN_ANSWER).text
        summary = driver.find_element(By.TAG_NAME, "h1").text
        violations = axe_violations(driver)
    finally:
        driver.quit()
    assert "Score: 1 / 1" in heading, f"the written answer's heading reads {heading!r}"
    assert "score 16 of 16" in summary, f"the page's summary reads {summary!r}"
    assert not violations, (
        f"WCAG 2.1 A/AA violations on the learner's feedback page: {axe_summary({'feedback page': violations})}"
    )


def test_a_canvas_download_is_graded_through_the_roster_with_a_row_for_everyone_on_it(course, term, tmp_path):
    download = tmp_path / "canvas"
    download.mkdir()
    (download / f"doejane_48213_90001_{NOTEBOOK}.ipynb").write_text(json.dumps(solution_notebook(ASSIGNMENT)))
    (download / f"mallory_77777_90002_{NOTEBOOK}.ipynb").write_text(json.dumps(solution_notebook(ASSIGNMENT)))
    roster = tmp_path / "roster.csv"
    roster.write_text("student_id,name,lms_id\ns001,Jane Doe,48213\ns003,John Smith,48215\n", encoding="utf-8")
    out = tmp_path / "grades.csv"
    finished = run_command(
        course,
        "autograde",
        ASSIGNMENT,
        str(download),
        "--lms",
        "canvas",
        "--roster",
        str(roster),
        "--out",
        str(out),
        "--no-progress",
        "--jobs",
        "1",
        "--memory-limit-mb",
        str(TEST_LIMITS.memory_limit_mb),
    )
    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert f"not graded: mallory_77777_90002_{NOTEBOOK}.ipynb" in finished.stdout, finished.stdout
    rows = csv_rows(out)
    assert (rows["s001"]["status"], rows["s001"]["score"]) == ("graded", "17.0"), rows["s001"]
    assert (rows["s003"]["status"], rows["s003"]["score"]) == ("missing", "0.0"), rows["s003"]


def test_the_grades_command_gives_someone_on_the_roster_who_handed_nothing_in_a_missing_row(course, term, tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("student_id,name\ns999,Nobody Yet\n", encoding="utf-8")
    out = tmp_path / "grades.csv"
    finished = run_command(course, "grades", ASSIGNMENT, "--roster", str(roster), "--out", str(out))
    assert finished.returncode == 0, finished.stdout + finished.stderr
    row = csv_rows(out)["s999"]
    assert (row["status"], row["score"], row["max_score"]) == ("missing", "0.0", "16.0"), row


def test_a_late_policy_charges_the_time_nbgrader_recorded(course, term, tmp_path):
    policy_file = course.source_directory / ASSIGNMENT / "grading.yml"
    original = policy_file.read_text(encoding="utf-8")
    policy_file.write_text(original + "\nlate_policy: {deduct: 0.1, per: hour, cap: 0.5}\n", encoding="utf-8")
    try:
        out = tmp_path / "grades.csv"
        # Everyone handed in at 12:00 UTC: due at 11:00, they are an hour late (one hour started, a tenth of 16).
        finished = run_command(course, "grades", ASSIGNMENT, "--out", str(out), "--due", "2026-11-20T12:00:00+01:00")
    finally:
        policy_file.write_text(original, encoding="utf-8")
    assert finished.returncode == 0, finished.stderr
    carol = csv_rows(out)["carol"]
    assert (carol["submitted_at"], carol["late_by"], carol["penalty"]) == ("2026-11-20T12:00:00+00:00", "1.0", "1.6")
