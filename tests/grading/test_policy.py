"""An assignment's grading.yml: what the learner writes, the library functions switched off, and the time a cell
of that assignment may take."""

from __future__ import annotations

from datetime import UTC
from pathlib import Path

import pytest

from transformer_course.grading.limits import GradingLimits
from transformer_course.grading.policy import GradingPolicy

REPOSITORY_SOLUTIONS = Path(__file__).resolve().parents[2] / "solutions"


def write(tmp_path, text: str):
    path = tmp_path / "grading.yml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_missing_file_is_the_empty_policy(tmp_path):
    assert GradingPolicy.from_file(tmp_path / "grading.yml") == GradingPolicy()


def test_cell_timeout_is_read_in_seconds(tmp_path):
    policy = GradingPolicy.from_file(write(tmp_path, "learner_writes: []\ncell_timeout: 600\n"))
    assert policy.cell_timeout == 600


def test_without_cell_timeout_the_class_limit_applies(tmp_path):
    assert GradingPolicy.from_file(write(tmp_path, "learner_writes: [a.b]\n")).cell_timeout is None


@pytest.mark.parametrize("value", ["0", "-5", "1.5", "ten", "true", "[60]"])
def test_a_cell_timeout_that_is_not_positive_whole_seconds_is_refused_by_name(tmp_path, value):
    with pytest.raises(ValueError, match="cell_timeout must be a positive whole number of seconds"):
        GradingPolicy.from_file(write(tmp_path, f"cell_timeout: {value}\n"))


def test_an_unknown_key_is_refused_with_the_known_ones(tmp_path):
    known = "bonus, cell_timeout, due, forbidden_operators, late_policy, learner_writes, library_implementations"
    with pytest.raises(ValueError, match=known):
        GradingPolicy.from_file(write(tmp_path, "cell_timout: 600\n"))


def test_forbidden_operators_are_read_as_the_dispatchers_names(tmp_path):
    text = "forbidden_operators: [aten::_softmax, aten::_scaled_dot_product_*]\n"
    policy = GradingPolicy.from_file(write(tmp_path, text))
    assert policy.forbidden_operators == ["aten::_softmax", "aten::_scaled_dot_product_*"]


@pytest.mark.parametrize("value", ["[torch._softmax]", "[_softmax]", "[aten::soft max]", "aten::_softmax", "[aten::*]"])
def test_a_forbidden_operator_that_is_not_an_operators_name_is_refused(tmp_path, value):
    with pytest.raises(ValueError, match="forbidden_operators must be a list of operators such as aten::_softmax"):
        GradingPolicy.from_file(write(tmp_path, f"forbidden_operators: {value}\n"))


def test_the_final_projects_graded_training_may_run_longer_than_the_class_limit():
    policy = GradingPolicy.from_file(REPOSITORY_SOLUTIONS / "07-final-project" / "grading.yml")
    assert policy.cell_timeout is not None and policy.cell_timeout > GradingLimits.cell_timeout


def test_an_assignments_longer_cell_timeout_replaces_the_class_limit():
    limits = GradingLimits(cell_timeout=60, memory_limit_mb=1024)
    applied = GradingPolicy(cell_timeout=600).applied_to(limits)
    assert (applied.cell_timeout, applied.memory_limit_mb) == (600, 1024)


def test_an_assignments_shorter_cell_timeout_leaves_the_class_limit():
    assert GradingPolicy(cell_timeout=30).applied_to(GradingLimits(cell_timeout=60)).cell_timeout == 60


def test_bonus_cells_are_read_as_grade_ids(tmp_path):
    policy = GradingPolicy.from_file(write(tmp_path, "bonus: [test-cosine, cosine-written]\n"))
    assert policy.bonus == ["test-cosine", "cosine-written"]


def test_a_due_date_is_read_in_utc(tmp_path):
    from datetime import datetime

    policy = GradingPolicy.from_file(write(tmp_path, "due: 2026-11-20T23:59:00+01:00\n"))
    assert policy.due == datetime(2026, 11, 20, 22, 59, tzinfo=UTC)
