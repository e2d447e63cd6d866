"""How long the final project's graded run takes: part 8 as the grader runs it, training and decoding timed apart.

    python benchmarks/graded_final_project.py [--rounds 2]

The learner notebook (``exercises/07-final-project``) with the model answers of ``solutions/`` in its answer
cells is executed in a fresh kernel with ``NBGRADER_EXECUTION`` set, as ``autograde`` and ``transformer-course
check`` run it, from its first cell to part 8's test cell: the notebook then trains its graded model (the load-task
cell's settings: a fixed number of updates, one thread) and decodes its test numbers. The training call and the
decoding are timed inside part 8's cell; the table gives each round's seconds, the cell's own printed total, the
updates, the training loss, the exact match, and the load average before and after.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import re
import time
from pathlib import Path

import nbformat
from harness import header, load_average
from nbclient import NotebookClient

REPOSITORY = Path(__file__).resolve().parents[1]
ASSIGNMENT = "07-final-project"
LAST_CELL = "test-train-and-evaluate"
TRAINING_CALL = "history = resumable_training("
# Printed by the timing lines put around part 8's training call and decoding (in this run's copy only).
TIMING = re.compile(r"graded run: training ([\d.]+) s, decoding ([\d.]+) s")


def graded_notebook() -> nbformat.NotebookNode:
    """The learner notebook with the model answers in its answer cells, up to part 8's test, its training and
    decoding timed apart."""
    solutions = nbformat.read(REPOSITORY / "solutions" / ASSIGNMENT / "final_project.ipynb", as_version=4)
    answers = {cell.id: cell.source for cell in solutions.cells if cell.metadata.get("nbgrader", {}).get("solution")}
    notebook = nbformat.read(REPOSITORY / "exercises" / ASSIGNMENT / "final_project.ipynb", as_version=4)
    cells = []
    for cell in notebook.cells:
        if cell.id == "course-setup":
            continue  # installs the package on Colab; here it is installed
        cell = copy.deepcopy(cell)
        if cell.id in answers and cell.cell_type == "code":
            cell.source = answers[cell.id]
        if cell.id == "train-and-evaluate":
            source = cell.source.replace(TRAINING_CALL, "started_training = time.monotonic()\n" + TRAINING_CALL, 1)
            source = source.replace("hypotheses = []", "trained_at = time.monotonic()\nhypotheses = []", 1).replace(
                "test_exact_match = exact_match(",
                "print(f'graded run: training {trained_at - started_training:.1f} s, decoding "
                "{time.monotonic() - trained_at:.1f} s')\ntest_exact_match = exact_match(",
                1,
            )
            if "started_training" not in source or "trained_at - started_training" not in source:
                raise SystemExit("part 8's cell no longer has the lines this benchmark times")
            cell.source = source
        cells.append(cell)
        if cell.id == LAST_CELL:
            break
    notebook.cells = cells
    return notebook


def one_round() -> dict[str, str]:
    notebook = graded_notebook()
    load_before = load_average()
    started = time.monotonic()
    os.environ["NBGRADER_EXECUTION"] = "validate"
    NotebookClient(notebook, timeout=1800, kernel_name="python3", resources={"metadata": {"path": "/tmp"}}).execute()
    seconds = time.monotonic() - started
    printed = "".join(
        output.get("text", "")
        for cell in notebook.cells
        if cell.id == "train-and-evaluate"
        for output in cell.outputs
        if output.output_type == "stream"
    )
    timing = TIMING.search(printed)
    cell_total = re.search(r"this cell took (\d+) s", printed)
    match = re.search(r"test exact match: ([\d.]+)%", printed)
    losses = re.search(r"training loss ([\d.]+) after \d+ updates, ([\d.]+) after (\d+)", printed)
    return {
        "training s": timing.group(1),
        "decoding s": timing.group(2),
        "part 8's cell, as printed": f"{cell_total.group(1)} s",
        "updates": losses.group(3),
        "training loss, first / last logged": f"{losses.group(1)} / {losses.group(2)}",
        "exact match": f"{match.group(1)} %",
        "notebook to part 8's test": f"{seconds:.0f} s",
        "load average before / after": f"{load_before.split()[0]} / {load_average().split()[0]}",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    arguments = parser.parse_args()
    print(header(threads=1))
    rows = [one_round() for _ in range(arguments.rounds)]
    print("| round | " + " | ".join(rows[0]) + " |")
    print("|---|" + "---:|" * len(rows[0]))
    for number, row in enumerate(rows, 1):
        print(f"| {number} | " + " | ".join(row.values()) + " |")
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
