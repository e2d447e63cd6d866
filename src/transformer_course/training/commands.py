"""The ``train`` and ``evaluate`` commands (registered by :mod:`transformer_course.cli`).

    transformer-course train --task numbers --minutes 10 --out runs/numbers
    transformer-course train --out runs/numbers --resume --minutes 15     # continue it
    transformer-course evaluate runs/numbers/checkpoint.pt --split test --beam 4
    torchrun --nproc_per_node=2 -m transformer_course.cli train --task multi30k --minutes 60

Each command ends by printing its results as one JSON line on standard output (progress and
messages go to standard error). A mistake in what was asked for (a checkpoint that is not there, a
resumed run asked to change its model or task, a setting out of range) ends the command with one
line, ``error: …``, and exit status 1, as the grading commands do; a run that diverges prints its
``error:`` line and its JSON line, and exits with 1 too.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import re
import shlex
import sys
import time
import types
import typing
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import fields
from pathlib import Path

import torch

from ..data import TASKS, TranslationTask, load_task
from ..device import device_option, resolve_device
from ..model import Transformer
from .checkpoint import WEIGHTS, CheckpointError, checkpoint_path, load_trained_model
from .config import ModelConfig, TrainingConfig, recipe_for
from .evaluation import evaluate
from .loop import train
from .non_finite import NonFiniteLossError
from .run_state import SavedRun

# Each field of ModelConfig and TrainingConfig is an option (``d_model`` → ``--d-model``), described
# where the field is: ModelConfig's fields are Transformer's arguments. Only ``out_dir`` is
# ``--out``, and means a little more on the command line.
OPTION_NAMES = {"out_dir": "out"}
COMMAND_LINE_HELP = {
    "out_dir": "directory for checkpoint.pt, history.json, curves.png (default: runs/TASK)",
    "seed": "seeds the data, the initialisation, dropout and the batch order (default 0)",
    "curves": "draw the learning curves into curves.png in --out as the run goes (default: on)",
}


def register(subcommands: argparse._SubParsersAction) -> None:
    """Add this group's commands to the ``transformer-course`` parser."""
    _register_train(subcommands)
    _register_evaluate(subcommands)


