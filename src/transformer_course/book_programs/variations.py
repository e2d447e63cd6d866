"""The paper's Table 3 at small scale: variations on the base model, each trained with several seeds.

    transformer-course variations --task numbers --seeds 0 1 2 --steps 300 --out book/records/table3-numbers.json

Table 3 of the paper changes the base model one setting at a time and reports the perplexity and
BLEU of each variant on the development set: the number of heads with ``d_k = d_model / h`` (row
A), the key size ``d_k`` alone (B), the number of layers ``N``, the width ``d_model`` and the
inner size ``d_ff`` (C), dropout ``P_drop`` and label smoothing ``ε_ls`` (D), and learned instead
of sinusoidal positions (E). Here the base is chapter 8's numbers model, and every change is the
paper's, scaled to it: where the paper halves a size, so do we.

The paper reports one run per variant. A small model trained briefly moves by more than some of
its differences when only the seed changes (the initial weights, dropout, the order of batches),
so every variant is trained with every seed, and the record keeps each seed's scores with their
mean, standard deviation, minimum and maximum. A difference smaller than that spread says nothing.

Each run is scored on the validation split by

* **perplexity**: ``exp`` of the cross-entropy per target token with the reference as the
  decoder's input, *without* label smoothing, so that runs trained with different ``ε_ls`` are
  scored alike (the paper's perplexities are per wordpiece, ours per Chinese character);
* **exact match**: the percentage of numbers that greedy decoding translates exactly (in place of
  the paper's BLEU).

The record is written after every finished run. Started again with the same settings, the
command skips the runs the record already holds, so an interrupted computation continues where it
stopped; with other settings it stops with an error instead of mixing runs that do not compare.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import shlex
import statistics
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path

import torch

from ..data import GENERATED_TASKS, PAD_ID, TranslationTask, load_task
from ..device import describe_machine, device_option, resolve_device
from ..training.config import ModelConfig, TrainingConfig
from ..training.evaluation import evaluate, teacher_forced_loss
from ..training.label_smoothing import LabelSmoothingLoss
from ..training.loop import train
from .book_run import BookRunPlan
from .record import write_record

# ---- the variants, as data ----------------------------------------------------------------

# Chapter 8's model (the book's numbers model: N = 2, d_model = 64, h = 4, d_k = 16, d_ff = 256,
# P_drop = 0.1) with its schedule; ε_ls = 0.1 as in the paper.
BASE_MODEL = BookRunPlan().model
BASE_TRAINING = {
    **{name: BookRunPlan().training[name] for name in ("warmup_steps", "learning_rate_scale")},
    "label_smoothing": 0.1,
}

PAPER = {
    "source": "Vaswani et al. (2017), Table 3: perplexity per wordpiece and BLEU on the English-German development "
    "set newstest2013, beam search without checkpoint averaging",
    "base": "N=6, d_model=512, d_ff=2048, h=8, d_k=d_v=64, P_drop=0.1, ε_ls=0.1, 100K steps",
}


@dataclass(frozen=True)
class PaperResult:
    """A line of the paper's Table 3: its setting, perplexity and BLEU."""

    setting: str
    perplexity: float
    bleu: float


@dataclass(frozen=True)
class Variant:
    """The base recipe with a few settings changed.

    Attributes:
        row: the paper's row, ``"base"`` or ``"A"`` … ``"E"``.
        name: the change in the paper's notation, at our scale (``"h=1, d_k=64"``); the record's key.
        model: the :class:`ModelConfig` settings changed.
        training: the :class:`TrainingConfig` settings changed.
        paper: the line of the paper's Table 3 that this variant imitates.
    """

    row: str
    name: str
    model: dict = field(default_factory=dict)
    training: dict = field(default_factory=dict)
    paper: PaperResult | None = None

    def configs(self, base_model: ModelConfig, training: dict) -> tuple[ModelConfig, TrainingConfig]:
        """This variant's model and training settings (``training``: the base's, budget included)."""
        return replace(base_model, **self.model), TrainingConfig(**{**training, **self.training})


