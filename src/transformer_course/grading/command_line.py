"""What every grading command shares: one ``error:`` line for a user's mistake, and the options and inputs that
several commands take (the course, the gradebook, the roster, the limits, an LMS's download and its times).

nbgrader and the Jupyter machinery are imported when a command runs, not when the command line starts:
``transformer-course train`` works where only the package is installed (``pip install transformer-course``, as on
Colab), without the ``grading`` extra. A mistake in what was asked for (an unknown assignment, a missing directory or
file, a file that is not a notebook, a ``grading.yml`` or roster that cannot be used) ends the command with one line,
``error: <what is wrong>``, instead of a traceback: every command runs inside :func:`command`, the one place that
says so.
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path

from .limits import GradingLimits

LMS_CHOICES = ("canvas", "moodle")  # the LMSs whose downloads, imports and feedback uploads the course reads and writes
SOURCE_HELP = (
    "what the learners handed in: a folder of <student_id>/<notebook>.ipynb (or nbgrader's submitted/, "
    "<student_id>/<assignment>/<notebook>.ipynb); with --lms, that LMS's own download as it comes, a zip or its "
    "folder"
)


class UserError(Exception):
    """A mistake in the command line itself (an option missing that another needs): its one ``error:`` line."""


def command(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """``run``, with the errors a user can cause turned into ``SystemExit("error: ...")`` (exit code 1)."""

    @functools.wraps(run)
    def wrapped(arguments: argparse.Namespace) -> int:
        try:
            return run(arguments)
        except UserError as error:
            raise SystemExit(f"error: {error}") from None
        except Exception as error:
            if isinstance(error, _user_error_types()):
                raise SystemExit(f"error: {error}") from None
            raise

    return wrapped


def _user_error_types() -> tuple[type[Exception], ...]:
    """The errors whose message says what the user got wrong (importing them needs the grading packages: where one
    is missing, that is the user's error to fix)."""
    try:
        from nbformat import ValidationError
        from nbformat.reader import NotJSONError

        from .autograde import GradingStopped
        from .errors import CourseError
        from .lateness import LatenessError
        from .sandbox import SandboxUnavailable
    except ModuleNotFoundError as error:
        from ..installation import install_command

        raise SystemExit(
            f"error: the grading commands need nbgrader and Jupyter ({error.name} is missing): "
            f"{install_command('grading')}, in the environment of {sys.executable}"
        ) from None
    return (
        CourseError,
        LatenessError,
        GradingStopped,
        SandboxUnavailable,
        FileNotFoundError,
        NotADirectoryError,
        NotJSONError,
        ValidationError,
    )


def due(text: str):
    """``--due``: a date and time with its zone (an argparse type, so that a mistake is argparse's one line)."""
    from .lateness import LatenessError, parse_due

    try:
        return parse_due(text, "--due")
    except LatenessError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def add_limits(parser: argparse.ArgumentParser) -> None:
    """An option for every field of :class:`GradingLimits`, with its default."""
    for limit in fields(GradingLimits):
        parser.add_argument(
            f"--{limit.name.replace('_', '-')}",
            type=int,
            default=limit.default,
            help=f"{limit.metadata['help']} (default: %(default)s)",
        )


def limits(arguments: argparse.Namespace) -> GradingLimits:
    return GradingLimits(**{limit.name: getattr(arguments, limit.name) for limit in fields(GradingLimits)})


def add_assignment_command(subcommands: argparse._SubParsersAction, name: str, help: str) -> argparse.ArgumentParser:
    """The subcommand ``name`` of one assignment (``transformer-course NAME ASSIGNMENT ...``), its parser to add to."""
    parser = subcommands.add_parser(name, help=help)
    parser.add_argument("assignment", help="e.g. 01-attention")
    return parser


# The options several commands take, each declared here once, with one help text.


def add_course_root(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--course-root", type=Path, help="course directory (default: found from the working directory)")


def add_db_url(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db-url", help="SQLAlchemy URL of the gradebook (default: sqlite gradebook.db in the course root)"
    )


def add_gradebook_options(parser: argparse.ArgumentParser) -> None:
    add_db_url(parser)
    add_course_root(parser)


def add_grades_out(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out", type=Path, default=Path("grades.csv"), help="grades CSV to write (default: grades.csv)"
    )


def add_due(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--due",
        type=due,
        help="when it was due, e.g. 2026-11-20T23:59:00+01:00 (default: the one last given for the student, else "
        "grading.yml's)",
    )


def add_roster(parser: argparse.ArgumentParser, meaning: str) -> None:
    """``--roster``, and what it does for this command (``meaning``)."""
    parser.add_argument(
        "--roster",
        type=Path,
        help=f"CSV of the class (student_id, and any of name, email, lms_id, section, extension): {meaning}",
    )


def add_lms_download(parser: argparse.ArgumentParser) -> None:
    """``--lms``, for the commands whose SOURCE may be an LMS's download (mapped to students through ``--roster``)."""
    parser.add_argument(
        "--lms",
        choices=LMS_CHOICES,
        help="SOURCE is that LMS's own download (a zip or its folder), mapped to students through --roster",
    )


def course(arguments: argparse.Namespace):
    from .course import Course, find_course_root

    return Course(find_course_root(arguments.course_root))


def roster(arguments: argparse.Namespace):
    if arguments.roster is None:
        return None
    from .roster import read_roster

    return read_roster(arguments.roster)


def submissions(the_course, arguments: argparse.Namespace, class_roster, scratch: Path):
    """The folder of ``<student_id>/`` folders to read, and what the LMS's download said (None without ``--lms``):
    SUBMISSIONS itself, or with ``--lms`` the download taken into ``scratch``
    (:mod:`transformer_course.grading.lms`), where a file that maps to nobody is said here, one line each, and
    graded nowhere."""
    from .lms import unpack
    from .terminal import say

    if not arguments.lms:
        return arguments.submissions, None
    if class_roster is None:
        raise UserError("--lms needs --roster: the roster maps the LMS's ids and names to student ids")
    notebooks = [path.name for path in the_course.source_notebooks(arguments.assignment)]
    unpacked = unpack(arguments.submissions, arguments.lms, class_roster, notebooks, scratch / "submissions")
    for line in unpacked.unmatched:
        say("not graded:", line)
    return scratch / "submissions", unpacked
