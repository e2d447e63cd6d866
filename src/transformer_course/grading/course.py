"""The course directory as nbgrader sees it, and how to call nbgrader on it.

The repository root is nbgrader's course root (it holds ``nbgrader_config.py``):
``solutions/<assignment>/`` is the source directory (the notebook, its ``grading.yml`` and any data
files), ``exercises/<assignment>/`` the release directory; ``submitted/``, ``autograded/``,
``feedback/`` and ``gradebook.db`` appear when grading. The names of these directories are
nbgrader's: its ``CourseDirectory`` settings in ``nbgrader_config.py``, or their defaults. The course root is
found one way, :func:`find_course_root` (by the commands, and by the plug-ins that ``nbgrader_config.py`` gives
nbgrader: :func:`course_of_config`), and nbgrader is called one way, :meth:`Course.run_converter`: its converters in
this process, with the course's config. What the course says of one assignment is :mod:`.context`'s.
"""

from __future__ import annotations

import contextlib
import copy
import logging
import os
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import yaml
from nbgrader.coursedir import CourseDirectory
from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

from .errors import CourseError
from .policy import POLICY_FILE, GradingPolicy

CONFIG_FILE = "nbgrader_config.py"
# The book's translation catalogs (by language); those of the exercise pages translate the learner notebooks.
# The folder of book_programs.editions.LOCALE, written here because grading does not import the book's wing
# (it would load the training stack); a test holds the two equal.
LOCALE_DIRECTORY = "book/locale"


def find_course_root(start: Path | str | None = None) -> Path:
    """The nearest directory at or above ``start`` (default: the working directory) holding ``nbgrader_config.py``."""
    start = Path(start or Path.cwd()).resolve()
    for directory in (start, *start.parents):
        if (directory / CONFIG_FILE).is_file():
            return directory
    raise CourseError(
        f"no {CONFIG_FILE} found in {start} or any parent directory: run this inside the course repository"
    )


def course_of_config(config: Config) -> Course:
    """The course whose nbgrader runs a plug-in of ``nbgrader_config.py`` (a preprocessor's ``config``): found from
    ``CourseDirectory.root`` where it is set (as :meth:`Course.run_converter` sets it), else from the working
    directory, where nbgrader itself runs (:func:`find_course_root`, the one way the course is found)."""
    return Course(find_course_root(config.CourseDirectory.get("root") or None))


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

    def policy(self, assignment: str) -> GradingPolicy:
        """What the grader needs to know about ``assignment`` (``solutions/<assignment>/grading.yml``).

        Raises:
            CourseError: the file is not valid YAML or not a grading policy (the message names it).
        """
        try:
            return GradingPolicy.from_file(self.source_directory / assignment / POLICY_FILE)
        except (ValueError, yaml.YAMLError) as error:
            raise CourseError(" ".join(str(error).split())) from None

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
        from nbgrader import converters  # nbconvert's exporters: loaded by the commands that convert, not on import

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
