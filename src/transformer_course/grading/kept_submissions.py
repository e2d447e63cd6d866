"""What was handed in, kept in nbgrader's ``submitted/``: the latest version where nbgrader and the commands read it,
every earlier one beside it.

Grading a folder that is not nbgrader's own ``submitted/`` (a resubmission, an LMS's download) keeps what was handed
in, byte for byte, in ``submitted/<student_id>/<assignment>/``, so that ``autograde … submitted``, ``similarity …
submitted`` and ``release_feedback`` work on the version graded last. A version already there that differs is moved,
whole (its ``timestamp.txt`` with it), to ``submitted/<student_id>/.earlier/<assignment>/<n>/`` (1 the first
version, 2 the next…), a hidden folder that nbgrader's own commands, which read ``submitted/<student>/<assignment>``,
never take for an assignment; the review says where. The same files handed in again change nothing, and nothing is
written where the submission was read from ``submitted/`` itself.
"""

from __future__ import annotations

import os
from pathlib import Path

from .submission import Submission

EARLIER = ".earlier"


def keep_submitted(submitted_directory: Path, submission: Submission) -> None:
    """Keep ``submission``'s files (:attr:`~transformer_course.grading.submission.Submission.kept`) as the version in
    ``submitted_directory/<student>/<assignment>/``, an earlier different version moved beside it (see the module
    docstring)."""
    target = submitted_directory / submission.student_id / submission.assignment
    if target.is_dir() and submission.folder is not None and os.path.samefile(target, submission.folder):
        return
    if target.is_dir() and _holds(target, submission.kept):
        return
    if target.exists():
        earlier = submitted_directory / submission.student_id / EARLIER / submission.assignment
        earlier.mkdir(parents=True, exist_ok=True)
        number = 1 + max((int(path.name) for path in earlier.iterdir() if path.name.isdigit()), default=0)
        os.rename(target, earlier / str(number))  # whole, in one step
        where = (earlier / str(number)).relative_to(submitted_directory.parent)
        submission.findings.append(f"an earlier submission is kept in {where.as_posix()}")
    target.mkdir(parents=True)
    for name, content in submission.kept.items():
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        (target / name).write_bytes(content)


def _holds(folder: Path, kept: dict[str, bytes]) -> bool:
    """Does ``folder`` hold exactly these files' contents already (besides any others of nbgrader's)?"""
    return all((folder / name).is_file() and (folder / name).read_bytes() == content for name, content in kept.items())
