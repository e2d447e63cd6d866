"""An assignment's facts are read once per run and handed to every step: its policy, its source notebooks with each
test cell's hidden tests and each part's answers, its bonus cells (checked), and its data files."""

from __future__ import annotations

import pytest
from scratch_course import ASSIGNMENT, cell, write_course
from suite_layers import NBGRADER_MISSING

pytest.importorskip("nbgrader", reason=NBGRADER_MISSING)

from transformer_course.grading.context import AssignmentFacts, GradingContext, reference_answers  # noqa: E402
from transformer_course.grading.course import Course  # noqa: E402
from transformer_course.grading.errors import CourseError  # noqa: E402

pytestmark = pytest.mark.needs_nbgrader

TEST_SOURCE = "assert f(1) == 2\n### BEGIN HIDDEN TESTS\nassert f(2) == 3\n### END HIDDEN TESTS\n"


def _answer(grade_id: str, source: str) -> dict:
    return {"cell_type": "code", "metadata": {"nbgrader": {"grade_id": grade_id, "solution": True}}, "source": source}


def _parts() -> list[dict]:
    return [
        _answer("f", "def f(x):\n    return x + 1"),
        cell("test-f", 1.0, "code", TEST_SOURCE),
        _answer("g", "def g(x):\n    return 2 * f(x)"),
        cell("test-g", 1.0, "code", "assert g(1) == 4"),
    ]


@pytest.fixture
def course(tmp_path) -> Course:
    root = write_course(tmp_path, "bonus: [test-g]\nlearner_writes: [transformer_course.attention.nothing]\n", _parts())
    (root / "source" / ASSIGNMENT / "pairs.tsv").write_text("a\tb\n", encoding="utf-8")
    return Course(root)


def test_a_context_reads_its_facts_once(course):
    context = GradingContext.of(course, ASSIGNMENT, "sqlite://")
    assert context.facts is context.facts
    (course.root / "source" / ASSIGNMENT / "grading.yml").write_text("bonus: [nothing]\n", encoding="utf-8")
    assert context.facts.bonus == {"test-g"}, "a step after the first read the file again"


def test_the_facts_hold_the_policy_the_sources_and_the_data_files(course):
    facts = AssignmentFacts.read(course, ASSIGNMENT)
    assert (facts.bonus, list(facts.sources), facts.data_files) == (
        {"test-g"},
        ["notebook.ipynb"],
        {"pairs.tsv": b"a\tb\n"},
    )


def test_each_test_cell_is_split_into_its_visible_and_hidden_tests(course):
    tests = AssignmentFacts.read(course, ASSIGNMENT).tests("notebook")
    assert tests == {"test-f": ("assert f(1) == 2\n", "assert f(2) == 3\n"), "test-g": ("assert g(1) == 4", "")}


def test_each_part_but_the_last_has_its_answer_to_put_in_a_failed_parts_place(course):
    source = AssignmentFacts.read(course, ASSIGNMENT).sources["notebook.ipynb"]
    assert reference_answers(source) == {"test-f": "def f(x):\n    return x + 1"}


def test_a_bonus_cell_the_notebooks_do_not_grade_stops_the_reading(course):
    (course.root / "source" / ASSIGNMENT / "grading.yml").write_text("bonus: [test-h]\n", encoding="utf-8")
    with pytest.raises(CourseError, match="bonus names test-h, which no graded cell of it is"):
        AssignmentFacts.read(course, ASSIGNMENT)


def test_an_unknown_assignment_is_refused_with_the_known_ones(course):
    with pytest.raises(CourseError, match="01-test"):
        GradingContext.of(course, "02-nothing")


def test_a_learner_writes_the_package_lacks_is_one_error_naming_the_file(course, tmp_path_factory):
    facts = AssignmentFacts.read(course, ASSIGNMENT)
    with pytest.raises(CourseError, match=f"{ASSIGNMENT}/grading.yml: learner_writes"):
        facts.redacted_package(tmp_path_factory.mktemp("package"))
