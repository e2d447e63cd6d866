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
    padding_fractions,
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
    assert pairs.longer_side_lengths() == [4, 5]


def test_source_target_lengths_are_the_rows_of_the_two_tensors():
    pairs = EncodedPairs(sources=[[5, 6, 7], [8]], targets=[[9], [10, 11]])
    batch = make_batch(pairs, [0])
    assert pairs.source_target_lengths() == [(4, 2), (2, 3)]
    assert (batch.source.size(1), batch.target_input.size(1)) == pairs.source_target_lengths()[0]


def numbers_pairs(size=20_000):
    return numbers_task(seed=0, train_size=size, validation_size=10, test_size=10).encode("train")


def test_every_example_is_in_exactly_one_bucketed_batch():
    lengths = numbers_pairs(5000).source_target_lengths()
    batches = bucketed_batches(lengths, max_tokens=512, seed=0, pool_size=1000)
    assert sorted(index for batch in batches for index in batch) == list(range(len(lengths)))


def test_bucketed_batches_respect_the_token_budget():
    lengths = numbers_pairs(5000).source_target_lengths()
    for batch in bucketed_batches(lengths, max_tokens=300, seed=0):
        assert len(batch) * max(max(lengths[index]) for index in batch) <= 300


def test_an_example_longer_than_the_budget_gets_a_batch_of_its_own():
    assert sorted(bucketed_batches([2, 50, 3], max_tokens=10)) == [[0, 2], [1]]
    assert sorted(bucketed_batches([(2, 1), (50, 3), (1, 3)], max_tokens=10)) == [[0, 2], [1]]


def test_bucketing_is_deterministic_from_seed_and_epoch():
    lengths = numbers_pairs(5000).source_target_lengths()
    assert bucketed_batches(lengths, 512, seed=1, epoch=2) == bucketed_batches(lengths, 512, seed=1, epoch=2)
    assert bucketed_batches(lengths, 512, seed=1, epoch=2) != bucketed_batches(lengths, 512, seed=1, epoch=3)
    assert bucketed_batches(lengths, 512, seed=1, epoch=2) != bucketed_batches(lengths, 512, seed=2, epoch=2)


@pytest.mark.parametrize("sort_by", ["longer side (training)", "then source, then target (evaluation)"])
def test_bucketing_leaves_less_padding_in_both_tensors_than_random_batches_of_the_same_size(sort_by):
    pairs = numbers_pairs()
    lengths = pairs.longer_side_lengths() if sort_by.startswith("longer") else pairs.source_target_lengths()
    bucketed = bucketed_batches(lengths, max_tokens=2048, seed=0)
    average_size = round(len(pairs) / len(bucketed))
    shuffled = random_batches(len(pairs), average_size, seed=0)
    bucketed_padding, random_padding = padding_fractions(pairs, bucketed), padding_fractions(pairs, shuffled)
    for tensor in ("source", "target", "both"):
        assert random_padding[tensor] > 0.25, tensor  # lengths of 2 … 18 tokens mixed at random
        assert bucketed_padding[tensor] < random_padding[tensor] / 5, tensor


def test_breaking_ties_by_source_then_target_length_leaves_less_padding_than_the_longer_side_alone():
    pairs = numbers_pairs()
    longer_side = bucketed_batches(pairs.longer_side_lengths(), max_tokens=1536, seed=0)
    both_sides = bucketed_batches(pairs.source_target_lengths(), max_tokens=1536, seed=0)
    assert padding_fractions(pairs, both_sides)["both"] < padding_fractions(pairs, longer_side)["both"] / 2
    assert len(both_sides) == len(longer_side)  # the budget, and so the number of steps, is the same


def test_padding_fractions_count_each_tensors_own_padding():
    pairs = EncodedPairs(sources=[[5, 6, 7], [8]], targets=[[9], [10, 11]])
    # source (2, 4) holding 4 + 2 real tokens; targets (2, 3) holding 2 + 3
    assert padding_fractions(pairs, [[0, 1]]) == pytest.approx({"source": 2 / 8, "target": 1 / 6, "both": 3 / 14})
    assert padding_fractions(pairs, [[0], [1]]) == {"source": 0.0, "target": 0.0, "both": 0.0}


def test_an_empty_batch_is_rejected():
    with pytest.raises(ValueError, match="at least one pair"):
        make_batch(EncodedPairs(sources=[[5]], targets=[[6]]), [])
