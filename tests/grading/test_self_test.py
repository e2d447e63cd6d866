"""The self-test finds what stops a kernel from starting instead of guessing: the limit whose lifting lets it start,
with its option, or the machine's own limit on address space."""

from __future__ import annotations

from pathlib import Path

import pytest

from transformer_course.grading import self_test
from transformer_course.grading.limits import GradingLimits


@pytest.fixture
def kernel_needs(monkeypatch):
    """A sandbox whose kernel starts only with at least ``memory`` MB and ``processes`` processes."""

    def needs(memory: int = 0, processes: int = 0, machine: int | None = None) -> None:
        def one_try(package, limits, sandbox, scratch):
            if limits.memory_limit_mb < memory or limits.max_processes < processes:
                return "the kernel did not start: kernel died"
            return None

        monkeypatch.setattr(self_test, "_one_try", one_try)
        monkeypatch.setattr(self_test, "machine_address_space_mb", lambda: machine)

    return needs


def _diagnosed(limits: GradingLimits) -> str | None:
    return self_test.diagnosed_self_test(Path("package"), limits, True, Path("scratch"))


def test_a_sandbox_that_starts_passes(kernel_needs):
    kernel_needs(memory=1024)
    assert _diagnosed(GradingLimits(memory_limit_mb=2048)) is None


def test_a_memory_limit_too_small_is_named_with_its_option_and_a_value_to_try(kernel_needs):
    kernel_needs(memory=3000)
    problem = _diagnosed(GradingLimits(memory_limit_mb=2048))
    assert "--memory-limit-mb 2048 is too small" in problem and "--memory-limit-mb 4096" in problem, problem


def test_a_process_limit_too_small_is_named_with_its_option(kernel_needs):
    kernel_needs(processes=100)
    assert "--max-processes 50 is too small" in _diagnosed(GradingLimits(max_processes=50))


def test_a_failure_no_limit_explains_is_said_as_it_is(kernel_needs):
    kernel_needs(memory=10**9)
    assert _diagnosed(GradingLimits()) == "the kernel did not start: kernel died"


def test_the_machines_own_address_space_limit_comes_first_with_the_largest_value_that_fits(kernel_needs):
    kernel_needs(machine=3000)
    problem = _diagnosed(GradingLimits(memory_limit_mb=4096))
    assert "at most 3,000 MB of address space" in problem and "--memory-limit-mb 3000 or less" in problem, problem
