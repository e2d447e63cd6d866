"""nbgrader configuration for the course (https://nbgrader.readthedocs.io).

Layout, relative to the repository root (the course directory):

    solutions/<assignment>/<notebook>.ipynb   source: solutions, visible and hidden tests
    exercises/<assignment>/<notebook>.ipynb   release: what learners get (generated, committed)
    submitted/, autograded/, feedback/         created by grading runs (git-ignored)
    gradebook.db                               the SQLite gradebook (git-ignored)

Use `transformer-course release` and `transformer-course autograde`, which wrap nbgrader's own
commands with these settings.
"""

c = get_config()  # noqa: F821  (provided by nbgrader when it loads this file)

c.CourseDirectory.course_id = "attention-is-all-you-need"
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "exercises"
# The gradebook defaults to SQLite in <root>/gradebook.db. Any SQLAlchemy URL works instead:
# c.CourseDirectory.db_url = "postgresql://user@host/gradebook"
# or, per run: transformer-course autograde ... --db-url URL

# Each assignment is one notebook; nothing else is copied from solutions/ into a release.
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback"]

# Restore grade cells a learner deleted, and grade with the original test code.
c.OverwriteCells.add_missing_cells = True

# Grade what ran even when a kernel dies (exit(), a crash, memory exhausted): nbgrader's executor is
# replaced by a subclass that records the loss in the notebook instead of abandoning the grading.
from nbconvert.preprocessors import ClearMetadataPreprocessor  # noqa: E402
from nbgrader.preprocessors import (  # noqa: E402
    AssignLatePenalties,
    CheckCellMetadata,
    IgnorePattern,
    LimitOutput,
    SaveAutoGrades,
)

from transformer_course.grading.execute import ResilientExecute  # noqa: E402

c.Autograde.autograde_preprocessors = [
    ResilientExecute,
    IgnorePattern,
    ClearMetadataPreprocessor,
    LimitOutput,
    SaveAutoGrades,
    AssignLatePenalties,
    CheckCellMetadata,
]
