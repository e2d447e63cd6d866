"""Benchmark: how fast a class is graded, where one submission's time goes, and the floor beneath it.

Grades N copies of an assignment's solution notebook (default: 20 copies of assignment 1), each
class into a fresh scratch course and gradebook, in bubblewrap's sandbox, with ``--jobs 1`` and with
one job per CPU core. In the same run it measures the floor: the same notebooks merely executed
(nbclient, one fresh kernel each, no grading), the same number at a time. It prints

* the class table: seconds in all and per submission, each mode's parallel speed-up, and grading's
  cost over merely executing (its time over the floor's with the same jobs);
* one submission's time by step (the mean over the class, from the grader's own timings): starting
  the grader process, the sandbox and kernel, the imports, the notebook's cells, the hidden tests,
  the gradebook (restore and record), the feedback page; with more than one job the steps of several
  submissions overlap, so they add up to more than the wall time per submission.

    python benchmarks/autograde.py [--assignment 01-attention] [--copies 20] [--jobs 1 2] [--no-floor]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import torch

from transformer_course.device import describe_machine
from transformer_course.grading.autograde import autograde
from transformer_course.grading.course import copy_course
from transformer_course.grading.submission_run import STEPS as RUN_STEPS

REPOSITORY = Path(__file__).resolve().parents[1]
# The worker's steps of a run, then the grader's own for the same submission.
STEPS = (*RUN_STEPS, "gradebook", "feedback")


def grade_class(assignment: str, copies: int, jobs: int) -> tuple[float, list, dict[str, dict[str, float]]]:
    """Seconds to grade ``copies`` solution submissions with ``jobs`` at a time, the rows, and each submission's
    seconds by step."""
    with tempfile.TemporaryDirectory(prefix="autograde-benchmark-") as scratch:
        course = copy_course(REPOSITORY, Path(scratch) / "course")
        (notebook,) = course.source_notebooks(assignment)
        solution = notebook.read_text(encoding="utf-8")
        submissions = Path(scratch) / "submissions"
        for index in range(copies):
            (submissions / f"student-{index:03d}").mkdir(parents=True)
            (submissions / f"student-{index:03d}" / notebook.name).write_text(solution, encoding="utf-8")
        timings: dict[str, dict[str, float]] = {}
        start = time.perf_counter()
        results = autograde(course, assignment, submissions, jobs=jobs, timings=timings)
        return time.perf_counter() - start, results, timings


def _execute(path: str) -> None:
    """Execute one notebook with nbclient in a fresh kernel, as nbgrader's own Execute step would."""
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, kernel_name="python3", timeout=600, allow_errors=True).execute()


def execute_class(assignment: str, copies: int, jobs: int) -> float:
    """Seconds to merely execute ``copies`` solution notebooks, ``jobs`` at a time: the floor."""
    (notebook,) = (REPOSITORY / "solutions" / assignment).glob("*.ipynb")
    context = multiprocessing.get_context("forkserver")
    with tempfile.TemporaryDirectory(prefix="execute-benchmark-") as scratch:
        paths = []
        for index in range(copies):
            path = Path(scratch) / f"copy-{index:03d}" / notebook.name
            path.parent.mkdir()
            path.write_bytes(notebook.read_bytes())
            paths.append(str(path))
        with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
            pool.submit(len, []).result()  # the pool's processes are up before the clock starts
            start = time.perf_counter()
            list(pool.map(_execute, paths))
            return time.perf_counter() - start


def grader_start_seconds() -> float:
    """Seconds for the grader's command to start and load its grading steps (once per class)."""
    code = "import transformer_course.grading.autograde"
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assignment", default="01-attention")
    parser.add_argument("--copies", type=int, default=20)
    parser.add_argument("--jobs", type=int, nargs="+", default=sorted({1, os.cpu_count() or 1}))
    parser.add_argument("--no-floor", dest="floor", action="store_false", help="grade only: do not measure the floor")
    arguments = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")  # one PyTorch thread per kernel, as the grader gives each

    print(f"machine: {describe_machine()}; Python {platform.python_version()}, torch {torch.__version__}")
    print(f"load average before: {' '.join(f'{load:.2f}' for load in os.getloadavg())}")
    print(f"grading {arguments.copies} copies of the {arguments.assignment} solution\n")
    graded, floor, steps = {}, {}, {}
    for jobs in arguments.jobs:
        if arguments.floor:
            floor[jobs] = execute_class(arguments.assignment, arguments.copies, jobs)
        elapsed, results, timings = grade_class(arguments.assignment, arguments.copies, jobs)
        full_marks = sum(result.status == "graded" and result.score > 0 for result in results)
        scores = {result.score for result in results}
        if full_marks != arguments.copies or len(scores) != 1:
            sys.exit(f"the copies were not all graded alike: {json.dumps([str(result) for result in results[:3]])}")
        graded[jobs] = elapsed
        steps[jobs] = {
            step: sum(seconds.get(step, 0.0) for seconds in timings.values()) / len(timings) for step in STEPS
        }
    first = arguments.jobs[0]
    print(f"{'what':>9} {'jobs':>5} {'total s':>8} {'s / submission':>15} {'speed-up':>9} {'over the floor':>15}")
    for name, seconds in (("grading", graded), ("floor", floor)):
        for jobs, elapsed in seconds.items() if first in seconds else ():
            over = f"{elapsed / floor[jobs]:.2f}x" if name == "grading" and jobs in floor else ""
            print(
                f"{name:>9} {jobs:>5} {elapsed:>8.1f} {elapsed / arguments.copies:>15.2f} "
                f"{seconds[first] / elapsed:>8.2f}x {over:>15}"
            )
    print("\none submission's time by step, s (mean over the class; the grader starts once per class)")
    print(f"{'step':>26} " + " ".join(f"{f'{jobs} jobs':>8}" for jobs in arguments.jobs))
    start = grader_start_seconds()
    print(f"{'starting the grader':>26} " + " ".join(f"{start:>8.2f}" for _ in arguments.jobs))
    for step in STEPS:
        print(f"{step:>26} " + " ".join(f"{steps[jobs][step]:>8.2f}" for jobs in arguments.jobs))
    print(
        f"{'wall time per submission':>26} " + " ".join(f"{graded[j] / arguments.copies:>8.2f}" for j in arguments.jobs)
    )
    print(f"\nload average after: {' '.join(f'{load:.2f}' for load in os.getloadavg())}")


if __name__ == "__main__":
    main()
