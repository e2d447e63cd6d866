"""Release: turn the solution notebooks (``solutions/``) into learner notebooks (``exercises/``).

nbgrader's ``generate_assignment`` does the real work: it replaces the code between
``### BEGIN SOLUTION`` and ``### END SOLUTION`` by ``raise NotImplementedError()``, deletes what lies
between ``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN TESTS``, clears outputs, locks the read-only
and test cells and records their checksums. This module then puts a setup cell first (on Colab it
installs this package from the repository named in ``_config.yml``; everywhere it picks the GPU
when there is one) and writes the result to ``exercises/``. The same solutions always give the same
exercises, byte for byte, so a test can tell when ``exercises/`` is stale.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import nbformat

from .course import Course

SETUP_CELL_ID = "course-setup"

SETUP_CELL_TEMPLATE = """\
# Setup: run this cell first. On Colab it installs the course package; everywhere it picks the GPU
# if there is one.
import subprocess
import sys

if "google.colab" in sys.modules:
    package = "transformer-course @ git+{url}@{branch}"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", package], check=True)

import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
print(f"PyTorch {{torch.__version__}} on {{device}}")"""


def setup_cell(course: Course) -> nbformat.NotebookNode:
    """The first cell of every learner notebook."""
    url, branch = course.repository()
    cell = nbformat.v4.new_code_cell(SETUP_CELL_TEMPLATE.format(url=url, branch=branch))
    cell.id = SETUP_CELL_ID
    cell.metadata = {"tags": ["setup"]}
    return cell


def release(course: Course, assignments: list[str] | None = None) -> list[Path]:
    """Regenerate ``exercises/<assignment>/`` from ``solutions/<assignment>/``.

    Args:
        course: the course directory.
        assignments: the assignments to release; all of them by default.

    Returns:
        the learner notebooks written.
    """
    names = assignments or course.assignments()
    for assignment in names:
        course.check_assignment(assignment)
    with tempfile.TemporaryDirectory(prefix="release-") as scratch:
        scratch = Path(scratch)
        # A scratch release directory and gradebook: releasing touches nothing but exercises/.
        # Releasing them all takes one nbgrader run ("*" matches every assignment).
        for pattern in ["*"] if assignments is None else names:
            course.nbgrader_or_raise(
                "generate_assignment",
                pattern,
                "--force",
                f"--CourseDirectory.release_directory={scratch / 'release'}",
                f"--CourseDirectory.db_url=sqlite:///{scratch / 'gradebook.db'}",
            )
        for assignment in names:
            target = course.release_directory / assignment
            if target.exists():
                shutil.rmtree(target)
            shutil.copytree(scratch / "release" / assignment, target)
    written: list[Path] = []
    for assignment in names:
        for path in sorted((course.release_directory / assignment).glob("*.ipynb")):
            notebook = nbformat.read(path, as_version=4)
            notebook.cells.insert(0, setup_cell(course))
            nbformat.write(notebook, path)
            written.append(path)
    return written
