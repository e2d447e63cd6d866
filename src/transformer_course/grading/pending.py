"""The written answers that wait for an instructor: ``transformer-course pending ASSIGNMENT``.

A written answer (a cell nbgrader marks both an answer and graded) has no automatic score: until an instructor
saves one, the gradebook marks it as needing a manual grade, ``grades.csv`` counts its points in
``pending_manual_points``, the LMS files leave the learner out, and the learner's page says "not graded yet".
:func:`pending_answers` lists each one — the student, the notebook and cell, its points, and the answer's text as it
was graded (from ``autograded/``) — for grading in formgrader or from Python (README, "Grading the written
answers"). A score that an earlier version of the answer was given and that ``--regrade-changed-answers`` cleared
waits here too.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from nbgrader.api import Gradebook, MissingEntry

from .context import GradingContext
from .nbgrader_cells import cells_by_grade_id, source_text


@dataclass(frozen=True)
class PendingAnswer:
    """One written answer that waits for an instructor's score."""

    student_id: str
    notebook: str
    cell: str
    points: float
    text: str  # as graded; what the learner wrote


def pending_answers(context: GradingContext) -> list[PendingAnswer]:
    """Every written answer of the assignment that waits for an instructor, by student, notebook and cell."""
    course, assignment = context.course, context.assignment
    waiting = []
    with Gradebook(context.db_url, course_id=course.course_id) as gradebook:
        try:
            submissions = gradebook.assignment_submissions(assignment)
        except MissingEntry:
            return []
        for submission in sorted(submissions, key=lambda submission: submission.student.id):
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    if grade.needs_manual_grade:
                        waiting.append((submission.student.id, notebook.name, grade.name, float(grade.max_score)))
    texts: dict[tuple[str, str], dict] = {}
    answers = []
    for student_id, notebook, cell, points in waiting:
        if (student_id, notebook) not in texts:
            path = course.autograded_directory / student_id / assignment / f"{notebook}.ipynb"
            try:
                texts[student_id, notebook] = cells_by_grade_id(json.loads(path.read_text(encoding="utf-8")))
            except (OSError, ValueError):
                texts[student_id, notebook] = {}
        graded = texts[student_id, notebook].get(cell)
        text = source_text(graded) if graded is not None else "(not in autograded/: grade it again to see it)"
        answers.append(PendingAnswer(student_id, notebook, cell, points, text))
    return answers
