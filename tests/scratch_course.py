"""A course of one small assignment, written into a folder for a test, and a gradebook made by hand beside it.

The grading modules' own tests use it where the real course would be more than they need: its assignment has one
notebook (``notebook.ipynb``) of :data:`CELLS` (a core test cell, a written answer and a bonus test cell), its
``grading.yml`` says which cell is bonus, and :func:`gradebook` registers it with nbgrader's API, no notebook run.
Nothing here reads the course's own ``solutions/``.
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ASSIGNMENT = "01-test"
# grade_id -> (points, cell type): the core's maximum is 6 (the test cell and the written answer), the bonus 1.
CELLS = {"core": (4.0, "code"), "written": (2.0, "markdown"), "bonus": (1.0, "code")}


def cell(grade_id: str, points: float, kind: str, source: str = "") -> dict:
    """A graded cell of the source notebook (a written answer is a graded Markdown answer cell)."""
    nbgrader = {"grade_id": grade_id, "grade": True, "points": points, "solution": kind == "markdown"}
    return {"cell_type": kind, "metadata": {"nbgrader": nbgrader}, "source": source, "id": grade_id}


def write_course(root: Path, policy: str = "bonus: [bonus]\n", cells: list[dict] | None = None) -> Path:
    """``root`` as a course: its ``nbgrader_config.py``, and ``source/01-test/`` with the notebook (:data:`CELLS`,
    or ``cells``) and ``grading.yml`` (``policy``)."""
    (root / "nbgrader_config.py").write_text('c = get_config()\nc.CourseDirectory.course_id = "test"\n')
    source = root / "source" / ASSIGNMENT
    source.mkdir(parents=True)
    cells = cells if cells is not None else [cell(name, *spec) for name, spec in CELLS.items()]
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (source / "notebook.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    (source / "grading.yml").write_text(policy, encoding="utf-8")
    return root


@contextmanager
def gradebook(db_url: str) -> Iterator:
    """nbgrader's gradebook at ``db_url`` with the assignment registered (its notebook and :data:`CELLS`)."""
    from nbgrader.api import Gradebook
    from sqlalchemy.exc import SAWarning

    path = os.environ.get("PATH", "")
    os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), path])  # nbgrader runs its alembic
    try:
        with Gradebook(db_url, course_id="test") as book, warnings.catch_warnings():
            warnings.simplefilter("ignore", SAWarning)  # nbgrader's add_submission, on every call
            if not any(assignment.name == ASSIGNMENT for assignment in book.assignments):
                book.add_assignment(ASSIGNMENT)
                book.add_notebook("notebook", ASSIGNMENT)
                for name, (points, kind) in CELLS.items():
                    book.add_grade_cell(name, "notebook", ASSIGNMENT, max_score=points, cell_type=kind)
                    if kind == "markdown":
                        book.add_solution_cell(name, "notebook", ASSIGNMENT)
            yield book
    finally:
        os.environ["PATH"] = path


def graded(book, student_id: str, scores: dict[str, float | None], reviewed: bool = True) -> None:
    """``student_id``'s submission in ``book`` with ``scores`` by cell: a written answer's is an instructor's manual
    score (None: it waits for one; ``reviewed=False``: a score no instructor saved)."""
    book.add_student(student_id)
    book.add_submission(ASSIGNMENT, student_id)
    for name, score in scores.items():
        grade = book.find_grade(name, "notebook", ASSIGNMENT, student_id)
        if CELLS[name][1] == "markdown":
            grade.manual_score, grade.needs_manual_grade = score, score is None or not reviewed
        else:
            grade.auto_score, grade.needs_manual_grade = score, False
    book.db.commit()
