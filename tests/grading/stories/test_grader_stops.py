"""A grader whose sandbox stops working during a run grades nobody, instead of a class of zeros."""

from __future__ import annotations

import os
import shutil
import stat

import pytest
from grading_support import TEST_LIMITS, solution_notebook, write_submissions
from nbgrader.api import Gradebook, MissingEntry

from transformer_course.grading.autograde import GradingStopped, autograde

pytestmark = [pytest.mark.needs_nbgrader, pytest.mark.needs_bwrap]  # grade in the sandbox

ASSIGNMENT = "01-attention"


@pytest.fixture
def bwrap_that_breaks_after(tmp_path, monkeypatch):
    """A ``bwrap`` first on PATH that runs the real one for its first ``n`` calls, then fails as bubblewrap
    fails where user namespaces are switched off (as if an administrator switched them off mid-run)."""
    real = shutil.which("bwrap")
    if real is None:
        pytest.fail("bubblewrap is not installed (apt-get install bubblewrap): the grading tests need it")

    def install(n: int) -> None:
        folder = tmp_path / "fake-bin"
        folder.mkdir()
        counter = tmp_path / "bwrap-calls"
        script = folder / "bwrap"
        script.write_text(
            "#!/bin/sh\n"
            f'count=$(cat "{counter}" 2>/dev/null || echo 0)\n'
            "count=$((count + 1))\n"
            f'echo "$count" > "{counter}"\n'
            f'if [ "$count" -le {n} ]; then exec "{real}" "$@"; fi\n'
            'echo "bwrap: setting up uid map: Permission denied" >&2\n'
            "exit 1\n"
        )
        script.chmod(script.stat().st_mode | stat.S_IXUSR)
        monkeypatch.setenv("PATH", f"{folder}:{os.environ['PATH']}")

    return install


def test_a_run_whose_kernels_stop_starting_is_stopped_and_records_no_grade(course, tmp_path, bwrap_that_breaks_after):
    students = {f"student{i}": solution_notebook(ASSIGNMENT) for i in range(5)}
    submissions = write_submissions(tmp_path / "submissions", ASSIGNMENT, students)
    database = f"sqlite:///{tmp_path / 'gradebook.db'}"
    bwrap_that_breaks_after(2)  # bubblewrap's own probe and the self-test work; every submission's sandbox fails
    with pytest.raises(GradingStopped) as stopped:
        autograde(
            course, ASSIGNMENT, submissions, jobs=1, limits=TEST_LIMITS, db_url=database, out=tmp_path / "grades.csv"
        )
    assert "could not start" in str(stopped.value) and "--no-sandbox" in str(stopped.value), str(stopped.value)
    assert not (tmp_path / "grades.csv").exists(), "a stopped run must write no grades.csv"
    with Gradebook(database, course_id=course.course_id) as gradebook:
        for student in students:
            with pytest.raises(MissingEntry):
                gradebook.find_submission(ASSIGNMENT, student)


def test_a_sandbox_that_cannot_start_at_all_stops_the_run_before_any_submission(
    course, tmp_path, bwrap_that_breaks_after
):
    submissions = write_submissions(tmp_path / "submissions", ASSIGNMENT, {"alice": solution_notebook(ASSIGNMENT)})
    database = f"sqlite:///{tmp_path / 'gradebook.db'}"
    bwrap_that_breaks_after(1)  # only bubblewrap's own probe works: the self-test's sandbox fails
    with pytest.raises(GradingStopped) as stopped:
        autograde(course, ASSIGNMENT, submissions, limits=TEST_LIMITS, db_url=database, out=tmp_path / "grades.csv")
    message = str(stopped.value)
    assert "cannot run a notebook" in message and "--no-sandbox" in message and "namespaces" in message, message
    assert not (tmp_path / "grades.csv").exists(), "a stopped run must write no grades.csv"
    assert not (tmp_path / "gradebook.db").exists(), "the self-test comes before the gradebook is touched"


@pytest.mark.skipif(shutil.which("prlimit") is None, reason="needs util-linux's prlimit to set a hard ulimit -v")
def test_a_machine_limit_below_the_memory_limit_is_named_with_the_option_that_fits_it():
    import subprocess
    import sys

    three_gigabytes = 3 * 2**30  # a hard `ulimit -v`, below the default --memory-limit-mb of 4096
    finished = subprocess.run(
        ["prlimit", f"--as={three_gigabytes}", "--", sys.executable, "-m", "transformer_course.cli", "self-test"],
        capture_output=True,
        text=True,
        env=dict(os.environ),
    )
    assert finished.returncode != 0
    assert "ulimit -v" in finished.stderr and "--memory-limit-mb 3072" in finished.stderr, finished.stderr
