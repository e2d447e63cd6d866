"""Feedback pages: nbgrader's HTML for each graded submission, safe to open, with the review on top.

nbgrader's ``GenerateFeedback`` converter renders each autograded notebook in the grader's process,
as soon as its grades are recorded (so that the class's pages are made while the next submissions run,
not one after another at the end). What the page shows of the
learner's work is made harmless before it becomes HTML: the kernel's outputs keep only text and
images whose data is plain base64 (:mod:`transformer_course.grading.runner`), code is highlighted
(escaped) by nbconvert, and Markdown goes through :func:`safe_markdown2html`, which
``nbgrader_config.py`` puts in place of nbconvert's ``markdown2html`` filter: the rendered HTML keeps
formatting tags and plain links, and loses scripts, event handlers, styles and ``javascript:``
URLs (bleach, the sanitiser nbconvert itself uses). The test cells show their visible tests only:
the grader puts the released source back after judging them (:mod:`transformer_course.grading.execute`).
"""

from __future__ import annotations

import html
from pathlib import Path

from .course import CourseError

# What Markdown may become in a feedback page: formatting, tables, links and images over http(s).
ALLOWED_TAGS = {
    *("p", "br", "hr", "div", "span", "blockquote", "pre", "code", "em", "strong", "b", "i", "u", "del"),
    *("sub", "sup", "ul", "ol", "li", "dl", "dt", "dd", "a", "img", "h1", "h2", "h3", "h4", "h5", "h6"),
    *("table", "thead", "tbody", "tr", "th", "td"),
}
ALLOWED_ATTRIBUTES = {"*": ["class", "id"], "a": ["href", "title"], "img": ["src", "alt", "title"]}
ALLOWED_PROTOCOLS = {"http", "https", "mailto"}


def safe_markdown2html(source: str) -> str:
    """nbconvert's Markdown rendering (math kept for MathJax), with everything but formatting removed."""
    import bleach
    from nbconvert.filters import markdown2html

    return bleach.clean(
        markdown2html(source), tags=ALLOWED_TAGS, attributes=ALLOWED_ATTRIBUTES, protocols=ALLOWED_PROTOCOLS
    )


def write_feedback(course, assignment: str, result, db_url: str) -> None:
    """nbgrader's feedback page for one graded ``result`` (its ``GenerateFeedback`` converter, in this process),
    with the review's findings on top; the result's message says so when no page could be made."""
    try:
        course.run_converter("GenerateFeedback", assignment_id=assignment, student_id=result.student_id, db_url=db_url)
    except CourseError:
        pass  # said below
    pages = sorted((course.feedback_directory / result.student_id / assignment).glob("*.html"))
    if not pages:
        result.message = (result.message + "; " if result.message else "") + "feedback could not be generated"
    for page in pages if result.review else []:
        add_review_to_page(page, result.review.split("; "))


def add_review_to_page(page: Path, findings: list[str]) -> None:
    """Put the review's findings at the top of a feedback page."""
    items = "".join(f"<li>{html.escape(finding)}</li>" for finding in findings)
    banner = (
        '<div style="border: 2px solid #b45309; background: #fffbeb; padding: 0.8em 1.2em; margin: 1em;">'
        "<strong>For the instructor's review</strong> (the score stands; the instructor decides):"
        f"<ul>{items}</ul></div>"
    )
    text = page.read_text(encoding="utf-8")
    start = text.find("<body")
    position = text.find(">", start) + 1 if start >= 0 else 0
    page.write_text(text[:position] + banner + text[position:], encoding="utf-8")
