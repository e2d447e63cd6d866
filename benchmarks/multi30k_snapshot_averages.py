"""How long a span of a run's last weights to average: validation sacreBLEU of averages of its snapshots.

    PYTHONPATH=src python benchmarks/multi30k_snapshot_averages.py --run runs/recipe/baseline \\
        --out benchmarks/records/multi30k-recipe-baseline/snapshot-averages.json

``multi30k_recipe.py`` keeps a run's weights every ``--snapshot-every`` steps (50 by default) in
``RUN/snapshots``. This scores, on the whole validation split with greedy decoding, the last snapshot
and two kinds of average of the snapshots before it:

* the plain mean of the last k snapshots taken every s steps (the paper's checkpoint averaging, §6.1);
* the snapshots weighted as an exponential moving average with decay d weighs the weights of their
  steps, d^(steps before the last), normalised: how an average with ``average_decay = d`` that a run
  keeps after every update (``training/averaging.py``) would score, seen through the snapshots only.

The record holds the command, the run's last step, the machine and every score.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path

import torch

from transformer_course.device import describe_machine
from transformer_course.training.checkpoint import load_trained_model
from transformer_course.training.evaluation import evaluate


def weighted_average(states: list[dict[str, torch.Tensor]], weights: list[float]) -> dict[str, torch.Tensor]:
    """The weighted mean of the floating-point tensors of ``states`` (other tensors from the first state)."""
    total = sum(weights)
    return {
        name: sum(weight * state[name] for weight, state in zip(weights, states)) / total
        if tensor.is_floating_point()
        else tensor
        for name, tensor in states[0].items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", required=True, help="a run of multi30k_recipe.py, with its snapshots")
    parser.add_argument("--means", nargs="*", default=["3x50", "3x100", "5x50", "5x100", "8x50", "10x50", "15x50"])
    parser.add_argument("--decays", nargs="*", type=float, default=[0.99, 0.993, 0.995, 0.997])
    parser.add_argument("--out", required=True, help="the JSON record to write")
    arguments = parser.parse_args()

    run = Path(arguments.run)
    model, task, _ = load_trained_model(run / "checkpoint.pt", "cpu", "last")  # the run's task and tokenizers
    snapshots = sorted((run / "snapshots").glob("step-*.pt"), reverse=True)  # the last first
    steps = [int(path.stem.removeprefix("step-")) for path in snapshots]
    spacing = steps[0] - steps[1]
    states = [torch.load(path, weights_only=True) for path in snapshots]

    def scored(weights: list[float]) -> float:
        model.load_state_dict(weighted_average(states, weights))
        return evaluate(model.eval(), task, "validation")["sacrebleu"]

    scores = {"last snapshot": scored([1.0] + [0.0] * (len(states) - 1))}
    for mean in arguments.means:
        count, every = (int(part) for part in mean.split("x"))
        chosen = {index * every // spacing for index in range(count)}
        if every % spacing or max(chosen) >= len(states):
            raise SystemExit(f"error: {mean} needs snapshots every {every} steps back {count * every} steps")
        scores[f"mean {mean}"] = scored([1.0 if index in chosen else 0.0 for index in range(len(states))])
    for decay in arguments.decays:
        scores[f"moving average {decay:g}"] = scored([decay ** (steps[0] - step) for step in steps])
    record = {
        "command": shlex.join(["python", *sys.argv]),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": describe_machine(torch.device("cpu")),
        "torch": torch.__version__,
        "last_step": steps[0],
        "snapshot_every": spacing,
        "snapshots": len(states),
        "validation_sacrebleu_greedy": scores,
    }
    Path(arguments.out).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    for name, score in scores.items():
        print(f"{name:24s} {score:6.2f}")


if __name__ == "__main__":
    main()
