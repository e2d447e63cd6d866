"""Padding, the token budget and bucketing by length."""

import pytest
import torch

from transformer_course.data import (
    BOS_ID,
    EOS_ID,
    PAD_ID,
    EncodedPairs,
    bucketed_batches,
    make_batch,
    numbers_task,
    padding_fraction,
    random_batches,
)


def test_a_batch_holds_source_with_eos_and_target_shifted_right():
    pairs = EncodedPairs(sources=[[5, 6, 7], [8]], targets=[[9], [10, 11]])
    batch = make_batch(pairs, [0, 1])
    assert batch.source.tolist() == [[5, 6, 7, EOS_ID], [8, EOS_ID, PAD_ID, PAD_ID]]
    assert batch.target_input.tolist() == [[BOS_ID, 9, PAD_ID], [BOS_ID, 10, 11]]
    assert batch.target_output.tolist() == [[9, EOS_ID, PAD_ID], [10, 11, EOS_ID]]
    assert batch.num_target_tokens == 5
    assert batch.source.dtype == torch.long


def test_lengths_count_the_longer_side_with_its_eos():
    pairs = EncodedPairs(sources=[[1, 2, 3], [1]], targets=[[1], [1, 2, 3, 4]])
    assert pairs.lengths() == [4, 5]


def numbers_lengths(size=20_000):
    return numbers_task(seed=0, train_size=size, validation_size=10, test_size=10).encode("train").lengths()


def test_every_example_is_in_exactly_one_bucketed_batch():
    lengths = numbers_lengths(5000)
    batches = bucketed_batches(lengths, max_tokens=512, seed=0, pool_size=1000)
    assert sorted(index for batch in batches for index in batch) == list(range(len(lengths)))


def test_bucketed_batches_respect_the_token_budget():
    lengths = numbers_lengths(5000)
    for batch in bucketed_batches(lengths, max_tokens=300, seed=0):
        assert len(batch) * max(lengths[index] for index in batch) <= 300


def test_an_example_longer_than_the_budget_gets_a_batch_of_its_own():
    assert sorted(bucketed_batches([2, 50, 3], max_tokens=10)) == [[0, 2], [1]]


def test_bucketing_is_deterministic_from_seed_and_epoch():
    lengths = numbers_lengths(5000)
    assert bucketed_batches(lengths, 512, seed=1, epoch=2) == bucketed_batches(lengths, 512, seed=1, epoch=2)
    assert bucketed_batches(lengths, 512, seed=1, epoch=2) != bucketed_batches(lengths, 512, seed=1, epoch=3)
    assert bucketed_batches(lengths, 512, seed=1, epoch=2) != bucketed_batches(lengths, 512, seed=2, epoch=2)


def test_bucketing_wastes_less_on_padding_than_random_batches_of_the_same_size():
    lengths = numbers_lengths()
    bucketed = bucketed_batches(lengths, max_tokens=2048, seed=0, pool_size=5000)
    average_size = round(len(lengths) / len(bucketed))
    random = random_batches(len(lengths), average_size, seed=0)
    bucketed_padding, random_padding = padding_fraction(lengths, bucketed), padding_fraction(lengths, random)
    assert bucketed_padding < 0.05  # sorted pools: nearly no padding
    assert random_padding > 0.3  # lengths of 2 … 18 tokens mixed at random
    assert bucketed_padding < random_padding / 5


def test_padding_fraction_of_equal_lengths_is_zero():
    assert padding_fraction([3, 3, 3, 3], [[0, 1], [2, 3]]) == 0.0
    assert padding_fraction([1, 3], [[0, 1]]) == 1 - 4 / 6


def test_an_empty_batch_is_rejected():
    with pytest.raises(ValueError, match="at least one pair"):
        make_batch(EncodedPairs(sources=[[5]], targets=[[6]]), [])
