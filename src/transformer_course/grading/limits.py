"""How long, and in how much memory, one submission may run while it is graded.

A module of its own, with nothing to import, so that the command line can show these defaults
without loading nbgrader (which the grading commands need, and training on Colab does not).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class GradingLimits:
    """Limits for running one submission."""

    cell_timeout: int = 60  # seconds per cell before the kernel is interrupted
    submission_timeout: int = 900  # seconds for the whole submission before it is killed
    memory_limit_mb: int = 3072  # address space of nbgrader and of the kernel, each
    threads: int = 1  # PyTorch threads per kernel: parallel jobs, not threads, use the cores
