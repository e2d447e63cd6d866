"""``transformer-course release | autograde | check`` (registered by :mod:`transformer_course.cli`)."""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from .autograde import GradingLimits, autograde
from .check import check_notebook, format_report
from .course import Course, find_course_root
from .release import release


def register(subcommands: argparse._SubParsersAction) -> None:
    """Add the grading commands to the ``transformer-course`` parser."""
    parser = subcommands.add_parser("release", help="regenerate exercises/ from solutions/ (instructors)")
    parser.add_argument("assignment", nargs="?", help="assignment to release, e.g. 01-attention (default: all)")
    parser.add_argument("--course-root", type=Path, help="course directory (default: found from the working directory)")
    parser.set_defaults(run=run_release)

    parser = subcommands.add_parser("autograde", help="grade a class's submissions into the gradebook (instructors)")
    parser.add_argument("assignment", help="e.g. 01-attention")
    parser.add_argument("submissions", type=Path, help="directory of <student_id>/<notebook>.ipynb")
    parser.add_argument("--out", type=Path, default=Path("grades.csv"), help="grades CSV to write (default: grades.csv)")
    parser.add_argument("--jobs", type=int, default=None, help="submissions graded in parallel (default: number of cores)")
    parser.add_argument("--db-url", help="SQLAlchemy URL of the gradebook (default: sqlite gradebook.db in the course root)")
    parser.add_argument("--cell-timeout", type=int, default=GradingLimits.cell_timeout, help="seconds per cell (default: %(default)s)")
    parser.add_argument(
        "--submission-timeout", type=int, default=GradingLimits.submission_timeout, help="seconds per submission (default: %(default)s)"
    )
    parser.add_argument(
        "--memory-limit-mb", type=int, default=GradingLimits.memory_limit_mb, help="address-space limit per process (default: %(default)s)"
    )
    parser.add_argument("--course-root", type=Path, help="course directory (default: found from the working directory)")
    parser.set_defaults(run=run_autograde)

    parser = subcommands.add_parser("check", help="run a notebook's visible tests and show which pass (learners)")
    parser.add_argument("notebook", type=Path, help="your notebook, e.g. attention.ipynb")
    parser.add_argument("--cell-timeout", type=int, default=600, help="seconds per cell (default: %(default)s)")
    parser.set_defaults(run=run_check)


def _course(arguments: argparse.Namespace) -> Course:
    return Course(find_course_root(arguments.course_root))


def run_release(arguments: argparse.Namespace) -> int:
    course = _course(arguments)
    for path in release(course, [arguments.assignment] if arguments.assignment else None):
        print(f"released {path.relative_to(course.root)}")
    return 0


def run_autograde(arguments: argparse.Namespace) -> int:
    limits = GradingLimits(arguments.cell_timeout, arguments.submission_timeout, arguments.memory_limit_mb)
    results = autograde(
        _course(arguments),
        arguments.assignment,
        arguments.submissions,
        jobs=arguments.jobs,
        limits=limits,
        db_url=arguments.db_url,
        out=arguments.out,
    )
    for result in results:
        score = "-" if result.score is None else f"{result.score:g}/{result.max_score:g}"
        print(f"{result.student_id:<24} {score:>9}  {result.status:<16} {result.message}")
    counts = Counter(result.status for result in results)
    print(", ".join(f"{count} {status}" for status, count in sorted(counts.items())) + f"; grades written to {arguments.out}")
    return 0


def run_check(arguments: argparse.Namespace) -> int:
    results = check_notebook(arguments.notebook, arguments.cell_timeout)
    print(format_report(results))
    return 0 if results and all(result.passed for result in results) else 1
