"""The sandbox's copy of the course package leaves out the exercise, and only the exercise."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from transformer_course.grading.redaction import RedactionError, redacted_package


def _python(package_directory, code: str) -> subprocess.CompletedProcess:
    environment = dict(os.environ, PYTHONPATH=str(package_directory))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environment, timeout=120)


@pytest.fixture(scope="module")
def without_attention(tmp_path_factory):
    """The package without a function and a class, as an assignment's policy may leave out both."""
    return redacted_package(
        ["transformer_course.attention.scaled_dot_product_attention", "transformer_course.encoder.EncoderLayer"],
        tmp_path_factory.mktemp("package"),
    )


@pytest.fixture(scope="module")
def imported_without_attention(without_attention) -> subprocess.CompletedProcess:
    """One fresh interpreter that imports the redacted package, uses what is left, builds the left-out
    class (printing what that raises), and last calls the left-out function."""
    program = """
import torch, transformer_course as tc
print(tc.__file__)
print(tc.causal_mask(2).tolist())
try:
    tc.EncoderLayer(8, 2, 16)
except Exception as error:
    print(f"{type(error).__name__}: {error}")
q = torch.ones(1, 2, 4)
tc.scaled_dot_product_attention(q, q, q)
"""
    return _python(without_attention, program)


def test_the_left_out_function_is_a_stub_that_says_why(imported_without_attention):
    run = imported_without_attention
    assert run.returncode != 0
    assert "NotImplementedError: scaled_dot_product_attention is what this assignment asks you to write" in run.stderr


def test_the_left_out_code_is_not_in_any_file_the_kernel_can_read(without_attention):
    text = "".join(
        path.read_text(encoding="utf-8") for path in (without_attention / "transformer_course").rglob("*.py")
    )
    assert 'scores.masked_fill(~mask, float("-inf"))' not in text
    assert "torch.softmax(scores.float(), dim=-1)" not in text


def test_the_rest_of_the_package_is_untouched_and_imports(without_attention, imported_without_attention):
    run = imported_without_attention
    # The interpreter's only error is the stub's, raised by the last line: everything before it ran.
    assert run.stderr.strip().splitlines()[-1].startswith("NotImplementedError"), run.stderr
    assert "ModuleNotFoundError" not in run.stderr and "ImportError" not in run.stderr, run.stderr
    assert str(without_attention) in run.stdout and "[[True, False], [True, True]]" in run.stdout, run.stdout


def test_a_left_out_class_cannot_be_built(imported_without_attention):
    run = imported_without_attention
    assert "NotImplementedError: EncoderLayer is what this assignment asks you to write" in run.stdout, run.stdout


@pytest.mark.parametrize(
    "name, problem",
    [
        ("transformer_course.nowhere.f", "not a module"),
        ("transformer_course.attention.nothing", "no top-level function or class"),
        ("torch.softmax", "not a module"),
    ],
)
def test_a_name_that_is_not_a_definition_of_the_package_is_refused(tmp_path, name, problem):
    with pytest.raises(RedactionError, match=problem):
        redacted_package([name], tmp_path)


@pytest.mark.needs_nbgrader  # reads each grading.yml through the course
@pytest.mark.needs_solutions
def test_every_assignments_policy_names_what_exists(tmp_path):
    """A renamed package function must be renamed in grading.yml too: a stale name would stop grading."""
    import importlib

    from transformer_course.grading.course import Course

    course = Course(Path(__file__).resolve().parents[2])
    for assignment in course.assignments():
        policy = course.policy(assignment)
        redacted_package(policy.learner_writes, tmp_path / assignment)  # raises on a name that is not defined
        for path in policy.library_implementations:
            module_name, _, name = path.rpartition(".")
            owner = None
            for split in range(module_name.count(".") + 1, 0, -1):
                parts = module_name.split(".")
                try:
                    owner = importlib.import_module(".".join(parts[:split]))
                    for attribute in parts[split:]:
                        owner = getattr(owner, attribute)
                    break
                except (ImportError, AttributeError):
                    owner = None
            assert owner is not None and hasattr(owner, name), f"{assignment}/grading.yml: {path} does not exist"