ROWS = ("base", "A", "B", "C", "D", "E")
_D_MODEL = BASE_MODEL.d_model
VARIANTS = [
    Variant("base", "base", paper=PaperResult("base", 4.92, 25.8)),
    # (A) The number of heads h, with d_k = d_v = d_model / h: the work per layer stays the same.
    *[
        Variant("A", f"h={heads}, d_k={_D_MODEL // heads}", {"num_heads": heads}, paper=paper)
        for heads, paper in (
            (1, PaperResult("h=1, d_k=512", 5.29, 24.9)),
            (2, PaperResult("h=4, d_k=128", 5.00, 25.5)),
            (8, PaperResult("h=16, d_k=32", 4.91, 25.8)),
            (16, PaperResult("h=32, d_k=16", 5.01, 25.4)),
        )
    ],
    # (B) A smaller key size d_k alone: the values keep d_v = d_model / h.
    Variant("B", "d_k=4", {"d_k": 4}, paper=PaperResult("d_k=16", 5.16, 25.1)),
    Variant("B", "d_k=8", {"d_k": 8}, paper=PaperResult("d_k=32", 5.01, 25.4)),
    # (C) Fewer or more layers, a narrower or wider model (h stays, so d_k = d_model / h follows),
    # a smaller or larger inner size of the feed-forward sublayers.
    Variant("C", "N=1", {"num_layers": 1}, paper=PaperResult("N=2", 6.11, 23.7)),
    Variant("C", "N=3", {"num_layers": 3}, paper=PaperResult("N=8", 4.88, 25.5)),
    Variant("C", "d_model=32", {"d_model": 32}, paper=PaperResult("d_model=256, d_k=32", 5.75, 24.5)),
    Variant("C", "d_model=128", {"d_model": 128}, paper=PaperResult("d_model=1024, d_k=128", 4.66, 26.0)),
    Variant("C", "d_ff=128", {"d_ff": 128}, paper=PaperResult("d_ff=1024", 5.12, 25.4)),
    Variant("C", "d_ff=512", {"d_ff": 512}, paper=PaperResult("d_ff=4096", 4.75, 26.2)),
    # (D) No dropout and more dropout; no label smoothing and more.
    Variant("D", "P_drop=0.0", {"dropout": 0.0}, paper=PaperResult("P_drop=0.0", 5.77, 24.6)),
    Variant("D", "P_drop=0.2", {"dropout": 0.2}, paper=PaperResult("P_drop=0.2", 4.95, 25.5)),
    Variant("D", "ε_ls=0.0", training={"label_smoothing": 0.0}, paper=PaperResult("ε_ls=0.0", 4.67, 25.3)),
    Variant("D", "ε_ls=0.2", training={"label_smoothing": 0.2}, paper=PaperResult("ε_ls=0.2", 5.47, 25.7)),
    # (E) A learned positional embedding instead of the sinusoids.
    Variant("E", "learned positions", {"positional": "learned"}, paper=PaperResult("positional embedding", 4.92, 25.7)),
]


def variants_of_rows(rows: list[str]) -> list[Variant]:
    """The base and every variant of ``rows`` (``["A", "D"]``), in the paper's order."""
    unknown = sorted(set(rows) - set(ROWS))
    if unknown:
        raise ValueError(f"Table 3 has no rows {unknown}; its rows are {list(ROWS[1:])}")
    return [variant for variant in VARIANTS if variant.row == "base" or variant.row in rows]


# ---- one run ------------------------------------------------------------------------------


