"""Benchmark: how strong each assignment's visible tests are, measured by mutation testing of its model answers.

Every model answer (the code between nbgrader's solution markers in ``solutions/``) is mutated with mutmut's
operators, one change at a time, and each mutant is graded by its own part's tests (``tests/mutation_testing.py``
says how). It prints, per assignment and per part: the mutants made, those judged equivalent (``benchmarks/
mutants.yml``), those a visible test of their own part kills, those only the hidden tests kill, those that
survive every test of their part, and the share of the non-equivalent ones that their own visible test kills
(the target: 90 % or more in every assignment, and no survivor that is not equivalent). Then it lists the
survivors, the mutants only the hidden tests kill and the equivalent ones, with the reviewed reasons.

    PYTHONPATH=src python benchmarks/mutation.py [--assignments 01-attention ...] [--jobs 2] [--json verdicts.json]
        [--leave-out-training]

The whole run takes over an hour on two cores, most of it the final project's graded training, which runs once per
mutant of its last part; ``--leave-out-training`` leaves that part out (as CI does), and the rest takes minutes.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPOSITORY / "tests"))  # the mutation runner lives with the tests that run it in CI

import torch  # noqa: E402
from mutation_testing import (  # noqa: E402
    TRAINING_PARTS,
    PartRun,
    assignments,
    mutants,
    reviewed,
    run_mutants,
    score_rows,
)


def commit() -> str:
    result = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPOSITORY, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain"], cwd=REPOSITORY, capture_output=True, text=True).stdout
    return result.stdout.strip() + (" (with uncommitted changes)" if dirty.strip() else "")


def table(rows: list[dict], first: str) -> str:
    header = f"| {first} | made | equivalent | own visible test | only hidden tests | surviving | own visible % |"
    lines = [header, "|---|---:|---:|---:|---:|---:|---:|"]
    for row in rows:
        lines.append(
            f"| {row['name']} | {row['made']} | {row['equivalent']} | {row['visible']} | {row['hidden']} | "
            f"{row['survived']} | {row['score']:.1f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assignments", nargs="*", default=None, help="default: every assignment")
    parser.add_argument("--jobs", type=int, default=1, help="mutants graded at a time (one process each)")
    parser.add_argument("--json", type=Path, help="also write every mutant's verdict here")
    parser.add_argument("--leave-out-training", action="store_true", help="leave out the parts that train for minutes")
    args = parser.parse_args()
    chosen = args.assignments or assignments()
    judgements = reviewed()
    started = datetime.datetime.now(datetime.UTC)
    print(f"`PYTHONPATH=src python benchmarks/mutation.py {' '.join(sys.argv[1:])}`".replace(" `", "`"))
    print(
        f"{started:%Y-%m-%d %H:%M} UTC, commit {commit()}, {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores, torch {torch.__version__}, mutmut's operators; load average "
        f"{os.getloadavg()[0]:.2f} before the run"
    )
    summary, details, records = [], [], []
    for assignment in chosen:
        clock = time.perf_counter()
        left_out = TRAINING_PARTS.get(assignment, set()) if args.leave_out_training else set()
        chosen_mutants = [mutant for mutant in mutants(assignment) if mutant.part not in left_out]
        runs: list[PartRun] = run_mutants(assignment, chosen_mutants, jobs=args.jobs)
        seconds = time.perf_counter() - clock
        assignment_row, part_rows, listed = score_rows(assignment, runs, judgements)
        summary.append(assignment_row)
        details.append(f"\n### {assignment} ({seconds:.0f} s)\n\n{table(part_rows, 'part')}\n")
        details.extend(listed)
        records += [
            {"assignment": assignment, "cell": m.cell, "part": m.part, "line": m.line, "original": m.original,
             "mutated": m.mutated, "verdict": v.verdict, "message": v.message, "timed_out": v.timed_out}
            for run in runs for m, v in run.verdicts.items()
        ]  # fmt: skip
        print(f"{assignment}: {assignment_row['made']} mutants in {seconds:.0f} s", file=sys.stderr)
    total = {key: sum(row[key] for row in summary) for key in ("made", "equivalent", "visible", "hidden", "survived")}
    total |= {"name": "all", "score": 100 * total["visible"] / max(1, total["made"] - total["equivalent"])}
    finished = datetime.datetime.now(datetime.UTC)
    print(f"\nfinished {finished:%H:%M} UTC; load average {os.getloadavg()[0]:.2f} after the run\n")
    print(table([*summary, total], "assignment"))
    print("\n".join(details))
    if args.json:
        args.json.write_text(json.dumps(records, indent=1, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()
