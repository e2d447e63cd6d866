"""The paper's Table 2 at small scale: the Transformer against a recurrent model, at the same budget.

    transformer-course table2 --task numbers --seeds 0 1 2 --minutes 1 --out book/records/table2-numbers.json
    transformer-course table2 --task multi30k --seeds 0 --minutes 20 --out book/records/table2-multi30k.json

Table 2 of the paper sets each model's BLEU against its training cost in FLOPs: the Transformer
matched or beat the recurrent and convolutional models at a fraction of their cost. Here a
Transformer (chapter 8's numbers model, or the task's CPU recipe) and Table 2's recurrent family, a
GRU encoder-decoder with additive attention (:mod:`transformer_course.recurrent`) of the same width
and depth, train on the same data with the same loop, batches, schedule and label smoothing, for the
same minutes on one thread each (side by side, one process each), with one or several seeds. The
record keeps, for every run, what the budget bought and what it gave:

* **cost**: optimiser updates done, CPU minutes (of the whole training call, its closing validation
  loss included), and training FLOPs: the FLOPs of one update on a
  fixed batch of the task (counted by PyTorch's ``FlopCounterMode``, forward and backward) times the
  updates done;
* **quality** on the validation and test splits: exact match of greedy translations, and perplexity
  (teacher-forced cross-entropy without label smoothing, as ``variations`` scores it).

The record is written after every finished run; started again with the same settings the command
skips the runs it holds, and with other settings it stops instead of mixing them.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import multiprocessing
import shlex
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from datetime import date
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.utils.flop_counter import FlopCounterMode

from ..data import GENERATED_TASKS, PAD_ID, TranslationTask, bucketed_batches, load_task, make_batch
from ..device import describe_machine
from ..masks import padding_and_causal_mask, padding_mask
from ..training.config import ModelConfig, TrainingConfig, recipe_for
from ..training.evaluation import evaluate, teacher_forced_loss
from ..training.label_smoothing import LabelSmoothingLoss
from ..training.loop import train
from .record import write_record
from .variations import BASE_MODEL, BASE_TRAINING, check_same_settings, recorded_training, spread


@dataclasses.dataclass(frozen=True)
class Plan:
    """What a task's two models are trained with.

    Attributes:
        model: the Transformer's size; the GRU takes the same width, depth and vocabulary.
        training: :class:`TrainingConfig` settings besides the budget and the seed.
        task: arguments of the task's builder besides its seed (a BPE vocabulary's size).
    """

    model: ModelConfig
    training: dict
    task: dict = dataclasses.field(default_factory=dict)

    def architectures(self) -> dict[str, ModelConfig]:
        """The table's rows: the Transformer and the GRU with attention."""
        return {"Transformer": self.model, "GRU with attention": dataclasses.replace(self.model, architecture="gru")}


def plan_for(task_name: str) -> Plan:
    """Chapter 8's numbers model for the numbers task; any other task's CPU recipe (``recipe_for``)."""
    if task_name == "numbers":
        return Plan(BASE_MODEL, dict(BASE_TRAINING))
    recipe = recipe_for(task_name, "cpu")
    # Table 2 compares how the two architectures train, each judged by the weights of its last update:
    # the recipe's moving average of the weights is left out, as in the runs the book's record holds.
    training = {key: value for key, value in recipe.training.items() if key != "average_decay"}
    return Plan(recipe.model, training, dict(recipe.task))  # run_table2 sets when it validates


PAPER = {
    "source": "Vaswani et al. (2017), Table 2: BLEU on newstest2014 and training cost in FLOPs",
    "rows": [
        {"model": "GNMT + RL", "bleu_en_de": 24.6, "bleu_en_fr": 39.92, "flops_en_de": 2.3e19, "flops_en_fr": 1.4e20},
        {"model": "ConvS2S", "bleu_en_de": 25.16, "bleu_en_fr": 40.46, "flops_en_de": 9.6e18, "flops_en_fr": 1.5e20},
        {"model": "Transformer (base)", "bleu_en_de": 27.3, "bleu_en_fr": 38.1, "flops_en_de": 3.3e18},
    ],
}


def update_flops(model: torch.nn.Module, task: TranslationTask, max_tokens: int) -> int:
    """FLOPs of one training update's forward and backward pass on the task's first training batch."""
    pairs = task.encode("train")
    batch = make_batch(pairs, bucketed_batches(pairs.source_target_lengths(), max_tokens)[0])
    source, decoder_input, expected = batch.source, batch.target_input, batch.target_output
    with FlopCounterMode(display=False) as counter:
        logits = model(
            source, decoder_input, padding_mask(source, PAD_ID), padding_and_causal_mask(decoder_input, PAD_ID)
        )
        F.cross_entropy(logits.flatten(0, 1), expected.flatten(), ignore_index=PAD_ID).backward()
    model.zero_grad(set_to_none=True)
    return int(counter.get_total_flops())


def train_and_measure(task: TranslationTask, model_config: ModelConfig, training: TrainingConfig) -> dict:
    """One run: train for the budget on one thread, then its cost and its scores (see the module docstring)."""
    torch.set_num_threads(1)
    cpu_started = time.process_time()
    result = train(task, training, model_config, progress=False)
    cpu_minutes = (time.process_time() - cpu_started) / 60
    cross_entropy = LabelSmoothingLoss(0.0, ignore_index=PAD_ID)
    scores = {}
    for split in ("validation", "test"):
        loss = teacher_forced_loss(result.model, task.encode(split), cross_entropy, training.max_tokens)
        scores[split] = {"perplexity": round(math.exp(loss), 4), **_quality(evaluate(result.model, task, split))}
    flops = update_flops(result.model.train(), task, training.max_tokens)
    return {
        "steps": result.steps,
        "cpu_minutes": round(cpu_minutes, 3),
        "training_flops": flops * result.steps,
        "update_flops": flops,
        "parameters": sum(parameter.numel() for parameter in result.model.parameters()),
        **scores,
    }


