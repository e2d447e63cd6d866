"""Turning a trained model into translations: greedy decoding and beam search (paper §6.1).

The decoder produces one token at a time: feed ``<bos>``, pick a token from the next-token
distribution, feed it back, and repeat until ``<eos>`` (or ``max_output_length`` tokens).

* **Greedy** decoding takes the most probable token at every step.
* **Beam search** keeps the ``beam_size`` most probable partial translations ("beams") at every
  step, so a token that looks worse now can win later. The paper used a beam of 4 and a length
  penalty α = 0.6: a hypothesis is ranked by ``log P(y | x) / lp(y)`` with the GNMT penalty
  ``lp(y) = ((5 + |y|) / 6)^α`` (Wu et al., 2016), since raw log-probabilities favour short output.

Both use the decoder's **key/value cache**: at step ``t`` only the newest token goes through the
decoder; self-attention appends its key and value to those of the earlier steps, and
cross-attention projects the encoder memory once, at the first step. That makes a step cost
``O(t)`` instead of ``O(t²)`` for recomputing the whole prefix, which
:func:`greedy_decode_without_cache` does, for comparison (``benchmarks/decoding.py`` times both).

All functions take source ids ``(batch, L_src)`` (ending with ``<eos>``, padded with ``<pad>``)
and return generated ids ``(batch, T)``: the output tokens, ``<eos>`` included, then ``<pad>``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .masks import padding_mask
from .special_tokens import BOS_ID, EOS_ID, PAD_ID


@contextmanager
def evaluation_mode(model: nn.Module) -> Iterator[None]:
    """Dropout off and no gradients while decoding or scoring; the model's mode is restored afterwards."""
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            yield
    finally:
        model.train(was_training)


def _check_source(source: Tensor) -> None:
    if source.dim() != 2 or source.is_floating_point():
        raise ValueError(
            f"source must be integer token ids of shape (batch, L_src), got {source.dtype} {tuple(source.shape)}"
        )


def greedy_decode(
    model: nn.Module,
    source: Tensor,
    max_output_length: int = 100,
    *,
    pad_id: int = PAD_ID,
    bos_id: int = BOS_ID,
    eos_id: int = EOS_ID,
) -> Tensor:
    """The most probable token at every step, with the key/value cache.

    Args:
        model: a :class:`~transformer_course.Transformer`.
        source: ``(batch, L_src)`` token ids.
        max_output_length: the most tokens to generate.

    Returns:
        ``(batch, T)`` generated ids, ``T ≤ max_output_length``; after a row's ``<eos>`` comes ``<pad>``.
    """
    return _greedy_search(model, source, max_output_length, pad_id, bos_id, eos_id, use_cache=True)


def greedy_decode_without_cache(
    model: nn.Module,
    source: Tensor,
    max_output_length: int = 100,
    *,
    pad_id: int = PAD_ID,
    bos_id: int = BOS_ID,
    eos_id: int = EOS_ID,
) -> Tensor:
    """Greedy decoding that runs the decoder over the whole prefix at every step (no cache).

    Same arguments and result as :func:`greedy_decode`; step ``t`` costs ``O(t²)`` attention.
    """
    return _greedy_search(model, source, max_output_length, pad_id, bos_id, eos_id, use_cache=False)


def _greedy_search(
    model: nn.Module, source: Tensor, max_output_length: int, pad_id: int, bos_id: int, eos_id: int, *, use_cache: bool
) -> Tensor:
    """The loop of both greedy decoders; they differ only in what enters the decoder at each step."""
    _check_source(source)
    with evaluation_mode(model):
        memory, source_mask = _encode_source(model, source, pad_id)
        cache = model.decoder.new_cache() if use_cache else None
        prefix = torch.full((source.size(0), 1), bos_id, dtype=torch.long, device=source.device)  # (batch, 1 + t)
        finished = torch.zeros(source.size(0), dtype=torch.bool, device=source.device)
        for _ in range(max_output_length):
            if use_cache:  # the newest token alone: the earlier positions' keys and values are kept
                hidden = model.decode(prefix[:, -1:], memory, source_mask, cache=cache)  # (batch, 1, d_model)
            else:  # the whole prefix again: any model with encode, decode and next_token_logits will do
                hidden = model.decode(prefix, memory, source_mask)  # (batch, 1 + t, d_model)
            token = model.next_token_logits(hidden[:, -1]).argmax(dim=-1).masked_fill(finished, pad_id)  # (batch,)
            prefix = torch.cat([prefix, token.unsqueeze(1)], dim=1)
            finished |= token == eos_id
            if finished.all():
                break
        return prefix[:, 1:]


