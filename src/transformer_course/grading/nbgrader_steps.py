"""nbgrader's own autograde steps, run in the grader's process around each sandboxed run.

``nbgrader autograde`` is one process per student that imports nbgrader, opens the gradebook,
sanitises the notebook, executes it and saves the grades. :class:`NbgraderSteps` does the same work
with nbgrader's own preprocessors, in the order of nbgrader's ``Autograde`` converter, in the one
grader process for the whole class: only the execution happens elsewhere, in a worker
(:mod:`transformer_course.grading.sandboxed_run`).

* :meth:`NbgraderSteps.restore` (before the run): the student and the submission (with the time it
  was handed in) in the gradebook; then nbgrader's ``sanitize_preprocessors`` (``ClearOutput``,
  ``DeduplicateIds``, ``OverwriteKernelspec``, ``OverwriteCells``, ``CheckCellMetadata``), which put
  back test cells that were edited or deleted;
* :meth:`NbgraderSteps.record` (after the run): the ``autograde_preprocessors`` that follow
  ``Execute`` (``IgnorePattern``, ``ClearMetadataPreprocessor``, ``LimitOutput``,
  :class:`~transformer_course.grading.gradebook.SaveAutoGradesKeepingReviews` in place of
  ``SaveAutoGrades``, ``AssignLatePenalties``, ``CheckCellMetadata``), then the autograded notebook
  written to ``autograded/<student>/<assignment>/``, as nbgrader's converter writes it.

``CheckCellMetadata``, in both lists, is :class:`CheckCellMetadataSchemaOnce`: the same checks, with the
schema of nbgrader's metadata checked once per run instead of once per cell.

The preprocessors are configured from the course's ``nbgrader_config.py`` (``OverwriteCells.add_missing_cells``...).
"""

from __future__ import annotations

import copy
import os
import shutil
import warnings
from datetime import UTC, datetime

import nbformat
from jsonschema.exceptions import best_match
from jsonschema.validators import validator_for
from nbformat import NotebookNode
from nbgrader import utils
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.converters import Autograde
from nbgrader.nbgraderformat import MetadataValidator, ValidationError
from nbgrader.nbgraderformat.common import BaseMetadataValidator
from nbgrader.preprocessors import CheckCellMetadata, Execute, SaveAutoGrades
from sqlalchemy.exc import SAWarning

from .context import GradingContext
from .gradebook import VERDICTS, SaveAutoGradesKeepingReviews


