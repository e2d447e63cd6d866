"""The limits of one submission's run: each has a default and says what it limits, which autograde's --help shows."""

from __future__ import annotations

from dataclasses import fields

from transformer_course.grading.limits import GradingLimits


def test_every_limit_has_a_positive_default_and_a_help_text():
    limits = GradingLimits()
    for limit in fields(GradingLimits):
        assert isinstance(getattr(limits, limit.name), int) and getattr(limits, limit.name) > 0, limit.name
        assert limit.metadata["help"], limit.name


def test_the_default_memory_leaves_the_cuda_build_of_pytorch_room_to_import():
    assert GradingLimits().memory_limit_mb >= 3203  # benchmarks/README.md: its address space at import
