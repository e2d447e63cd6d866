"""Written answers across resubmissions: a score an instructor gave one version of an answer is not carried, without
a word, to another.

A written answer (a cell nbgrader marks both an answer and graded: "graded by the instructor") gets its score in
formgrader, and nbgrader keeps that score however often the submission is graded again, whatever the answer says by
then. So the run record keeps, for each written answer, a :class:`WrittenAnswer`: a digest of its text as last
graded, and of the text the instructor's score was given to, with the score and comment seen then. A score first
seen, or a score or comment that changed since the last run, was given to the version that run graded. When the
version graded now is another, :func:`follow` names the answer: the review says so, and
``autograde --regrade-changed-answers`` clears the score and comment, so that the answer waits for grading again
(``transformer-course pending``).

Nothing here reads the gradebook: :mod:`transformer_course.grading.gradebook` gives the scores and clears them.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from .nbgrader_cells import grade_id, nbgrader_metadata, source_text


@dataclass
class WrittenAnswer:
    """One written answer in the run record: the digest of its text as last graded, and of the text the instructor's
    ``score`` and ``comment`` were given to (None while it has no score)."""

    graded: str
    scored: str | None = None
    score: float | None = None
    comment: str | None = None


@dataclass(frozen=True)
class ManualScore:
    """A score an instructor saved for a written answer, with its comment."""

    score: float
    comment: str | None = None


def answer_key(notebook: str, cell: str) -> str:
    """How a written answer is named here and in the run record: its notebook (without ``.ipynb``) and grade_id."""
    return f"{notebook}/{cell}"


def written_answer_texts(notebooks: dict[str, dict]) -> dict[str, str]:
    """:func:`answer_key` → the text of each written answer of ``notebooks`` (by file name, as intake rebuilt them)."""
    texts = {}
    for file_name, notebook in notebooks.items():
        for cell in notebook.get("cells", []):
            metadata = nbgrader_metadata(cell)
            if metadata.get("solution") and metadata.get("grade") and grade_id(cell) is not None:
                texts[answer_key(file_name.removesuffix(".ipynb"), grade_id(cell))] = source_text(cell)
    return texts


def digest(text: str) -> str:
    """A written answer's text, as compared between versions (trailing spaces and blank lines do not count)."""
    normalised = "\n".join(line.rstrip() for line in text.strip().splitlines())
    return hashlib.sha256(normalised.encode("utf-8")).hexdigest()[:32]


def follow(
    previous: dict[str, WrittenAnswer], texts: dict[str, str], scores: dict[str, ManualScore]
) -> tuple[dict[str, WrittenAnswer], list[str]]:
    """The written answers after this run, and the keys of those whose manual score was given to another version of
    the answer than the one graded now.

    Args:
        previous: the run record's written answers (from the last run that graded this student).
        texts: the answers' texts now (:func:`written_answer_texts`).
        scores: the manual scores an instructor saved, by the same keys.
    """
    answers, changed = {}, []
    for key, text in texts.items():
        now, before, manual = digest(text), previous.get(key), scores.get(key)
        if manual is None:
            answers[key] = WrittenAnswer(now)
            continue
        if before is None:
            scored = now  # no earlier version is known
        elif before.scored is None or (before.score, before.comment) != (manual.score, manual.comment):
            scored = before.graded  # given, or given again, since the last run: to the version that run graded
        else:
            scored = before.scored
        answers[key] = WrittenAnswer(now, scored, manual.score, manual.comment)
        if scored != now:
            changed.append(key)
    return answers, changed
