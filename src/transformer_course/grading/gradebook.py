"""Which scores in the gradebook the grader trusts: its own, and those an instructor saved.

nbgrader keeps two scores per test cell: ``auto_score``, which autograde writes, and
``manual_score``, which an instructor enters in formgrader and which then counts instead. When an
instructor saves a manual score, formgrader marks the cell as reviewed (``needs_manual_grade`` is
False). A manual score still marked as needing review was not saved by an instructor: one left by
a submission that reached the gradebook while it ran (before grading was sandboxed) is of that
kind. So before a submission is graded again, :func:`remove_unreviewed_manual_scores` deletes
those, and :class:`SaveAutoGradesKeepingReviews` keeps an instructor's reviewed score reviewed
(nbgrader's own step would mark it as needing review again, and the next run would delete it).

An instructor's score belongs to the version of the written answer it was given to:
:func:`reviewed_manual_scores` reads them for :func:`transformer_course.grading.written_answers.follow`, and
:func:`clear_manual_scores` takes one off (score and comment) where the answer changed and the instructor asked
for it (``autograde --regrade-changed-answers``), so that it waits for grading again.
"""

from __future__ import annotations

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.preprocessors import SaveAutoGrades

from .written_answers import ManualScore, answer_key

# The key under which the run's verdict on each test cell (grade_id -> passed) reaches
# SaveAutoGradesKeepingReviews in nbgrader's resources, from the grader's record step or from SandboxedExecute.
VERDICTS = "transformer_course_verdicts"


def remove_unreviewed_manual_scores(db_url: str, course_id: str, assignment: str, student: str) -> list[str]:
    """Delete the manual scores of ``student``'s submission that no instructor reviewed; describe each."""
    removed = []
    with Gradebook(db_url, course_id=course_id) as gradebook:
        try:
            submission = gradebook.find_submission(assignment, student)
        except MissingEntry:
            return []
        for notebook in submission.notebooks:
            for grade in notebook.grades:
                if grade.manual_score is not None and grade.needs_manual_grade:
                    removed.append(
                        f"{grade.name}: removed a manual score of {grade.manual_score:g} that no instructor saved"
                    )
                    grade.manual_score = None
                    grade.extra_credit = None
        gradebook.db.commit()
    return removed


def reviewed_manual_scores(db_url: str, course_id: str, assignment: str, student: str) -> dict[str, ManualScore]:
    """:func:`~transformer_course.grading.written_answers.answer_key` → the manual score (and comment) an instructor
    saved, for each of ``student``'s grades that has one; nothing for a student not in the gradebook."""
    scores = {}
    with Gradebook(db_url, course_id=course_id) as gradebook:
        try:
            submission = gradebook.find_submission(assignment, student)
        except MissingEntry:
            return {}
        for notebook in submission.notebooks:
            comments = {comment.name: comment.manual_comment for comment in notebook.comments}
            for grade in notebook.grades:
                if grade.manual_score is not None and not grade.needs_manual_grade:
                    key = answer_key(notebook.name, grade.name)
                    scores[key] = ManualScore(float(grade.manual_score), comments.get(grade.name))
    return scores


def clear_manual_scores(db_url: str, course_id: str, assignment: str, student: str, keys: list[str]) -> None:
    """Take the manual score and comment off each of ``student``'s answers named by ``keys``: it waits for grading."""
    with Gradebook(db_url, course_id=course_id) as gradebook:
        for key in keys:
            notebook, _, cell = key.partition("/")
            grade = gradebook.find_grade(cell, notebook, assignment, student)
            grade.manual_score, grade.extra_credit, grade.needs_manual_grade = None, None, True
            try:
                gradebook.find_comment(cell, notebook, assignment, student).manual_comment = None
            except MissingEntry:
                pass
        gradebook.db.commit()


class SaveAutoGradesKeepingReviews(SaveAutoGrades):
    """nbgrader's SaveAutoGrades, except that a test cell's score is the grader's verdict and a manual
    score an instructor reviewed stays reviewed."""

    def _add_score(self, cell, resources) -> None:
        grade_id = cell.metadata["nbgrader"]["grade_id"]
        grade = self.gradebook.find_grade(grade_id, self.notebook_id, self.assignment_id, self.student_id)
        reviewed = grade.manual_score is not None and not grade.needs_manual_grade
        super()._add_score(cell, resources)
        verdicts = resources.get(VERDICTS, {})
        if grade_id in verdicts:
            grade.auto_score = float(cell.metadata["nbgrader"]["points"]) if verdicts[grade_id] else 0.0
        if reviewed:
            grade.needs_manual_grade = False
        self.gradebook.db.commit()
