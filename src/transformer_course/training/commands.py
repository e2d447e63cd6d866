"""Command-line commands of the training tools (registered by :mod:`transformer_course.cli`)."""

from __future__ import annotations

import argparse


def register(subcommands: argparse._SubParsersAction) -> None:
    """Add this group's commands to the ``transformer-course`` parser."""
