"""``transformer-course release | autograde | check`` (registered by :mod:`transformer_course.cli`).

nbgrader and the Jupyter machinery are imported when one of these commands runs, not when the
command line starts: ``transformer-course train`` works where only the package is installed
(``pip install transformer-course``, as on Colab), without the ``grading`` extra.

A mistake in what was asked for (an unknown assignment, a missing directory or file, a file that
is not a notebook) ends the command with a one-line error instead of a traceback.
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import fields
from pathlib import Path

from .limits import GradingLimits


def register(subcommands: argparse._SubParsersAction) -> None:
    """Add the grading commands to the ``transformer-course`` parser."""
    parser = subcommands.add_parser("release", help="regenerate exercises/ from solutions/ (instructors)")
    parser.add_argument("assignment", nargs="?", help="assignment to release, e.g. 01-attention (default: all)")
    parser.add_argument("--course-root", type=Path, help="course directory (default: found from the working directory)")
    parser.set_defaults(run=run_release)

    parser = subcommands.add_parser("autograde", help="grade a class's submissions into the gradebook (instructors)")
    parser.add_argument("assignment", help="e.g. 01-attention")
    parser.add_argument("submissions", type=Path, help="directory of <student_id>/<notebook>.ipynb")
    parser.add_argument(
        "--out", type=Path, default=Path("grades.csv"), help="grades CSV to write (default: grades.csv)"
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="submissions graded in parallel (default: the number of cores, or the scheduler's worker threads)",
    )
    parser.add_argument(
        "--db-url", help="SQLAlchemy URL of the gradebook (default: sqlite gradebook.db in the course root)"
    )
    parser.add_argument(
        "--scheduler",
        metavar="tcp://HOST:PORT",
        help="run the submissions on the workers of this Dask scheduler (default: worker processes on this machine)",
    )
    parser.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar over the class")
    for limit in fields(GradingLimits):
        parser.add_argument(
            f"--{limit.name.replace('_', '-')}",
            type=int,
            default=limit.default,
            help=f"{limit.metadata['help']} (default: %(default)s)",
        )
    parser.add_argument(
        "--no-sandbox",
        dest="sandbox",
        action="store_false",
        help="grade without bubblewrap's sandbox. The submissions' code then runs as you, with your files and network: "
        "it can read the solutions and other submissions, change the gradebook, and leave processes behind. "
        "Hidden tests are still judged outside the kernel. Only for submissions you trust.",
    )
    parser.add_argument("--course-root", type=Path, help="course directory (default: found from the working directory)")
    parser.set_defaults(run=run_autograde)

    parser = subcommands.add_parser(
        "check",
        help="run a notebook's visible tests and show which pass (learners); "
        "with --sandbox, test that autograde can run notebooks here (instructors)",
    )
    parser.add_argument("notebook", type=Path, nargs="?", help="your notebook, e.g. attention.ipynb")
    parser.add_argument("--cell-timeout", type=int, default=600, help=f"{_help('cell_timeout')} (default: %(default)s)")
    parser.add_argument(
        "--sandbox",
        action="store_true",
        help="instead of a notebook, check that the grader's sandbox starts a kernel that imports the course, "
        "as autograde does before its first submission",
    )
    parser.set_defaults(run=run_check)


def _help(limit: str) -> str:
    """What the field ``limit`` of :class:`GradingLimits` means."""
    return {field.name: field for field in fields(GradingLimits)}[limit].metadata["help"]


@contextmanager
def _user_errors() -> Iterator[None]:
    """Turn the errors a user can cause into ``SystemExit("error: ...")`` (exit code 1)."""
    try:
        from nbformat import ValidationError
        from nbformat.reader import NotJSONError

        from .autograde import GradingStopped
        from .course import CourseError
        from .sandbox import SandboxUnavailable
    except ModuleNotFoundError as error:
        raise SystemExit(
            f"error: the grading commands need nbgrader and Jupyter ({error.name} is missing): "
            "pip install 'transformer-course[grading]'"
        ) from None
    try:
        yield
    except (
        CourseError,
        GradingStopped,
        SandboxUnavailable,
        FileNotFoundError,
        NotADirectoryError,
        NotJSONError,
        ValidationError,
    ) as error:
        raise SystemExit(f"error: {error}") from None


def _course(arguments: argparse.Namespace):
    from .course import Course, find_course_root

    return Course(find_course_root(arguments.course_root))


def run_release(arguments: argparse.Namespace) -> int:
    with _user_errors():
        from .release import release

        course = _course(arguments)
        for path in release(course, [arguments.assignment] if arguments.assignment else None):
            print(f"released {path.relative_to(course.root)}")
    return 0


def run_autograde(arguments: argparse.Namespace) -> int:
    limits = GradingLimits(**{limit.name: getattr(arguments, limit.name) for limit in fields(GradingLimits)})
    with _user_errors():
        from .autograde import autograde

        results = autograde(
            _course(arguments),
            arguments.assignment,
            arguments.submissions,
            jobs=arguments.jobs,
            limits=limits,
            db_url=arguments.db_url,
            out=arguments.out,
            sandbox=arguments.sandbox,
            scheduler=arguments.scheduler,
            progress=arguments.progress,
        )
    for result in results:
        score = "-" if result.score is None else f"{result.score:g}/{result.max_score:g}"
        print(f"{result.student_id:<24} {score:>9}  {result.status:<16} {result.message}")
        if result.review:
            print(f"{'':<24} {'':>9}  {'review':<16} {result.review}")
    counts = Counter(result.status for result in results)
    print(
        ", ".join(f"{count} {status}" for status, count in sorted(counts.items()))
        + f"; grades written to {arguments.out}"
    )
    return 0


def run_check(arguments: argparse.Namespace) -> int:
    if arguments.sandbox:
        return run_sandbox_check()
    if arguments.notebook is None:
        raise SystemExit("error: name the notebook to check (transformer-course check attention.ipynb), or --sandbox")
    with _user_errors():
        from .check import check_notebook, format_report

        report = check_notebook(arguments.notebook, arguments.cell_timeout)
    print(format_report(report))
    return 0 if report.tests and all(result.passed for result in report.tests) else 1


def run_sandbox_check() -> int:
    """The grader's self-test, for an instructor before the deadline: one line saying whether it passed."""
    with _user_errors():
        import tempfile

        from .execute import self_test
        from .redaction import redacted_package
        from .sandbox import check_bubblewrap

        check_bubblewrap()
        limits = GradingLimits()
        with tempfile.TemporaryDirectory(prefix="sandbox-check-") as scratch:
            package = redacted_package([], Path(scratch) / "package")
            problem = self_test(package, limits, True, Path(scratch) / "self-test")
    if problem is not None:
        raise SystemExit(f"error: {problem}")
    print("the sandbox works: a kernel started in it and imported the course package")
    return 0
