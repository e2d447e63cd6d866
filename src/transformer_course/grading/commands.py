"""``transformer-course release | autograde | self-test | check | publish``, and through
:mod:`.after_grading` ``grades | feedback | similarity | pending`` (registered by :mod:`transformer_course.cli`).

Each runs inside :func:`transformer_course.grading.command_line.command`, which turns a user's mistake into one
``error:`` line; nbgrader and the Jupyter machinery are imported when a command runs, not when the command line
starts (:mod:`.command_line`). Where the ``grading`` extra is missing, a command says so with the ``pip install``
that adds it to the package as it was installed (:func:`transformer_course.installation.install_command`).
"""

from __future__ import annotations

import argparse
import tempfile
from collections import Counter
from pathlib import Path

from . import after_grading
from .command_line import (
    SOURCE_HELP,
    UserError,
    add_assignment_command,
    add_course_root,
    add_db_url,
    add_due,
    add_grades_out,
    add_limits,
    add_lms_download,
    add_roster,
    command,
    course,
    limits,
    roster,
    submissions,
)
from .limits import GradingLimits


def register(subcommands: argparse._SubParsersAction) -> None:
    """Add the grading commands to the ``transformer-course`` parser."""
    _register_release(subcommands)
    _register_autograde(subcommands)
    _register_check(subcommands)
    _register_self_test(subcommands)
    after_grading.register(subcommands)
    _register_publish(subcommands)


def _register_release(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser("release", help="regenerate exercises/ from solutions/ (instructors)")
    parser.add_argument("assignment", nargs="?", help="assignment to release, e.g. 01-attention (default: all)")
    add_course_root(parser)
    parser.set_defaults(run=command(run_release))


def _register_autograde(subcommands: argparse._SubParsersAction) -> None:
    parser = add_assignment_command(
        subcommands, "autograde", "grade a class's submissions into the gradebook (instructors)"
    )
    parser.add_argument("submissions", metavar="SOURCE", type=Path, help=SOURCE_HELP)
    add_grades_out(parser)
    parser.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="submissions graded in parallel (default: the number of cores, or the scheduler's worker threads)",
    )
    add_db_url(parser)
    parser.add_argument(
        "--scheduler",
        metavar="tcp://HOST:PORT",
        help="run the submissions on the workers of this Dask scheduler (default: worker processes on this machine)",
    )
    parser.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar over the class")
    _add_class_list_options(parser)
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="write only this run's students to --out (default: every student of the assignment, this run's rows "
        "updated and the others kept as the gradebook has them)",
    )
    add_limits(parser)
    parser.add_argument(
        "--no-sandbox",
        dest="sandbox",
        action="store_false",
        help="grade without bubblewrap's sandbox. The submissions' code then runs as you, with your files and network: "
        "it can read the solutions and other submissions, change the gradebook, and leave processes behind. "
        "Hidden tests are still judged outside the kernel. Only for submissions you trust.",
    )
    add_course_root(parser)
    parser.set_defaults(run=command(run_autograde))


def _add_class_list_options(parser: argparse.ArgumentParser) -> None:
    """``autograde``'s options that say who should hand in and what the LMS says: roster, download, due date, times."""
    add_roster(
        parser,
        "everyone on it gets a row, missing with score 0 when no run has graded them (a student graded before and "
        "absent from this run keeps their row)",
    )
    add_lms_download(parser)
    add_due(parser)
    parser.add_argument(
        "--times",
        type=Path,
        help="submission times from the LMS, in place of timestamp.txt: a CSV of student_id (or lms_id, email) and "
        "time (2026-11-20T23:59:00+01:00), Moodle's grading worksheet, or Canvas's submissions from its API (JSON)",
    )
    parser.add_argument(
        "--times-zone",
        metavar="ZONE",
        help="the time zone of --times's times that name none, e.g. Europe/Berlin (Moodle's worksheet needs it)",
    )
    parser.add_argument(
        "--regrade-changed-answers",
        action="store_true",
        help="clear a manual score given to another version of a written answer, so that it is graded again "
        "(default: keep it, and say so in review)",
    )


