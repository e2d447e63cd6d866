"""Greedy decoding with and without the key/value cache, beam search, and translate()."""

import pytest
import torch

from transformer_course import Transformer
from transformer_course.data import Vocabulary
from transformer_course.decoding import (
    beam_search,
    greedy_decode,
    greedy_decode_without_cache,
    length_penalty,
    sequence_log_probability,
    translate,
)

VOCAB = 12
EOS = 2


def untrained_model(seed=0, **options):
    torch.manual_seed(seed)
    settings = dict(d_model=32, num_heads=4, num_layers=2, d_ff=64, dropout=0.1)
    settings.update(options)
    return Transformer(VOCAB, VOCAB, **settings)


def eos_prone_model(eos_bias=2.0, seed=0):
    """An untrained model whose <eos> logit is raised by ``eos_bias``: an untrained model alone never
    ends a sentence, so the checks of what happens at and after <eos> would have nothing to check."""
    model = untrained_model(seed)
    original = model.next_token_logits
    shift = torch.zeros(VOCAB)
    shift[EOS] = eos_bias
    model.next_token_logits = lambda hidden: original(hidden) + shift
    return model


def random_source(batch=6, length=7, seed=1):
    generator = torch.Generator().manual_seed(seed)
    source = torch.randint(4, VOCAB, (batch, length), generator=generator)
    source[:, -1] = EOS
    source[0, 3:] = 0  # a shorter sentence, padded
    source[0, 2] = EOS
    return source


def test_cached_greedy_decoding_equals_recomputing_greedy_decoding():
    model, source = untrained_model(), random_source()
    assert torch.equal(
        greedy_decode(model, source, max_output_length=20),
        greedy_decode_without_cache(model, source, max_output_length=20),
    )


def test_cached_greedy_decoding_equals_recomputing_with_pre_ln_and_learned_positions():
    model, source = untrained_model(norm_first=True, positional="learned"), random_source(seed=3)
    assert torch.equal(
        greedy_decode(model, source, max_output_length=20),
        greedy_decode_without_cache(model, source, max_output_length=20),
    )


def test_greedy_decoding_without_cache_needs_no_cache_argument_from_the_model():
    model, source = untrained_model(), random_source()
    expected = greedy_decode(model, source, max_output_length=20)
    decode_with_cache = model.decode
    model.decode = lambda tgt, memory, src_mask=None, tgt_mask=None: decode_with_cache(tgt, memory, src_mask, tgt_mask)
    assert torch.equal(greedy_decode_without_cache(model, source, max_output_length=20), expected)


@pytest.mark.parametrize("decode", [greedy_decode, greedy_decode_without_cache])
def test_greedy_output_is_padded_after_eos_and_stops_when_all_rows_are_done(decode):
    model, steps = untrained_model(), []

    def scripted_logits(hidden):  # row r says token 5 for r steps, then <eos>
        step = len(steps)
        steps.append(step)
        logits = torch.zeros(hidden.size(0), VOCAB)
        for row in range(hidden.size(0)):
            logits[row, EOS if step >= row else 5] = 1.0
        return logits

    model.next_token_logits = scripted_logits
    output = decode(model, random_source(batch=3), max_output_length=20)
    assert output.tolist() == [[EOS, 0, 0], [5, EOS, 0], [5, 5, EOS]]
    assert len(steps) == 3


def test_decoding_restores_training_mode():
    model = untrained_model()
    model.train()
    greedy_decode(model, random_source(), max_output_length=5)
    assert model.training


def test_beam_of_one_is_greedy_decoding():
    model, source = untrained_model(), random_source()
    beam_output, _ = beam_search(model, source, beam_size=1, max_output_length=20)
    assert torch.equal(beam_output, greedy_decode(model, source, max_output_length=20))


def test_beam_search_scores_at_least_as_high_as_greedy():
    for seed in range(3):
        model, source = untrained_model(seed), random_source(seed=seed)
        greedy_scores = sequence_log_probability(model, source, greedy_decode(model, source, max_output_length=20))
        _, beam_scores = beam_search(model, source, beam_size=4, max_output_length=20)
        assert (beam_scores >= greedy_scores - 1e-5).all()


