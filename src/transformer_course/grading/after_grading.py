"""The instructor's commands after ``autograde``: ``grades``, ``feedback``, ``similarity`` and ``pending``.

None of them runs a notebook: each reads the gradebook and the run record (and ``similarity`` the submissions), so
that they can be run again whenever an instructor has graded written answers by hand. What they print of what
learners control is escaped (:mod:`transformer_course.grading.terminal`).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from .command_line import (
    LMS_CHOICES,
    SOURCE_HELP,
    UserError,
    add_assignment_command,
    add_course_root,
    add_due,
    add_gradebook_options,
    add_grades_out,
    add_lms_download,
    add_roster,
    command,
    course,
    roster,
    submissions,
)


def register(subcommands: argparse._SubParsersAction) -> None:
    """Add ``grades``, ``feedback``, ``similarity`` and ``pending`` to the ``transformer-course`` parser."""
    _register_grades(subcommands)
    _register_feedback(subcommands)
    _register_similarity(subcommands)
    _register_pending(subcommands)


def _register_grades(subcommands: argparse._SubParsersAction) -> None:
    parser = add_assignment_command(
        subcommands,
        "grades",
        "write grades.csv again from the gradebook, written answers' scores included (instructors)",
    )
    add_grades_out(parser)
    parser.add_argument(
        "--format",
        choices=("csv", *LMS_CHOICES),
        default="csv",
        help="csv: the course's grades.csv; canvas: Canvas's gradebook import; moodle: Moodle's grade import "
        "(default: csv). An LMS's file holds the roster's students whose grade is ready; the others are named",
    )
    add_roster(parser, "with --format canvas or moodle, its students are the file's rows")
    add_due(parser)
    parser.add_argument(
        "--canvas-export",
        type=Path,
        metavar="CSV",
        help="a Canvas gradebook export (Grades → Export): the assignment's column is taken from it, with Canvas's id",
    )
    parser.add_argument(
        "--column",
        help="the assignment's column in the LMS's file, or part of its title in --canvas-export (default: the "
        "assignment's name, which Canvas offers to create as a new assignment)",
    )
    add_gradebook_options(parser)
    parser.set_defaults(run=command(run_grades))


def _register_feedback(subcommands: argparse._SubParsersAction) -> None:
    parser = add_assignment_command(
        subcommands,
        "feedback",
        "make the feedback pages again from the gradebook, written answers' scores included (instructors)",
    )
    parser.add_argument(
        "--zip",
        type=Path,
        metavar="DIR",
        help="also write the pages for an LMS: with --lms, DIR/<assignment>-<lms>-feedback.zip, named as that LMS's "
        "bulk feedback upload matches them; without, DIR/<student_id>.zip per learner",
    )
    parser.add_argument("--lms", choices=LMS_CHOICES, help="with --zip: the LMS whose bulk feedback upload takes it")
    add_roster(parser, "with --lms moodle, the participant ids of learners graded from a folder")
    add_gradebook_options(parser)
    parser.set_defaults(run=command(run_feedback))


def _register_similarity(subcommands: argparse._SubParsersAction) -> None:
    parser = add_assignment_command(
        subcommands,
        "similarity",
        "compare the learners' own code across the class and write an HTML report (instructors; scores unchanged)",
    )
    parser.add_argument("submissions", metavar="SOURCE", type=Path, help=SOURCE_HELP)
    parser.add_argument("--out", type=Path, default=Path("similarity.html"), help="(default: similarity.html)")
    parser.add_argument(
        "--threshold", type=float, default=0.5, help="share of one learner's code found in another's that is reported"
    )
    add_roster(parser, "with --lms, maps the LMS's files to students")
    add_lms_download(parser)
    add_course_root(parser)
    parser.set_defaults(run=command(run_similarity))


def _register_pending(subcommands: argparse._SubParsersAction) -> None:
    parser = add_assignment_command(
        subcommands,
        "pending",
        "list the written answers that wait for an instructor's score: student, cell, points, text (instructors)",
    )
    add_gradebook_options(parser)
    parser.set_defaults(run=command(run_pending))


def run_grades(arguments: argparse.Namespace) -> int:
    from .context import GradingContext
    from .exports import canvas_column, write_canvas, write_moodle
    from .grade_row import write_csv
    from .report import class_rows
    from .terminal import print_rows, say

    context = GradingContext.of(course(arguments), arguments.assignment, arguments.db_url)
    class_roster = roster(arguments) or {}
    rows = class_rows(context, arguments.due, roster=class_roster)
    notes = []
    if arguments.format == "canvas":
        column = arguments.column or arguments.assignment
        if arguments.canvas_export is not None:
            column = canvas_column(arguments.canvas_export, arguments.assignment, arguments.column)
        elif arguments.column is None:
            notes.append(
                f"the column {column!r} names no Canvas assignment: Canvas offers to create it as a new one; give "
                "--canvas-export (Grades → Export) or --column with the assignment's title as Canvas shows it"
            )
        notes += write_canvas(rows, class_roster, column, arguments.out)
    elif arguments.format == "moodle":
        notes += write_moodle(rows, class_roster, arguments.column or arguments.assignment, arguments.out)
    else:
        write_csv(rows, arguments.out)
    print_rows(rows)
    for note in notes:
        say(note)
    print(f"{len(rows)} students; grades written to {arguments.out} ({arguments.format})")
    return 0


def run_feedback(arguments: argparse.Namespace) -> int:
    from .context import GradingContext
    from .feedback import write_class_feedback
    from .lms_feedback import zip_for_lms, zip_per_student
    from .terminal import say

    if arguments.lms and not arguments.zip:
        raise UserError("--lms says which LMS --zip is for: give --zip DIR too")
    context = GradingContext.of(course(arguments), arguments.assignment, arguments.db_url)
    problems = write_class_feedback(context)
    for student_id, problem in problems.items():
        say(f"{student_id:<24}", problem or "feedback written")
    where = context.course.feedback_directory / "<student_id>" / arguments.assignment
    zipped = ""
    if arguments.zip and arguments.lms:
        written = zip_for_lms(context.course, arguments.assignment, arguments.lms, arguments.zip, roster(arguments))
        for line in written.left_out:
            say("not in the zip:", line)
        zipped = f"; {len(written.students)} students' pages in {written.archive}, for {arguments.lms.title()}"
    elif arguments.zip:
        zipped = (
            f"; {len(zip_per_student(context.course, arguments.assignment, arguments.zip))} archives in {arguments.zip}"
        )
    print(f"{len(problems)} students' feedback in {where}{zipped}")
    return 0


def run_similarity(arguments: argparse.Namespace) -> int:
    from .terminal import say

    with tempfile.TemporaryDirectory(prefix="lms-download-") as scratch:
        from .similarity import similarity_report

        the_course = course(arguments)
        the_course.check_assignment(arguments.assignment)
        folder, _ = submissions(the_course, arguments, roster(arguments), Path(scratch))
        pairs = similarity_report(the_course, arguments.assignment, folder, arguments.out, arguments.threshold)
    for pair in pairs:
        shares = f"{pair.first_share:.0%} / {pair.second_share:.0%}"
        say(f"{pair.first} ~ {pair.second}: {shares} ({pair.shared_tokens} tokens)")
    print(f"{len(pairs)} pairs at or above {arguments.threshold:.0%}; report in {arguments.out}; scores unchanged")
    return 0


def run_pending(arguments: argparse.Namespace) -> int:
    from .context import GradingContext
    from .pending import pending_answers
    from .terminal import printable

    context = GradingContext.of(course(arguments), arguments.assignment, arguments.db_url)
    answers = pending_answers(context)
    for answer in answers:
        print(
            f"{printable(answer.student_id):<24} {printable(answer.notebook)}/{printable(answer.cell)} "
            f"({answer.points:g} {'point' if answer.points == 1 else 'points'})"
        )
        for line in answer.text.splitlines() or [""]:
            print(f"    {printable(line)}")
    print(
        f"{len(answers)} written answers wait for a score"
        + ("" if not answers else ": grade them in formgrader (Manual Grading) or from Python, then run `grades`")
    )
    return 0
