"""Releasing learner notebooks: exercises/ is exactly what `release` makes, and gives nothing away."""

from __future__ import annotations

import json
import re

import pytest
from grading_support import (
    REPOSITORY,
    answer_cell_ids,
    assignments,
    exercise_notebook,
    notebook_name,
    solution_notebook,
)

from transformer_course.book_programs.editions import LANGUAGES, LOCALE  # each edition's learner notebooks
from transformer_course.grading.course import LOCALE_DIRECTORY, Course
from transformer_course.grading.notebook_translation import is_translatable, read_catalog, untranslated_blocks
from transformer_course.grading.release import SETUP_CELL_ID, package_requirement, release

pytestmark = pytest.mark.needs_nbgrader

ASSIGNMENTS = assignments()
SOLUTION_BLOCK = re.compile(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", re.DOTALL)


def test_every_assignment_has_one_solution_notebook():
    assert ASSIGNMENTS, "solutions/ holds no assignment"
    for assignment in ASSIGNMENTS:
        assert len(Course(REPOSITORY).source_notebooks(assignment)) == 1, assignment


@pytest.mark.slow
def test_release_reproduces_the_committed_exercises_in_every_language(course):
    release(course)
    for assignment in ASSIGNMENTS:
        name = notebook_name(assignment)
        for folder in ("", *LANGUAGES):
            released = (course.release_directory / assignment / folder / name).read_bytes()
            committed = (REPOSITORY / "exercises" / assignment / folder / name).read_bytes()
            assert released == committed, (
                f"exercises/{assignment}/{folder}/{name} is stale: run `transformer-course release {assignment}`"
            )


def test_exercises_have_no_other_files():
    for path in (REPOSITORY / "exercises").rglob("*"):
        if path.is_file():
            relative = path.relative_to(REPOSITORY / "exercises")
            assignment, *language, name = relative.parts
            assert assignment in ASSIGNMENTS and name == notebook_name(assignment), path
            assert language in ([], *([code] for code in LANGUAGES)), path


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_a_translated_notebook_changes_only_its_instructions(assignment, language):
    english = exercise_notebook(assignment)
    translated = json.loads((REPOSITORY / "exercises" / assignment / language / notebook_name(assignment)).read_text())
    assert len(translated["cells"]) == len(english["cells"])
    for ours, theirs in zip(english["cells"], translated["cells"]):
        if not is_translatable(ours):  # code, tests, answers, every cell nbgrader checksums: byte for byte
            assert json.dumps(theirs, sort_keys=True) == json.dumps(ours, sort_keys=True), ours.get("id")
        else:
            assert theirs["source"] != ours["source"] and theirs["metadata"] == ours["metadata"], ours.get("id")


def test_release_reads_the_catalogs_where_the_book_keeps_them():
    assert LOCALE_DIRECTORY == LOCALE, "grading and the book name two different folders for the catalogs"


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_instruction_of_a_learner_notebook_has_a_translation(assignment, language):
    catalogs = Course(REPOSITORY).notebook_catalogs(assignment, notebook_name(assignment).removesuffix(".ipynb"))
    catalog = read_catalog(catalogs[language])
    left = [
        message
        for cell in exercise_notebook(assignment)["cells"]
        if is_translatable(cell)
        for message in untranslated_blocks("".join(cell["source"]), catalog)
    ]
    assert not left, f"{assignment}: no {language} translation for {left[:5]} (run `make catalogs`, then translate)"


def test_instructions_are_plain_markdown_so_that_a_translation_keeps_every_checksum():
    for assignment in ASSIGNMENTS:
        for cell in solution_notebook(assignment)["cells"]:
            grading = cell["metadata"].get("nbgrader", {})
            if cell["cell_type"] == "markdown" and grading:
                assert grading.get("solution"), f"{assignment}: markdown cell {grading.get('grade_id')} is nbgrader's"
                assert "### BEGIN SOLUTION" in "".join(cell["source"]).lstrip()[:20], (
                    f"{assignment}: the answer cell {grading.get('grade_id')} holds its question: move it to the "
                    "cell above, which a translation may change"
                )


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_exercise_contains_no_solution_markers_or_hidden_tests(assignment):
    text = (REPOSITORY / "exercises" / assignment / notebook_name(assignment)).read_text(encoding="utf-8")
    for marker in ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"):
        assert marker not in text


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_exercise_answer_cells_hold_stubs_not_solution_code(assignment):
    solution = {cell["id"]: "".join(cell["source"]) for cell in solution_notebook(assignment)["cells"]}
    exercise = exercise_notebook(assignment)
    for cell in exercise["cells"]:
        if cell["id"] not in answer_cell_ids(exercise):
            continue
        source = "".join(cell["source"])
        assert "raise NotImplementedError()" in source or "YOUR ANSWER HERE" in source, cell["id"]
        for block in SOLUTION_BLOCK.findall(solution[cell["id"]]):
            for line in block.strip().splitlines():
                if len(line.strip()) > 20:
                    assert line.strip() not in source, f"solution line leaked into {cell['id']}: {line.strip()}"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_exercise_outputs_are_cleared(assignment):
    for cell in exercise_notebook(assignment)["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None, cell["id"]


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_exercise_starts_with_the_setup_cell_from_the_book_config(assignment):
    first = exercise_notebook(assignment)["cells"][0]
    assert first["id"] == SETUP_CELL_ID
    source = "".join(first["source"])
    assert package_requirement(Course(REPOSITORY)) in source and "google.colab" in source
    assert "default_device()" in source


def test_solution_notebooks_are_committed_without_outputs():
    for assignment in ASSIGNMENTS:
        for cell in solution_notebook(assignment)["cells"]:
            if cell["cell_type"] == "code":
                assert cell["outputs"] == [], f"{assignment}: {cell['id']}"


def test_releasing_an_unknown_assignment_names_the_known_ones(course):
    with pytest.raises(RuntimeError, match="unknown assignment 'no-such-assignment'.*01-attention"):
        release(course, ["no-such-assignment"])


def test_exercise_notebooks_are_valid_json_with_kernelspec():
    for assignment in ASSIGNMENTS:
        notebook = json.loads(
            (REPOSITORY / "exercises" / assignment / notebook_name(assignment)).read_text(encoding="utf-8")
        )
        assert notebook["metadata"]["kernelspec"]["name"] == "python3"
