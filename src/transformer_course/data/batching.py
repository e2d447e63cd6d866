"""Batches of sentence pairs, bucketed by length to waste little on padding.

A batch is a rectangle: every sequence is padded to the longest one in it. Random batches mix
short and long sentences, so much of the rectangle is ``<pad>``, computed and thrown away. The
paper batched "sentence pairs together by approximate sequence length" (§5.1), and so do we:

1. shuffle the training pairs (with the seed and the epoch number);
2. cut them into large *pools* and sort each pool by length;
3. fill batches from a sorted pool while ``batch size × longest sequence ≤ max_tokens`` (a token
   budget, so batches of short sentences hold more of them);
4. shuffle the order of the batches.

Sorting only within pools keeps randomness between epochs; the token budget keeps the work per
step (and the memory) about constant. Every step is deterministic from ``(seed, epoch)``, which is
what lets an interrupted run resume at the same batch.

The source and the target are two tensors, each padded to its own longest sequence, so each has
its own padding (:func:`padding_fractions` counts both). Training sorts by each pair's longer side
(:meth:`EncodedPairs.longer_side_lengths`), which sets the budget; pairs of the same longer side
stay in shuffled order, so a batch mixes source and target lengths, and some padding is left.
Sorting by the longer side, then the source length, then the target length
(:meth:`EncodedPairs.source_target_lengths`) removes most of that padding with the same number of
batches, but then every batch holds pairs of a single shape, and the model learns more slowly per
step from such uniform batches, which costs more than the padding saves (``benchmarks/README.md``
has the runs). So the training loop sorts by the longer side, and only evaluation, where batches
teach nothing, sorts by both.

Tensors of a :class:`Batch`::

    source         (batch, L_src)  x_1 … x_n <eos> <pad> …
    target_input   (batch, L_tgt)  <bos> y_1 … y_m <pad> …     the decoder's input (shifted right)
    target_output  (batch, L_tgt)  y_1 … y_m <eos> <pad> …     what it must predict at each position
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from .vocabulary import BOS_ID, EOS_ID, PAD_ID


@dataclass
class EncodedPairs:
    """Token ids of sentence pairs, without ``<bos>``/``<eos>``."""

    sources: list[list[int]]
    targets: list[list[int]]

    def __len__(self) -> int:
        return len(self.sources)

    def longer_side_lengths(self) -> list[int]:
        """Each pair's length in a batch: the longer of source + ``<eos>`` and target + ``<eos>``."""
        return [max(len(source), len(target)) + 1 for source, target in zip(self.sources, self.targets)]

    def source_target_lengths(self) -> list[tuple[int, int]]:
        """Each pair's row length in the source tensor (with ``<eos>``) and in the target tensors
        (with ``<bos>`` or ``<eos>``): what :func:`bucketed_batches` sorts by."""
        return [(len(source) + 1, len(target) + 1) for source, target in zip(self.sources, self.targets)]


@dataclass
class Batch:
    """One training batch (see the module docstring for the layout)."""

    source: Tensor
    target_input: Tensor
    target_output: Tensor

    def to(self, device: torch.device | str) -> Batch:
        return Batch(
            *(tensor.to(device, non_blocking=True) for tensor in (self.source, self.target_input, self.target_output))
        )

    @property
    def num_target_tokens(self) -> int:
        """Target tokens that are not padding: the tokens the loss is averaged over."""
        return int((self.target_output != PAD_ID).sum())


def make_batch(pairs: EncodedPairs, indices: list[int]) -> Batch:
    """Pad the pairs ``indices`` of ``pairs`` into a :class:`Batch`."""
    if not indices:
        raise ValueError("a batch needs at least one pair; got no indices")
    sources = [pairs.sources[index] + [EOS_ID] for index in indices]
    targets = [pairs.targets[index] for index in indices]
    return Batch(
        source=_pad(sources),
        target_input=_pad([[BOS_ID] + target for target in targets]),
        target_output=_pad([target + [EOS_ID] for target in targets]),
    )


def _pad(sequences: list[list[int]]) -> Tensor:
    """Lists of ids → ``(len(sequences), longest)`` int64, right-padded with ``<pad>``."""
    longest = max(len(sequence) for sequence in sequences)
    return torch.tensor([sequence + [PAD_ID] * (longest - len(sequence)) for sequence in sequences], dtype=torch.long)


def bucketed_batches(
    lengths: Sequence[int] | Sequence[tuple[int, int]],
    max_tokens: int,
    seed: int = 0,
    epoch: int = 0,
    pool_size: int = 100_000,
) -> list[list[int]]:
    """Group example indices into batches of similar length, deterministic from ``(seed, epoch)``.

    Args:
        lengths: each example's ``(source, target)`` lengths in a batch (see
            :meth:`EncodedPairs.source_target_lengths`), or its padded length alone (see
            :meth:`EncodedPairs.longer_side_lengths`). A pool is sorted by the longer side, then by the source
            and target lengths.
        max_tokens: token budget: ``len(batch) × longest sequence in batch ≤ max_tokens`` (a
            single example longer than the budget gets a batch of its own).
        seed, epoch: the shuffles use ``random.Random(f"{seed}/{epoch}")``.
        pool_size: examples sorted together; larger pools give less padding, smaller ones more
            variety between epochs.

    Returns:
        Batches of indices into ``lengths``, in shuffled order; every index appears once.
    """
    if max_tokens <= 0 or pool_size <= 0:
        raise ValueError(f"max_tokens and pool_size must be positive, got {max_tokens} and {pool_size}")
    # Sort key: the longer side first (it sets the budget), then source, then target length.
    keys = [(max(length), *length) if isinstance(length, tuple) else (length,) for length in lengths]
    rng = random.Random(f"{seed}/{epoch}")
    order = list(range(len(keys)))
    rng.shuffle(order)
    batches = []
    for start in range(0, len(order), pool_size):
        pool = sorted(order[start : start + pool_size], key=keys.__getitem__)
        batch: list[int] = []
        for index in pool:
            # Sorted ascending by the longer side, so the newest example is the longest of the batch.
            if batch and (len(batch) + 1) * keys[index][0] > max_tokens:
                batches.append(batch)
                batch = []
            batch.append(index)
        if batch:
            batches.append(batch)
    rng.shuffle(batches)
    return batches


def random_batches(num_examples: int, batch_size: int, seed: int = 0, epoch: int = 0) -> list[list[int]]:
    """Batches of ``batch_size`` shuffled indices, regardless of length (the baseline bucketing beats)."""
    order = list(range(num_examples))
    random.Random(f"{seed}/{epoch}").shuffle(order)
    return [order[start : start + batch_size] for start in range(0, num_examples, batch_size)]


def padding_fractions(pairs: EncodedPairs, batches: list[list[int]]) -> dict[str, float]:
    """The fraction of padding in the tensors that :func:`make_batch` builds from ``batches``.

    Returns:
        ``{"source": ..., "target": ..., "both": ...}``: the share of ``<pad>`` positions in the
        source tensors, in the target tensors (``target_input`` and ``target_output`` are padded
        alike), and in the source and target tensors together.
    """
    lengths = pairs.source_target_lengths()
    real = {"source": 0, "target": 0}
    padded = {"source": 0, "target": 0}
    for batch in batches:
        for side, column in (("source", 0), ("target", 1)):
            side_lengths = [lengths[index][column] for index in batch]
            real[side] += sum(side_lengths)
            padded[side] += len(batch) * max(side_lengths)
    fractions = {side: 1.0 - real[side] / padded[side] for side in real}
    fractions["both"] = 1.0 - sum(real.values()) / sum(padded.values())
    return fractions
