"""Benchmark: how fast a class is graded, one submission at a time and in parallel.

Grades N copies of an assignment's solution notebook (default: 20 copies of assignment 1) with
``--jobs 1`` and with the default (one job per CPU core), each into a fresh scratch course and
gradebook, and prints seconds per submission and the speed-up.

    python benchmarks/autograde.py [--assignment 01-attention] [--copies 20]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

import torch

from transformer_course.grading.autograde import autograde
from transformer_course.grading.course import Course

REPOSITORY = Path(__file__).resolve().parents[1]


def grade_class(assignment: str, copies: int, jobs: int | None) -> tuple[float, list]:
    """Seconds to grade ``copies`` solution submissions, and the results."""
    with tempfile.TemporaryDirectory(prefix="autograde-benchmark-") as scratch:
        root = Path(scratch) / "course"
        root.mkdir()
        for name in ("solutions", "nbgrader_config.py", "_config.yml"):
            source = REPOSITORY / name
            (shutil.copytree if source.is_dir() else shutil.copyfile)(source, root / name)
        course = Course(root)
        (notebook,) = course.source_notebooks(assignment)
        solution = json.loads(notebook.read_text(encoding="utf-8"))
        submissions = Path(scratch) / "submissions"
        for index in range(copies):
            (submissions / f"student-{index:03d}").mkdir(parents=True)
            (submissions / f"student-{index:03d}" / notebook.name).write_text(json.dumps(solution), encoding="utf-8")
        start = time.perf_counter()
        results = autograde(course, assignment, submissions, jobs=jobs)
        return time.perf_counter() - start, results


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assignment", default="01-attention")
    parser.add_argument("--copies", type=int, default=20)
    arguments = parser.parse_args()

    cores = os.cpu_count() or 1
    print(f"machine: {cpu_model()}, {cores} cores; Python {platform.python_version()}, torch {torch.__version__}")
    print(f"load average before: {' '.join(f'{load:.2f}' for load in os.getloadavg())}")
    print(f"grading {arguments.copies} copies of the {arguments.assignment} solution\n")
    rows = []
    for jobs in (1, None):
        seconds, results = grade_class(arguments.assignment, arguments.copies, jobs)
        full_marks = sum(result.score == result.max_score for result in results)
        if full_marks != arguments.copies:
            sys.exit(f"only {full_marks} of {arguments.copies} solutions scored full marks: {results[0]}")
        rows.append((jobs or cores, seconds))
    print(f"{'jobs':>6} {'total s':>9} {'s / submission':>15} {'speed-up':>9}")
    for jobs, seconds in rows:
        print(f"{jobs:>6} {seconds:>9.1f} {seconds / arguments.copies:>15.2f} {rows[0][1] / seconds:>8.2f}x")
    print(f"\nload average after: {' '.join(f'{load:.2f}' for load in os.getloadavg())}")


if __name__ == "__main__":
    main()
