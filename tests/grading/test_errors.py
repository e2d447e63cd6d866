"""CourseError's own module imports nothing, so that what reads an instructor's files without nbgrader (the roster, an
LMS's download, the submission times) raises it where only the package and nbformat are installed."""

from __future__ import annotations

import subprocess
import sys

WITHOUT_NBGRADER = """
import sys
sys.modules["nbgrader"] = None  # as if not installed: importing it is an ImportError
from transformer_course.grading import lms, roster, submission_times
from transformer_course.grading.errors import CourseError
print(issubclass(roster.RosterError, CourseError))
"""


def test_the_roster_the_lms_download_and_the_submission_times_are_read_without_nbgrader():
    run = subprocess.run([sys.executable, "-c", WITHOUT_NBGRADER], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip() == "True", run.stdout
