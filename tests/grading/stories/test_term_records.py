"""A term's records stay true off the happy path: the learner's page gives the score ``grades.csv`` gives, late
penalty taken, in both languages; a manual score given to an earlier version of a written answer is said (or
cleared, when asked); the written answers that wait are listed with their text; and an LMS download with the LMS's
own times, and a damaged file, is graded as it comes. The runs are not sandboxed: what is tested is the records
(tests/grading/stories/test_instructor_term.py grades a term in the sandbox).
"""

from __future__ import annotations

import copy
import json
import re
import zipfile
from pathlib import Path

import pytest
from grading_support import (
    UNSANDBOXED_AUTOGRADE_OPTIONS,
    csv_rows,
    exercise_notebook,
    grade,
    max_score,
    run_command,
    solution_notebook,
)

pytestmark = pytest.mark.needs_nbgrader

ASSIGNMENT, NOTEBOOK = "01-attention", "attention"
COURSE_ID = "attention-is-all-you-need"
WRITTEN = "notes-written"  # one core point, graded by the instructor
POLICY = "late_policy: {deduct: 0.1, per: hour, cap: 0.5}\n"
DUE = "2026-11-20T11:00:00+00:00"  # alice hands in at 12:00 UTC: an hour started late, a tenth of max_score taken
MAX_SCORE = max_score(ASSIGNMENT)
PENALTY = f"{0.1 * MAX_SCORE:g}"
ROSTER = """student_id,name,email,lms_id
alice,Alice Liddell,alice@uni.edu,1001
bob,Bob Marley,bob@uni.edu,1002
carol,Carol King,carol@uni.edu,1003
dave,Dave Brubeck,dave@uni.edu,1004
"""


