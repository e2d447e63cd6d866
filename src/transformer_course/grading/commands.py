"""``transformer-course release | autograde | self-test | grades | feedback | similarity | publish | check``
(registered by :mod:`transformer_course.cli`).

nbgrader and the Jupyter machinery are imported when one of these commands runs, not when the
command line starts: ``transformer-course train`` works where only the package is installed
(as Colab's setup cell installs it), without the ``grading`` extra. Where that extra is missing, a
grading command says so with the ``pip install`` that adds it to the package as it was installed
(:func:`transformer_course.installation.install_command`).

A mistake in what was asked for (an unknown assignment, a missing directory or file, a file that
is not a notebook, a ``grading.yml`` that cannot be used) ends the command with one line,
``error: <what is wrong>``, instead of a traceback: every command runs inside :func:`_command`, the
one place that says so.
"""

from __future__ import annotations

import argparse
import functools
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path

from .limits import GradingLimits


def register(subcommands: argparse._SubParsersAction) -> None:
    """Add the grading commands to the ``transformer-course`` parser."""
    _register_release(subcommands)
    _register_autograde(subcommands)
    _register_check(subcommands)
    _register_self_test(subcommands)
    _register_after_grading(subcommands)
    _register_publish(subcommands)


def _register_release(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser("release", help="regenerate exercises/ from solutions/ (instructors)")
    parser.add_argument("assignment", nargs="?", help="assignment to release, e.g. 01-attention (default: all)")
    parser.add_argument("--course-root", type=Path, help="course directory (default: found from the working directory)")
    parser.set_defaults(run=_command(run_release))


def _register_autograde(subcommands: argparse._SubParsersAction) -> None:
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
    parser.add_argument(
        "--roster",
        type=Path,
        help="CSV of the class (student_id, and any of name, email, lms_id, section, extension): everyone on it gets a "
        "row, missing with score 0 when nothing was handed in",
    )
    parser.add_argument(
        "--lms",
        choices=("canvas", "moodle"),
        help="SUBMISSIONS is that LMS's own download (folder or zip), mapped to students through --roster",
    )
    parser.add_argument(
        "--due", type=_due, help="when it was due, e.g. 2026-11-20T23:59:00+01:00 (default: grading.yml)"
    )
    parser.add_argument(
        "--times", type=Path, help="CSV of submission times from the LMS (student_id, time): in place of timestamp.txt"
    )
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="write only this run's students to --out (default: every student of the assignment, this run's rows "
        "updated and the others kept as the gradebook has them)",
    )
    _add_limits(parser)
    parser.add_argument(
        "--no-sandbox",
        dest="sandbox",
        action="store_false",
        help="grade without bubblewrap's sandbox. The submissions' code then runs as you, with your files and network: "
        "it can read the solutions and other submissions, change the gradebook, and leave processes behind. "
        "Hidden tests are still judged outside the kernel. Only for submissions you trust.",
    )
    parser.add_argument("--course-root", type=Path, help="course directory (default: found from the working directory)")
    parser.set_defaults(run=_command(run_autograde))


