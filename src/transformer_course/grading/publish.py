"""Publish: the learners' copy of the course, its own public files and nothing else.

    transformer-course publish DIR

The course repository is the instructor's, and private: ``solutions/`` holds every model answer and every
hidden test, and a term fills the course folder with grades, rosters, LMS downloads and submissions. Learners
read the book, open the exercises and install the package from a public copy, which this command writes into
``DIR`` (a new folder, or a clone of the public repository: its ``.git`` is kept). What goes there is chosen in
three steps, each of which keeps what it names, so that a file nobody thought of stays out:

1. **The course's own files.** In a git clone, the files git tracks (commit a new page before publishing). In a
   course that is not one (a downloaded zip, a copied folder), the course's own folders and files by name,
   :data:`COURSE_FILES` and the release directory, without what builds and runs write inside them (caches,
   ``_build``, training runs). Nothing else in the course folder is read.
2. **Less the instructor's, by name and kind**, even where git tracks it: the source directory, what grading
   writes (nbgrader's ``submitted/``, ``autograded/`` and ``feedback/``, the gradebook, the run records), the
   kinds of file that hold grades, rosters and LMS downloads (CSV and spreadsheets, archives, databases,
   similarity reports) and links (one could point anywhere). In the release directory, only the released
   notebooks (``<assignment>/[<language>/]<notebook>.ipynb``) and the assignments' data files.
3. **Less what holds an answer, by content** (:mod:`.answer_key`): a program holding a model answer, a hidden test
   or an alternative solution; a notebook with nbgrader's cells outside the release directory (a learner's, or a
   copy of a course notebook); a test or benchmark that reads the source directory (it names it, or carries the
   ``needs_solutions`` marker). Then what needs a file left out: a learner's clone runs the tests it receives, so
   a test module that imports a left-out helper, or uses a fixture of a left-out ``conftest.py``, goes too.

The reference package and the book are public by design: the book shows the package's code, and the package
implements what several exercises ask learners to write; the hidden tests and their inputs do not live there.
``_config.yml``'s ``repository: url:`` names the public repository in both copies, so that the Colab buttons and
the notebooks' setup cells install from it.

Some findings stop the command instead, before anything is written (one
:class:`~transformer_course.grading.errors.CourseError` naming the file): a notebook among the course's own
files that is not JSON, and a released notebook that holds nbgrader's markers or answers (left out, the copy
would lack an exercise; ``transformer-course release`` writes it again).
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .answer_key import AnswerKey, has_nbgrader_cells, holds_a_marker, read_notebook
from .course import CONFIG_FILE, Course
from .errors import CourseError
from .run_record import RECORDS_DIRECTORY
from .terminal import printable

# A file of DIR that says a previous publish wrote the rest (which the next one replaces).
PUBLISHED_MARK = ".published-course"
# The course's own folders and files, beside the release directory: what a copy without git publishes from.
COURSE_FILES = (
    ".ci",
    ".gitignore",
    "Makefile",
    "README.md",
    "_config.yml",
    "_toc.yml",
    "benchmarks",
    "book",
    CONFIG_FILE,
    "pyproject.toml",
    "requirements.txt",
    "src",
    "tests",
)
# What builds, installs and training runs write among them: never the course's, never reported.
BUILD_OUTPUTS = {".git", ".venv", "venv", "_build", "__pycache__", ".pytest_cache", ".ipynb_checkpoints", "runs"}
BUILD_SUFFIXES = (".egg-info", ".pyc", ".mo", ".pt")
# Folders that only grading writes (nbgrader's own are named by the course's config).
GRADING_FOLDERS = {RECORDS_DIRECTORY, "feedback-zips"}
# Grades, rosters, LMS downloads and exports, gradebooks: the course keeps its own data as JSON Lines and TSV.
GRADING_DATA_SUFFIXES = (".csv", ".xlsx", ".xls", ".ods", ".zip", ".tar", ".gz", ".tgz", ".bz2", ".xz", ".7z", ".rar")
DATABASE_SUFFIXES = (".db", ".db-journal", ".sqlite", ".sqlite3")
# The title of copydetect's report, which ``transformer-course similarity`` writes.
SIMILARITY_REPORT = "<title>Copy Detection Report</title>"
# Where the course's programs may read the source directory: its tests and benchmarks.
READERS_OF_SOLUTIONS = ("tests", "benchmarks")
NEEDS_SOLUTIONS_MARKER = "needs_solutions"
# What publish does not search for answers: public by design (the module docstring says why).
PUBLIC_BY_DESIGN = ("src", "book")


@dataclass
class Publication:
    """What publish wrote (paths relative to DIR, as in the course) and what it left out, with why."""

    written: list[Path] = field(default_factory=list)
    left_out: dict[Path, str] = field(default_factory=dict)


def publish(course: Course, directory: Path) -> Publication:
    """Write the learners' copy of ``course`` into ``directory`` (see the module docstring)."""
    directory = Path(directory).resolve()
    if directory == course.root or course.root in directory.parents:
        raise CourseError(f"{directory} is inside the course: publish into a folder of its own")
    publication = learner_files(course)
    _clear(directory)
    for path in publication.written:
        target = directory / path
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(course.root / path, target)
    (directory / PUBLISHED_MARK).write_text("written by transformer-course publish\n", encoding="utf-8")
    return publication