def _with_written_answer(text: str) -> dict:
    notebook = copy.deepcopy(solution_notebook(ASSIGNMENT))
    for cell in notebook["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == WRITTEN:
            cell["source"] = text
    return notebook


def _collected(folder: Path, student: str, notebook: dict, timestamp: str) -> None:
    """``student``'s submission as ``nbgrader collect`` leaves it."""
    where = folder / student / ASSIGNMENT
    where.mkdir(parents=True, exist_ok=True)
    (where / f"{NOTEBOOK}.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    (where / "timestamp.txt").write_text(timestamp, encoding="utf-8")


def _score_manually(course, student: str, score: float) -> None:
    from nbgrader.api import Gradebook

    with Gradebook(course.default_db_url, course_id=COURSE_ID) as gradebook:
        written = gradebook.find_grade(WRITTEN, NOTEBOOK, ASSIGNMENT, student)
        written.manual_score, written.needs_manual_grade = score, False
        gradebook.db.commit()


@pytest.fixture(scope="module")
def term(course, tmp_path_factory):
    """alice (complete, an hour late) and bob (nothing done, on time), graded with a late policy and a due date given
    to the run."""
    from transformer_course.grading.lateness import parse_due

    policy = course.source_directory / ASSIGNMENT / "grading.yml"
    policy.write_text(policy.read_text(encoding="utf-8") + POLICY, encoding="utf-8")
    folder = tmp_path_factory.mktemp("term")
    roster = folder / "roster.csv"
    roster.write_text(ROSTER, encoding="utf-8")
    _collected(folder / "class", "alice", _with_written_answer("The unscaled weights."), "2026-11-20 12:00:00 UTC")
    _collected(folder / "class", "bob", exercise_notebook(ASSIGNMENT), "2026-11-20 10:00:00 UTC")
    out = course.root / "grades.csv"
    grade(course, ASSIGNMENT, folder / "class", sandbox=False, out=out, due=parse_due(DUE, "test"))
    return {"folder": folder, "roster": roster, "out": out}


def _final_scores(page: str) -> dict[str, str]:
    """The page's final-score paragraphs, English and Chinese, as text."""
    english = re.search(r'<p class="final-score">(.*?)</p>', page, re.S)
    chinese = re.search(r'<p class="final-score" lang="zh-CN">(.*?)</p>', page, re.S)
    found = {"en": english, "zh": chinese}
    return {language: re.sub(r"<[^>]+>", "", match.group(1)) for language, match in found.items() if match}


def test_the_learners_page_gives_the_score_and_penalty_grades_csv_gives_in_both_languages(course, term):
    alice = csv_rows(term["out"])["alice"]
    score, penalty = f"{float(alice['score']):g}", f"{float(alice['penalty']):g}"
    assert penalty == PENALTY, alice
    page = (course.feedback_directory / "alice" / ASSIGNMENT / f"{NOTEBOOK}.html").read_text(encoding="utf-8")
    shown = _final_scores(page)
    assert f"{score} of {MAX_SCORE:g}" in shown.get("en", "") and f"took {penalty} points" in shown.get("en", ""), shown
    assert f"{score} / {MAX_SCORE:g}" in shown.get("zh", "") and f"扣 {penalty} 分" in shown.get("zh", ""), shown


def test_the_grades_command_charges_the_due_date_the_run_was_given(course, term, tmp_path):
    out = tmp_path / "grades.csv"
    finished = run_command(course, "grades", ASSIGNMENT, "--out", str(out))
    assert finished.returncode == 0, finished.stderr
    assert csv_rows(out)["alice"]["penalty"] == csv_rows(term["out"])["alice"]["penalty"] == PENALTY


def test_the_written_answers_that_wait_are_listed_with_their_text(course, term):
    finished = run_command(course, "pending", ASSIGNMENT)
    assert finished.returncode == 0, finished.stderr
    assert re.search(
        rf"^alice\s+{NOTEBOOK}/{WRITTEN} \(1 point\)\n    The unscaled weights\.$", finished.stdout, re.M
    ), finished.stdout


def test_a_manual_score_given_to_an_earlier_version_of_an_answer_is_said_in_review(course, term, tmp_path):
    _score_manually(course, "alice", 1.0)
    _collected(tmp_path, "alice", _with_written_answer("The scaled weights, after all."), "2026-11-20 12:00:00 UTC")
    results = grade(course, ASSIGNMENT, tmp_path, sandbox=False)
    assert f"{WRITTEN}: the written answer changed since its manual score of 1 was given" in results["alice"].review, (
        results["alice"].review
    )


def test_asking_clears_a_manual_score_given_to_an_earlier_version_so_it_waits_again(course, term, tmp_path):
    _score_manually(course, "alice", 1.0)
    _collected(tmp_path, "alice", _with_written_answer("A third version."), "2026-11-20 12:00:00 UTC")
    results = grade(course, ASSIGNMENT, tmp_path, sandbox=False, regrade_changed_answers=True)
    assert "cleared" in results["alice"].review, results["alice"].review
    assert "A third version." in run_command(course, "pending", ASSIGNMENT).stdout


def _written_answer_in(path: Path) -> str:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return next(
        "".join(cell["source"])
        for cell in cells
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == WRITTEN
    )


def test_each_resubmission_is_kept_beside_the_earlier_and_the_latest_is_in_submitted(course, term, tmp_path):
    _collected(tmp_path, "alice", _with_written_answer("The latest version."), "2026-11-20 12:00:00 UTC")
    grade(course, ASSIGNMENT, tmp_path, sandbox=False)
    alice = course.submitted_directory / "alice"
    assert _written_answer_in(alice / ASSIGNMENT / f"{NOTEBOOK}.ipynb") == "The latest version."
    first = alice / ".earlier" / ASSIGNMENT / "1" / f"{NOTEBOOK}.ipynb"
    assert _written_answer_in(first) == "The unscaled weights.", sorted(map(str, alice.rglob("*.ipynb")))


def test_a_canvas_download_is_graded_with_canvass_own_times_and_a_damaged_file_is_its_learners_row(
    course, term, tmp_path
):
    download = tmp_path / "submissions.zip"
    with zipfile.ZipFile(download, "w") as archive:
        archive.writestr(f"kingcarol_1003_9003_{NOTEBOOK}.ipynb", json.dumps(solution_notebook(ASSIGNMENT)))
        archive.writestr(f"brubeckdave_1004_9004_{NOTEBOOK}.ipynb", json.dumps(solution_notebook(ASSIGNMENT)))
    _damage(download, f"brubeckdave_1004_9004_{NOTEBOOK}.ipynb")
    times = tmp_path / "submissions.json"
    times.write_text(json.dumps([{"user_id": 1003, "submitted_at": "2026-11-20T12:30:00Z"}]), encoding="utf-8")
    out = tmp_path / "grades.csv"
    arguments = ["--lms", "canvas", "--roster", str(term["roster"]), "--times", str(times), "--out", str(out)]
    finished = run_command(course, "autograde", ASSIGNMENT, str(download), *arguments, *UNSANDBOXED_AUTOGRADE_OPTIONS)
    assert finished.returncode == 0, finished.stdout + finished.stderr
    rows = csv_rows(out)
    assert (rows["carol"]["status"], rows["carol"]["submitted_at"]) == ("graded", "2026-11-20T12:30:00+00:00")
    assert rows["dave"]["status"] == "invalid_notebook" and "damaged" in rows["dave"]["message"], rows["dave"]
    assert rows["alice"]["penalty"] == PENALTY, "alice's row, graded before, changed"


def _damage(archive: Path, member: str) -> None:
    """Flip a byte of ``member``'s data: its CRC no longer matches."""
    import struct

    with zipfile.ZipFile(archive) as bundle:
        offset = bundle.getinfo(member).header_offset
    data = bytearray(archive.read_bytes())
    name_length, extra_length = struct.unpack("<HH", data[offset + 26 : offset + 30])
    data[offset + 30 + name_length + extra_length] ^= 0xFF
    archive.write_bytes(bytes(data))
