"""Through nbgrader's exchange a learner fetches one notebook, in the language they chose, and submits it as the
release's own (``transformer_course.grading.exchange``); the instructor's ``collect`` then holds that one notebook,
which grading takes in whatever its language (``stories/test_chinese_submissions.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from grading_support import run_nbgrader

pytestmark = pytest.mark.needs_nbgrader

ASSIGNMENT, NOTEBOOK = "01-attention", "attention.ipynb"
COURSE_ID = "attention-is-all-you-need"
LEARNER_CONFIG = """\
c = get_config()
c.ExchangeFactory.fetch_assignment = "transformer_course.grading.exchange.FetchInOneLanguage"
c.ExchangeFactory.submit = "transformer_course.grading.exchange.SubmitInOneLanguage"
c.Exchange.root = {exchange!r}
c.CourseDirectory.course_id = {course_id!r}
"""


@pytest.fixture(scope="module")
def exchange(course, tmp_path_factory) -> Path:
    """The exchange after the instructor's ``nbgrader release_assignment`` of 01: both languages in its outbound."""
    root = tmp_path_factory.mktemp("exchange")
    released = run_nbgrader(course.root, "release_assignment", ASSIGNMENT, f"--Exchange.root={root}")
    assert released.returncode == 0, released.stderr
    return root


def _learner(tmp_path: Path, exchange: Path, student: str = "learner") -> Path:
    home = tmp_path / student
    home.mkdir()
    (home / "nbgrader_config.py").write_text(
        LEARNER_CONFIG.format(exchange=str(exchange), course_id=COURSE_ID), encoding="utf-8"
    )
    return home


def _fetched_notebooks(home: Path) -> list[str]:
    return sorted(str(path.relative_to(home / ASSIGNMENT)) for path in (home / ASSIGNMENT).rglob("*.ipynb"))


def test_a_learner_who_chooses_chinese_fetches_only_the_chinese_notebook(course, exchange, tmp_path):
    home = _learner(tmp_path, exchange)
    fetched = run_nbgrader(home, "fetch_assignment", ASSIGNMENT, "--FetchInOneLanguage.language=zh_CN")
    assert fetched.returncode == 0, fetched.stderr
    assert _fetched_notebooks(home) == [NOTEBOOK], "one notebook, under the release's own name"
    chinese = (course.release_directory / ASSIGNMENT / "zh_CN" / NOTEBOOK).read_bytes()
    assert (home / ASSIGNMENT / NOTEBOOK).read_bytes() == chinese, "the fetched notebook is not the Chinese one"


def test_a_learner_fetches_english_alone_by_default(course, exchange, tmp_path):
    home = _learner(tmp_path, exchange)
    fetched = run_nbgrader(home, "fetch_assignment", ASSIGNMENT)
    assert fetched.returncode == 0, fetched.stderr
    assert _fetched_notebooks(home) == [NOTEBOOK]
    english = (course.release_directory / ASSIGNMENT / NOTEBOOK).read_bytes()
    assert (home / ASSIGNMENT / NOTEBOOK).read_bytes() == english, "the fetched notebook is not the English one"


def test_a_language_the_assignment_lacks_is_refused_naming_the_ones_it_has(exchange, tmp_path):
    home = _learner(tmp_path, exchange)
    fetched = run_nbgrader(home, "fetch_assignment", ASSIGNMENT, "--FetchInOneLanguage.language=fr")
    assert fetched.returncode != 0
    assert "no notebooks in 'fr'" in fetched.stderr and "en, zh_CN" in fetched.stderr, fetched.stderr
    assert not (home / ASSIGNMENT).exists(), "a refused fetch should leave nothing behind"


def test_one_language_submits_strictly_and_is_collected_as_the_learner_sent_it(course, exchange, tmp_path):
    home = _learner(tmp_path, exchange, student="wang")
    assert run_nbgrader(home, "fetch_assignment", ASSIGNMENT, "--FetchInOneLanguage.language=zh_CN").returncode == 0
    worked = home / ASSIGNMENT / NOTEBOOK
    worked.write_bytes(worked.read_bytes().replace(b"raise NotImplementedError()", b"pass", 1))
    # --strict refuses a submission missing a released notebook: the Chinese one stands for the English one.
    submitted = run_nbgrader(home, "submit", ASSIGNMENT, "--strict", "--student=wang")
    assert submitted.returncode == 0, submitted.stderr
    assert "missing" not in submitted.stderr.lower(), submitted.stderr
    collected = run_nbgrader(course.root, "collect", ASSIGNMENT, f"--Exchange.root={exchange}")
    assert collected.returncode == 0, collected.stderr
    folder = course.submitted_directory / "wang" / ASSIGNMENT
    assert sorted(path.name for path in folder.glob("**/*.ipynb")) == [NOTEBOOK]
    assert (folder / NOTEBOOK).read_bytes() == worked.read_bytes()


def test_a_submission_missing_its_notebook_is_refused_under_strict(exchange, tmp_path):
    home = _learner(tmp_path, exchange)
    assert run_nbgrader(home, "fetch_assignment", ASSIGNMENT).returncode == 0
    (home / ASSIGNMENT / NOTEBOOK).rename(home / ASSIGNMENT / "renamed.ipynb")
    submitted = run_nbgrader(home, "submit", ASSIGNMENT, "--strict")
    assert submitted.returncode != 0
    assert f"missing: {NOTEBOOK}" in submitted.stderr and "extra: renamed.ipynb" in submitted.stderr, submitted.stderr