def _encode_source(model: nn.Module, source: Tensor, pad_id: int) -> tuple[Tensor, Tensor]:
    """The memory ``(batch, L_src, d_model)`` and the source's padding mask ``(batch, 1, 1, L_src)``."""
    source_mask = padding_mask(source, pad_id)
    return model.encode(source, source_mask), source_mask


def length_penalty(lengths: Tensor, alpha: float) -> Tensor:
    """GNMT's ``lp(y) = ((5 + |y|) / 6)^α``; 1 for α = 0 (rank by the raw log-probability)."""
    return ((5.0 + lengths.float()) / 6.0) ** alpha


def beam_search(
    model: nn.Module,
    source: Tensor,
    beam_size: int = 4,
    max_output_length: int = 100,
    alpha: float = 0.0,
    *,
    pad_id: int = PAD_ID,
    bos_id: int = BOS_ID,
    eos_id: int = EOS_ID,
) -> tuple[Tensor, Tensor]:
    """Keep the ``beam_size`` best hypotheses per sentence at every step; return the best one.

    All ``batch × beam_size`` hypotheses run through the decoder together as one batch. A
    hypothesis that has emitted ``<eos>`` stays in the beam with its score frozen (it can only be
    extended by ``<pad>``, at log-probability 0) and competes with the unfinished ones; the search
    ends when every beam of every sentence is finished, or after ``max_output_length`` steps.

    Args:
        model, source: a :class:`~transformer_course.Transformer` and ``(batch, L_src)`` token ids.
        beam_size: hypotheses kept per sentence (1 gives greedy decoding).
        max_output_length: the most tokens to generate.
        alpha: the length penalty's exponent α (0: none; the paper used 0.6).

    Returns:
        ``(tokens, scores)``: the best hypothesis per sentence ``(batch, T)`` (``<pad>`` after its
        ``<eos>``) and its log-probability ``log P(y | x)`` ``(batch,)``, without the penalty.
    """
    _check_source(source)
    if beam_size < 1:
        raise ValueError(f"beam_size must be at least 1, got {beam_size}")
    batch, beams = source.size(0), beam_size
    device = source.device
    with evaluation_mode(model):
        memory, source_mask = _memory_per_hypothesis(model, source, pad_id, beams)
        cache = model.decoder.new_cache()
        scores = torch.full((batch, beams), float("-inf"), device=device)  # log P of each hypothesis
        scores[:, 0] = 0.0  # one live hypothesis, <bos>, at the start: its copies must not be chosen
        lengths = torch.zeros(batch, beams, dtype=torch.long, device=device)
        finished = torch.zeros(batch, beams, dtype=torch.bool, device=device)
        tokens = torch.empty(batch * beams, 0, dtype=torch.long, device=device)  # (batch · beams, t)
        next_input = torch.full((batch * beams, 1), bos_id, dtype=torch.long, device=device)
        first_row = torch.arange(batch, device=device).unsqueeze(1) * beams  # (batch, 1)

        for _ in range(max_output_length):
            hidden = model.decode(next_input, memory, source_mask, cache=cache)  # (batch · beams, 1, d_model)
            log_probs = _next_token_log_probabilities(model, hidden, finished, pad_id)  # (batch, beams, V)
            scores, lengths, finished, origin, token = _best_extensions(
                scores, lengths, finished, log_probs, alpha, eos_id
            )
            rows = (first_row + origin).view(-1)  # (batch · beams,) rows to keep, in their new order
            for layer_cache in cache:
                layer_cache.reorder(rows)
            tokens = torch.cat([tokens[rows], token.view(-1, 1)], dim=1)
            if finished.all():
                break
            next_input = token.view(-1, 1)

        best = tokens.view(batch, beams, -1)[:, 0]  # topk sorts, so beam 0 ranks first
        return best, scores[:, 0]


def _memory_per_hypothesis(model: nn.Module, source: Tensor, pad_id: int, beams: int) -> tuple[Tensor, Tensor]:
    """The source encoded once, then repeated so that each hypothesis is a row of its own.

    Returns the memory ``(batch · beams, L_src, d_model)`` and its mask ``(batch · beams, 1, 1, L_src)``,
    the beams of a sentence in adjacent rows.
    """
    memory, source_mask = _encode_source(model, source, pad_id)
    return memory.repeat_interleave(beams, dim=0), source_mask.repeat_interleave(beams, dim=0)


