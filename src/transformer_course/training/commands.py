"""The ``train`` and ``evaluate`` commands (registered by :mod:`transformer_course.cli`).

    transformer-course train --task numbers --minutes 10 --out runs/numbers
    transformer-course train --out runs/numbers --resume --minutes 15     # continue it
    transformer-course evaluate runs/numbers/checkpoint.pt --split test --beam 4
    torchrun --nproc_per_node=2 -m transformer_course.cli train --task multi30k --minutes 60

Each command ends by printing its results as one JSON line on standard output (progress and
messages go to standard error).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from dataclasses import fields
from pathlib import Path

import torch

from ..data import TASKS, TranslationTask, load_task, task_from_dict
from ..device import default_device
from .checkpoint import CHECKPOINT_NAME, checkpoint_path, load_checkpoint, load_trained_model
from .config import ModelConfig, TrainingConfig, recipe_for
from .evaluation import evaluate
from .loop import NonFiniteLossError, train

MODEL_OPTIONS = {
    "d_model": int, "num_heads": int, "num_layers": int, "d_ff": int, "dropout": float, "positional": str,
}  # fmt: skip
TRAINING_OPTIONS = {
    "max_tokens": int, "warmup_steps": int, "learning_rate_scale": float, "label_smoothing": float,
    "clip_norm": float, "validate_every": int, "validation_examples": int, "log_every": int,
}  # fmt: skip


def register(subcommands: argparse._SubParsersAction) -> None:
    """Add this group's commands to the ``transformer-course`` parser."""
    _register_train(subcommands)
    _register_evaluate(subcommands)
    _register_record(subcommands)