def _quality(scores: dict) -> dict:
    return {name: scores[name] for name in ("exact_match", "sacrebleu") if name in scores}


def run_table2(
    task: TranslationTask,
    plan: Plan,
    seeds: list[int],
    minutes: float,
    out: str | Path,
    workers: int = 1,
    command: str = "",
) -> dict:
    """Train each of ``plan``'s architectures with each seed for ``minutes``; keep the record ``out``.

    See the module docstring for what the record holds. The runs validate only at the end, for the
    record, so that the whole budget trains.
    """
    architectures = plan.architectures()
    # The loop validates once, when the budget is spent, on one example: the record's scores are computed after.
    training = {**plan.training, "minutes": minutes, "device": "cpu", "validate_every": 10**9, "validation_examples": 1}
    settings = {
        "task": {"name": task.name, "arguments": _portable(task.arguments)},
        "minutes": minutes,
        "training": recorded_training(training),
        "models": {name: config.to_dict() for name, config in architectures.items()},
    }
    out = Path(out)
    record = _open_record(out, settings, architectures)
    record["provenance"].update(machine=describe_machine("cpu"), torch=str(torch.__version__), threads=1)
    record["provenance"]["commands"].append(command)
    jobs = [(name, seed) for seed in seeds for name in architectures if str(seed) not in record["models"][name]["runs"]]
    context = multiprocessing.get_context("spawn")  # fresh interpreters, not forks of one whose threads run
    with ProcessPoolExecutor(max(1, workers), mp_context=context) as pool:
        futures = {
            pool.submit(train_and_measure, task, architectures[name], TrainingConfig(**training, seed=seed)): (
                name,
                seed,
            )
            for name, seed in jobs
        }
        for future in as_completed(futures):
            name, seed = futures[future]
            _store(record["models"][name], seed, future.result())
            record["provenance"]["updated"] = date.today().isoformat()
            write_record(record, out)
            print(f"{name}, seed {seed}: {json.dumps(record['models'][name]['runs'][str(seed)])}", file=sys.stderr)
    return record


def _portable(arguments: dict) -> dict:
    """The task's arguments without a local path to its data, which says nothing of the data itself."""
    return {key: value for key, value in arguments.items() if key != "path"}


def _open_record(path: Path, settings: dict, architectures: dict) -> dict:
    if path.exists():
        record = json.loads(path.read_text(encoding="utf-8"))
        check_same_settings(record.get("settings", {}), settings, path)
        return record
    today = date.today().isoformat()
    return {
        "settings": settings,
        "paper": PAPER,
        "provenance": {"commands": [], "started": today, "updated": today},
        "models": {name: {"runs": {}} for name in architectures},
    }


def _store(entry: dict, seed: int, run: dict) -> None:
    """Keep one run, and recompute its model's summary (mean, spread) from every seed's run."""
    entry["parameters"], entry["update_flops"] = run.pop("parameters"), run.pop("update_flops")
    entry["runs"][str(seed)] = run
    entry["runs"] = dict(sorted(entry["runs"].items(), key=lambda item: int(item[0])))
    runs = list(entry["runs"].values())
    for name in ("steps", "cpu_minutes", "training_flops"):
        entry[name] = spread([run[name] for run in runs])
    for split in ("validation", "test"):
        entry[split] = {metric: spread([run[split][metric] for run in runs]) for metric in runs[0][split]}


def register(subcommands: argparse._SubParsersAction) -> None:
    """Add the ``table2`` command to the ``transformer-course`` parser."""
    parser = subcommands.add_parser(
        "table2",
        help="the paper's Table 2 at small scale: the Transformer and a GRU with attention at the same CPU budget",
        description=__doc__.split("\n\n")[0],
    )
    parser.add_argument(
        "--task", choices=(*GENERATED_TASKS, "multi30k"), default="numbers", help="the data (default: numbers)"
    )
    parser.add_argument("--data", default=None, help="multi30k: a local copy of the dataset (default: download it)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="training seeds (default: 0 1 2)")
    parser.add_argument("--minutes", type=float, required=True, help="CPU minutes of every run (one thread)")
    parser.add_argument("--out", required=True, help="the JSON record (e.g. book/records/table2-numbers.json)")
    parser.add_argument("--workers", type=int, default=1, help="runs trained side by side, each in its own process")
    parser.set_defaults(run=run_command)


def run_command(arguments: argparse.Namespace) -> int:
    if arguments.minutes <= 0 or arguments.workers < 1:
        raise SystemExit(
            f"error: --minutes and --workers must be positive, got {arguments.minutes}, {arguments.workers}"
        )
    if arguments.data is not None and arguments.task in GENERATED_TASKS:
        raise SystemExit(f"error: --data is for multi30k; the {arguments.task} task is generated")
    plan = plan_for(arguments.task)
    data = {} if arguments.data is None else {"path": arguments.data}
    try:
        task = load_task(arguments.task, seed=0, **plan.task, **data)  # one data set; the seeds vary the training
        record = run_table2(
            task, plan, arguments.seeds, arguments.minutes, arguments.out, arguments.workers,
            shlex.join(arguments.command_line),
        )  # fmt: skip
    except (ValueError, OSError) as error:
        raise SystemExit(f"error: {error}") from None
    summary = {
        name: {"runs": len(entry["runs"]), "test": entry.get("test"), "training_flops": entry.get("training_flops")}
        for name, entry in record["models"].items()
    }
    print(json.dumps({"record": str(arguments.out), "models": summary}), flush=True)
    return 0
