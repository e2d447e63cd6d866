"""What every grading step is given: an assignment of the course, what the course says of it, and the gradebook.

An assignment's facts live in ``solutions/<assignment>/``: its ``grading.yml`` (:mod:`.policy`), its source notebooks
(with every test cell's visible and hidden tests, and each part's answers), the bonus cells the policy names, and its
data files. :class:`AssignmentFacts` reads them once; a run hands them to each step in its :class:`GradingContext`
(:attr:`GradingContext.facts`, read the first time a step asks), so that no step reads ``grading.yml`` or a source
notebook again, however many students and notebooks the run has.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from .course import Course
from .errors import CourseError
from .nbgrader_cells import (
    grade_id,
    nbgrader_metadata,
    read_json_notebook,
    source_text,
    split_hidden_tests,
    test_sources,
)
from .policy import POLICY_FILE, GradingPolicy
from .redaction import RedactionError, redacted_package


@dataclass(frozen=True)
class AssignmentFacts:
    """What the course says of one assignment, read once (:meth:`read`).

    Attributes:
        assignment: its name, e.g. ``"01-attention"``.
        policy: its ``grading.yml``.
        sources: file name → source notebook (nbformat's JSON), with the solutions and the hidden tests.
        bonus: the grade_ids of its bonus cells, each a graded cell of the source notebooks.
        data_files: file name → bytes of the files it ships beside its notebook.
    """

    assignment: str
    policy: GradingPolicy
    sources: dict[str, dict]
    bonus: frozenset[str]
    data_files: dict[str, bytes]

    @classmethod
    def read(cls, course: Course, assignment: str) -> AssignmentFacts:
        """Read ``assignment``'s facts from ``course``.

        Raises:
            CourseError: the assignment is unknown, its ``grading.yml`` cannot be used, or names as bonus a cell
                that its notebooks do not grade.
        """
        policy = course.policy(assignment)
        sources = {path.name: read_json_notebook(path) for path in course.source_notebooks(assignment)}
        graded = {
            grade_id(cell)
            for notebook in sources.values()
            for cell in notebook.get("cells", [])
            if nbgrader_metadata(cell).get("grade")
        }
        unknown = sorted(set(policy.bonus) - graded)
        if unknown:
            raise CourseError(
                f"{assignment}/{POLICY_FILE}: bonus names {', '.join(unknown)}, which no graded cell of it is"
            )
        data_files = {path.name: path.read_bytes() for path in course.data_files(assignment)}
        return cls(assignment, policy, sources, frozenset(policy.bonus), data_files)

    def tests(self, notebook: str) -> dict[str, tuple[str, str]]:
        """grade_id → (visible tests, hidden tests) of each test cell of the source notebook ``notebook`` (its name
        without ``.ipynb``)."""
        return {
            name: split_hidden_tests(text) for name, text in test_sources(self.sources[f"{notebook}.ipynb"]).items()
        }

    def references(self, notebook: str) -> dict[str, str]:
        """:func:`reference_answers` of the source notebook ``notebook`` (its name without ``.ipynb``)."""
        return reference_answers(self.sources[f"{notebook}.ipynb"])

    def redacted_package(self, target: Path) -> Path:
        """The course package without what the assignment asks the learner to write, copied into ``target``
        (:mod:`.redaction`).

        Raises:
            CourseError: ``learner_writes`` names what the package does not define.
        """
        try:
            return redacted_package(self.policy.learner_writes, target)
        except RedactionError as error:
            raise CourseError(f"{self.assignment}/{POLICY_FILE}: learner_writes: {error}") from None


def reference_answers(source: dict) -> dict[str, str]:
    """grade_id of each test cell of the source notebook ``source`` that a later test cell follows → the source of
    the answer cells of its part (the code cells a learner fills in, since the test cell before it), joined: the
    correct answer the grader puts in a failed part's place (:mod:`.judging`).

    The last test cell has none: nothing after it needs its answer, which may be long to run (a training run).
    """
    parts: dict[str, str] = {}
    answers: list[str] = []
    for cell in source.get("cells", []):
        nbgrader = nbgrader_metadata(cell)
        if cell.get("cell_type") != "code":
            continue
        if nbgrader.get("grade"):
            if answers:
                parts[nbgrader["grade_id"]] = "\n".join(answers)
            answers = []
        elif nbgrader.get("solution"):
            answers.append(source_text(cell))
    last_test = next(reversed(test_sources(source)), None)
    parts.pop(last_test, None)
    return parts


@dataclass(frozen=True)
class GradingContext:
    """What every grading step is given: an assignment of ``course``, its facts, and the gradebook it is graded
    into."""

    course: Course
    assignment: str
    db_url: str

    @classmethod
    def of(cls, course: Course, assignment: str, db_url: str | None = None) -> GradingContext:
        """The context of ``assignment`` (checked to exist), in ``db_url`` or the course's own gradebook."""
        course.check_assignment(assignment)
        return cls(course, assignment, db_url or course.default_db_url)

    @cached_property
    def facts(self) -> AssignmentFacts:
        """The assignment's facts, read the first time a step asks for them (:meth:`AssignmentFacts.read`)."""
        return AssignmentFacts.read(self.course, self.assignment)
