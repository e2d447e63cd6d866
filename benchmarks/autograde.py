"""Benchmark: how fast a class is graded, with the sandbox and without, one job and one per core.

Grades N copies of an assignment's solution notebook (default: 20 copies of assignment 1) four
times, each into a fresh scratch course and gradebook: with bubblewrap's sandbox and with
``--no-sandbox``, with ``--jobs 1`` and with one job per CPU core. Prints seconds per submission,
the parallel speed-up of each mode and the cost of the sandbox (its time over the unsandboxed time
for the same number of jobs), all taken in the same run.

    python benchmarks/autograde.py [--assignment 01-attention] [--copies 20]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import torch

from transformer_course.device import describe_machine
from transformer_course.grading.autograde import autograde
from transformer_course.grading.course import copy_course

REPOSITORY = Path(__file__).resolve().parents[1]


def grade_class(assignment: str, copies: int, jobs: int | None, sandbox: bool) -> tuple[float, list]:
    """Seconds to grade ``copies`` solution submissions, and the results."""
    with tempfile.TemporaryDirectory(prefix="autograde-benchmark-") as scratch:
        course = copy_course(REPOSITORY, Path(scratch) / "course")
        (notebook,) = course.source_notebooks(assignment)
        solution = notebook.read_text(encoding="utf-8")
        submissions = Path(scratch) / "submissions"
        for index in range(copies):
            (submissions / f"student-{index:03d}").mkdir(parents=True)
            (submissions / f"student-{index:03d}" / notebook.name).write_text(solution, encoding="utf-8")
        start = time.perf_counter()
        results = autograde(course, assignment, submissions, jobs=jobs, sandbox=sandbox)
        return time.perf_counter() - start, results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assignment", default="01-attention")
    parser.add_argument("--copies", type=int, default=20)
    arguments = parser.parse_args()

    cores = os.cpu_count() or 1
    print(f"machine: {describe_machine()}; Python {platform.python_version()}, torch {torch.__version__}")
    print(f"load average before: {' '.join(f'{load:.2f}' for load in os.getloadavg())}")
    print(f"grading {arguments.copies} copies of the {arguments.assignment} solution\n")
    seconds = {}
    for sandbox in (True, False):
        for jobs in (1, cores):
            elapsed, results = grade_class(arguments.assignment, arguments.copies, jobs, sandbox)
            full_marks = sum(result.score == result.max_score for result in results)
            if full_marks != arguments.copies:
                sys.exit(
                    f"only {full_marks} of {arguments.copies} solutions scored full marks: "
                    f"{json.dumps(str(results[0]))}"
                )
            seconds[sandbox, jobs] = elapsed
    print(f"{'sandbox':>8} {'jobs':>5} {'total s':>8} {'s / submission':>15} {'speed-up':>9} {'sandbox cost':>13}")
    for (sandbox, jobs), elapsed in seconds.items():
        speed_up = seconds[sandbox, 1] / elapsed
        cost = f"{elapsed / seconds[False, jobs]:.2f}x" if sandbox else ""
        print(
            f"{'on' if sandbox else 'off':>8} {jobs:>5} {elapsed:>8.1f} {elapsed / arguments.copies:>15.2f} "
            f"{speed_up:>8.2f}x {cost:>13}"
        )
    print(f"\nload average after: {' '.join(f'{load:.2f}' for load in os.getloadavg())}")


if __name__ == "__main__":
    main()
