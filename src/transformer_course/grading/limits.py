"""How long, in how much memory and with how many processes one submission may run while it is graded.

A module of its own, with nothing to import, so that the command line can show these defaults
without loading nbgrader (which the grading commands need, and training on Colab does not).
Each field's ``help`` is what ``transformer-course autograde --help`` says of its option.
"""

from __future__ import annotations

from dataclasses import dataclass, field


def _limit(default: int, meaning: str) -> int:
    return field(default=default, metadata={"help": meaning})


@dataclass
class GradingLimits:
    """Limits for running one submission."""

    cell_timeout: int = _limit(60, "seconds per cell before the kernel is interrupted")
    submission_timeout: int = _limit(900, "seconds for the whole notebook; the cells after it are not run")
    # Importing the course and PyTorch (benchmarks/README.md, "The grader's memory limit"): 293 MB resident and
    # 647 MB of address space with PyTorch's CPU build, 524 MB and 3,203 MB with its CUDA build; every process is
    # also held to this much address space, so the default leaves the CUDA build room for a notebook's work.
    memory_limit_mb: int = _limit(4096, "memory of all the submission's processes together")
    # A kernel alone uses about 20.
    max_processes: int = _limit(256, "processes and threads of the submission together")
    # Parallel jobs, not threads, use the cores.
    threads: int = _limit(1, "PyTorch threads per kernel, and of the hidden tests")
    cpus: int = _limit(1, "CPU cores the submission's processes may use together (a cgroup's CPU quota)")
    cell_output_bytes: int = _limit(256 * 2**10, "output kept per cell (the rest is cut, with a note)")
    notebook_output_bytes: int = _limit(4 * 2**20, "output kept per notebook")
