"""Feedback pages as an LMS's bulk feedback upload takes them: one zip for the class, each page named as that LMS
matches a file to a learner.

    transformer-course feedback 01-attention --zip feedback-zips --lms canvas   # or moodle, with --roster

* **Canvas** (the assignment's "Re-Upload Submissions", or the gradebook's "Upload Submission Comments"): every
  file becomes a comment on the submission its name points to. Canvas reads the name as its download wrote it
  (``app/models/assignment.rb``, ``infer_comment_context_from_filename``): of the parts between ``_``, the first
  two made of digits are the user id and the id of a file the learner handed in, which must be a file of that
  learner's submission; any other file is ignored. So a page is named from the download's own name of the file
  graded (``doejane_48213_90211_attention-feedback.html``), which the run record keeps: a learner graded from a
  folder, not a Canvas download, has no such id and is named instead of zipped.
* **Moodle** (the assignment's "Upload multiple feedback files in a zip", with "Feedback files" on): Moodle reads
  each path part as ``<name>_<participant id>_<plugin type>_<plugin name>`` and attaches the file to that
  participant when the plugin is one of the assignment's (``mod/assign/feedback/file/importziplib.php``,
  ``is_valid_filename_for_import``). So a page goes into ``<Full Name>_<participant id>_assignsubmission_file_/``,
  the folder Moodle's own download makes (the name has no ``_``, as Moodle writes it), its participant id from the
  download the learner was graded from, or the roster's ``lms_id``.

Without ``--lms``, ``--zip DIR`` writes ``DIR/<student_id>.zip`` per learner, for uploading by hand.
"""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from .course import Course
from .lms import CANVAS_FILE, MOODLE_ENTRY
from .roster import Student
from .run_record import read_records

MOODLE_PLUGIN = "assignsubmission_file"


@dataclass
class FeedbackZip:
    """What :func:`zip_for_lms` wrote: the archive, the learners whose pages are in it, and those left out (why)."""

    archive: Path
    students: list[str] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)


def zip_for_lms(
    course: Course, assignment: str, lms: str, directory: Path, roster: dict[str, Student] | None = None
) -> FeedbackZip:
    """``directory/<assignment>-<lms>-feedback.zip``: every learner's pages, named as ``lms``'s bulk feedback upload
    matches them (see the module docstring)."""
    records = read_records(course.root, assignment)
    directory.mkdir(parents=True, exist_ok=True)
    written = FeedbackZip(directory / f"{assignment}-{lms}-feedback.zip")
    with zipfile.ZipFile(written.archive, "w", zipfile.ZIP_DEFLATED) as bundle:
        for folder in sorted(course.feedback_directory.glob(f"*/{assignment}")):
            student_id, pages = folder.parent.name, sorted(folder.glob("*.html"))
            if not pages:
                continue
            record = records.get(student_id)
            files = record.lms_files if record else []
            prefix = (_canvas_prefix if lms == "canvas" else _moodle_prefix)(files, (roster or {}).get(student_id))
            if prefix is None:
                written.left_out.append(f"{student_id}: not graded from a {lms.title()} download that names them")
                continue
            for page in pages:
                bundle.write(page, f"{prefix}{page.stem}-feedback.html")
            written.students.append(student_id)
    return written


def zip_per_student(course: Course, assignment: str, directory: Path) -> list[Path]:
    """``directory/<student_id>.zip`` for each student with feedback pages, for an upload by hand."""
    directory.mkdir(parents=True, exist_ok=True)
    archives = []
    for folder in sorted(course.feedback_directory.glob(f"*/{assignment}")):
        pages = sorted(folder.glob("*.html"))
        if not pages:
            continue
        archive = directory / f"{folder.parent.name}.zip"
        with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as bundle:
            for page in pages:
                bundle.write(page, f"{assignment}/{page.name}")
        archives.append(archive)
    return archives


def _canvas_prefix(files: list[str], student: Student | None) -> str | None:
    """``<name>_<user id>_<attachment id>_`` of the first Canvas file graded; None without one."""
    for name in files:
        match = CANVAS_FILE.fullmatch(name.rsplit("/", 1)[-1])
        if match is not None:
            learner = match["name"] if not match["name"].isdigit() else "learner"
            return f"{learner}_{match['user']}_{match['attachment']}_"
    return None


def _moodle_prefix(files: list[str], student: Student | None) -> str | None:
    """``<Full Name>_<participant id>_assignsubmission_file_/``, from the Moodle download graded, else the roster."""
    for name in files:
        match = MOODLE_ENTRY.fullmatch(name.partition("/")[0])
        if match is not None:
            return f"{_moodle_name(match['name'])}_{match['user']}_{MOODLE_PLUGIN}_/"
    if student is not None and student.lms_id.isdigit():
        return f"{_moodle_name(student.name or student.student_id)}_{student.lms_id}_{MOODLE_PLUGIN}_/"
    return None


def _moodle_name(name: str) -> str:
    """A name as Moodle's download writes it in a folder's name: no ``_`` (which would split the parts), no ``/``."""
    return re.sub(r"[_/\\\x00-\x1f]+", " ", name).strip() or "Participant"