class NbgraderSteps:
    """nbgrader's steps before and after one submission's run, for the assignment of ``context``."""

    def __init__(self, context: GradingContext):
        self.course, self.assignment, self.db_url = context.course, context.assignment, context.db_url
        config = self.course.nbgrader_config
        defaults = Autograde.class_traits()
        sanitize = defaults["sanitize_preprocessors"].default()
        autograde = defaults["autograde_preprocessors"].default()
        after_run = autograde[autograde.index(Execute) + 1 :]
        replaced = {SaveAutoGrades: SaveAutoGradesKeepingReviews, CheckCellMetadata: CheckCellMetadataSchemaOnce}
        self._before = [replaced.get(step, step)(config=config) for step in sanitize]
        self._after = [replaced.get(step, step)(config=config) for step in after_run]
        self._ignored = [*config.get("CourseDirectory", {}).get("ignore", []), "*.ipynb"]

    def restore(
        self, student_id: str, submitted: dict[str, dict], timestamp: datetime | None
    ) -> dict[str, NotebookNode]:
        """Record ``student_id``'s submission (its notebooks by file name, as intake rebuilt them, and the time it
        was handed in) in the gradebook and return its notebooks (by name), sanitised.

        A notebook of the assignment that was not submitted gets zero points, as nbgrader gives it.
        """
        with Gradebook(self.db_url, course_id=self.course.course_id) as gradebook, warnings.catch_warnings():
            # nbgrader's update_or_create_submission makes SQLAlchemy warn about its own session on every call.
            warnings.simplefilter("ignore", SAWarning)
            gradebook.update_or_create_student(student_id)
            if timestamp is not None:  # the gradebook keeps times in UTC, without a zone, as nbgrader's parse_utc gives
                naive = timestamp.astimezone(UTC).replace(tzinfo=None)
                gradebook.update_or_create_submission(self.assignment, student_id, timestamp=naive)
            else:
                gradebook.update_or_create_submission(self.assignment, student_id)
            names = [notebook.name for notebook in gradebook.find_assignment(self.assignment).notebooks]
            for name in names:
                if f"{name}.ipynb" not in submitted:
                    for grade in gradebook.find_submission_notebook(name, self.assignment, student_id).grades:
                        grade.auto_score, grade.needs_manual_grade = 0, False
            gradebook.db.commit()
        notebooks = {}
        for name in names:
            if f"{name}.ipynb" in submitted:
                notebook = nbformat.from_dict(copy.deepcopy(submitted[f"{name}.ipynb"]))
                notebooks[name], _ = self._apply(self._before, notebook, self._resources(student_id, name))
        return notebooks

    def record(self, student_id: str, executed: dict[str, tuple[NotebookNode, dict[str, bool]]]) -> None:
        """Save the grades of ``student_id``'s executed notebooks (name -> (notebook, verdicts)) and write them
        to ``autograded/``, beside the other files of the submission and the assignment's own data files."""
        destination = self.course.autograded_directory / student_id / self.assignment
        if destination.exists():
            shutil.rmtree(destination)
        destination.mkdir(parents=True)
        submitted = self.course.submitted_directory / student_id / self.assignment
        source = self.course.source_directory / self.assignment
        for folder in (submitted, source):  # the assignment's files last: a submission cannot replace them
            for path in utils.find_all_files(str(folder), self._ignored):
                target = destination / os.path.relpath(path, folder)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, target)
        for name, (notebook, verdicts) in executed.items():
            resources = self._resources(student_id, name)
            resources[VERDICTS] = verdicts
            notebook, _ = self._apply(self._after, notebook, resources)
            nbformat.write(notebook, destination / f"{name}.ipynb")

    def _resources(self, student_id: str, notebook: str) -> dict:
        """What nbgrader's preprocessors read about the notebook they work on."""
        nbgrader = {"student": student_id, "assignment": self.assignment, "notebook": notebook, "db_url": self.db_url}
        return {"unique_key": notebook, "nbgrader": nbgrader}

    @staticmethod
    def _apply(steps: list, notebook: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        for step in steps:
            notebook, resources = step(notebook, resources)  # a step that is not enabled passes it on unchanged
        return notebook, resources


class _SchemaCheckedOnce(BaseMetadataValidator):
    """The check of one cell's nbgrader metadata against nbgrader's schema, with a validator made once.

    nbgrader's check calls ``jsonschema.validate``, which first checks the schema itself against JSON
    Schema's metaschema, for every cell: nine tenths of the step's time (about 0.1 s of CPU per notebook
    of assignment 1, twice per submission). Its own schema needs no checking each time.
    """

    def __init__(self) -> None:
        super().__init__()
        self._validator = validator_for(self.schema)(self.schema)

    def validate_cell(self, cell: NotebookNode) -> None:
        metadata = cell.metadata.get("nbgrader")
        if metadata is None or metadata.get("schema_version", 0) != self.schema_version:
            super().validate_cell(cell)  # nothing to check, or nbgrader's own error for another schema version
            return
        error = best_match(self._validator.iter_errors(metadata))  # what jsonschema.validate raises, once checked
        if error is not None:
            raise error


class _MetadataValidator(MetadataValidator, _SchemaCheckedOnce):
    """nbgrader's metadata checks (grade ids, points, cell types, duplicates), on :class:`_SchemaCheckedOnce`."""


class CheckCellMetadataSchemaOnce(CheckCellMetadata):
    """nbgrader's ``CheckCellMetadata`` step, with one :class:`_MetadataValidator` for all the notebooks it checks."""

    def __init__(self, **settings):
        super().__init__(**settings)
        self._validator = _MetadataValidator()

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        try:
            self._validator.validate_nb(nb)
        except ValidationError as error:
            message = f"Notebook failed to validate; the nbgrader metadata may be corrupted: {error.message}"
            raise ValidationError(message) from None
        return nb, resources


def forget(db_url: str, course_id: str, assignment: str, student_ids: list[str]) -> None:
    """Remove the submissions of ``student_ids`` from the gradebook (a stopped run's, whose zeros are the grader's
    fault)."""
    with Gradebook(db_url, course_id=course_id) as gradebook:
        for student_id in student_ids:
            try:
                gradebook.remove_submission(assignment, student_id)
            except MissingEntry:
                pass
