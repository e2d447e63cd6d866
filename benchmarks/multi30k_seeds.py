"""Multi30k's CPU recipe for several seeds, as a benchmark reports it: a record per run, mean ± std.

    PYTHONPATH=src python benchmarks/multi30k_seeds.py --data DIR --seeds 0 1 2 --minutes 30

For each seed, one after the other (never two runs at once: they would share the cores), the
course's own commands run as a learner types them:

    transformer-course train --task multi30k --data DIR --minutes 30 --seed SEED --out RUN --no-progress
    transformer-course evaluate RUN --split validation --beam 4 --alpha A     for each A of --alphas
    transformer-course evaluate RUN [--weights last] [--beam 4 --alpha A]     the test split

The test split is decoded with the run's last weights and with the moving average of its weights
that the recipe keeps (``evaluate``'s default), greedily and with beam search at the paper's length
penalty 0.6, and with the average at the length penalty that scored best on the validation split:
the steps from the last weights to the recipe's delivered model, each measured on the same run.

The run's record is written to ``--records/seed-SEED.json``: the command lines (with the data
folder written ``DIR``: the records name the test files by their SHA-256 instead), the machine (CPU
model, cores, PyTorch's threads, torch version), the load average before and after, the wall clock
of training with and without its validations and of the evaluation, the validation curve, the time
to reach validation sacreBLEU ``--target`` (40), and the test scores with their sacreBLEU
signatures, chrF and checksums. The summary, ``--summary`` (the book's record
``book/records/multi30k-cpu-seeds.json``, which chapter 9 reads), holds each seed's numbers and their
mean and standard deviation, and the script prints them as Markdown tables. A seed whose record exists is
not run again (``--again`` runs it anyway).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

from transformer_course.book_programs.seed_tables import STEPS, WORDS
from transformer_course.training import load_checkpoint


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True, help="a folder of Multi30k's task-1 files")
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--beam", type=int, default=4)
    parser.add_argument(
        "--alphas",
        nargs="+",
        type=float,
        default=[0.6, 1.0],
        help="length penalties tried on validation (the first: the paper's)",
    )
    parser.add_argument("--target", type=float, default=40.0, help="the validation sacreBLEU timed (default 40)")
    parser.add_argument("--out", default="runs/multi30k-seeds", help="where the runs' checkpoints go")
    parser.add_argument("--records", default="benchmarks/records/multi30k-cpu", help="a record per seed")
    parser.add_argument("--summary", default="book/records/multi30k-cpu-seeds.json", help="the seeds' summary")
    parser.add_argument("--again", action="store_true", help="run seeds whose record exists again")
    parser.add_argument("--train-options", default="", help='further options of train, e.g. "--threads 1"')
    parser.add_argument("--evaluate-options", default="", help='further options of evaluate, e.g. "--limit 50"')
    arguments = parser.parse_args()

    records = Path(arguments.records)
    records.mkdir(parents=True, exist_ok=True)
    for seed in arguments.seeds:
        path = records / f"seed-{seed}.json"
        if path.is_file() and not arguments.again:
            print(f"seed {seed}: {path} exists, not run again", file=sys.stderr)
            continue
        record = run_seed(arguments, seed)
        path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    runs = [json.loads((records / f"seed-{seed}.json").read_text()) for seed in arguments.seeds]
    command = shlex.join(["python", *("DIR" if argument == arguments.data else argument for argument in sys.argv)])
    summary = {"command": command, "records": str(records), **summarise(runs, arguments.target)}
    Path(arguments.summary).write_text(json.dumps(summary, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(markdown(summary))


def run_seed(arguments: argparse.Namespace, seed: int) -> dict:
    """Train and evaluate one seed with the course's commands; the run's record."""
    run = Path(arguments.out) / f"seed-{seed}"
    train = ["train", "--task", "multi30k", "--data", arguments.data, "--minutes", f"{arguments.minutes:g}"]
    train += ["--seed", str(seed), "--out", str(run), "--no-progress", *shlex.split(arguments.train_options)]
    evaluate = ["evaluate", str(run), *shlex.split(arguments.evaluate_options)]

    def beam(alpha: float) -> list[str]:
        return ["--beam", str(arguments.beam), "--alpha", f"{alpha:g}"]

    load_before = os.getloadavg()
    trained, train_seconds = _command(train)
    commands, seconds = [train], {}

    def scored(name: str, argv: list[str]) -> dict:
        scores, seconds[name] = _command(argv)
        commands.append(argv)
        return scores

    on_validation = {
        f"{alpha:g}": scored(f"validation beam {alpha:g}", [*evaluate, "--split", "validation", *beam(alpha)])
        for alpha in arguments.alphas
    }
    chosen = max(arguments.alphas, key=lambda alpha: on_validation[f"{alpha:g}"]["sacrebleu"])
    paper = arguments.alphas[0]
    test = {
        "last_greedy": scored("test last greedy", [*evaluate, "--weights", "last"]),
        "last_beam": scored("test last beam", [*evaluate, "--weights", "last", *beam(paper)]),
        "average_greedy": scored("test average greedy", evaluate),
        "average_beam": scored("test average beam", [*evaluate, *beam(paper)]),
    }
    test["delivered"] = (
        test["average_beam"] if chosen == paper else scored("test average chosen", [*evaluate, *beam(chosen)])
    )
    provenance = load_checkpoint(run / "checkpoint.pt").provenance
    history = json.loads((run / "history.json").read_text())
    validation = history["validation"]
    validation_seconds = sum(row["validation_seconds"] for row in validation)
    return {
        "seed": seed,
        "commands": [_as_typed(command, arguments.data) for command in commands],
        "machine": {
            "cpu": provenance["machine"],
            "cores": os.cpu_count(),
            "threads": provenance["threads"],  # PyTorch's threads in the run: one per core unless --threads
            "torch": provenance["torch"],
            "python": platform.python_version(),
        },
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "load_average": {"before": load_before, "after": os.getloadavg()},
        "steps": trained["steps"],
        "wall_clock_seconds": {
            "train_command": round(train_seconds, 1),
            "training": round(trained["minutes"] * 60, 1),
            "training_without_validation": round(trained["minutes"] * 60 - validation_seconds, 1),
            "validations": round(validation_seconds, 1),
            **{f"evaluate {name}": round(value, 1) for name, value in seconds.items()},
        },
        "validation": validation,
        "time_to_target": time_to(validation, arguments.target),
        "validation_beam": {alpha: scores["sacrebleu"] for alpha, scores in on_validation.items()},
        "chosen_alpha": chosen,
        "test": test,
    }


def _command(argv: list[str]) -> tuple[dict, float]:
    """Run ``transformer-course *argv``; its JSON line and its wall-clock seconds."""
    started = time.monotonic()
    completed = subprocess.run(
        [sys.executable, "-m", "transformer_course.cli", *argv], check=True, stdout=subprocess.PIPE, text=True
    )
    return json.loads(completed.stdout.strip().splitlines()[-1]), time.monotonic() - started


def _as_typed(argv: list[str], data: str) -> str:
    return shlex.join(["transformer-course", *("DIR" if argument == data else argument for argument in argv)])


def time_to(validation: list[dict], target: float) -> dict | None:
    """When the run's validation sacreBLEU first reached ``target``: the step and the wall clock, with
    and without the validations before it (each row's ``seconds`` is when its validation began)."""
    spent = 0.0
    for row in validation:
        if row["validation_sacrebleu"] >= target:
            return {
                "target": target,
                "step": row["step"],
                "minutes": round(row["seconds"] / 60, 2),
                "minutes_without_validation": round((row["seconds"] - spent) / 60, 2),
            }
        spent += row["validation_seconds"]
    return None


def summarise(runs: list[dict], target: float) -> dict:
    """Each seed's headline numbers, and their mean and sample standard deviation."""
    rows = [
        {
            "seed": run["seed"],
            "steps": run["steps"],
            "test_sacrebleu": run["test"]["delivered"]["sacrebleu"],
            "test_chrf": run["test"]["delivered"]["chrf"],
            # the same translations scored without the test pairs whose sentences occur in the training split
            "test_sacrebleu_without_overlap": run["test"]["delivered"]["training_overlap"]["without"]["sacrebleu"],
            "chosen_alpha": run["chosen_alpha"],
            **{f"test_sacrebleu_{step}": run["test"][step]["sacrebleu"] for step in STEPS},
            "best_validation_sacrebleu": max(row["validation_sacrebleu"] for row in run["validation"]),
            "minutes_to_target": None if run["time_to_target"] is None else run["time_to_target"]["minutes"],
            "minutes_to_target_without_validation": None
            if run["time_to_target"] is None
            else run["time_to_target"]["minutes_without_validation"],
        }
        for run in runs
    ]
    statistics_of = {}
    for key in rows[0]:
        values = [row[key] for row in rows]
        if key not in ("seed", "chosen_alpha") and None not in values:  # a choice, not a measurement
            spread = statistics.stdev(values) if len(values) > 1 else None
            statistics_of[key] = {"mean": statistics.mean(values), "std": spread}
    delivered = runs[0]["test"]["delivered"]
    return {
        "target": target,
        "signatures": delivered["signatures"],
        "test_sha256": delivered["sha256"],
        "training_overlap": {key: value for key, value in delivered["training_overlap"].items() if key != "without"},
        "machine": runs[0]["machine"],
        "seeds": rows,
        "mean_std": statistics_of,
    }


def markdown(summary: dict) -> str:
    """The summary as two Markdown tables (the headline numbers, then what each step bought) and the
    signatures and checksums they were scored with."""
    headline = [
        ("seed", "seed", "{}"),
        ("steps", "steps", "{:,.0f}"),
        ("test_sacrebleu", "test sacreBLEU", "{:.2f}"),
        ("test_chrf", "test chrF", "{:.2f}"),
        ("test_sacrebleu_without_overlap", "test sacreBLEU without training overlap", "{:.2f}"),
        ("chosen_alpha", "α chosen on validation", "{:g}"),
        ("minutes_to_target", f"minutes to validation {summary['target']:g}", "{:.1f}"),
        ("minutes_to_target_without_validation", "the same without validations", "{:.1f}"),
    ]
    steps = [("seed", "seed", "{}")] + [(f"test_sacrebleu_{step}", WORDS["en"][step], "{:.2f}") for step in STEPS]
    signatures, checksums = summary["signatures"], summary["test_sha256"]
    return "\n".join(
        [
            *_table(summary, headline),
            "",
            *_table(summary, steps),
            "",
            f"sacreBLEU: {signatures['sacrebleu']}; chrF: {signatures['chrf']}",
            f"test files: source sha256 {checksums['source']}, reference sha256 {checksums['target']}",
        ]
    )


def _table(summary: dict, columns: list[tuple[str, str, str]]) -> list[str]:
    lines = ["| " + " | ".join(title for _, title, _ in columns) + " |", "|" + "---:|" * len(columns)]
    for row in summary["seeds"]:
        cells = ["—" if row[key] is None else form.format(row[key]) for key, _, form in columns]
        lines.append("| " + " | ".join(cells) + " |")
    cells = ["mean ± std"]
    for key, _, form in columns[1:]:
        entry = summary["mean_std"].get(key)
        if entry is None:
            cells.append("—")
        else:
            cells.append(
                form.format(entry["mean"]) + ("" if entry["std"] is None else " ± " + form.format(entry["std"]))
            )
    lines.append("| " + " | ".join(cells) + " |")
    return lines


if __name__ == "__main__":
    main()
