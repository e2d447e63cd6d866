"""``transformer-course publish``: the learners' copy holds the course's own public files, and they run there.

Two courses at the end of a term are published: a git clone, and a copy that is not one (a downloaded zip).
Both hold what a term leaves in the course folder (grades, a roster, an LMS download, the gradebook, run
records, nbgrader's folders, a similarity report, learners' stray notebooks, a notebook that is not JSON),
marked with one learner's id and name, which must arrive nowhere. Then the copy is attacked as a learner
would: its programs searched for code that fills the exercises' answer cells, the 06 notebook filled with it
and graded; and its own tests are collected and run there, with its own package.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from grading_support import REPOSITORY, exercise_notebook, grade, partly_done_notebook, write_submissions

from transformer_course.cli import main
from transformer_course.grading.course import Course
from transformer_course.grading.errors import CourseError
from transformer_course.grading.publish import publish

pytestmark = pytest.mark.needs_nbgrader

LEARNER, NAME = "zq-roster", "Zephyrine Quillfeather"  # in every file of the term, and nowhere in the course
UNIT_LAYER = "not needs_nbgrader and not needs_bwrap and not book and not slow"


def _answered_notebook() -> str:
    """A learner's notebook of assignment 1, half of its answers written in (without nbgrader's markers)."""
    notebook = partly_done_notebook("01-attention")
    for cell in notebook["cells"]:
        lines = "".join(cell["source"]).splitlines(keepends=True)
        cell["source"] = "".join(
            line for line in lines if "### BEGIN SOLUTION" not in line and "### END SOLUTION" not in line
        )
    return json.dumps(notebook)


FILLED_NOTEBOOK = _answered_notebook()


def _gradebook(path: Path) -> None:
    with contextlib.closing(sqlite3.connect(path)) as database:
        database.execute("create table student (id text, name text)")
        database.execute("insert into student values (?, ?)", (LEARNER, NAME))
        database.commit()


def _lms_download(path: Path) -> None:
    """A Canvas submissions download: each learner's notebook under Canvas's own naming."""
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(f"quillfeatherzephyrine_48213_90211_{LEARNER}_attention.ipynb", FILLED_NOTEBOOK)


def _link_out_of_the_course(path: Path) -> None:
    """A link among the course's files to a file of the instructor's beside the course."""
    outside = path.parents[1].parent / "marks-of-the-term.txt"
    outside.write_text(f"{LEARNER} {NAME} 14\n", encoding="utf-8")
    path.symlink_to(outside)


# What a term leaves in the course folder (relative path -> text, or a function that writes the file).
TERM_FILES = {
    "grades.csv": f"student_id,name,score\n{LEARNER},{NAME},14\n",
    "roster.csv": f"student_id,name,email\n{LEARNER},{NAME},{LEARNER}@example.org\n",
    "canvas-grades.csv": f"Student,ID,SIS User ID,Section,01-attention\n{NAME},48213,{LEARNER},A,14\n",
    "submissions.zip": _lms_download,
    "gradebook.db": _gradebook,
    "grading_records/01-attention.json": json.dumps({"students": {LEARNER: {"score": 14}}}),
    f"submitted/{LEARNER}/01-attention/attention.ipynb": FILLED_NOTEBOOK,
    f"autograded/{LEARNER}/01-attention/attention.ipynb": FILLED_NOTEBOOK,
    f"feedback/{LEARNER}/01-attention/attention.html": f"<html><body>{NAME}: 14 of 14</body></html>",
    "similarity.html": f"<html><head><title>Copy Detection Report</title></head><body>{LEARNER}</body></html>",
    f"{LEARNER}-attention.ipynb": FILLED_NOTEBOOK,
    "broken.ipynb": '{"cells": [',
    f"\x1b[2J{LEARNER}.ipynb": "{}",  # a name a learner chose, with a terminal's escape in it
    # ... and inside the course's own folders, where a copy without git walks.
    f"exercises/01-attention/attention ({LEARNER}).ipynb": FILLED_NOTEBOOK,
    f"tests/{LEARNER}/attention.ipynb": FILLED_NOTEBOOK,
    "tests/roster-backup.csv": f"student_id,email\n{LEARNER},{LEARNER}@example.org\n",
    "tests/similarity-01.html": f"<title>Copy Detection Report</title>{LEARNER}",
    "book/moodle-download.zip": _lms_download,
    "book/marks.txt": _link_out_of_the_course,
}


def _write(root: Path, files: dict) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        content(path) if callable(content) else path.write_text(content, encoding="utf-8")


def _copy_of_the_course(target: Path) -> Path:
    """The repository's course files in ``target``: what git tracks, or (not a checkout) its folders less builds."""
    listing = subprocess.run(["git", "ls-files", "-z"], cwd=REPOSITORY, capture_output=True, text=True)
    if listing.returncode == 0 and listing.stdout:
        for name in filter(None, listing.stdout.split("\0")):
            if (REPOSITORY / name).is_file():
                (target / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(REPOSITORY / name, target / name)
    else:
        builds = shutil.ignore_patterns(".git", ".venv", "_build", "__pycache__", "*.egg-info", ".pytest_cache", "*.mo")
        shutil.copytree(REPOSITORY, target, ignore=builds)
    return target


def _git(root: Path, *arguments: str) -> None:
    identity = ["-c", "user.name=Instructor", "-c", "user.email=instructor@example.org"]
    subprocess.run(["git", *identity, *arguments], cwd=root, check=True, capture_output=True)


def _clone_of_the_course(target: Path) -> Path:
    _copy_of_the_course(target)
    _git(target, "init", "-q")
    _git(target, "add", "-A")
    _git(target, "commit", "-q", "-m", "The course")
    return target


def _publish_on_the_command_line(course: Path, directory: Path) -> str:
    """What ``transformer-course publish DIR`` prints, run in ``course``."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(["publish", str(directory), "--course-root", str(course)]) == 0
    return printed.getvalue()


def _files(root: Path) -> set[str]:
    return {str(path.relative_to(root)) for path in root.rglob("*") if path.is_file() and ".git" not in path.parts}


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """A git clone of the course at the end of a term: the term's files lie beside it, untracked."""
    root = _clone_of_the_course(tmp_path_factory.mktemp("clone") / "course")
    _write(root, TERM_FILES)
    return root


@pytest.fixture(scope="module")
def download(tmp_path_factory) -> Path:
    """The course as a downloaded zip unpacks (no git), at the end of a term."""
    root = _copy_of_the_course(tmp_path_factory.mktemp("download") / "course")
    _write(root, TERM_FILES)
    return root


@pytest.fixture(scope="module")
def published_clone(clone, tmp_path_factory) -> Path:
    published = tmp_path_factory.mktemp("public-from-clone") / "public"
    publish(Course(clone), published)
    return published


@pytest.fixture(scope="module")
def published_download(download, tmp_path_factory) -> tuple[Path, str]:
    """The download published on the command line, and what the command printed."""
    published = tmp_path_factory.mktemp("public-from-download") / "public"
    return published, _publish_on_the_command_line(download, published)


@pytest.fixture(params=["clone", "download"])
def published(request) -> Path:
    return (
        request.getfixturevalue("published_clone")
        if request.param == "clone"
        else request.getfixturevalue("published_download")[0]
    )


# What arrives.


def test_nothing_of_the_term_arrives(published):
    arrived = [name for name in _files(published) if LEARNER in name or "\x1b" in name]
    holding = [
        name
        for name in _files(published)
        if any(mark in (published / name).read_bytes() for mark in (LEARNER.encode(), NAME.encode()))
    ]
    assert not arrived and not holding, f"the term's files arrived: {arrived}; files holding a learner: {holding}"


@pytest.mark.parametrize("name", ["submitted", "autograded", "feedback", "grading_records", "solutions"])
def test_no_folder_of_the_instructors_arrives(published, name):
    assert not (published / name).exists()


def test_no_grade_roster_archive_gradebook_or_report_arrives(published):
    kinds = (".csv", ".zip", ".db", ".xlsx")
    private = [
        name
        for name in _files(published)
        if name.endswith(kinds) or Path(name).name in ("similarity.html", "broken.ipynb")
    ]
    assert private == []


def test_a_clone_publishes_only_what_git_tracks(clone, published_clone):
    tracked = set(subprocess.run(["git", "ls-files"], cwd=clone, capture_output=True, text=True).stdout.split("\n"))
    assert _files(published_clone) - tracked == {".published-course"}


def test_the_book_the_package_and_the_exercises_arrive_whole(clone, published_clone):
    listing = subprocess.run(["git", "ls-files"], cwd=clone, capture_output=True, text=True).stdout.split()
    expected = {name for name in listing if name.startswith(("book/", "src/", "exercises/"))}
    assert expected and expected <= _files(published_clone), sorted(expected - _files(published_clone))[:5]


def test_a_copy_without_git_publishes_what_its_clone_publishes(published_clone, published_download):
    from_download = _files(published_download[0])
    assert from_download == _files(published_clone), (
        f"only from the download: {sorted(from_download - _files(published_clone))[:5]}; "
        f"only from the clone: {sorted(_files(published_clone) - from_download)[:5]}"
    )


def test_publish_names_what_it_left_out_and_why(published_download):
    _, printed = published_download
    assert "left out grades.csv: not one of the course's own files" in printed
    assert "left out solutions/: the model answers and hidden tests" in printed
    assert "left out tests/roster-backup.csv: grades, a roster or an LMS file" in printed
    assert "left out tests/grading/test_assignments_teach.py: holds the answer of" in printed


def test_a_learners_file_name_is_printed_escaped(published_download):
    _, printed = published_download
    assert "\x1b" not in printed
    assert f"left out \\x1b[2J{LEARNER}.ipynb: not one of the course's own files" in printed


def test_grading_data_that_git_tracks_is_not_published_either(tmp_path):
    root = _clone_of_the_course(tmp_path / "course")
    _write(root, {name: content for name, content in TERM_FILES.items() if not name.endswith(".ipynb")})
    _write(root, {name: content for name, content in TERM_FILES.items() if name.startswith("submitted/")})
    _git(root, "add", "-f", "-A")
    _git(root, "commit", "-q", "-m", "The term, committed by mistake")
    publish(Course(root), tmp_path / "public")
    arrived = [
        name for name in _files(tmp_path / "public") if LEARNER in name or name.endswith((".csv", ".zip", ".db"))
    ]
    assert arrived == [] and not (tmp_path / "public" / "submitted").exists()


# A notebook that is not JSON, and a released notebook with answers in it.


@pytest.mark.parametrize("git", [True, False], ids=["clone", "download"])
def test_a_notebook_of_the_course_that_is_not_json_is_one_error_line(tmp_path, git):
    root = (_clone_of_the_course if git else _copy_of_the_course)(tmp_path / "course")
    (root / "book" / "notes.ipynb").write_text('{"cells": [', encoding="utf-8")
    if git:
        _git(root, "add", "book/notes.ipynb")
    with pytest.raises(SystemExit) as stopped:
        main(["publish", str(tmp_path / "public"), "--course-root", str(root)])
    message = str(stopped.value.code)
    assert message.startswith("error: book/notes.ipynb is not a notebook: it is not JSON") and "\n" not in message
    assert not (tmp_path / "public").exists(), "nothing is written before the course is checked"


def test_a_released_notebook_with_answers_written_in_stops_publish(tmp_path):
    root = _copy_of_the_course(tmp_path / "course")
    (root / "exercises" / "01-attention" / "attention.ipynb").write_text(FILLED_NOTEBOOK, encoding="utf-8")
    with pytest.raises(CourseError, match=r"exercises/01-attention/attention\.ipynb holds answers in project-qkv"):
        publish(Course(root), tmp_path / "public")
    assert not (tmp_path / "public").exists()


# The attack: a learner's search of the public copy for code that fills the exercises' answer cells.


def _answer_cells(notebook: dict) -> dict[str, tuple[str, tuple[str, ...]] | None]:
    """grade_id -> (name, parameters) of the function each answer cell of a released notebook asks for (None for a
    cell that asks for values)."""
    cells = {}
    for cell in notebook["cells"]:
        metadata = cell.get("metadata", {}).get("nbgrader", {})
        if metadata.get("solution") and cell["cell_type"] == "code":
            body = ast.parse("".join(cell["source"])).body
            cells[metadata["grade_id"]] = _signature(body[0]) if body else None
    return cells


def _signature(node: ast.AST) -> tuple[str, tuple[str, ...]] | None:
    if not isinstance(node, ast.FunctionDef):
        return None
    return node.name, tuple(argument.arg for argument in (*node.args.args, *node.args.kwonlyargs))


def offered_answers(published: Path, assignment: str) -> dict[str, str]:
    """grade_id -> code for each answer cell of ``assignment``'s released notebook that a program of the published
    copy offers: a string keyed by the cell's grade_id, or a function of the cell's name and parameters (in code or
    in a string). The reference package is left out of the search: it is public by design."""
    (notebook_path,) = (published / "exercises" / assignment).glob("*.ipynb")
    cells = _answer_cells(json.loads(notebook_path.read_text(encoding="utf-8")))
    wanted = {signature: grade_id for grade_id, signature in cells.items() if signature}
    offers: dict[str, str] = {}
    for path in published.rglob("*.py"):
        if path.relative_to(published).parts[0] == "src":
            continue
        source = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Dict):
                for key, value in zip(node.keys, node.values):
                    if isinstance(key, ast.Constant) and key.value in cells and isinstance(value, ast.Constant):
                        offers.setdefault(key.value, value.value)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "def " in node.value:
                with contextlib.suppress(SyntaxError):
                    for definition in ast.parse(node.value).body:
                        if _signature(definition) in wanted:
                            offers.setdefault(wanted[_signature(definition)], node.value)
            elif _signature(node) in wanted:
                offers.setdefault(wanted[_signature(node)], ast.get_source_segment(source, node))
    return offers