def _best_extensions(
    scores: Tensor, lengths: Tensor, finished: Tensor, log_probs: Tensor, alpha: float, eos_id: int
) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """Keep the ``beams`` best one-token extensions of each sentence's hypotheses.

    ``scores``, ``lengths``, ``finished``: ``(batch, beams)``; ``log_probs``: ``(batch, beams, V)``.
    Ranked by score over the length penalty. Returns the new ``scores``, ``lengths`` and ``finished``,
    the beam each extension came from (``origin``) and its new token, each ``(batch, beams)``.
    """
    batch, beams, vocab_size = log_probs.shape
    candidate_scores = scores.unsqueeze(-1) + log_probs  # (batch, beams, V)
    candidate_lengths = lengths + (~finished).long()  # (batch, beams)
    ranking = candidate_scores / length_penalty(candidate_lengths, alpha).unsqueeze(-1)
    _, chosen = ranking.view(batch, -1).topk(beams, dim=-1)  # (batch, beams), best first
    origin = chosen // vocab_size  # the beam each new hypothesis extends
    token = chosen % vocab_size
    new_scores = candidate_scores.view(batch, -1).gather(1, chosen)
    new_finished = finished.gather(1, origin) | (token == eos_id)
    return new_scores, candidate_lengths.gather(1, origin), new_finished, origin, token


def _next_token_log_probabilities(model: nn.Module, hidden: Tensor, finished: Tensor, pad_id: int) -> Tensor:
    """``(batch, beams, V)`` log-probabilities of each hypothesis' next token.

    ``hidden``: the decoder's output ``(batch · beams, 1, d_model)``; ``finished``: ``(batch, beams)``.
    A finished hypothesis can only be followed by ``<pad>``, at log-probability 0, so its score stays.
    """
    batch, beams = finished.shape
    log_probs = F.log_softmax(model.next_token_logits(hidden[:, -1]).float(), dim=-1)  # (batch · beams, V)
    vocab_size = log_probs.size(-1)
    if beams > vocab_size:
        raise ValueError(f"beam_size={beams} is larger than the vocabulary ({vocab_size} tokens)")
    pad_only = torch.full((vocab_size,), float("-inf"), device=log_probs.device)
    pad_only[pad_id] = 0.0
    return torch.where(finished.unsqueeze(-1), pad_only, log_probs.view(batch, beams, vocab_size))


def sequence_log_probability(
    model: nn.Module, source: Tensor, output: Tensor, *, pad_id: int = PAD_ID, bos_id: int = BOS_ID
) -> Tensor:
    """``log P(y | x) = Σ_t log p(y_t | y_<t, x)`` of given outputs, by teacher forcing.

    Args:
        model: a :class:`~transformer_course.Transformer`.
        source: ``(batch, L_src)`` token ids.
        output: ``(batch, T)`` generated ids as the decoders return them (``<eos>``, then ``<pad>``).

    Returns:
        ``(batch,)`` float32 log-probabilities (the ``<eos>`` included, the ``<pad>`` not).
    """
    _check_source(source)
    with evaluation_mode(model):
        memory, source_mask = _encode_source(model, source, pad_id)
        decoder_input = torch.cat([torch.full_like(output[:, :1], bos_id), output[:, :-1]], dim=1)  # shifted right
        hidden = model.decode(decoder_input, memory, source_mask)
        log_probs = F.log_softmax(model.next_token_logits(hidden).float(), dim=-1)  # (batch, T, V)
        token_log_probs = log_probs.gather(-1, output.unsqueeze(-1)).squeeze(-1)  # (batch, T)
        return token_log_probs.masked_fill(output == pad_id, 0.0).sum(dim=1)


def translate(
    model: nn.Module,
    sentences: Sequence[str],
    source_tokenizer,
    target_tokenizer,
    beam_size: int = 1,
    alpha: float = 0.0,
    max_output_length: int | None = None,
    batch_size: int = 256,
) -> list[str]:
    """Translate ``sentences`` (strings) with greedy decoding (``beam_size=1``) or beam search.

    Sentences are decoded in batches of similar length, then returned in their original order.
    ``max_output_length`` defaults to twice the source length plus 10 tokens.
    """
    device = next(model.parameters()).device
    encoded = [source_tokenizer.encode(sentence) + [source_tokenizer.eos_id] for sentence in sentences]
    order = sorted(range(len(encoded)), key=lambda index: len(encoded[index]))
    translations: list[str] = [""] * len(encoded)
    for start in range(0, len(order), batch_size):
        indices = order[start : start + batch_size]
        longest = max(len(encoded[index]) for index in indices)
        source = torch.tensor(
            [encoded[index] + [source_tokenizer.pad_id] * (longest - len(encoded[index])) for index in indices],
            device=device,
        )
        limit = max_output_length if max_output_length is not None else 2 * longest + 10
        special_ids = dict(
            pad_id=source_tokenizer.pad_id, bos_id=target_tokenizer.bos_id, eos_id=target_tokenizer.eos_id
        )
        if beam_size == 1:
            output = greedy_decode(model, source, limit, **special_ids)
        else:
            output, _ = beam_search(model, source, beam_size, limit, alpha, **special_ids)
        for index, row in zip(indices, output.tolist()):
            translations[index] = target_tokenizer.decode(row)
    return translations