def train_and_score(
    task: TranslationTask, model_config: ModelConfig, training_config: TrainingConfig, threads: int | None = None
) -> dict:
    """Train one variant with one seed; its validation perplexity and exact match (see the module docstring)."""
    if threads is not None:
        torch.set_num_threads(threads)
    started = time.monotonic()
    result = train(task, training_config, model_config, progress=False)
    cross_entropy = LabelSmoothingLoss(0.0, ignore_index=PAD_ID)
    loss = teacher_forced_loss(result.model, task.encode("validation"), cross_entropy, training_config.max_tokens)
    return {
        "perplexity": round(math.exp(loss), 4),
        "exact_match": evaluate(result.model, task, "validation")["exact_match"],
        "seconds": round(time.monotonic() - started, 1),
        "parameters": sum(parameter.numel() for parameter in result.model.parameters()),
    }


# ---- every variant with every seed, into a record -----------------------------------------


def run_variations(
    task: TranslationTask,
    variants: list[Variant],
    seeds: list[int],
    steps: int,
    out: str | Path,
    *,
    base_model: ModelConfig = BASE_MODEL,
    base_training: dict | None = None,
    device: str = "auto",
    workers: int = 1,
    threads: int | None = None,
    command: str | None = None,
    log=None,
) -> dict:
    """Train every variant with every seed for ``steps`` steps and keep the scores in the record ``out``.

    Runs already in ``out`` (same settings) are skipped; the record is written after each run.
    ``workers`` runs train side by side in their own processes, each with ``threads`` threads.
    ``log(message)`` hears of every finished run. Returns the record.
    """
    device = str(resolve_device(device))
    training = {**(BASE_TRAINING if base_training is None else base_training), "device": device}
    training.update(max_steps=steps, validate_every=steps)  # validate once, at the end
    settings = {
        "task": {"name": task.name, "arguments": task.arguments},
        "steps": steps,
        "base_model": base_model.to_dict(),
        "base_training": recorded_training(training),
        "scores": "validation split: perplexity = exp(cross-entropy per target token, teacher forcing, no label "
        "smoothing); exact_match = % of greedy translations equal to the reference",
    }
    out = Path(out)
    record = _open_record(out, settings, variants)
    provenance = record["provenance"]
    provenance.update(machine=describe_machine(device), device=device, torch=str(torch.__version__), workers=workers)
    provenance["threads"] = threads if threads is not None else torch.get_num_threads()
    if command is not None:
        provenance["commands"].append(command)
    started, minutes_before = time.monotonic(), provenance["minutes"]
    jobs = [
        (variant, seed)
        for seed in seeds
        for variant in variants
        if str(seed) not in record["variants"][variant.name]["runs"]
    ]
    for done, (variant, seed, scores) in enumerate(_finished_runs(task, jobs, base_model, training, workers, threads)):
        _store(record, variant, seed, scores)
        provenance.update(updated=date.today().isoformat())
        provenance["minutes"] = round(minutes_before + (time.monotonic() - started) / 60, 2)
        write_record(record, out)
        if log is not None:
            log(f"[{done + 1}/{len(jobs)}] {variant.row} {variant.name}, seed {seed}: {_describe(scores)}")
    return record


def _open_record(path: Path, settings: dict, variants: list[Variant]) -> dict:
    """The record at ``path`` if it was made with ``settings``, else a new one; with an entry per variant."""
    if path.exists():
        record = json.loads(path.read_text(encoding="utf-8"))
        check_same_settings(record.get("settings", {}), settings, path)
    else:
        today = date.today().isoformat()
        record = {
            "settings": settings,
            "paper": PAPER,
            "provenance": {"commands": [], "started": today, "updated": today, "minutes": 0.0},
            "variants": {},
        }
    for variant in variants:
        entry = {"row": variant.row, "model": variant.model, "training": variant.training}
        stored = record["variants"].setdefault(variant.name, {**entry, "runs": {}})
        if {key: stored.get(key) for key in entry} != entry:
            raise ValueError(
                f"{path} holds a variant {variant.name!r} made with other changes ({stored['model']}, "
                f"{stored['training']}) than now ({variant.model}, {variant.training}); write to another --out"
            )
        stored["paper"] = None if variant.paper is None else vars(variant.paper)
    record["variants"] = dict(sorted(record["variants"].items(), key=lambda item: ROWS.index(item[1]["row"])))
    return record


