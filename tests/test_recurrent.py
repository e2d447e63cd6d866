"""Table 2's recurrent baseline: a GRU encoder-decoder with attention that the course's loop and search take as
they take the Transformer."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from tiny import TINY_MODEL

from transformer_course.decoding import beam_search, greedy_decode, greedy_decode_without_cache
from transformer_course.masks import padding_mask
from transformer_course.recurrent import RecurrentEncoderDecoder
from transformer_course.training import TrainingConfig, train

VOCABULARY = 11


@pytest.fixture
def model() -> RecurrentEncoderDecoder:
    torch.manual_seed(0)
    return RecurrentEncoderDecoder(VOCABULARY, VOCABULARY, d_model=16, num_layers=2, dropout=0.0).eval()


def _logits(model, src, tgt):
    return model(src, tgt, padding_mask(src, 0))


def test_teacher_forced_logits_have_one_row_per_target_position(model):
    src, tgt = torch.randint(3, VOCABULARY, (4, 7)), torch.randint(3, VOCABULARY, (4, 5))
    assert _logits(model, src, tgt).shape == (4, 5, VOCABULARY)


def test_source_padding_changes_nothing(model):
    src = torch.randint(3, VOCABULARY, (1, 5))
    padded = torch.cat([src, torch.zeros(1, 3, dtype=torch.long)], dim=1)
    tgt = torch.randint(3, VOCABULARY, (1, 4))
    torch.testing.assert_close(_logits(model, padded, tgt), _logits(model, src, tgt))
    memory = model.encode(padded, padding_mask(padded, 0))
    assert torch.all(memory[:, 5:] == 0), "padding positions of the memory are not left zero"


def test_a_position_never_sees_the_target_tokens_after_it(model):
    src, tgt = torch.randint(3, VOCABULARY, (2, 6)), torch.randint(3, VOCABULARY, (2, 5))
    changed = tgt.clone()
    changed[:, 3:] = (changed[:, 3:] + 1) % VOCABULARY
    torch.testing.assert_close(_logits(model, src, changed)[:, :3], _logits(model, src, tgt)[:, :3])


def test_decoding_step_by_step_with_the_cache_equals_decoding_the_whole_prefix(model):
    src, tgt = torch.randint(3, VOCABULARY, (3, 6)), torch.randint(3, VOCABULARY, (3, 5))
    mask = padding_mask(src, 0)
    memory = model.encode(src, mask)
    cache = model.decoder.new_cache()
    steps = torch.cat([model.decode(tgt[:, t : t + 1], memory, mask, cache=cache) for t in range(5)], dim=1)
    torch.testing.assert_close(steps, model.decode(tgt, memory, mask))


def test_greedy_decoding_with_and_without_the_cache_and_a_beam_of_one_agree(model):
    src = torch.randint(3, VOCABULARY, (3, 6))
    cached = greedy_decode(model, src, max_output_length=8)
    assert torch.equal(cached, greedy_decode_without_cache(model, src, max_output_length=8))
    beam, _ = beam_search(model, src, beam_size=1, max_output_length=8)
    assert torch.equal(beam[:, : cached.size(1)], cached[:, : beam.size(1)])


def test_beam_search_reorders_the_recurrent_state_with_its_hypotheses(model):
    src = torch.randint(3, VOCABULARY, (2, 6))
    tokens, scores = beam_search(model, src, beam_size=3, max_output_length=6)
    assert tokens.shape[0] == 2 and scores.shape == (2,)
    # The returned score is the model's own log-probability of the returned tokens, step by step.
    for row in range(2):
        hypothesis = tokens[row][tokens[row] != 0]
        decoder_input = torch.cat([torch.tensor([1]), hypothesis[:-1]]).unsqueeze(0)
        log_probs = torch.log_softmax(_logits(model, src[row : row + 1], decoder_input), dim=-1)[0]
        expected = log_probs.gather(1, hypothesis.unsqueeze(1)).sum()
        torch.testing.assert_close(scores[row], expected, atol=1e-4, rtol=1e-4)


def test_an_odd_width_is_refused_by_name():
    with pytest.raises(ValueError, match="d_model must be even"):
        RecurrentEncoderDecoder(VOCABULARY, VOCABULARY, d_model=15)


def test_the_training_loop_trains_it_from_a_model_config(tiny_task, tmp_path):
    config = dataclasses.replace(TINY_MODEL, architecture="gru")
    settings = TrainingConfig(
        max_steps=60, max_tokens=64, warmup_steps=5, validate_every=30, out_dir=str(tmp_path), curves=False
    )
    result = train(tiny_task, settings, config, progress=False)
    assert isinstance(result.model, RecurrentEncoderDecoder)
    assert result.history["validation"][-1]["validation_loss"] < result.history["train"][0]["train_loss"] - 0.3
