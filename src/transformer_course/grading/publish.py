"""Publish: the learners' copy of the course, without what only the instructor may see.

    transformer-course publish DIR

The course repository is the instructor's, and private: ``solutions/`` holds every model answer and
every hidden test. Learners read the book, open the exercises and install the package from a public
copy of it, which this command writes into ``DIR`` (a new folder, or a clone of the public
repository: its ``.git`` is kept): the book, ``exercises/`` (which nbgrader made without solutions or
hidden tests), the package, its tests and the course's settings — every file the repository tracks,
except

* ``solutions/``, and
* the tests and benchmarks that read it (they grade the model answers).

What stays public by design is the reference package itself: the book shows its code, and the
exercises ask learners to write what it holds; the hidden tests and their inputs do not live there.
``_config.yml``'s ``repository: url:`` names the public repository in both copies, so that the Colab
buttons and the notebooks' setup cells install from it.

Before anything is written, every notebook is checked for nbgrader's markers of a solution, a hidden
test or a mark scheme (a copy of a source notebook left elsewhere); one found stops the command
(:class:`~transformer_course.grading.course.CourseError`) and names the file.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from .course import Course, CourseError

# A file of DIR that says a previous publish wrote the rest (which the next one replaces).
PUBLISHED_MARK = ".published-course"
MARKERS = ("### BEGIN SOLUTION", "### BEGIN HIDDEN TESTS", "### BEGIN MARK SCHEME")
# Folders whose files are left out when they read the instructor's solutions.
READERS_OF_SOLUTIONS = ("tests", "benchmarks")


def publish(course: Course, directory: Path) -> list[Path]:
    """Write the learners' copy of ``course`` into ``directory``; return the files written (relative paths)."""
    directory = Path(directory).resolve()
    if directory == course.root or course.root in directory.parents:
        raise CourseError(f"{directory} is inside the course: publish into a folder of its own")
    files = learner_files(course)
    for path in files:
        if _holds_a_marker(course.root / path):
            raise CourseError(f"{path} holds a solution or a hidden test: not published")
    _clear(directory)
    for path in files:
        target = directory / path
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(course.root / path, target)
    (directory / PUBLISHED_MARK).write_text("written by transformer-course publish\n", encoding="utf-8")
    return files


def learner_files(course: Course) -> list[Path]:
    """The course's files a learner's copy holds (see the module docstring), relative to its root."""
    solutions = course.source_directory.relative_to(course.root)
    files = []
    for path in _tracked_files(course.root):
        if solutions in path.parents:
            continue
        if path.parts[0] in READERS_OF_SOLUTIONS and _mentions(course.root / path, solutions.name):
            continue
        files.append(path)
    return files


def _tracked_files(root: Path) -> list[Path]:
    """What git tracks in ``root``; without git, every file but those of build and grading runs."""
    try:
        listing = subprocess.run(
            ["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True, text=True
        ).stdout.split("\0")
        return sorted(Path(name) for name in listing if name and (root / name).is_file())
    except (OSError, subprocess.CalledProcessError):
        skipped = {".git", ".venv", "_build", "submitted", "autograded", "feedback", "grading_records", "__pycache__"}
        found = []
        for folder, folders, names in os.walk(root):
            folders[:] = [name for name in folders if name not in skipped and not name.endswith(".egg-info")]
            found += [Path(folder, name).relative_to(root) for name in names if not name.startswith("gradebook.db")]
        return sorted(found)


def _mentions(path: Path, word: str) -> bool:
    try:
        return word in path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return False


def _holds_a_marker(path: Path) -> bool:
    """Whether ``path`` is a notebook with a line of a cell that starts with one of nbgrader's markers."""
    if path.suffix != ".ipynb":
        return False
    cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    text = "\n".join("".join(cell.get("source", "")) for cell in cells)
    return any(line.strip().startswith(MARKERS) for line in text.splitlines())


def _clear(directory: Path) -> None:
    """Make ``directory`` ready: new, empty, a clone (``.git`` only) or an earlier publish (replaced, ``.git`` kept)."""
    if not directory.exists():
        directory.mkdir(parents=True)
        return
    entries = [entry for entry in directory.iterdir() if entry.name != ".git"]
    if entries and not (directory / PUBLISHED_MARK).is_file():
        raise CourseError(f"{directory} is not empty and holds no earlier publish: name a new or empty folder")
    for entry in entries:
        shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