@pytest.mark.parametrize("assignment", Course(REPOSITORY).assignments())
def test_no_published_program_offers_an_answer(published_clone, assignment):
    offers = offered_answers(published_clone, assignment)
    assert offers == {}, f"the public copy offers answers to {sorted(offers)}"


@pytest.mark.needs_bwrap
def test_the_06_notebook_filled_from_the_public_copy_scores_nothing(published_clone, course, tmp_path):
    assignment = "06-complexity"
    notebook = exercise_notebook(assignment)
    offers = offered_answers(published_clone, assignment)
    for cell in notebook["cells"]:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if grade_id in offers:
            cell["source"] = offers[grade_id]
    submissions = write_submissions(tmp_path, assignment, {"attacker": notebook})
    result = grade(course, assignment, submissions)["attacker"]
    assert result.score == 0, f"{result.score} of {result.max_score} from the answers offered to {sorted(offers)}"


# What is published runs there.


def _in_the_copy(published: Path, *arguments: str) -> subprocess.CompletedProcess:
    """pytest ARGUMENTS in the published copy, with the copy's own package."""
    environment = {**os.environ, "PYTHONPATH": str(published / "src")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *arguments],
        cwd=published,
        capture_output=True,
        text=True,
        env=environment,
    )


def test_the_published_tests_are_collected_without_an_error(published_clone):
    collected = _in_the_copy(published_clone, "--collect-only", "-q")
    assert collected.returncode == 0, collected.stdout[-3000:] + collected.stderr[-2000:]
    assert "tests/test_model.py::" in collected.stdout, "the package's own tests are published"


@pytest.mark.slow
def test_the_published_unit_layer_passes_there(published_clone):
    ran = _in_the_copy(published_clone, "-q", "-m", UNIT_LAYER)
    assert ran.returncode == 0, ran.stdout[-4000:] + ran.stderr[-2000:]
