"""The course directory as nbgrader sees it, and how to call nbgrader on it.

The repository root is nbgrader's course root (it holds ``nbgrader_config.py``):
``solutions/<assignment>/`` is the source directory (the notebook, its ``grading.yml`` and any data
files), ``exercises/<assignment>/`` the release directory; ``submitted/``, ``autograded/``,
``feedback/`` and ``gradebook.db`` appear when grading. The names of these directories are
nbgrader's: its ``CourseDirectory`` settings in ``nbgrader_config.py``, or their defaults. nbgrader
is called one way, :meth:`Course.run_converter`: its converters in this process, with the course's config.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import nbformat
import yaml
from nbgrader import utils
from nbgrader.coursedir import CourseDirectory
from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

from .nbgrader_cells import cells_by_grade_id, grade_id, nbgrader_metadata, test_sources
from .policy import POLICY_FILE, GradingPolicy

CONFIG_FILE = "nbgrader_config.py"
# The book's translation catalogs (by language); those of the exercise pages translate the learner notebooks.
# The folder of book_programs.editions.LOCALE, written here because grading does not import the book's wing
# (it would load the training stack); a test holds the two equal.
LOCALE_DIRECTORY = "book/locale"
# nbgrader's markers around the hidden part of a test cell.
BEGIN_HIDDEN_TESTS, END_HIDDEN_TESTS = "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"


class CourseError(RuntimeError):
    """The course directory or an nbgrader step is not as expected."""


def find_course_root(start: Path | str | None = None) -> Path:
    """The nearest directory at or above ``start`` (default: the working directory) holding ``nbgrader_config.py``."""
    start = Path(start or Path.cwd()).resolve()
    for directory in (start, *start.parents):
        if (directory / CONFIG_FILE).is_file():
            return directory
    raise CourseError(
        f"no {CONFIG_FILE} found in {start} or any parent directory: run this inside the course repository"
    )


@dataclass(frozen=True)
class Course:
    """A course root with ``solutions/`` (nbgrader's source) and ``exercises/`` (its release)."""

    root: Path

    @property
    def source_directory(self) -> Path:
        return self._directory("source_directory")

    @property
    def release_directory(self) -> Path:
        return self._directory("release_directory")

    @property
    def submitted_directory(self) -> Path:
        return self._directory("submitted_directory")

    @property
    def autograded_directory(self) -> Path:
        return self._directory("autograded_directory")

    @property
    def feedback_directory(self) -> Path:
        return self._directory("feedback_directory")

    @property
    def default_db_url(self) -> str:
        return f"sqlite:///{self.root / 'gradebook.db'}"

    @property
    def course_id(self) -> str:
        """``CourseDirectory.course_id`` from ``nbgrader_config.py`` (the gradebook's default if unset)."""
        return self._config.get("CourseDirectory", {}).get("course_id", "default_course")

    @property
    def nbgrader_config(self) -> Config:
        """The course's ``nbgrader_config.py``, loaded once."""
        return self._config

    @cached_property
    def _config(self) -> Config:
        return PyFileConfigLoader(CONFIG_FILE, path=str(self.root)).load_config()

    def _directory(self, name: str) -> Path:
        """The directory ``CourseDirectory.<name>`` of ``nbgrader_config.py``, or nbgrader's default if unset."""
        return self.root / self._config.get("CourseDirectory", {}).get(
            name, CourseDirectory.class_traits()[name].default()
        )

    def assignments(self) -> list[str]:
        """Names of the assignments in ``solutions/``, sorted (``01-attention``, …)."""
        if not self.source_directory.is_dir():
            raise CourseError(f"{self.source_directory} does not exist")
        return sorted(
            path.name for path in self.source_directory.iterdir() if path.is_dir() and any(path.glob("*.ipynb"))
        )

    def check_assignment(self, assignment: str) -> None:
        known = self.assignments()
        if assignment not in known:
            raise CourseError(f"unknown assignment {assignment!r}; the assignments are: {', '.join(known)}")

    def source_notebooks(self, assignment: str) -> list[Path]:
        """The source notebooks of ``assignment``."""
        self.check_assignment(assignment)
        return sorted((self.source_directory / assignment).glob("*.ipynb"))

    def released_notebooks(self, assignment: str) -> list[Path]:
        """The learner notebooks of ``assignment`` that ``release`` wrote (``exercises/<assignment>/*.ipynb``)."""
        self.check_assignment(assignment)
        return sorted((self.release_directory / assignment).glob("*.ipynb"))

    def source_notebook(self, assignment: str, notebook_id: str) -> dict:
        """The source notebook ``notebook_id`` (its name without ``.ipynb``) of ``assignment``, as JSON."""
        return read_json_notebook(self.source_directory / assignment / f"{notebook_id}.ipynb")

    @staticmethod
    def test_cells(notebook: dict) -> dict[str, str]:
        """grade_id → source of each test cell (nbgrader ``grade`` code cell) of a source notebook."""
        return test_sources(notebook)

    def policy(self, assignment: str) -> GradingPolicy:
        """What the grader needs to know about ``assignment`` (``solutions/<assignment>/grading.yml``).

        Raises:
            CourseError: the file is not valid YAML or not a grading policy (the message names it).
        """
        try:
            return GradingPolicy.from_file(self.source_directory / assignment / POLICY_FILE)
        except (ValueError, yaml.YAMLError) as error:
            raise CourseError(" ".join(str(error).split())) from None

    def bonus_cells(self, assignment: str) -> set[str]:
        """The grade_ids of ``assignment``'s bonus cells (``bonus:`` in its ``grading.yml``), each checked to be a
        graded cell of its source notebooks.

        Raises:
            CourseError: ``grading.yml`` names a cell the notebooks do not grade.
        """
        bonus = set(self.policy(assignment).bonus)
        graded = {
            grade_id(cell)
            for path in self.source_notebooks(assignment)
            for cell in read_json_notebook(path).get("cells", [])
            if nbgrader_metadata(cell).get("grade")
        }
        if bonus - graded:
            unknown = ", ".join(sorted(bonus - graded))
            raise CourseError(f"{assignment}/grading.yml: bonus names {unknown}, which no graded cell of it is")
        return bonus

    def notebook_catalogs(self, assignment: str, notebook: str) -> dict[str, Path]:
        """language → the catalog that translates the learner notebook ``notebook`` (its name without ``.ipynb``):
        the book's catalog of that notebook's exercise page, in each language that has one."""
        locale = self.root / LOCALE_DIRECTORY
        found = {}
        for language in sorted(path.name for path in locale.iterdir()) if locale.is_dir() else []:
            catalog = locale / language / "LC_MESSAGES" / self.release_directory.name / assignment / f"{notebook}.po"
            if catalog.is_file():
                found[language] = catalog
        return found

    def data_files(self, assignment: str) -> list[Path]:
        """The files ``assignment`` ships beside its notebook (shown to the kernel that grades it)."""
        return sorted(
            path
            for path in (self.source_directory / assignment).iterdir()
            if path.is_file() and path.suffix != ".ipynb" and path.name != POLICY_FILE and not path.name.startswith(".")
        )

    def redacted_package(self, assignment: str, target: Path) -> Path:
        """The course package without what ``assignment`` asks the learner to write, copied into ``target``.

        Raises:
            CourseError: ``grading.yml``'s ``learner_writes`` names what the package does not define.
        """
        from .redaction import RedactionError, redacted_package

        try:
            return redacted_package(self.policy(assignment).learner_writes, target)
        except RedactionError as error:
            raise CourseError(f"{assignment}/{POLICY_FILE}: learner_writes: {error}") from None

    def repository(self) -> tuple[str, str]:
        """The book's repository URL and branch, from ``_config.yml``."""
        config = yaml.safe_load((self.root / "_config.yml").read_text(encoding="utf-8"))
        repository = config.get("repository", {})
        if "url" not in repository:
            raise CourseError("_config.yml has no repository.url")
        return repository["url"].rstrip("/"), repository.get("branch", "main")

    def run_converter(self, converter: str, **settings: str) -> None:
        """Run nbgrader's converter ``converter`` (``"GenerateAssignment"``, ``"GenerateFeedback"``...) in this
        process, forced, with the course's config and ``settings`` for its ``CourseDirectory`` (``assignment_id``,
        ``db_url``...): what ``nbgrader <command> --force`` does, without starting nbgrader again.

        Raises:
            CourseError: the converter failed for some notebook.
        """
        import logging

        from nbgrader import converters
        from nbgrader.coursedir import CourseDirectory

        config = copy.deepcopy(self._config)
        config.CourseDirectory.root = str(self.root)
        for name, value in settings.items():
            setattr(config.CourseDirectory, name, value)
        config[converter].force = True
        instance = getattr(converters, converter)(coursedir=CourseDirectory(config=config), config=config)
        instance.log.setLevel(logging.CRITICAL)  # a failure is raised, and said, here
        try:
            with _this_environments_programs_first():
                instance.start()
        except converters.NbGraderException as error:
            raise CourseError(f"nbgrader's {converter} failed: {error}") from None


@contextlib.contextmanager
def _this_environments_programs_first() -> Iterator[None]:
    """While nbgrader runs, PATH with this Python environment's scripts first, as PATH is when the environment is
    activated: nbgrader runs a helper program found on it (alembic, when it creates a gradebook). PATH is as it was
    afterwards."""
    before = os.environ.get("PATH")
    here = os.path.dirname(sys.executable)
    os.environ["PATH"] = os.pathsep.join([here, before]) if before else here
    try:
        yield
    finally:
        if before is None:
            del os.environ["PATH"]
        else:
            os.environ["PATH"] = before


@dataclass(frozen=True)
class GradingContext:
    """What every grading step is given: an assignment of ``course`` and the gradebook it is graded into."""

    course: Course
    assignment: str
    db_url: str

    @classmethod
    def of(cls, course: Course, assignment: str, db_url: str | None = None) -> GradingContext:
        """The context of ``assignment`` (checked to exist), in ``db_url`` or the course's own gradebook."""
        course.check_assignment(assignment)
        return cls(course, assignment, db_url or course.default_db_url)


def copy_course(source: Path, target: Path) -> Course:
    """A copy of the course at ``source`` in ``target``, for grading runs that must not touch the original:
    its source and release directories, nbgrader's config, the book's (which names the repository),
    pyproject.toml (which gives the package's version: the setup cell installs its tag) and the book's
    catalogs (which translate the learner notebooks)."""
    original = Course(source)
    target.mkdir(parents=True, exist_ok=True)
    names = (
        original.source_directory.name,
        original.release_directory.name,
        CONFIG_FILE,
        "_config.yml",
        "pyproject.toml",
        LOCALE_DIRECTORY,
    )
    for name in names:
        if (source / name).is_dir():
            shutil.copytree(source / name, target / name, ignore=shutil.ignore_patterns("*.mo"))
        elif (source / name).is_file():
            shutil.copyfile(source / name, target / name)
    return Course(target)


def split_hidden_tests(source: str) -> tuple[str, str]:
    """A test cell's source as (visible tests, hidden tests), without nbgrader's marker lines."""
    return split_at_markers(source, BEGIN_HIDDEN_TESTS, END_HIDDEN_TESTS)


def split_at_markers(source: str, begin: str, end: str) -> tuple[str, str]:
    """A cell's source as (the lines outside nbgrader's ``begin`` … ``end`` markers, the lines between them), without
    the marker lines."""
    outside, between, inside = [], [], False
    for line in source.splitlines(keepends=True):
        if begin in line:
            inside = True
        elif end in line:
            inside = False
        else:
            (between if inside else outside).append(line)
    return "".join(outside), "".join(between)


def edited_locked_cells(notebook: dict, release: dict, *other_versions: dict) -> list[str]:
    """grade_ids of the locked cells of ``release`` (tests, given code) that ``notebook`` edited, retyped or deleted.

    At release nbgrader records in each locked cell a checksum of its type, source and nbgrader metadata. A cell
    of ``notebook`` is unchanged when its type and source, under the released cell's metadata, give that checksum
    or the checksum of the same cell in one of ``other_versions`` (the source notebook, whose test cells still
    hold the hidden tests). A learner's notebook serves as its own ``release``: its locked cells carry the checksums.
    """
    cells = cells_by_grade_id(notebook)
    versions = [cells_by_grade_id(version) for version in other_versions]
    edited = []
    for name, released in cells_by_grade_id(release).items():
        metadata = nbgrader_metadata(released)
        if not utils.is_locked(nbformat.from_dict(released)):
            continue
        accepted = {metadata.get("checksum") or _checksum(released, metadata)}
        accepted |= {_checksum(version[name], metadata) for version in versions if name in version}
        if name not in cells or _checksum(cells[name], metadata) not in accepted:
            edited.append(name)
    return edited


def _checksum(cell: dict, metadata: dict) -> str:
    """nbgrader's checksum of ``cell``'s type and source under the nbgrader ``metadata`` given."""
    source = cell.get("source", "")
    source = source if isinstance(source, str) else "".join(source)
    plain = {"cell_type": cell.get("cell_type"), "source": source, "metadata": {"nbgrader": metadata}}
    return utils.compute_checksum(nbformat.from_dict(plain))


def read_json_notebook(path: Path) -> dict:
    """Parse a notebook file as JSON (without validation)."""
    return json.loads(path.read_text(encoding="utf-8"))
