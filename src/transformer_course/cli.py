"""The ``transformer-course`` command line.

Instructors:
    transformer-course release [ASSIGNMENT]                    regenerate exercises/ from solutions/
    transformer-course autograde ASSIGNMENT SUBMISSIONS_DIR    grade a class into the gradebook
    transformer-course grades ASSIGNMENT                       grades.csv again, written answers' scores included
    transformer-course feedback ASSIGNMENT [--zip DIR]         the feedback pages again, for learners
    transformer-course similarity ASSIGNMENT SUBMISSIONS_DIR   an HTML report of alike code (scores unchanged)
    transformer-course publish DIR                             the learners' copy: no solutions or hidden tests
    transformer-course self-test                               can the sandbox run notebooks here, with these limits
Learners:
    transformer-course check NOTEBOOK.ipynb                    run a notebook's visible tests
    transformer-course train --task numbers --minutes M        train the final-project model
    transformer-course evaluate CHECKPOINT                     decode a test split and score it
    transformer-course record CHECKPOINT --out FILE.json       keep a trained run's curves, scores and examples
    transformer-course variations --steps N --out FILE.json    the paper's Table 3 at small scale, several seeds
    transformer-course table2 --minutes M --out FILE.json      the paper's Table 2 at small scale: against a GRU

Each group of commands lives beside the code it drives and registers itself here.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from . import __version__
from .data.download import DownloadError

# The module that registers each group of commands, and the commands it registers. A command imports its own
# group only, so that ``check`` and ``autograde`` start without the training stack or matplotlib
# (tests/test_cli.py checks these names against what each module registers).
COMMAND_GROUPS = {
    "transformer_course.grading.commands": (
        "release",
        "autograde",
        "check",
        "self-test",
        "grades",
        "feedback",
        "similarity",
        "pending",
        "publish",
    ),
    "transformer_course.training.commands": ("train", "evaluate"),
    "transformer_course.book_programs.commands": ("record", "variations", "table2"),
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or of ``command``'s group alone when it names one."""
    parser = argparse.ArgumentParser(
        prog="transformer-course", description="The course's commands, for instructors and for learners."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subcommands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    groups = [module for module, names in COMMAND_GROUPS.items() if command in names] or list(COMMAND_GROUPS)
    for module in groups:
        importlib.import_module(module).register(subcommands)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` and run the chosen command; returns the process exit code."""
    argv = sys.argv[1:] if argv is None else list(argv)
    arguments = build_parser(argv[0] if argv else None).parse_args(argv)
    arguments.command_line = ["transformer-course", *argv]  # as typed, for the records of a run
    try:
        return arguments.run(arguments) or 0
    except DownloadError as error:  # its message says what failed and what to do: no traceback needed
        print(f"error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
