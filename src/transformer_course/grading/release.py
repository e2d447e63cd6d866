"""Release: turn the solution notebooks (``solutions/``) into learner notebooks (``exercises/``).

nbgrader's ``generate_assignment`` does the real work: it replaces the code between
``### BEGIN SOLUTION`` and ``### END SOLUTION`` by ``raise NotImplementedError()``, deletes what lies
between ``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN TESTS``, clears outputs, locks the read-only
and test cells and records their checksums. This module then puts a setup cell first and writes the
result to ``exercises/``. The same solutions always give the same exercises, byte for byte, so a
test can tell when ``exercises/`` is stale. The setup cell and the translations are the work of
:class:`LearnerNotebook`, the last of nbgrader's own steps (``nbgrader_config.py`` adds it), so that
nbgrader's ``generate_assignment`` — formgrader's "Generate" button — makes the same exercises as
``transformer-course release``.

Each language whose catalogs translate the book's exercise pages (``book/locale/<language>/``) gets
its own learner notebooks in ``exercises/<assignment>/<language>/``: the English ones with their
instructions and questions translated (:mod:`transformer_course.grading.notebook_translation`) and
every other cell, the setup cell included, byte for byte the same. A learner submits either under the
notebook's own name, and autograde grades both alike.

The setup cell is the same in every notebook (autograde recognises it by its text). On Colab it
installs this package from the repository that ``_config.yml`` names, at the tag ``v<version>`` of
the version in ``pyproject.toml``: those two settings are all an instructor changes to teach from
their own copy. A tag, not a branch, so that a learner half-way through the course keeps the
package their notebooks were released with, whatever is pushed later. The package's own
dependencies hold everything the notebooks use (the final project's Multi30k download included),
so the cell needs no extras, and their loose ranges leave Colab's preinstalled torch and numpy
alone. Everywhere, the cell picks the GPU when there is one.
"""

from __future__ import annotations

import copy
import shutil
import tempfile
import tomllib
from pathlib import Path

import nbformat
from nbgrader.preprocessors import NbGraderPreprocessor

from .course import Course, course_of_config
from .notebook_translation import read_catalog, translated_notebook

SETUP_CELL_ID = "course-setup"

SETUP_CELL_TEMPLATE = """\
# Setup: run this cell first. On Colab it installs the course package, version {version}, the one
# these notebooks were released with; everywhere it picks the GPU if there is one.
import subprocess
import sys

if "google.colab" in sys.modules:
    package = "{requirement}"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", package], check=True)

import torch
import transformer_course

device = transformer_course.default_device()
print(f"transformer-course {{transformer_course.__version__}}, PyTorch {{torch.__version__}}, on {{device}}")"""


def package_version(course: Course) -> str:
    """The package's version, from the course's ``pyproject.toml`` (its one home)."""
    path = course.root / "pyproject.toml"
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))["project"]["version"]
    except (OSError, KeyError, tomllib.TOMLDecodeError) as error:
        raise RuntimeError(f"{path} gives no [project] version: {error}") from None


def package_requirement(course: Course) -> str:
    """What a learner's ``pip install`` asks for: the package from the course's repository at ``v<version>``."""
    url, _branch = course.repository()
    return f"transformer-course @ git+{url}@v{package_version(course)}"


def setup_cell(course: Course) -> nbformat.NotebookNode:
    """The first cell of every learner notebook."""
    text = SETUP_CELL_TEMPLATE.format(version=package_version(course), requirement=package_requirement(course))
    cell = nbformat.v4.new_code_cell(text)
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
            course.run_converter(
                "GenerateAssignment",
                assignment_id=pattern,
                release_directory=str(scratch / "release"),
                db_url=f"sqlite:///{scratch / 'gradebook.db'}",
            )
        for assignment in names:
            target = course.release_directory / assignment
            if target.exists():
                shutil.rmtree(target)
            shutil.copytree(scratch / "release" / assignment, target)
    written: list[Path] = []
    for assignment in names:
        folder = course.release_directory / assignment
        written += sorted(folder.glob("*.ipynb")) + sorted(folder.glob("*/*.ipynb"))
    return written


class LearnerNotebook(NbGraderPreprocessor):
    """nbgrader's last step of ``generate_assignment``: the setup cell first, and the notebook's translations
    (``<release>/<assignment>/<language>/``, beside the assignment's data files) written from the result."""

    def preprocess(self, nb: nbformat.NotebookNode, resources: dict) -> tuple[nbformat.NotebookNode, dict]:
        directories = self.config.CourseDirectory
        course = course_of_config(self.config)
        assignment, name = resources["nbgrader"]["assignment"], resources["nbgrader"]["notebook"]
        nb.cells.insert(0, setup_cell(course))
        release_directory = course.root / directories.get("release_directory", course.release_directory.name)
        for language, catalog in course.notebook_catalogs(assignment, name).items():
            folder = release_directory / assignment / language
            folder.mkdir(parents=True, exist_ok=True)
            for data_file in course.data_files(assignment):
                shutil.copyfile(data_file, folder / data_file.name)
            translated = translated_notebook(nbformat.from_dict(copy.deepcopy(nb)), read_catalog(catalog))
            nbformat.write(nbformat.from_dict(translated), folder / f"{name}.ipynb")
        return nb, resources
