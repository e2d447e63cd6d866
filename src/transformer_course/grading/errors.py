"""The grading wing's error for what a user can mend: :class:`CourseError`, raised where the course, a file handed
over or an nbgrader step is not as expected, its message naming the problem. Each command shows it as one ``error:``
line (:mod:`.command_line`); the roster's, the run record's and the learner's ``check`` errors are kinds of it.

It has a module of its own, importing nothing, so that what reads files without nbgrader (the roster, an LMS's
download, the submission times) raises the same error as :mod:`.course`, which imports nbgrader.
"""

from __future__ import annotations


class CourseError(RuntimeError):
    """The course directory, a file it was given or an nbgrader step is not as expected."""