def _register_train(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser(
        "train", help="train the encoder-decoder on a task", description=_train_description()
    )
    parser.add_argument(
        "--task", choices=sorted(TASKS), default=None, help="the data (default: numbers, or the resumed run's)"
    )
    parser.add_argument(
        "--data",
        default=None,
        help="multi30k: a directory of the dataset's own files (train.de.gz + train.en.gz, val.*, "
        "test_2016_flickr.*, gzipped or not) or of train/validation/test .jsonl or .tsv files, or one such file "
        "(default: download the Hugging Face copy)",
    )
    parser.add_argument(
        "--vocab-size",
        type=int,
        default=None,
        help="multi30k: size of the shared BPE vocabulary (default: the recipe's)",
    )
    parser.add_argument("--minutes", type=float, default=None, help="wall-clock budget (total, across resumptions)")
    parser.add_argument("--max-steps", type=int, default=None, help="step budget (total, across resumptions)")
    parser.add_argument(
        "--out", default=None, help="directory for checkpoint.pt, history.json, curves.png (default: runs/TASK)"
    )
    parser.add_argument("--resume", action="store_true", help="continue the run in --out from its checkpoint")
    parser.add_argument(
        "--seed", type=int, default=None, help="seeds the data, the initialisation and dropout (default 0)"
    )
    parser.add_argument("--device", default=None, help="auto (default), cpu, cuda, cuda:1 …")
    parser.add_argument(
        "--threads", type=int, default=None, help="CPU threads for PyTorch (1 is fastest on a busy machine)"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    model = parser.add_argument_group("model size (default: the task's recipe)")
    for name, kind in MODEL_OPTIONS.items():
        model.add_argument(f"--{name.replace('_', '-')}", type=kind, default=None)
    model.add_argument(
        "--norm-first",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="Pre-LN instead of the paper's Post-LN",
    )
    recipe = parser.add_argument_group("training recipe (default: the task's recipe)")
    for name, kind in TRAINING_OPTIONS.items():
        recipe.add_argument(f"--{name.replace('_', '-')}", type=kind, default=None)
    parser.set_defaults(run=run_train)


def _register_evaluate(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser("evaluate", help="decode a split with a trained model and score it")
    parser.add_argument("checkpoint", help="a checkpoint.pt written by train (or its directory)")
    parser.add_argument("--split", default="test", choices=["train", "validation", "test"])
    parser.add_argument("--beam", type=int, default=1, help="beam size (1: greedy decoding)")
    parser.add_argument(
        "--alpha", type=float, default=0.0, help="length penalty exponent for beam search (the paper: 0.6)"
    )
    parser.add_argument("--limit", type=int, default=None, help="score only the first N pairs")
    parser.add_argument("--device", default=None, help="auto (default), cpu, cuda …")
    parser.add_argument("--threads", type=int, default=None, help="CPU threads for PyTorch")
    parser.set_defaults(run=run_evaluate)


def _register_record(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser(
        "record", help="write a small JSON record of a trained run: settings, curves, test scores, examples, attention"
    )
    parser.add_argument("checkpoint", help="a checkpoint.pt written by train (or its directory)")
    parser.add_argument("--out", required=True, help="the JSON file to write (e.g. book/records/multi30k-cpu.json)")
    parser.add_argument(
        "--beam", type=int, default=4, help="beam size of the beam-search scores (default: %(default)s)"
    )
    parser.add_argument(
        "--alpha", type=float, default=0.6, help="length penalty exponent (default: %(default)s, the paper's)"
    )
    parser.add_argument("--examples", type=int, default=12, help="test sentences to keep with their translations")
    parser.add_argument("--device", default=None, help="auto (default), cpu, cuda …")
    parser.add_argument("--threads", type=int, default=None, help="CPU threads for PyTorch")
    parser.set_defaults(run=run_record)


def _train_description() -> str:
    return (
        "Train until --minutes or --max-steps is spent, validating and checkpointing on the way. "
        "With --resume, every option not given is taken from the checkpoint."
    )


def _set_threads(arguments: argparse.Namespace) -> None:
    if arguments.threads is not None:
        torch.set_num_threads(arguments.threads)


def run_train(arguments: argparse.Namespace) -> int:
    _set_threads(arguments)
    task_name, model_config, training_config, task = _resolve_settings(arguments)
    started = time.monotonic()
    try:
        command = shlex.join(arguments.command_line)
        result = train(
            task,
            training_config,
            model_config,
            resume=arguments.resume,
            progress=not arguments.no_progress,
            command=command,
        )
    except NonFiniteLossError as error:
        print(f"error: {error}", file=sys.stderr)
        _print_json({"task": task_name, "error": str(error)})
        return 1
    if int(os.environ.get("RANK", "0")) == 0:
        last_validation = result.history["validation"][-1] if result.history["validation"] else {}
        _print_json(
            {
                "task": task_name,
                "steps": result.steps,
                "minutes": round(result.seconds / 60, 2),
                "minutes_this_run": round((time.monotonic() - started) / 60, 2),
                "stopped_because": result.stopped_because,
                "parameters": sum(parameter.numel() for parameter in result.model.parameters()),
                "train_loss": result.history["train"][-1]["train_loss"] if result.history["train"] else None,
                **{key: value for key, value in last_validation.items() if key != "step"},
                "checkpoint": None if result.checkpoint is None else str(result.checkpoint),
            }
        )
    return 0


def _resolve_settings(arguments: argparse.Namespace) -> tuple[str, ModelConfig, TrainingConfig, TranslationTask]:
    """Options given on the command line, else the resumed checkpoint's, else the task's recipe.

    A resumed run gets the checkpoint's task back with its tokenizers (:func:`task_from_dict`):
    retraining a BPE vocabulary could change the token ids under the trained model.
    """
    saved: dict = {}
    out_dir = Path(arguments.out) if arguments.out else Path("runs") / (arguments.task or "numbers")
    if arguments.resume and (out_dir / CHECKPOINT_NAME).exists():
        saved = load_checkpoint(out_dir / CHECKPOINT_NAME)
    task_name = arguments.task or (saved["task"]["name"] if saved else "numbers")
    if saved and task_name != saved["task"]["name"]:
        raise SystemExit(f"error: {out_dir} holds a {saved['task']['name']} run, not {task_name}")
    device = arguments.device or (saved["training_config"]["device"] if saved else "auto")
    recipe = recipe_for(task_name, (torch.device(device) if device != "auto" else default_device()).type)

    model_values = saved["model_config"] if saved else recipe.model.to_dict()
    model_values = {**model_values, **_given(arguments, list(MODEL_OPTIONS) + ["norm_first"])}

    defaults = {field.name: field.default for field in fields(TrainingConfig)}
    training_values = saved["training_config"] if saved else {**defaults, **recipe.training}
    given = _given(arguments, list(TRAINING_OPTIONS) + ["minutes", "max_steps", "seed", "device"])
    if "minutes" in given or "max_steps" in given:  # a new budget replaces the old one entirely
        training_values.update(minutes=None, max_steps=None)
    training_values.update(given)
    training_values["out_dir"] = str(out_dir)
    try:
        model_config, training_config = ModelConfig.from_dict(model_values), TrainingConfig.from_dict(training_values)
    except ValueError as error:
        raise SystemExit(f"error: {error}") from None

    if saved:
        task = task_from_dict(saved["task"])
    elif task_name == "multi30k":
        vocab_size = arguments.vocab_size or recipe.task["vocab_size"]
        task = load_task(task_name, path=arguments.data, vocab_size=vocab_size, seed=training_values["seed"])
    else:
        task = load_task(task_name, seed=training_values["seed"])
    return task_name, model_config, training_config, task


def _given(arguments: argparse.Namespace, names: list[str]) -> dict:
    return {name: getattr(arguments, name) for name in names if getattr(arguments, name) is not None}


def run_evaluate(arguments: argparse.Namespace) -> int:
    _set_threads(arguments)
    path = checkpoint_path(arguments.checkpoint)
    started = time.monotonic()
    model, task, state = load_trained_model(path, arguments.device)
    scores = evaluate(
        model, task, arguments.split, beam_size=arguments.beam, alpha=arguments.alpha, limit=arguments.limit
    )
    seconds = round(time.monotonic() - started, 1)
    _print_json(
        {"checkpoint": str(path), "task": task.name, "step": state["progress"]["step"], **scores, "seconds": seconds}
    )
    return 0


def run_record(arguments: argparse.Namespace) -> int:
    from .record import make_record, write_record

    _set_threads(arguments)
    record = make_record(
        checkpoint_path(arguments.checkpoint), arguments.beam, arguments.alpha, arguments.examples, arguments.device
    )
    path = write_record(record, arguments.out)
    _print_json({"record": str(path), "greedy": record["test"]["greedy"], "beam": record["test"]["beam"]})
    return 0


def _print_json(values: dict) -> None:
    print(json.dumps(values), flush=True)
