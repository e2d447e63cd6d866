"""Compare changes to Multi30k's CPU recipe on a fixed number of steps, and keep every run's numbers.

    PYTHONPATH=src python benchmarks/multi30k_recipe.py --data DIR --name baseline --max-steps 2000
    PYTHONPATH=src python benchmarks/multi30k_recipe.py --data DIR --name tokens-2048 --max-steps 2000 \\
        --set max_tokens=2048

A time budget on a shared machine measures the load as much as the recipe, so candidates train for
the same number of steps (as many as a quiet 30-minute run makes) and the speed of each, in steps
and target tokens per second, is recorded beside the load average: a change that makes steps
slower or faster is then judged by how many steps it would make in 30 minutes.

Each run trains the CPU recipe (``recipe_for("multi30k", "cpu")``) with the settings of ``--set``
(any field of ModelConfig or TrainingConfig) and ``--vocab-size``, keeping on the way

* the model's weights every ``--snapshot-every`` steps (in ``--out/NAME/snapshots``), from which the
  averages of the last k snapshots are scored afterwards (checkpoint averaging, paper §6.1);
* exponential moving averages of the weights with the decays of ``--ema`` (the decay at step t is
  at most (1 + t) / (10 + t), so that the first steps' weights fade quickly);

then scores, on the validation split with greedy decoding, the last weights, every average and every
EMA; decodes the validation split with beam search for each length penalty of ``--alphas`` with the
last weights and the best average; and scores the test split (greedy, and beam search with the length
penalty chosen on validation) for the two. The run's entry is appended to ``--results`` (a JSON
list; an entry of the same name is replaced) and its table printed.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shlex
import statistics
import sys
import time
from pathlib import Path

import torch

from transformer_course.data import multi30k_task
from transformer_course.device import describe_machine
from transformer_course.training import ModelConfig, TrainingConfig, recipe_for
from transformer_course.training.callbacks import LogProgress, ValidateAndCheckpoint
from transformer_course.training.distributed import join_process_group
from transformer_course.training.evaluation import evaluate
from transformer_course.training.loop import Trainer
from transformer_course.training.run_state import RunState


class WeightKeeper:
    """Trainer callbacks: a snapshot of the weights every ``every`` steps, EMAs after every step, and
    the load average at every ``log_every`` step."""

    def __init__(self, directory: Path, every: int, decays: list[float]):
        self.directory, self.every, self.decays = directory, every, decays
        self.directory.mkdir(parents=True, exist_ok=True)
        self.emas: dict[float, dict[str, torch.Tensor]] = {}
        self.loads: list[float] = []

    def on_train_start(self, trainer) -> None:
        self.emas = {decay: _weights(trainer.model) for decay in self.decays}

    def on_batch_end(self, trainer) -> None:
        step = trainer.state.step
        weights = trainer.model.state_dict()
        with torch.no_grad():
            for decay, average in self.emas.items():
                # The first steps' weights fade fast: (1 + t) / (10 + t) keeps the initial ones from lingering.
                weight = 1.0 - min(decay, (1 + step) / (10 + step))
                for name, tensor in average.items():
                    if tensor.is_floating_point():
                        tensor.lerp_(weights[name], weight)
        if step % self.every == 0:
            torch.save(_weights(trainer.model), self.directory / f"step-{step:05d}.pt")
        if step % trainer.state.training_config.log_every == 0 or trainer.stopped_because is not None:
            self.loads.append(os.getloadavg()[0])


def _weights(model) -> dict[str, torch.Tensor]:
    return {name: tensor.detach().clone() for name, tensor in model.state_dict().items()}


def averaged(snapshots: list[Path]) -> dict[str, torch.Tensor]:
    """The mean of the snapshots' weights (paper §6.1: the last checkpoints, averaged)."""
    states = [torch.load(path, weights_only=True) for path in snapshots]
    return {name: sum(state[name] for state in states) / len(states) for name in states[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True, help="a folder of Multi30k's task-1 files")
    parser.add_argument("--name", required=True)
    parser.add_argument("--max-steps", type=int, default=2000)
    parser.add_argument("--vocab-size", type=int, default=None)
    parser.add_argument("--set", nargs="*", default=[], metavar="SETTING=VALUE")
    parser.add_argument("--snapshot-every", type=int, default=50)
    parser.add_argument("--averages", nargs="*", default=["5x50", "10x50", "5x100", "10x100", "20x50", "8x100"])
    parser.add_argument("--ema", nargs="*", type=float, default=[0.99, 0.995, 0.998])
    parser.add_argument("--alphas", nargs="*", type=float, default=[0.0, 0.6, 1.0, 1.5])
    parser.add_argument("--beam", type=int, default=4)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--limit", type=int, default=None, help="score only the first N pairs (a quick check)")
    parser.add_argument("--out", default="runs/recipe")
    parser.add_argument("--results", default="benchmarks/results/multi30k-cpu-recipe.json")
    arguments = parser.parse_args()
    if arguments.threads:
        torch.set_num_threads(arguments.threads)

    recipe = recipe_for("multi30k", "cpu")
    overrides = {name: _parsed(text) for name, text in (setting.split("=", 1) for setting in arguments.set)}
    model_config = _with(recipe.model, overrides)
    training_values = {**recipe.training, "max_steps": arguments.max_steps, "device": "cpu", "curves": False}
    out_dir = Path(arguments.out) / arguments.name
    training_config = _with(TrainingConfig(**training_values, out_dir=str(out_dir)), overrides)
    unknown = (
        set(overrides)
        - {field.name for field in dataclasses.fields(ModelConfig)}
        - {field.name for field in dataclasses.fields(TrainingConfig)}
    )
    if unknown:
        raise SystemExit(f"error: no settings {sorted(unknown)}")
    vocab_size = arguments.vocab_size or recipe.task["vocab_size"]

    started = time.monotonic()
    load_before = os.getloadavg()
    task = multi30k_task(arguments.data, vocab_size=vocab_size, seed=training_config.seed)
    device = torch.device("cpu")
    group = join_process_group(device)
    state = RunState(task, training_config, model_config)
    state.add_provenance(device, group, shlex.join(sys.argv))
    trainer = Trainer(state, None, device, group)
    keeper = WeightKeeper(out_dir / "snapshots", arguments.snapshot_every, arguments.ema)
    trainer.add_callbacks(LogProgress(show_bar=False))
    trainer.add_callbacks(ValidateAndCheckpoint(trainer))
    trainer.add_callbacks(keeper)
    trainer.run()
    training_seconds = trainer.training_seconds()
    load_after_training = os.getloadavg()
    model, limit = trainer.model.eval(), arguments.limit
    last_weights = _weights(model)

    def load(weights: dict) -> torch.nn.Module:
        model.load_state_dict(weights)
        return model.eval()

    candidates = {"last": last_weights}
    candidates.update({f"ema {decay}": weights for decay, weights in keeper.emas.items()})
    for average in arguments.averages:
        count, spacing = (int(part) for part in average.split("x"))
        steps = range(arguments.max_steps - (count - 1) * spacing, arguments.max_steps + 1, spacing)
        paths = [out_dir / "snapshots" / f"step-{step:05d}.pt" for step in steps]
        if spacing % arguments.snapshot_every == 0 and all(path.is_file() for path in paths):
            candidates[f"average {count}x{spacing}"] = averaged(paths)
    validation = {
        name: evaluate(load(weights), task, "validation", limit=limit)["sacrebleu"]
        for name, weights in candidates.items()
    }
    best = max((name for name in candidates if name != "last"), key=validation.get)
    beam_validation = {
        name: {
            str(alpha): evaluate(load(candidates[name]), task, "validation", arguments.beam, alpha, limit)["sacrebleu"]
            for alpha in arguments.alphas
        }
        for name in ("last", best)
    }
    test = {}
    for name in ("last", best):
        alpha = float(max(beam_validation[name], key=beam_validation[name].get))
        test[name] = {
            "greedy": evaluate(load(candidates[name]), task, "test", limit=limit),
            "beam": evaluate(load(candidates[name]), task, "test", arguments.beam, alpha, limit),
        }
    tokens_per_second = [row["tokens_per_second"] for row in state.history["train"]]
    entry = {
        "name": arguments.name,
        "command": shlex.join(["python", *sys.argv]),
        "settings": overrides,
        "vocab_size": vocab_size,
        "model": model_config.to_dict(),
        "training": training_config.to_dict(),
        "parameters": sum(parameter.numel() for parameter in model.parameters()),
        "machine": describe_machine(device),
        "threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "steps": state.step,
        "epochs": state.epoch,
        "training_seconds": round(training_seconds, 1),
        "steps_per_second": round(state.step / training_seconds, 4),
        "median_tokens_per_second": round(statistics.median(tokens_per_second), 1),
        "load_average": {
            "before": load_before[0],
            "mean_during": round(statistics.mean(keeper.loads), 2),
            "after_training": load_after_training[0],
        },
        "validation_curve": [
            {key: row[key] for key in ("step", "validation_loss", "validation_sacrebleu", "seconds")}
            for row in state.history["validation"]
        ],
        "validation_greedy": validation,
        "chosen_average": best,
        "validation_beam": beam_validation,
        "test": test,
        "total_seconds": round(time.monotonic() - started, 1),
    }
    _append(Path(arguments.results), entry)
    _print(entry)


def _with(config, overrides: dict):
    """``config`` with those of the ``overrides`` that name its fields."""
    values = config.to_dict()
    values.update({name: value for name, value in overrides.items() if name in values})
    return type(config).from_dict(values)


def _parsed(text: str):
    """A number, true/false/null as JSON reads them; anything else stays text."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _append(path: Path, entry: dict) -> None:
    entries = json.loads(path.read_text()) if path.is_file() else []
    entries = [old for old in entries if old["name"] != entry["name"]] + [entry]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(entries, indent=1) + "\n")


def _print(entry: dict) -> None:
    print(f"{entry['name']}: {entry['steps']} steps, {entry['steps_per_second']} steps/s, load {entry['load_average']}")
    for name, score in entry["validation_greedy"].items():
        print(f"  validation greedy  {name:16s} {score:.2f}")
    for name, scores in entry["validation_beam"].items():
        by_alpha = "  ".join(f"α={alpha}: {score:.2f}" for alpha, score in scores.items())
        print(f"  validation beam    {name:16s} {by_alpha}")
    for name, scores in entry["test"].items():
        greedy, beam = scores["greedy"], scores["beam"]
        print(
            f"  test {name:16s} greedy {greedy['sacrebleu']:.2f} (chrF {greedy['chrf']:.2f}), "
            f"beam α={beam['alpha']} {beam['sacrebleu']:.2f} (chrF {beam['chrf']:.2f})"
        )


if __name__ == "__main__":
    main()
