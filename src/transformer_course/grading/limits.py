"""How long, in how much memory and with how many processes one submission may run while it is graded.

A module of its own, with nothing to import, so that the command line can show these defaults
without loading nbgrader (which the grading commands need, and training on Colab does not).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class GradingLimits:
    """Limits for running one submission."""

    cell_timeout: int = 60  # seconds per cell before the kernel is interrupted
    submission_timeout: int = 900  # seconds for the whole notebook; the cells after it are not run
    memory_limit_mb: int = 3072  # memory of all the submission's processes together
    max_processes: int = 256  # processes and threads of the submission together (a kernel alone uses about 20)
    threads: int = 1  # PyTorch threads per kernel: parallel jobs, not threads, use the cores
    cell_output_bytes: int = 256 * 2**10  # output kept per cell (the rest is cut, with a note)
    notebook_output_bytes: int = 4 * 2**20  # output kept per notebook
