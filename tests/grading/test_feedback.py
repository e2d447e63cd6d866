"""The learner's feedback page: its Markdown made harmless and its math MathML, made in bounded time, and made from
the facts the run read once (handed to nbgrader's preprocessor, which nbgrader builds from the course's config)."""

from __future__ import annotations

import time

import pytest
from scratch_course import ASSIGNMENT, write_course
from suite_layers import NBGRADER_MISSING

pytest.importorskip("nbgrader", reason=NBGRADER_MISSING)

from traitlets.config import Config  # noqa: E402

from transformer_course.grading import feedback  # noqa: E402
from transformer_course.grading.context import GradingContext  # noqa: E402
from transformer_course.grading.course import Course  # noqa: E402

pytestmark = pytest.mark.needs_nbgrader


def test_markdown_keeps_its_formatting_and_loses_scripts_handlers_and_javascript_links():
    page = feedback.safe_markdown2html(
        "**bold** <script>alert(1)</script> <img src=x onerror=alert(1)> [link](javascript:alert(1))"
    )
    assert "<strong>bold</strong>" in page and "<script" not in page and "onerror" not in page, page
    assert "javascript:" not in page, page


def test_math_becomes_mathml_that_renders_offline():
    assert "<math" in feedback.safe_markdown2html("$\\sqrt{d_k}$")


def test_the_context_write_feedback_is_given_is_the_one_its_pages_are_made_from(tmp_path):
    seen = []

    class RecordingCourse(Course):
        def run_converter(self, converter, **settings):
            config = Config()
            config.CourseDirectory.root = str(self.root)
            preprocessor = feedback.GetGradesAndPending(config=config)
            seen.append(preprocessor._context(settings["assignment_id"], settings["db_url"]))

    course = RecordingCourse(write_course(tmp_path))
    context = GradingContext(course, ASSIGNMENT, "sqlite://")
    feedback.write_feedback(context, "alice")
    assert seen == [context] and seen[0] is context


def test_nbgraders_own_generate_feedback_reads_the_course_itself(tmp_path):
    config = Config()
    config.CourseDirectory.root = str(write_course(tmp_path))
    context = feedback.GetGradesAndPending(config=config)._context(ASSIGNMENT, "sqlite://")
    assert (context.course.root, context.facts.bonus) == (tmp_path.resolve(), {"bonus"})


def test_a_feedback_page_that_takes_too_long_is_cut_short_with_a_page_that_says_so(tmp_path, monkeypatch):
    class SlowCourse(Course):
        def run_converter(self, converter, **settings):
            time.sleep(30)

    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\n", encoding="utf-8")
    course = SlowCourse(tmp_path)
    (course.autograded_directory / "alice" / "01-attention").mkdir(parents=True)
    (course.autograded_directory / "alice" / "01-attention" / "attention.ipynb").write_text("{}", encoding="utf-8")
    monkeypatch.setattr(feedback, "RENDER_SECONDS", 1)
    started = time.monotonic()
    problem = feedback.write_feedback(GradingContext(course, "01-attention", "sqlite://"), "alice")
    assert time.monotonic() - started < 10, "the time limit did not stop the rendering"
    assert problem is not None and "longer than 1 s" in problem, problem
    page = (course.feedback_directory / "alice" / "01-attention" / "attention.html").read_text(encoding="utf-8")
    assert "could not be made within 1 seconds" in page, page
