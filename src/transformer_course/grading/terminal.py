"""What the grading commands print, with everything a learner controls escaped.

A learner controls much of what an instructor's terminal shows: their name on the roster or in an LMS's download,
the names of the files they hand in, what a message or review finding quotes of their notebook. A control character
there (an escape sequence that clears the screen or sets the window's title, a carriage return, a newline that
forges a row of its own) or a format character (a bidirectional override that reorders a line) is shown as Python
writes it in a string (``\\x1b``, ``\\n``, ``\\u202e``) by :func:`printable`, so that each row stays one line, as
written. Every command prints what learners control through it.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from .grade_row import GradeRow

# Unicode's controls (Cc), format characters (Cf: bidirectional overrides, zero-width joiners), line and paragraph
# separators (Zl, Zp), surrogates and unassigned code points (Cs, Cn).
UNPRINTABLE = {"Cc", "Cf", "Zl", "Zp", "Cs", "Cn"}


def printable(text: object) -> str:
    """``text`` as one line a terminal shows as written: every unprintable character escaped (see the module)."""
    return "".join(
        repr(character)[1:-1] if unicodedata.category(character) in UNPRINTABLE else character
        for character in str(text)
    )


def say(*parts: object) -> None:
    """Print one line of ``parts`` (joined by spaces), each escaped."""
    print(" ".join(printable(part) for part in parts))


def print_rows(rows: Iterable[GradeRow]) -> None:
    """One line per student: score out of the core maximum, bonus and pending points where there are any, then the
    review's findings on a line of their own."""
    for row in rows:
        score = "-" if row.score is None else f"{row.score:g}/{row.max_score:g}"
        extra = []
        if row.bonus_score:
            extra.append(f"bonus {row.bonus_score:g}")
        if row.pending_manual_points:
            extra.append(f"{row.pending_manual_points:g} to grade by hand")
        message = printable("; ".join(filter(None, [row.message, *extra])))
        print(f"{printable(row.student_id):<24} {score:>9}  {row.status:<16} {message}")
        if row.review:
            print(f"{'':<24} {'':>9}  {'review':<16} {printable(row.review)}")
