"""Feedback pages: nbgrader's HTML for each graded submission, safe to open, every point shown, offline.

nbgrader's ``GenerateFeedback`` converter renders each autograded notebook in the grader's process,
as soon as its grades are recorded (so that the class's pages are made while the next submissions
run, not one after another at the end), and again whenever ``transformer-course feedback`` asks
(after an instructor has graded the written answers). ``nbgrader_config.py`` gives it the course's
template and :class:`GetGradesAndPending` in place of nbgrader's ``GetGrades``, so that nbgrader's
own ``nbgrader generate_feedback`` makes the same pages:

* **every point shown**: the core score out of the core maximum, the bonus apart, and a written
  answer that nobody has graded yet says "not graded yet" (nbgrader's page shows 0);
* **each error where it happened**: a cell that raised says so, with its part and its error, and a test
  cell that failed only because of it says that (:mod:`transformer_course.grading.cell_errors`, in the
  sentences ``transformer-course check`` prints); every error is shown whole;
* **one number everywhere**: the assignment's score as ``grades.csv`` and the LMS's file give it, the course's late
  penalty taken (:func:`transformer_course.grading.report.student_row`, the same row), with how late and what the
  penalty took, in English and in Chinese;
* **the learner's page only**: the review's findings are for the instructor (``grades.csv``, the
  command's output), never on the page a learner receives;
* **offline**: math becomes MathML when the page is made (latex2mathml), so it renders without
  MathJax or a network;
* **harmless**: the kernel's outputs keep only text and images whose data is plain base64
  (:mod:`transformer_course.grading.pipe`, as the grader reads them), code is highlighted (escaped) by nbconvert, and
  Markdown goes through :func:`safe_markdown2html`, which keeps formatting tags, MathML and plain
  links and loses scripts, event handlers, styles and ``javascript:`` URLs (bleach, the sanitiser
  nbconvert itself uses). The test cells show their visible tests only: the grader puts the
  released source back after judging them (:mod:`transformer_course.grading.judging`);
* **bounded**: one student's pages are made within :data:`RENDER_SECONDS`; past it the page says
  that it could not be made in time, and the class goes on.

``transformer-course feedback ASSIGNMENT --zip DIR`` also writes the pages as an LMS's bulk feedback upload takes them
(:mod:`transformer_course.grading.lms_feedback`); ``nbgrader release_feedback`` returns them through nbgrader's
exchange.
"""

from __future__ import annotations

import html
import signal
import threading
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath
from nbgrader.preprocessors import GetGrades

from .cell_errors import read_cell_errors
from .context import GradingContext
from .course import Course, course_of_config
from .errors import CourseError
from .report import student_row

TEMPLATE_DIRECTORY = Path(__file__).parent / "templates"
TEMPLATE_NAME = "course_feedback"
# The longest one student's pages may take to render; an honest notebook takes a few seconds.
RENDER_SECONDS = 60

# What Markdown may become in a feedback page: formatting, tables, links, images over http(s), and MathML.
ALLOWED_TAGS = {
    *("p", "br", "hr", "div", "span", "blockquote", "pre", "code", "em", "strong", "b", "i", "u", "del"),
    *("sub", "sup", "ul", "ol", "li", "dl", "dt", "dd", "a", "img", "h1", "h2", "h3", "h4", "h5", "h6"),
    *("table", "thead", "tbody", "tr", "th", "td"),
    *("math", "mrow", "mi", "mn", "mo", "msup", "msub", "msubsup", "mfrac", "msqrt", "mroot", "mtext", "mspace"),
    *("mover", "munder", "munderover", "mtable", "mtr", "mtd", "mstyle", "mpadded", "mphantom", "menclose"),
}
MATHML_ATTRIBUTES = ["display", "mathvariant", "stretchy", "fence", "separator", "accent", "columnalign", "width"]
ALLOWED_ATTRIBUTES = {
    "*": ["class", "id"],
    "a": ["href", "title"],
    "img": ["src", "alt", "title"],
    **{tag: MATHML_ATTRIBUTES for tag in ("math", "mi", "mo", "mstyle", "mtable", "mtd", "mspace", "mover", "munder")},
}
ALLOWED_PROTOCOLS = {"http", "https", "mailto"}

# The context whose pages write_feedback is making, handed to GetGradesAndPending (which nbgrader makes from the
# course's config, and so cannot be given it): the assignment's facts as the run read them, once.
_HANDED: ContextVar[GradingContext | None] = ContextVar("grading_context", default=None)


def safe_markdown2html(source: str) -> str:
    """Markdown as HTML, its math as MathML, with everything but formatting removed."""
    import bleach

    rendered = MarkdownWithMath(renderer=MathMLRenderer(escape=False)).render(source)
    return bleach.clean(rendered, tags=ALLOWED_TAGS, attributes=ALLOWED_ATTRIBUTES, protocols=ALLOWED_PROTOCOLS)


def _mathml(body: str, display: str) -> str:
    """``body`` (LaTeX) as MathML, or the LaTeX itself, escaped, where it cannot be converted."""
    from latex2mathml.converter import convert

    try:
        return convert(body, display=display)
    except Exception:  # noqa: BLE001  (a learner's LaTeX may be anything: it is then shown as written)
        delimiter = "$$" if display == "block" else "$"
        return f"<code>{html.escape(delimiter + body + delimiter)}</code>"