# Settings whose value here trains exactly as a configuration without them did: a record leaves them out
# at that value, so that the studies recorded before a setting existed still compare with new runs.
SETTINGS_OFF = {"average_decay": None}


def recorded_training(training: dict) -> dict:
    """The training settings a study's record keeps: those its scores depend on and every run shares
    (each run has its own seed; whether a run draws its learning curves changes no score; a setting
    of :data:`SETTINGS_OFF` at its value changes nothing)."""
    return {
        key: value
        for key, value in TrainingConfig(**training).to_dict().items()
        if key not in ("seed", "curves") and not (key in SETTINGS_OFF and value == SETTINGS_OFF[key])
    }


def check_same_settings(stored: dict, settings: dict, path: Path) -> None:
    """Raise a ValueError naming each setting that differs between the record at ``path`` and this run's."""
    # Through JSON, so that a tuple compares equal to the list it is read back as.
    stored, settings = _flat(json.loads(json.dumps(stored))), _flat(json.loads(json.dumps(settings)))
    if stored != settings:
        differences = [
            f"{key}: {stored.get(key)!r} there, {settings.get(key)!r} now"
            for key in sorted(set(stored) | set(settings))
            if stored.get(key) != settings.get(key)
        ]
        raise ValueError(
            f"{path} was computed with other settings, and its runs would not compare with these "
            f"({'; '.join(differences)}); write to another --out, or delete it to start again"
        )