def test_beam_search_finds_a_strictly_better_hypothesis_somewhere():
    model, source = untrained_model(0), random_source(batch=16, seed=0)
    greedy_scores = sequence_log_probability(model, source, greedy_decode(model, source, max_output_length=20))
    _, beam_scores = beam_search(model, source, beam_size=4, max_output_length=20)
    assert (beam_scores > greedy_scores + 1e-3).any()


def test_beam_search_reports_the_model_score_of_its_hypothesis():
    model, source = untrained_model(), random_source()
    output, scores = beam_search(model, source, beam_size=3, max_output_length=20)
    torch.testing.assert_close(scores, sequence_log_probability(model, source, output), atol=1e-4, rtol=1e-4)


def test_beam_search_pads_after_eos():
    output, _ = beam_search(eos_prone_model(), random_source(), beam_size=3, max_output_length=20)
    ended = [row for row in output.tolist() if EOS in row[:-1]]
    assert ended, f"expected some hypotheses to end before max_output_length, got {output.tolist()}"
    for row in ended:
        assert all(token == 0 for token in row[row.index(EOS) + 1 :]), f"tokens after <eos> in {row}"


def test_length_penalty_prefers_longer_hypotheses():
    model, source = eos_prone_model(), random_source(batch=16)
    short, _ = beam_search(model, source, beam_size=4, max_output_length=20, alpha=0.0)
    long, _ = beam_search(model, source, beam_size=4, max_output_length=20, alpha=2.0)
    short_tokens, long_tokens = (short != 0).sum().item(), (long != 0).sum().item()
    assert long_tokens > short_tokens, f"alpha=2 gave {long_tokens} tokens, alpha=0 gave {short_tokens}"


def test_length_penalty_is_gnmt_formula():
    torch.testing.assert_close(length_penalty(torch.tensor([1, 7]), 0.6), torch.tensor([1.0, 2.0**0.6]))
    torch.testing.assert_close(length_penalty(torch.tensor([3]), 0.0), torch.tensor([1.0]))


def test_bad_inputs_are_rejected_with_their_shapes():
    model = untrained_model()
    with pytest.raises(ValueError, match=r"\(batch, L_src\)"):
        greedy_decode(model, torch.ones(3, dtype=torch.long))
    with pytest.raises(ValueError, match="beam_size"):
        beam_search(model, random_source(), beam_size=0)
    with pytest.raises(ValueError, match="larger than the vocabulary"):
        beam_search(model, random_source(), beam_size=VOCAB + 1)


def test_translate_returns_one_string_per_sentence_in_order():
    vocabulary = Vocabulary(list("abcdefgh"))
    # An untrained model that happens to translate these three sentences into three different strings
    # of different lengths (most give every sentence the same output), so that an output given to
    # the wrong sentence, or cut short by another's padding, shows.
    model = untrained_model(28, d_model=64, num_heads=4, num_layers=1)
    sentences = ["a b c", "d", "e f g h a b"]
    one_by_one = [
        translate(model, [sentence], vocabulary, vocabulary, max_output_length=8)[0] for sentence in sentences
    ]
    assert len(set(one_by_one)) == len(sentences) and len({len(text) for text in one_by_one}) == len(sentences)
    assert translate(model, sentences, vocabulary, vocabulary, max_output_length=8, batch_size=2) == one_by_one
    backwards = translate(model, sentences[::-1], vocabulary, vocabulary, max_output_length=8, batch_size=3)
    assert backwards == one_by_one[::-1]


@pytest.mark.parametrize(
    "decode", [greedy_decode, lambda model, source, max_output_length: beam_search(model, source, 3, max_output_length)]
)
def test_the_cache_projects_the_memory_once_and_feeds_one_new_token_per_step(decode):
    model, source = untrained_model(), random_source()
    cross_inputs, self_inputs = [], []
    for layer in model.decoder.layers:
        layer.cross_attention.w_k.register_forward_hook(
            lambda module, inputs, output: cross_inputs.append(inputs[0].shape)
        )
        layer.self_attention.w_k.register_forward_hook(
            lambda module, inputs, output: self_inputs.append(inputs[0].shape)
        )
    decode(model, source, max_output_length=5)
    assert len(cross_inputs) == len(model.decoder.layers)  # once per layer, at the first step
    assert len(self_inputs) > len(model.decoder.layers)  # several steps were taken
    assert all(shape[1] == 1 for shape in self_inputs)  # each step: the newest position only