class MathMLRenderer(IPythonRenderer):
    """nbconvert's Markdown renderer with math written as MathML instead of left for MathJax."""

    def block_math(self, body: str) -> str:
        return _mathml(body, "block")

    def inline_math(self, body: str) -> str:
        return _mathml(body, "inline")

    def latex_environment(self, name: str, body: str) -> str:
        return _mathml(f"\\begin{{{name}}}{body}\\end{{{name}}}", "block")


class GetGradesAndPending(GetGrades):
    """nbgrader's ``GetGrades``, which puts each cell's score in the notebook, and also which written answers wait
    for an instructor, which cells are bonus, the page's totals, the assignment's row as ``grades.csv`` gives it
    (``resources["course_feedback"]``), and the note of each cell that raised or failed only because of one
    (``metadata.course_feedback_note``)."""

    def preprocess(self, nb, resources):
        context = self._context(resources["nbgrader"]["assignment"], resources["nbgrader"]["db_url"])
        try:
            self.bonus = context.facts.bonus
        except (CourseError, OSError):
            self.bonus = frozenset()
        self.summary = {"core_score": 0.0, "core_max": 0.0, "bonus_score": 0.0, "bonus_max": 0.0, "pending_points": 0}
        nb, resources = super().preprocess(nb, resources)
        self.summary["row"] = student_row(context, resources["nbgrader"]["student"])
        resources["course_feedback"] = self.summary
        for index, note in read_cell_errors(nb).notes().items():
            nb.cells[index].metadata["course_feedback_note"] = note
        return nb, resources

    def _context(self, assignment: str, db_url: str) -> GradingContext:
        """The context :func:`write_feedback` handed over for these pages; where nbgrader itself makes them
        (``nbgrader generate_feedback``), the course's own, read here."""
        handed = _HANDED.get()
        if handed is not None and (handed.assignment, handed.db_url) == (assignment, db_url):
            return handed
        return GradingContext(course_of_config(self.config), assignment, db_url)

    def _get_score(self, cell, resources) -> None:
        super()._get_score(cell, resources)
        grade = self.gradebook.find_grade(
            cell.metadata["nbgrader"]["grade_id"], self.notebook_id, self.assignment_id, self.student_id
        )
        part = "bonus" if grade.name in self.bonus else "core"
        cell.metadata.nbgrader["bonus"] = part == "bonus"
        cell.metadata.nbgrader["pending"] = bool(grade.needs_manual_grade)
        self.summary[f"{part}_max"] += grade.max_score
        if grade.needs_manual_grade:
            self.summary["pending_points"] += grade.max_score
        else:
            self.summary[f"{part}_score"] += grade.score or 0.0


def write_feedback(context: GradingContext, student_id: str) -> str | None:
    """``student_id``'s feedback pages for the assignment (nbgrader's ``GenerateFeedback``, in this process, within
    :data:`RENDER_SECONDS`); None, or what went wrong. A page that could not be made in time says so itself."""
    course, assignment, db_url = context.course, context.assignment, context.db_url
    handed = _HANDED.set(context)
    try:
        with _time_limit(RENDER_SECONDS):
            course.run_converter("GenerateFeedback", assignment_id=assignment, student_id=student_id, db_url=db_url)
    except _OutOfTime:
        _write_out_of_time_pages(course, assignment, student_id)
        return f"the feedback page took longer than {RENDER_SECONDS} s to make: a short page says so"
    except CourseError:
        pass  # said below
    finally:
        _HANDED.reset(handed)
    if not sorted((course.feedback_directory / student_id / assignment).glob("*.html")):
        return "feedback could not be generated"
    return None


def write_class_feedback(context: GradingContext) -> dict[str, str | None]:
    """The feedback pages of every student with an autograded assignment, made again from the gradebook:
    student id → None, or what went wrong."""
    autograded = context.course.autograded_directory.glob(f"*/{context.assignment}")
    return {
        student_id: write_feedback(context, student_id)
        for student_id in sorted(path.parent.name for path in autograded)
    }


class _OutOfTime(Exception):
    pass


@contextmanager
def _time_limit(seconds: int):
    """Raise :class:`_OutOfTime` in the block after ``seconds`` (an interval timer; in the main thread only, where
    Python delivers signals: elsewhere the block runs unbounded, as nbgrader's own converter does)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def out_of_time(signum, frame):
        raise _OutOfTime

    previous = signal.signal(signal.SIGALRM, out_of_time)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _write_out_of_time_pages(course: Course, assignment: str, student_id: str) -> None:
    folder = course.feedback_directory / student_id / assignment
    folder.mkdir(parents=True, exist_ok=True)
    for notebook in sorted((course.autograded_directory / student_id / assignment).glob("*.ipynb")):
        (folder / f"{notebook.stem}.html").write_text(
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>Feedback: '
            f"{html.escape(notebook.stem)}</title></head><body><main><h1>{html.escape(notebook.stem)}</h1>"
            f"<p>This page could not be made within {RENDER_SECONDS} seconds: the notebook is too large to show. "
            "Your grades are recorded; ask your instructor for them.</p></main></body></html>\n",
            encoding="utf-8",
        )