def learner_files(course: Course) -> Publication:
    """The course's files a learner's copy holds, and those left out (the module docstring's three steps)."""
    publication = Publication()
    candidates = _course_files(course, publication)
    kept = [path for path in candidates if not _left_out_by_name(course, path, publication)]
    key = AnswerKey(course)
    kept = [path for path in kept if not _left_out_by_content(course, key, path, publication)]
    publication.written = _runnable(course, kept, publication)
    return publication


# Step 1: the course's own files.


def _course_files(course: Course, publication: Publication) -> list[Path]:
    """What git tracks in the course; without git, the course's own folders and files by name."""
    tracked = _tracked_files(course.root)
    if tracked is not None:
        return tracked
    own = {*COURSE_FILES, course.release_directory.name, course.source_directory.name}
    found = []
    for entry in sorted(course.root.iterdir()):
        if entry.name in own and entry.is_dir() and not entry.is_symlink():
            found += _walk(course.root, entry)
        elif entry.name in own:
            found.append(entry.relative_to(course.root))
        elif not _is_build_output(entry.name):
            publication.left_out[entry.relative_to(course.root)] = "not one of the course's own files"
    return found


def _tracked_files(root: Path) -> list[Path] | None:
    """What git tracks in ``root``, or None where ``root`` is not the top of a git clone."""
    try:
        top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=root, capture_output=True, text=True)
        if top.returncode != 0 or Path(top.stdout.strip()).resolve() != root.resolve():
            return None
        listing = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True, text=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return sorted(Path(name) for name in listing.stdout.split("\0") if name and (root / name).is_file())


def _walk(root: Path, folder: Path) -> Iterator[Path]:
    """The files under ``folder`` (links included, not followed), without build outputs, relative to ``root``."""
    for parent, folders, names in os.walk(folder):
        folders[:] = sorted(name for name in folders if not _is_build_output(name))
        for name in sorted(names + [name for name in folders if Path(parent, name).is_symlink()]):
            if not _is_build_output(name):
                yield Path(parent, name).relative_to(root)


def _is_build_output(name: str) -> bool:
    return name in BUILD_OUTPUTS or name.endswith(BUILD_SUFFIXES)


# Step 2: less the instructor's, by name and kind.


def _left_out_by_name(course: Course, path: Path, publication: Publication) -> bool:
    """Leave ``path`` out (and record why) when its name or kind is the instructor's; a folder is recorded once."""
    private_folders = {
        course.source_directory.name: "the model answers and hidden tests",
        course.submitted_directory.name: "submissions",
        course.autograded_directory.name: "submissions",
        course.feedback_directory.name: "learners' feedback",
        **dict.fromkeys(GRADING_FOLDERS, "grading records"),
    }
    for depth, part in enumerate(path.parts[:-1]):
        if part in private_folders:
            publication.left_out[Path(*path.parts[: depth + 1])] = private_folders[part]
            return True
    why = _instructors_kind(course, path)
    if why is None and path.parts[0] == course.release_directory.name and not _is_released(course, path):
        why = "not a file the course releases"
    if why is not None:
        publication.left_out[path] = why
    return why is not None


def _instructors_kind(course: Course, path: Path) -> str | None:
    """Why a file of this name or kind is never a learner's, or None."""
    full = course.root / path
    if full.is_symlink():
        return "a link"
    if path.name.startswith("gradebook.db") or path.name.lower().endswith(DATABASE_SUFFIXES):
        return "a database (a gradebook)"
    if path.name.lower().endswith(GRADING_DATA_SUFFIXES):
        return "grades, a roster or an LMS file (CSV, spreadsheet or archive)"
    if path.suffix.lower() in (".html", ".htm") and SIMILARITY_REPORT in full.read_text(
        encoding="utf-8", errors="ignore"
    ):
        return "a similarity report"
    return None


