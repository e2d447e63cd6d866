"""What a student id is: the rule every name that becomes one is held to, a submission folder's or a roster row's.

A student id reaches nbgrader's command line, file paths, the gradebook, ``grades.csv`` and every LMS's file, so it
is ASCII letters and digits, then also ``.``, ``_``, ``-`` and ``@``, at most 64 characters.
"""

from __future__ import annotations

import re

STUDENT_ID_RULE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")
STUDENT_ID_HELP = (
    "a student id is 1 to 64 ASCII letters, digits, '.', '_', '-' or '@', starting with a letter or a digit"
)


def is_student_id(name: str) -> bool:
    """Does ``name`` follow :data:`STUDENT_ID_RULE`?"""
    return STUDENT_ID_RULE.fullmatch(name) is not None
