"""Reading an executed notebook's errors where they happened: the cell that raised, its part, and the tests that
failed only because of it (what `check` prints and the feedback page shows)."""

from __future__ import annotations

import pytest

pytest.importorskip("nbformat", reason="needs nbformat, the grading extra")

from transformer_course.grading.cell_errors import caused_note, defined_names, raised_note, read_cell_errors

pytestmark = pytest.mark.needs_nbgrader  # the grading modules, no kernel


def _heading(number: int) -> dict:
    return {"cell_type": "markdown", "source": f"## {number}. A part\n\nWhat to do.", "metadata": {}}


def _code(name: str, source: str, error: tuple[str, str] | None = None, role: str = "given") -> dict:
    nbgrader = {
        "given": {},
        "answer": {"solution": True, "grade": False, "grade_id": name},
        "test": {"solution": False, "grade": True, "grade_id": name, "points": 1},
    }[role]
    outputs = [{"output_type": "error", "ename": error[0], "evalue": error[1], "traceback": []}] if error else []
    return {"cell_type": "code", "id": name, "source": source, "metadata": {"nbgrader": nbgrader}, "outputs": outputs}


def _undefined(name: str) -> tuple[str, str]:
    return "NameError", f"name '{name}' is not defined"


def test_the_names_a_cell_defines_are_its_top_level_bindings_not_its_functions_locals():
    source = "import numpy as np\nfrom math import sqrt\nx, (y, z) = 1, (2, 3)\nfor i in range(2):\n    total = i\n"
    source += "def f(a):\n    local = a\n    return local\nclass Model:\n    size = 1\n"
    source += "with open('f') as handle:\n    pass\n"
    assert defined_names(source) == {"np", "sqrt", "x", "y", "z", "i", "total", "f", "Model", "handle"}


def test_a_cell_that_does_not_parse_may_have_meant_to_define_any_name_it_holds():
    assert {"gap", "compute"} <= defined_names("gap = compute(\n")


def test_a_test_that_misses_a_name_of_an_answer_cell_that_raised_failed_because_of_it():
    notebook = {
        "cells": [
            _heading(3),
            _code("gaps", "a = 1\nb = boom()\n", ("RuntimeError", "sizes differ"), "answer"),
            _code("test-gaps", "assert b", _undefined("b"), "test"),
        ]
    }
    errors = read_cell_errors(notebook)
    assert errors.failed["test-gaps"].cause == errors.raised["gaps"]
    assert errors.raised["gaps"].part == 3 and errors.dependents("gaps") == ["test-gaps"]


def test_a_test_that_fails_on_its_own_is_not_blamed_on_a_cell_above():
    notebook = {
        "cells": [
            _heading(1),
            _code("gaps", "a = 1\nb = boom()\n", ("RuntimeError", "sizes differ"), "answer"),
            _code("test-gaps", "assert a == 2, 'expected 2'", ("AssertionError", "expected 2"), "test"),
            _code("test-other", "assert c", _undefined("c"), "test"),
        ]
    }
    errors = read_cell_errors(notebook)
    assert errors.failed["test-gaps"].cause is None and errors.failed["test-other"].cause is None
    assert errors.dependents("gaps") == []


def test_a_given_cell_that_fails_on_an_answers_missing_name_leads_its_tests_back_to_the_answer():
    notebook = {
        "cells": [
            _heading(1),
            _code("table", "def table(n:\n", ("SyntaxError", "'(' was never closed"), "answer"),
            _heading(5),
            _code("offset-setup", "rows = table(128)\n", _undefined("table")),
            _code("test-offset", "assert rows is not None", _undefined("rows"), "test"),
        ]
    }
    errors = read_cell_errors(notebook)
    assert errors.raised["offset-setup"].cause == errors.raised["table"]
    assert errors.failed["test-offset"].cause == errors.raised["table"], "the first cell of the chain"
    assert errors.dependents("table") == ["test-offset"]


def test_an_answer_left_as_released_is_the_cause_of_its_tests_missing_names():
    released = "# YOUR CODE HERE\nraise NotImplementedError()\nprint(f'{label_ab}')\n"
    notebook = {
        "cells": [
            _code("counterexample", released, ("NotImplementedError", ""), "answer"),
            _code("test-counterexample", "assert label_ab", _undefined("label_ab"), "test"),
        ]
    }
    assert read_cell_errors(notebook).failed["test-counterexample"].cause.cell == "counterexample"


def test_cells_the_grader_did_not_run_are_not_cells_that_raised():
    notebook = {"cells": [_code("later", "x = 1", ("KernelLostError", "not run: the kernel was lost in cell a"))]}
    assert read_cell_errors(notebook).raised == {}


def test_the_notes_name_the_cell_its_part_its_whole_error_and_the_tests_it_failed():
    message = "sizes differ: " + "a long explanation, " * 20 + "the end"
    notebook = {
        "cells": [
            _heading(3),
            _code("gaps", "b = boom()\n", ("RuntimeError", message), "answer"),
            _code("test-gaps", "assert b", _undefined("b"), "test"),
        ]
    }
    errors = read_cell_errors(notebook)
    assert raised_note(errors.raised["gaps"], ["test-gaps"]) == (
        f"Your cell gaps (part 3) raised RuntimeError: {message}\nThe test cell test-gaps fails only because of it."
    )
    assert caused_note(errors.failed["test-gaps"]) == (
        "Failed only because your cell gaps (part 3) raised RuntimeError above: fix that cell first. "
        "Here: NameError: name 'b' is not defined"
    )
    notes = errors.notes()
    assert notes == {1: raised_note(errors.raised["gaps"], ["test-gaps"]), 2: caused_note(errors.failed["test-gaps"])}