def _register_check(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser("check", help="run a notebook's visible tests and show which pass (learners)")
    parser.add_argument("notebook", type=Path, nargs="?", help="your notebook, e.g. attention.ipynb")
    parser.add_argument(
        "--cell-timeout", type=int, default=600, help="seconds a cell may run before it is interrupted (default: 600)"
    )
    parser.set_defaults(run=_command(run_check))


def _register_self_test(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser(
        "self-test",
        help="test that autograde can run notebooks here: a sandbox with these limits starts a kernel that imports "
        "the course, as autograde does before its first submission (instructors)",
    )
    _add_limits(parser)
    parser.set_defaults(run=_command(lambda arguments: run_self_test(_limits(arguments))))


def _register_after_grading(subcommands: argparse._SubParsersAction) -> None:
    """The instructor's commands after autograde: grades, feedback, similarity."""
    parser = subcommands.add_parser(
        "grades", help="write grades.csv again from the gradebook, written answers' scores included (instructors)"
    )
    parser.add_argument("assignment", help="e.g. 01-attention")
    parser.add_argument(
        "--out", type=Path, default=Path("grades.csv"), help="grades CSV to write (default: grades.csv)"
    )
    parser.add_argument(
        "--format",
        choices=("csv", "canvas", "moodle"),
        default="csv",
        help="csv: the course's grades.csv; canvas: Canvas's gradebook import; moodle: Moodle's grade import "
        "(default: csv)",
    )
    parser.add_argument("--roster", type=Path, help="CSV of the class: names, emails and LMS ids for the LMS's file")
    parser.add_argument(
        "--due", type=_due, help="when it was due, e.g. 2026-11-20T23:59:00+01:00 (default: grading.yml)"
    )
    parser.add_argument("--column", help="the assignment's column in the LMS's file (default: the assignment's name)")
    _add_gradebook_options(parser)
    parser.set_defaults(run=_command(run_grades))

    parser = subcommands.add_parser(
        "feedback",
        help="make the feedback pages again from the gradebook, written answers' scores included (instructors)",
    )
    parser.add_argument("assignment", help="e.g. 01-attention")
    parser.add_argument(
        "--zip",
        type=Path,
        metavar="DIR",
        help="also write DIR/<student_id>.zip of each student's pages (an LMS's upload)",
    )
    _add_gradebook_options(parser)
    parser.set_defaults(run=_command(run_feedback))

    parser = subcommands.add_parser(
        "similarity",
        help="compare the learners' own code across the class and write an HTML report (instructors; scores unchanged)",
    )
    parser.add_argument("assignment", help="e.g. 01-attention")
    parser.add_argument("submissions", type=Path, help="directory of <student_id>/<notebook>.ipynb, as for autograde")
    parser.add_argument("--out", type=Path, default=Path("similarity.html"), help="(default: similarity.html)")
    parser.add_argument(
        "--threshold", type=float, default=0.5, help="share of one learner's code found in another's that is reported"
    )
    parser.add_argument("--roster", type=Path, help="with --lms: the class, mapping the LMS's files to students")
    parser.add_argument("--lms", choices=("canvas", "moodle"), help="SUBMISSIONS is that LMS's own download")
    parser.add_argument("--course-root", type=Path, help="course directory (default: found from the working directory)")
    parser.set_defaults(run=_command(run_similarity))


def _register_publish(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser(
        "publish",
        help="write the learners' copy of the course into DIR: book, exercises and package, without solutions/ or "
        "hidden tests (instructors)",
    )
    parser.add_argument("directory", type=Path, help="an empty or new folder (e.g. a clone of the public repository)")
    parser.add_argument("--course-root", type=Path, help="course directory (default: found from the working directory)")
    parser.set_defaults(run=_command(run_publish))


def _due(text: str):
    """``--due``: a date and time with its zone (an argparse type, so that a mistake is argparse's one line)."""
    from .lateness import LatenessError, parse_due

    try:
        return parse_due(text, "--due")
    except LatenessError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _add_limits(parser: argparse.ArgumentParser, **defaults: int) -> None:
    """An option for every field of :class:`GradingLimits`, with its default (or the one given here)."""
    for limit in fields(GradingLimits):
        parser.add_argument(
            f"--{limit.name.replace('_', '-')}",
            type=int,
            default=defaults.get(limit.name, limit.default),
            help=f"{limit.metadata['help']} (default: %(default)s)",
        )


def _add_gradebook_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db-url", help="SQLAlchemy URL of the gradebook (default: sqlite gradebook.db in the course root)"
    )
    parser.add_argument("--course-root", type=Path, help="course directory (default: found from the working directory)")


def _limits(arguments: argparse.Namespace) -> GradingLimits:
    return GradingLimits(**{limit.name: getattr(arguments, limit.name) for limit in fields(GradingLimits)})


class UserError(Exception):
    """A mistake in the command line itself (an option missing that another needs): its one ``error:`` line."""


def _command(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """``run``, with the errors a user can cause turned into ``SystemExit("error: ...")`` (exit code 1)."""

    @functools.wraps(run)
    def command(arguments: argparse.Namespace) -> int:
        try:
            return run(arguments)
        except UserError as error:
            raise SystemExit(f"error: {error}") from None
        except Exception as error:
            if isinstance(error, _user_error_types()):
                raise SystemExit(f"error: {error}") from None
            raise

    return command


def _user_error_types() -> tuple[type[Exception], ...]:
    """The errors whose message says what the user got wrong (importing them needs the grading packages: where one
    is missing, that is the user's error to fix)."""
    try:
        from nbformat import ValidationError
        from nbformat.reader import NotJSONError

        from .autograde import GradingStopped
        from .course import CourseError
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


def _course(arguments: argparse.Namespace):
    from .course import Course, find_course_root

    return Course(find_course_root(arguments.course_root))


def run_release(arguments: argparse.Namespace) -> int:
    from .release import release

    course = _course(arguments)
    for path in release(course, [arguments.assignment] if arguments.assignment else None):
        print(f"released {path.relative_to(course.root)}")
    return 0


def run_autograde(arguments: argparse.Namespace) -> int:
    limits = _limits(arguments)
    with tempfile.TemporaryDirectory(prefix="lms-download-") as scratch:
        from .autograde import autograde

        course = _course(arguments)
        roster = _roster(arguments)
        submissions, late = _submissions(course, arguments, roster, Path(scratch))
        results = autograde(
            course,
            arguments.assignment,
            submissions,
            jobs=arguments.jobs,
            limits=limits,
            db_url=arguments.db_url,
            out=arguments.out,
            fresh=arguments.fresh,
            roster=roster,
            late=late,
            due=arguments.due,
            times=_times(arguments),
            sandbox=arguments.sandbox,
            scheduler=arguments.scheduler,
            progress=arguments.progress,
        )
    _print_rows(results)
    counts = Counter(result.status for result in results)
    print(
        ", ".join(f"{count} {status}" for status, count in sorted(counts.items()))
        + f"; grades written to {arguments.out}"
    )
    return 0


def _roster(arguments: argparse.Namespace):
    if arguments.roster is None:
        return None
    from .roster import read_roster

    return read_roster(arguments.roster)


def _times(arguments: argparse.Namespace):
    if arguments.times is None:
        return None
    from .lateness import read_times

    return read_times(arguments.times)


def _submissions(course, arguments: argparse.Namespace, roster, scratch: Path) -> tuple[Path, set[str]]:
    """The folder of ``<student_id>/`` folders to read, and the students the LMS marked late: SUBMISSIONS itself, or
    with ``--lms`` the LMS's download taken into ``scratch`` (:mod:`transformer_course.grading.lms`), where what maps
    to nobody is said here, one line each, and graded nowhere."""
    from .lms import unpack

    if not arguments.lms:
        return arguments.submissions, set()
    if roster is None:
        raise UserError("--lms needs --roster: the roster maps the LMS's ids and names to student ids")
    notebooks = [path.name for path in course.source_notebooks(arguments.assignment)]
    unpacked = unpack(arguments.submissions, arguments.lms, roster, notebooks, scratch / "submissions")
    for line in unpacked.unmatched:
        print(f"not graded: {line}")
    return scratch / "submissions", unpacked.late


def _print_rows(results) -> None:
    """One line per student: score out of the core maximum, bonus and pending points where there are any."""
    for result in results:
        score = "-" if result.score is None else f"{result.score:g}/{result.max_score:g}"
        extra = []
        if result.bonus_score:
            extra.append(f"bonus {result.bonus_score:g}")
        if result.pending_manual_points:
            extra.append(f"{result.pending_manual_points:g} to grade by hand")
        message = "; ".join(filter(None, [result.message, *extra]))
        print(f"{result.student_id:<24} {score:>9}  {result.status:<16} {message}")
        if result.review:
            print(f"{'':<24} {'':>9}  {'review':<16} {result.review}")


def run_grades(arguments: argparse.Namespace) -> int:
    from .course import GradingContext
    from .exports import write_canvas, write_moodle
    from .report import class_rows, write_csv
    from .submission import Submission

    context = GradingContext.of(_course(arguments), arguments.assignment, arguments.db_url)
    roster = _roster(arguments) or {}
    rows = class_rows(context, arguments.due)
    known = {row.student_id for row in rows}
    maximum = next((row.max_score for row in rows), None)
    rows += [
        Submission.nothing_handed_in(student, arguments.assignment, maximum)
        for student in roster
        if student not in known
    ]
    rows.sort(key=lambda row: row.student_id)
    column = arguments.column or arguments.assignment
    if arguments.format == "canvas":
        write_canvas(rows, roster, column, arguments.out)
    elif arguments.format == "moodle":
        write_moodle(rows, roster, column, arguments.out)
    else:
        write_csv(rows, arguments.out)
    _print_rows(rows)
    waiting = [row.student_id for row in rows if row.pending_manual_points]
    if waiting and arguments.format != "csv":
        print(f"no grade exported for {', '.join(waiting)}: written answers not graded yet")
    print(f"{len(rows)} students; grades written to {arguments.out} ({arguments.format})")
    return 0


def run_feedback(arguments: argparse.Namespace) -> int:
    from .course import GradingContext
    from .feedback import write_class_feedback, zip_feedback

    context = GradingContext.of(_course(arguments), arguments.assignment, arguments.db_url)
    problems = write_class_feedback(context)
    archives = zip_feedback(context.course, arguments.assignment, arguments.zip) if arguments.zip else []
    for student_id, problem in problems.items():
        print(f"{student_id:<24} {problem or 'feedback written'}")
    where = context.course.feedback_directory / "<student_id>" / arguments.assignment
    print(
        f"{len(problems)} students' feedback in {where}"
        + (f"; {len(archives)} archives in {arguments.zip}" if arguments.zip else "")
    )
    return 0


def run_similarity(arguments: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="lms-download-") as scratch:
        from .similarity import similarity_report

        course = _course(arguments)
        course.check_assignment(arguments.assignment)
        submissions, _ = _submissions(course, arguments, _roster(arguments), Path(scratch))
        pairs = similarity_report(course, arguments.assignment, submissions, arguments.out, arguments.threshold)
    for pair in pairs:
        shares = f"{pair.first_share:.0%} / {pair.second_share:.0%}"
        print(f"{pair.first} ~ {pair.second}: {shares} ({pair.shared_tokens} tokens)")
    print(f"{len(pairs)} pairs at or above {arguments.threshold:.0%}; report in {arguments.out}; scores unchanged")
    return 0


def run_publish(arguments: argparse.Namespace) -> int:
    from .publish import printable, publish

    course = _course(arguments)
    publication = publish(course, arguments.directory)
    for path, why in sorted(publication.left_out.items()):
        print(f"left out {printable(path)}{'/' if (course.root / path).is_dir() else ''}: {why}")
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
