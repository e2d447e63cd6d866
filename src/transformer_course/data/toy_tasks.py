"""Copy and reverse: the smallest sequence-to-sequence tasks, for debugging a model or a loop.

    copy:     "c a d b"  →  "c a d b"
    reverse:  "c a d b"  →  "b d a c"

A correct encoder-decoder learns either in a few minutes on a CPU; one that does not has a bug (a
wrong mask, shifted targets, a position table that is not added). Copy needs attention to look at
the same position; reverse needs it to look at the mirrored one, which exercises the positions.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable

from .pairs import Pair, check_split_sizes


def symbols(vocabulary_size: int) -> list[str]:
    """The first ``vocabulary_size`` lowercase letters: the task's tokens."""
    if not 1 <= vocabulary_size <= 26:
        raise ValueError(f"vocabulary_size must be in 1 … 26, got {vocabulary_size}")
    return list(string.ascii_lowercase[:vocabulary_size])


def sequence_task_splits(
    transform: Callable[[list[str]], list[str]],
    seed: int = 0,
    vocabulary_size: int = 10,
    max_length: int = 12,
    train_size: int = 20_000,
    validation_size: int = 500,
    test_size: int = 500,
) -> dict[str, list[Pair]]:
    """Random symbol sequences of length 1 … ``max_length`` and their ``transform``.

    Every sequence is distinct, so no source is in two splits.

    Returns:
        ``{"train": [(source, target), ...], "validation": [...], "test": [...]}``, with the
        symbols separated by spaces.
    """
    check_split_sizes(train_size, validation_size, test_size)
    alphabet = symbols(vocabulary_size)
    possible = sum(vocabulary_size**length for length in range(1, max_length + 1))
    total = train_size + validation_size + test_size
    if total > possible:
        raise ValueError(f"asked for {total} distinct sequences but only {possible} exist")
    rng = random.Random(seed)
    seen: set[tuple[str, ...]] = set()
    sequences = []
    while len(sequences) < total:
        sequence = tuple(rng.choices(alphabet, k=rng.randint(1, max_length)))
        if sequence not in seen:
            seen.add(sequence)
            sequences.append(list(sequence))
    pairs = [(" ".join(sequence), " ".join(transform(sequence))) for sequence in sequences]
    return {
        "test": pairs[:test_size],
        "validation": pairs[test_size : test_size + validation_size],
        "train": pairs[test_size + validation_size :],
    }


def copy_sequence(sequence: list[str]) -> list[str]:
    return list(sequence)


def reverse_sequence(sequence: list[str]) -> list[str]:
    return sequence[::-1]