def _is_released(course: Course, path: Path) -> bool:
    """Whether ``path`` is a notebook or data file that ``release`` writes: ``<release>/<assignment>/[<language>/]``."""
    parts = path.parts[1:]
    if len(parts) not in (2, 3) or parts[0] not in course.assignments():
        return False
    assignment, name = parts[0], parts[-1]
    notebooks = {notebook.stem for notebook in course.source_notebooks(assignment)}
    if len(parts) == 3 and not any(parts[1] in course.notebook_catalogs(assignment, stem) for stem in notebooks):
        return False
    return name in {f"{stem}.ipynb" for stem in notebooks} | {data.name for data in course.data_files(assignment)}


# Step 3: less what holds an answer, by content, and what needs a file left out.


def _left_out_by_content(course: Course, key: AnswerKey, path: Path, publication: Publication) -> bool:
    """Leave ``path`` out (and record why) when it holds an answer or reads the source directory."""
    why = None
    if path.suffix == ".ipynb":
        why = _notebook_check(course, key, path)
    elif path.parts[0] not in PUBLIC_BY_DESIGN:
        text = _text(course.root / path)
        found = key.found_in_program(text) if path.suffix == ".py" else key.found_in_text(text)
        if found:
            why = f"holds {found[0]}" + (f" and {len(found) - 1} more" if len(found) > 1 else "")
        elif path.suffix == ".py" and path.parts[0] in READERS_OF_SOLUTIONS and _reads_solutions(course, text):
            why = f"reads {course.source_directory.name}/, which learners do not receive"
    if why is not None:
        publication.left_out[path] = why
    return why is not None


def _notebook_check(course: Course, key: AnswerKey, path: Path) -> str | None:
    """Why a notebook is left out, or None; a released notebook with markers or answers stops the command."""
    notebook = read_notebook(course.root / path, printable(path))
    if path.parts[0] != course.release_directory.name:
        if has_nbgrader_cells(notebook):
            return "a notebook with nbgrader's cells outside the release directory (a learner's, or a copy of one)"
        return None
    if holds_a_marker(notebook):
        raise CourseError(f"{path} holds a solution or a hidden test: not published")
    filled = key.filled_cells(notebook, path.parts[1], path.stem)
    if filled:
        raise CourseError(
            f"{path} holds answers in {', '.join(filled)}: not published (transformer-course release writes it again)"
        )
    return None


def _reads_solutions(course: Course, text: str) -> bool:
    """Whether a test or benchmark names the source directory, or is marked as needing it."""
    return course.source_directory.name in text or f"mark.{NEEDS_SOLUTIONS_MARKER}" in text


def _runnable(course: Course, kept: list[Path], publication: Publication) -> list[Path]:
    """``kept`` less the programs that need one left out (an import, a conftest.py's fixture), until none does."""
    while True:
        missing = {path: why for path in kept if (why := _needs_one_left_out(course, path, publication))}
        if not missing:
            return kept
        publication.left_out.update(missing)
        kept = [path for path in kept if path not in missing]


def _needs_one_left_out(course: Course, path: Path, publication: Publication) -> str | None:
    """Why the program ``path`` cannot run without a file left out, or None."""
    if path.suffix != ".py" or path.parts[0] in PUBLIC_BY_DESIGN:
        return None
    tree = ast.parse(_text(course.root / path))
    imported = {
        alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
    }
    imported |= {
        node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
    }
    parameters = {
        argument.arg for node in ast.walk(tree) if isinstance(node, ast.FunctionDef) for argument in node.args.args
    }
    for other in publication.left_out:
        if other.suffix != ".py" or other.parent not in (path.parent, *path.parent.parents):
            continue
        if other.stem in imported:
            return f"imports {other.stem}, which is left out"
        if other.name == "conftest.py" and (used := parameters & _fixtures(course.root / other)):
            return f"uses the fixture {sorted(used)[0]} of {other}, which is left out"
    return None


def _fixtures(conftest: Path) -> set[str]:
    """The names of the pytest fixtures ``conftest`` defines."""
    tree = ast.parse(_text(conftest))
    return {
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
        and any("fixture" in ast.unparse(decorator) for decorator in node.decorator_list)
    }


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


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