def _flat(settings: dict, prefix: str = "") -> dict:
    """``{"base_model": {"d_model": 64}}`` as ``{"base_model.d_model": 64}``, to name what differs."""
    flat = {}
    for key, value in settings.items():
        if isinstance(value, dict):
            flat.update(_flat(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def _finished_runs(
    task: TranslationTask, jobs: list, base_model: ModelConfig, training: dict, workers: int, threads: int | None
) -> Iterator[tuple[Variant, int, dict]]:
    """``(variant, seed, scores)`` of each job as it finishes, trained here or in ``workers`` processes."""
    runs = [
        ((variant, seed), (task, *variant.configs(base_model, {**training, "seed": seed}), threads))
        for variant, seed in jobs
    ]
    if workers == 1:
        for job, job_arguments in runs:
            yield *job, train_and_score(*job_arguments)
        return
    # "spawn": a fresh interpreter per worker, not a fork of one whose PyTorch threads are running.
    executor = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
    try:
        futures = {executor.submit(train_and_score, *job_arguments): job for job, job_arguments in runs}
        for future in as_completed(futures):
            yield *futures[future], future.result()
    finally:
        executor.shutdown(cancel_futures=True)


def _store(record: dict, variant: Variant, seed: int, scores: dict) -> None:
    """Keep one run's scores, and recompute its variant's summary from every seed's scores."""
    entry = record["variants"][variant.name]
    entry["parameters"] = scores["parameters"]
    entry["runs"][str(seed)] = {name: scores[name] for name in ("perplexity", "exact_match", "seconds")}
    entry["runs"] = dict(sorted(entry["runs"].items(), key=lambda item: int(item[0])))
    for metric in ("perplexity", "exact_match"):
        entry[metric] = spread([run[metric] for run in entry["runs"].values()])


def spread(values: list[float]) -> dict:
    """Mean, sample standard deviation (``None`` for one value), minimum and maximum of ``values``."""
    deviation = statistics.stdev(values) if len(values) > 1 else None
    return {
        "mean": round(statistics.mean(values), 4),
        "std": None if deviation is None else round(deviation, 4),
        "min": min(values),
        "max": max(values),
    }


def _describe(scores: dict) -> str:
    return (
        f"perplexity {scores['perplexity']:.3f}, exact match {scores['exact_match']:.1f} % ({scores['seconds']:.0f} s)"
    )


def format_table(record: dict) -> str:
    """The record as a plain-text table: our mean (min-max) beside the paper's perplexity and BLEU."""
    lines = [
        f"{'row':4} {'variant':18} {'params':>8}  {'perplexity: mean (min-max)':27} "
        f"{'exact match %: mean (min-max)':30} {'paper':22} {'PPL':>5} {'BLEU':>5}"
    ]
    for name, entry in record["variants"].items():
        if not entry["runs"]:
            continue
        ppl, exact, paper = entry["perplexity"], entry["exact_match"], entry["paper"] or {}
        ppl_text = f"{ppl['mean']:.3f} ({ppl['min']:.3f}-{ppl['max']:.3f})"
        exact_text = f"{exact['mean']:.1f} ({exact['min']:.1f}-{exact['max']:.1f})"
        paper_text = f"{paper.get('perplexity', math.nan):>5.2f} {paper.get('bleu', math.nan):>5.1f}"
        lines.append(
            f"{entry['row']:4} {name:18} {entry['parameters']:>8,}  {ppl_text:27} {exact_text:30} "
            f"{paper.get('setting', ''):22} {paper_text}"
        )
    return "\n".join(lines)


# ---- the command --------------------------------------------------------------------------


def register(subcommands: argparse._SubParsersAction) -> None:
    """Add the ``variations`` command to the ``transformer-course`` parser."""
    parser = subcommands.add_parser(
        "variations",
        help="the paper's Table 3 at small scale: train variants of the base model with several seeds",
        description=__doc__.split("\n\n")[0],
    )
    parser.add_argument("--task", choices=GENERATED_TASKS, default="numbers", help="the data (default: numbers)")
    parser.add_argument(
        "--seeds",
        type=int,
        nargs="+",
        default=[0, 1, 2],
        help="training seeds: each seeds the initial weights, dropout and the batch order; every run trains "
        "on the same data, the task's seed 0, unlike train's --seed (default: 0 1 2)",
    )
    parser.add_argument("--steps", type=int, required=True, help="training steps of every run")
    parser.add_argument("--out", required=True, help="the JSON record (e.g. book/records/table3-numbers.json)")
    parser.add_argument(
        "--rows", nargs="+", choices=ROWS[1:], default=list(ROWS[1:]), help="Table 3's rows (default: all; base always)"
    )
    parser.add_argument("--workers", type=int, default=1, help="runs trained side by side, each in its own process")
    parser.add_argument("--threads", type=int, default=None, help="CPU threads for PyTorch in each run")
    parser.add_argument("--device", type=device_option, default="auto", help="auto (default), cpu, cuda …")
    parser.set_defaults(run=run_command)


def run_command(arguments: argparse.Namespace) -> int:
    if arguments.steps < 1 or arguments.workers < 1:
        raise SystemExit(
            f"error: --steps and --workers must be positive, got {arguments.steps} and {arguments.workers}"
        )
    started = time.monotonic()
    task = load_task(arguments.task, seed=0)  # one data set; the seeds vary the training
    try:
        record = run_variations(
            task, variants_of_rows(arguments.rows), arguments.seeds, arguments.steps, arguments.out,
            device=arguments.device, workers=arguments.workers, threads=arguments.threads,
            command=shlex.join(arguments.command_line), log=lambda message: print(message, file=sys.stderr, flush=True),
        )  # fmt: skip
    except ValueError as error:
        raise SystemExit(f"error: {error}") from None
    print(format_table(record), file=sys.stderr)
    runs = sum(len(entry["runs"]) for entry in record["variants"].values())
    summary = {
        "record": str(arguments.out),
        "variants": len(record["variants"]),
        "runs": runs,
        "minutes_this_run": round((time.monotonic() - started) / 60, 2),
    }
    print(json.dumps(summary), flush=True)
    return 0
