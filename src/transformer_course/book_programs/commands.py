"""The book's commands (registered by :mod:`transformer_course.cli`).

    transformer-course record runs/multi30k --out book/records/multi30k-cpu.json
    transformer-course variations --steps 300 --out book/records/table3-numbers.json
    transformer-course table2 --minutes 1 --out book/records/table2-numbers.json

Like ``train`` and ``evaluate``, each ends by printing its results as one JSON line on standard output.
"""

from __future__ import annotations

import argparse

from ..device import device_option
from ..training.checkpoint import checkpoint_path
from ..training.commands import print_json, set_threads, user_errors
from . import table2, variations
from .record import make_record, write_record


def register(subcommands: argparse._SubParsersAction) -> None:
    """Add the book's commands to the ``transformer-course`` parser."""
    _register_record(subcommands)
    variations.register(subcommands)
    table2.register(subcommands)


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
    parser.add_argument("--device", type=device_option, default=None, help="auto (default), cpu, cuda …")
    parser.add_argument("--threads", type=int, default=None, help="CPU threads for PyTorch")
    parser.set_defaults(run=run_record)


def run_record(arguments: argparse.Namespace) -> int:
    set_threads(arguments)
    with user_errors():
        record = make_record(
            checkpoint_path(arguments.checkpoint), arguments.beam, arguments.alpha, arguments.examples, arguments.device
        )
    path = write_record(record, arguments.out)
    print_json({"record": str(path), "greedy": record["test"]["greedy"], "beam": record["test"]["beam"]})
    return 0