def _register_train(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser(
        "train", help="train the encoder-decoder on a task", description=_train_description()
    )
    parser.add_argument(
        "--task", choices=sorted(TASKS), default=None, help="the data (default: numbers, or the resumed run's)"
    )
    parser.add_argument("--resume", action="store_true", help="continue the run in --out from its checkpoint")
    parser.add_argument(
        "--threads", type=int, default=None, help="CPU threads for PyTorch (1 is fastest on a busy machine)"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    _add_task_options(parser.add_argument_group("the task's data (a new run only)"))
    model = parser.add_argument_group("model size (default: the task's recipe)")
    _add_config_options(model, ModelConfig, _documented(Transformer, "Args"))
    recipe = parser.add_argument_group("training recipe and budget (default: the task's recipe)")
    _add_config_options(recipe, TrainingConfig, {**_documented(TrainingConfig, "Attributes"), **COMMAND_LINE_HELP})
    parser.set_defaults(run=run_train)


def _add_config_options(group, config_class: type, descriptions: dict[str, str]) -> None:
    """An option per field of ``config_class``, of the field's type (``bool``: ``--x``/``--no-x``)."""
    types_of = typing.get_type_hints(config_class)
    for field in fields(config_class):
        flag = "--" + OPTION_NAMES.get(field.name, field.name).replace("_", "-")
        kind = device_option if field.name == "device" else _option_type(types_of[field.name])
        help_text = descriptions.get(field.name, "").replace("%", "%%")
        if kind is bool:
            group.add_argument(
                flag, dest=field.name, action=argparse.BooleanOptionalAction, default=None, help=help_text
            )
        else:
            group.add_argument(flag, dest=field.name, type=kind, default=None, help=help_text)


def _option_type(annotation) -> type:
    """``int`` for ``int`` and for ``int | None``."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        (annotation,) = [member for member in typing.get_args(annotation) if member is not type(None)]
    return annotation


def _documented(owner, section: str) -> dict[str, str]:
    """Each name's description in the ``section`` (``"Args"``, ``"Attributes"``) of ``owner``'s
    docstring, in one line, without reStructuredText markup; ``a, b: …`` describes both."""
    lines = inspect.getdoc(owner).split(f"{section}:\n", 1)[1].splitlines()
    descriptions: dict[str, list[str]] = {}
    names: list[str] = []
    for line in lines:
        entry = re.match(r"    (\w+(?:, \w+)*): (.*)", line)
        if entry:
            names = entry[1].split(", ")
            for name in names:
                descriptions[name] = [entry[2]]
        elif line.startswith("        ") and names:
            for name in names:
                descriptions[name].append(line.strip())
        elif line.strip():
            break  # the next section
    plain = {name: " ".join(text) for name, text in descriptions.items()}
    markup = r":\w+:`(~?)\.?([^`]+)`|``([^`]+)``"  # :func:`~a.b` → b, :mod:`.schedule` → schedule, ``x`` → x
    return {name: re.sub(markup, _plain_reference, text) for name, text in plain.items()}


def _plain_reference(match: re.Match) -> str:
    if match[3] is not None:
        return match[3]
    return match[2].rpartition(".")[2] if match[1] else match[2]


def _add_task_options(group) -> None:
    """The command-line options of every task in :data:`TASKS`, each once."""
    tasks_of: dict[str, list[str]] = {}
    for name, definition in TASKS.items():
        for option in definition.options:
            tasks_of.setdefault(option.flag, []).append(name)
    added = set()
    for definition in TASKS.values():
        for option in definition.options:
            if option.flag not in added:
                help_text = f"{', '.join(tasks_of[option.flag])}: {option.help}".replace("%", "%%")
                group.add_argument(
                    option.flag,
                    dest=_task_dest(option),
                    metavar=option.argument.upper(),
                    type=option.type,
                    help=help_text,
                )
                added.add(option.flag)


def _task_dest(option) -> str:
    return f"task_{option.argument}"


def _register_evaluate(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser("evaluate", help="decode a split with a trained model and score it")
    parser.add_argument("checkpoint", help="a checkpoint.pt written by train (or its directory)")
    parser.add_argument("--split", default="test", choices=["train", "validation", "test"])
    parser.add_argument("--beam", type=int, default=1, help="beam size (1: greedy decoding)")
    parser.add_argument(
        "--alpha", type=float, default=0.0, help="length penalty exponent for beam search (the paper: 0.6)"
    )
    parser.add_argument("--limit", type=int, default=None, help="score only the first N pairs")
    parser.add_argument(
        "--weights",
        choices=WEIGHTS,
        default="average",
        help="the run's average of its weights (default; the last weights if it keeps none), or the last weights",
    )
    parser.add_argument("--device", type=device_option, default=None, help="auto (default), cpu, cuda …")
    parser.add_argument("--threads", type=int, default=None, help="CPU threads for PyTorch")
    parser.set_defaults(run=run_evaluate)


def _train_description() -> str:
    return (
        "Train until --minutes or --max-steps is spent, validating and checkpointing on the way. "
        "With --resume, every option not given is taken from the checkpoint."
    )


def set_threads(arguments: argparse.Namespace) -> None:
    if arguments.threads is not None:
        torch.set_num_threads(arguments.threads)


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn the errors a user can cause into ``SystemExit("error: ...")`` (exit status 1), one line."""
    try:
        yield
    except (CheckpointError, FileNotFoundError) as error:
        raise SystemExit(f"error: {error}") from None


def run_train(arguments: argparse.Namespace) -> int:
    with user_errors():
        return _train(arguments)


def _train(arguments: argparse.Namespace) -> int:
    set_threads(arguments)
    saved, task, model_config, training_config = _resolve_settings(arguments)
    started = time.monotonic()
    try:
        command = shlex.join(arguments.command_line)
        result = train(
            task,
            training_config,
            model_config,
            resume=saved or arguments.resume,
            progress=not arguments.no_progress,
            command=command,
        )
    except NonFiniteLossError as error:
        print(f"error: {error}", file=sys.stderr)
        print_json({"task": task.name, "error": str(error)})
        return 1
    if int(os.environ.get("RANK", "0")) == 0:
        print_json(_results(task.name, result, time.monotonic() - started))
    return 0


def _results(task_name: str, result, seconds_this_run: float) -> dict:
    last_validation = result.history["validation"][-1] if result.history["validation"] else {}
    return {
        "task": task_name,
        "steps": result.steps,
        "minutes": round(result.seconds / 60, 2),
        "minutes_this_run": round(seconds_this_run / 60, 2),
        "stopped_because": result.stopped_because,
        "parameters": sum(parameter.numel() for parameter in result.model.parameters()),
        "train_loss": result.history["train"][-1]["train_loss"] if result.history["train"] else None,
        **{key: value for key, value in last_validation.items() if key != "step"},
        "checkpoint": None if result.checkpoint is None else str(result.checkpoint),
    }


def _resolve_settings(
    arguments: argparse.Namespace,
) -> tuple[SavedRun | None, TranslationTask, ModelConfig, TrainingConfig]:
    """Options given on the command line, else the resumed checkpoint's, else the task's recipe.

    The checkpoint of a resumed run is read here, once, and handed to :func:`train`; its task comes
    back with its tokenizers (:meth:`SavedRun.task`).
    """
    out_dir = Path(arguments.out_dir) if arguments.out_dir else Path("runs") / (arguments.task or "numbers")
    saved = SavedRun.read(out_dir) if arguments.resume else None
    task_name = arguments.task or (saved.task_name if saved else "numbers")
    if saved and task_name != saved.task_name:
        raise SystemExit(f"error: {out_dir} holds a {saved.task_name} run, not {task_name}")
    device = arguments.device or (saved.training_config.device if saved else "auto")
    recipe = recipe_for(task_name, resolve_device(device).type)

    model_values = saved.model_config.to_dict() if saved else recipe.model.to_dict()
    model_values.update(_given(arguments, [field.name for field in fields(ModelConfig)]))
    defaults = {field.name: field.default for field in fields(TrainingConfig)}
    training_values = saved.training_config.to_dict() if saved else {**defaults, **recipe.training}
    given = _given(arguments, [field.name for field in fields(TrainingConfig)])
    if "minutes" in given or "max_steps" in given:  # a new budget replaces the old one entirely
        training_values.update(minutes=None, max_steps=None)
    training_values.update(given, out_dir=str(out_dir))
    try:
        model_config, training_config = ModelConfig.from_dict(model_values), TrainingConfig.from_dict(training_values)
    except ValueError as error:
        raise SystemExit(f"error: {error}") from None
    task_arguments = _task_arguments(arguments, task_name, resumed=saved is not None)
    if saved:
        return saved, saved.task(), model_config, training_config
    try:
        task = load_task(task_name, **{"seed": training_config.seed, **recipe.task, **task_arguments})
    except ValueError as error:  # sizes the task cannot be made with
        raise SystemExit(f"error: {error}") from None
    return saved, task, model_config, training_config


def _task_arguments(arguments: argparse.Namespace, task_name: str, resumed: bool) -> dict:
    """The builder arguments of ``task_name`` given as options; any other task's option is refused."""
    options = {option.flag: option for definition in TASKS.values() for option in definition.options}
    given = {flag: option for flag, option in options.items() if getattr(arguments, _task_dest(option)) is not None}
    own = {option.flag for option in TASKS[task_name].options}
    for flag in given:
        if resumed:
            raise SystemExit(f"error: a resumed run keeps its checkpoint's task: {flag} cannot change it")
        if flag not in own:
            raise SystemExit(f"error: {flag} is not an option of the {task_name} task")
    return {option.argument: getattr(arguments, _task_dest(option)) for option in given.values()}


def _given(arguments: argparse.Namespace, names: list[str]) -> dict:
    return {name: getattr(arguments, name) for name in names if getattr(arguments, name) is not None}


def run_evaluate(arguments: argparse.Namespace) -> int:
    set_threads(arguments)
    path = checkpoint_path(arguments.checkpoint)
    started = time.monotonic()
    with user_errors():
        model, task, checkpoint = load_trained_model(path, arguments.device, arguments.weights)
    weights = "average" if arguments.weights == "average" and checkpoint.average is not None else "last"
    scores = evaluate(
        model, task, arguments.split, beam_size=arguments.beam, alpha=arguments.alpha, limit=arguments.limit
    )
    seconds = round(time.monotonic() - started, 1)
    print(score_lines(scores), file=sys.stderr)
    where = {"checkpoint": str(path), "task": task.name, "step": checkpoint.progress.step, "weights": weights}
    print_json({**where, **scores, "seconds": seconds})
    return 0


def score_lines(scores: dict) -> str:
    """:func:`evaluate`'s scores for a reader: what was decoded and from which files, then each score with
    its signature, as a benchmark publishes them."""
    decoding = "greedy" if scores["beam_size"] == 1 else f"beam {scores['beam_size']}, alpha {scores['alpha']}"
    checksums = ", ".join(f"{side} sha256:{digest}" for side, digest in scores["sha256"].items())
    lines = [f"{scores['split']}: {scores['examples']:,} pairs ({checksums}), {decoding}"]
    for name, signature in scores.get("signatures", {}).items():
        lines.append(f"  {name:24s} {scores[name]:6.2f}  {signature}")
    lines.append(f"  {'exact_match':24s} {scores['exact_match']:6.2f}")
    return "\n".join(lines)


def print_json(values: dict) -> None:
    print(json.dumps(values), flush=True)
