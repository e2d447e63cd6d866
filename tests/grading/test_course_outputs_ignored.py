"""What the grading commands write into the course root, and what an instructor keeps there (rosters, downloads, times
files), is learners' data: git ignores it, so that `git add -A` never commits it; the course's own files it does not
ignore."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]
LEARNERS_DATA = [
    "grades.csv",
    "canvas.csv",
    "moodle.csv",
    "roster.csv",
    "times.csv",
    "similarity.html",
    "submissions.zip",
    "moodle-download.zip",
    "submissions.json",
    "gradebook.db",
    "grading_records/01-attention.json",
    "submitted/alice/01-attention/attention.ipynb",
    "feedback-zips/01-attention-canvas-feedback.zip",
    "downloaded/01-attention/archive/submissions.zip",
]
COURSE_FILES = ["README.md", "solutions/01-attention/grading.yml", "exercises/01-attention/attention.ipynb"]


def _ignored(path: str) -> bool:
    if shutil.which("git") is None or not (REPOSITORY / ".git").exists():
        pytest.fail("this check reads .gitignore with git: run it in a git checkout of the course")
    checked = subprocess.run(["git", "check-ignore", "--no-index", "-q", path], cwd=REPOSITORY)
    return checked.returncode == 0


@pytest.mark.parametrize("path", LEARNERS_DATA)
def test_learners_data_in_the_course_root_is_ignored_by_git(path):
    assert _ignored(path), f"{path} would be committed by git add -A"


@pytest.mark.parametrize("path", COURSE_FILES)
def test_the_courses_own_files_are_not_ignored(path):
    assert not _ignored(path), f"{path} is ignored"