def _register_check(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser("check", help="run a notebook's visible tests and show which pass (learners)")
    parser.add_argument("notebook", type=Path, nargs="?", help="your notebook, e.g. attention.ipynb")
    parser.add_argument(
        "--cell-timeout", type=int, default=600, help="seconds a cell may run before it is interrupted (default: 600)"
    )
    parser.set_defaults(run=command(run_check))


def _register_self_test(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser(
        "self-test",
        help="test that autograde can run notebooks here: a sandbox with these limits starts a kernel that imports "
        "the course, as autograde does before its first submission (instructors)",
    )
    add_limits(parser)
    parser.set_defaults(run=command(lambda arguments: run_self_test(limits(arguments))))


def _register_publish(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser(
        "publish",
        help="write the learners' copy of the course into DIR: book, exercises and package, without solutions/ or "
        "hidden tests (instructors)",
    )
    parser.add_argument("directory", type=Path, help="an empty or new folder (e.g. a clone of the public repository)")
    add_course_root(parser)
    parser.set_defaults(run=command(run_publish))


def run_release(arguments: argparse.Namespace) -> int:
    from .release import release

    the_course = course(arguments)
    for path in release(the_course, [arguments.assignment] if arguments.assignment else None):
        print(f"released {path.relative_to(the_course.root)}")
    return 0


def run_autograde(arguments: argparse.Namespace) -> int:
    from .terminal import print_rows, say

    grading_limits = limits(arguments)
    with tempfile.TemporaryDirectory(prefix="lms-download-") as scratch:
        from .autograde import autograde

        the_course = course(arguments)
        class_roster = roster(arguments)
        folder, download = submissions(the_course, arguments, class_roster, Path(scratch))
        times = _times(arguments, class_roster)
        results = autograde(
            the_course,
            arguments.assignment,
            folder,
            jobs=arguments.jobs,
            limits=grading_limits,
            db_url=arguments.db_url,
            out=arguments.out,
            fresh=arguments.fresh,
            roster=class_roster,
            download=download,
            due=arguments.due,
            times=times.times,
            regrade_changed_answers=arguments.regrade_changed_answers,
            sandbox=arguments.sandbox,
            scheduler=arguments.scheduler,
            progress=arguments.progress,
        )
    print_rows(results)
    graded = {result.student_id for result in results}
    for warning in times.warnings:
        say("warning:", warning)
    for student_id in sorted(set(times.times) - graded):
        say("warning: the times file gives a time for", student_id, "who has no submission in this run: not used")
    counts = Counter(result.status for result in results)
    print(
        ", ".join(f"{count} {status}" for status, count in sorted(counts.items()))
        + f"; grades written to {arguments.out}"
    )
    return 0


def _times(arguments: argparse.Namespace, class_roster):
    from .submission_times import SubmissionTimes, read_submission_times

    if arguments.times is None:
        if arguments.times_zone:
            raise UserError("--times-zone is the zone of --times's times: give --times too")
        return SubmissionTimes()
    return read_submission_times(arguments.times, class_roster, arguments.times_zone)


def run_publish(arguments: argparse.Namespace) -> int:
    from .publish import publish
    from .terminal import printable

    root = course(arguments)
    publication = publish(root, arguments.directory)
    for path, why in sorted(publication.left_out.items()):
        print(f"left out {printable(path)}{'/' if (root.root / path).is_dir() else ''}: {why}")
    print(
        f"published {len(publication.written)} files to {arguments.directory}: "
        "no solutions, hidden tests, model answers or grading data"
    )
    return 0


def run_check(arguments: argparse.Namespace) -> int:
    if arguments.notebook is None:
        raise UserError("name the notebook to check: transformer-course check attention.ipynb")
    from .check import check_notebook, format_report

    report = check_notebook(arguments.notebook, arguments.cell_timeout)
    print(format_report(report))
    return 0 if report.tests and all(result.passed for result in report.tests) else 1


def run_self_test(limits: GradingLimits) -> int:
    """``self-test``: the grader's self-test (:mod:`transformer_course.grading.self_test`), for an instructor
    before the deadline, apart from the learner's ``check`` of a notebook: one line saying whether it passed."""
    from .autograde import GradingStopped
    from .redaction import redacted_package
    from .sandbox import check_bubblewrap
    from .self_test import diagnosed_self_test

    check_bubblewrap()
    with tempfile.TemporaryDirectory(prefix="sandbox-check-") as scratch:
        package = redacted_package([], Path(scratch) / "package")
        problem = diagnosed_self_test(package, limits, True, Path(scratch) / "self-test")
    if problem is not None:
        raise GradingStopped(problem)
    print("the sandbox works: a kernel started in it and imported the course package")
    return 0
