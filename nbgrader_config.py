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

# Each assignment is one notebook and its grading.yml (which the grader reads from solutions/, and which
# is not copied into releases or autograded submissions).
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", "grading.yml"]

# Restore grade cells a learner deleted, and grade with the original test code.
c.OverwriteCells.add_missing_cells = True

# Generating an assignment, by `transformer-course release` or by nbgrader itself (formgrader's
# "Generate" button), ends with the course's own step: the setup cell first, and the Chinese notebook
# beside the English one (transformer_course/grading/release.py).
from nbgrader.converters import GenerateAssignment  # noqa: E402

from transformer_course.grading.release import LearnerNotebook  # noqa: E402

c.GenerateAssignment.preprocessors = [*GenerateAssignment.class_traits()["preprocessors"].default(), LearnerNotebook]

# Grading runs every submission's code in a sandbox and judges the hidden tests in the grader's own
# process (transformer_course/grading/sandboxed_run.py), and it keeps the manual scores an instructor
# reviewed (transformer_course/grading/gradebook.py): nbgrader's own autograde steps, with those two
# replaced.
from nbgrader.converters import Autograde  # noqa: E402
from nbgrader.preprocessors import Execute, SaveAutoGrades  # noqa: E402

from transformer_course.grading.gradebook import SaveAutoGradesKeepingReviews  # noqa: E402
from transformer_course.grading.sandboxed_run import SandboxedExecute  # noqa: E402

REPLACEMENTS = {Execute: SandboxedExecute, SaveAutoGrades: SaveAutoGradesKeepingReviews}
c.Autograde.autograde_preprocessors = [
    REPLACEMENTS.get(step, step) for step in Autograde.class_traits()["autograde_preprocessors"].default()
]

# Feedback pages render Markdown through a sanitiser (transformer_course/grading/feedback.py): a
# learner's Markdown may hold scripts, event handlers or javascript: links; its math becomes MathML,
# which a browser shows without MathJax or a network.
c.HTMLExporter.filters = {"markdown2html": "transformer_course.grading.feedback.safe_markdown2html"}

# The feedback page shows every point: a written answer nobody has graded yet says so (nbgrader's page
# shows 0), the bonus apart; and it shows no instructor-only review. `nbgrader generate_feedback` and
# `transformer-course feedback` make the same page (transformer_course/grading/templates/course_feedback/).
from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor  # noqa: E402

from transformer_course.grading import feedback  # noqa: E402

c.GenerateFeedback.preprocessors = [feedback.GetGradesAndPending, CSSHTMLHeaderPreprocessor]
c.GenerateFeedback.HTMLExporter.template_name = feedback.TEMPLATE_NAME
c.GenerateFeedback.HTMLExporter.extra_template_basedirs = [str(feedback.TEMPLATE_DIRECTORY)]
