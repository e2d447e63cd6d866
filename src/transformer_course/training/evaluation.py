"""Decode a split of a task and score it: the ``evaluate`` command, and validation during training."""

from __future__ import annotations

from torch import nn

from ..data import PAD_ID, EncodedPairs, TranslationTask, bucketed_batches, make_batch
from ..decoding import evaluation_mode, translate
from ..masks import padding_mask
from ..metrics import bleu_scores, exact_match
from .label_smoothing import LabelSmoothingLoss


def translate_split(
    model: nn.Module,
    task: TranslationTask,
    split: str,
    beam_size: int = 1,
    alpha: float = 0.0,
    limit: int | None = None,
) -> tuple[list[str], list[str]]:
    """The model's translations of the source side of ``split``, and the references beside them.

    Args:
        model: a trained :class:`~transformer_course.Transformer` (on any device).
        task: the task it was trained on.
        split: ``"test"``, ``"validation"`` or ``"train"``.
        beam_size: 1 for greedy decoding, more for beam search.
        alpha: the beam's length penalty exponent.
        limit: only the first ``limit`` pairs.

    Returns:
        ``(hypotheses, references)``, two lists of detokenised sentences in the split's order.
    """
    if split not in task.splits:
        raise ValueError(f"task {task.name!r} has no split {split!r}; it has {sorted(task.splits)}")
    pairs = task.splits[split][:limit]
    hypotheses = translate(
        model, [source for source, _ in pairs], task.source_tokenizer, task.target_tokenizer, beam_size, alpha
    )
    return hypotheses, [target for _, target in pairs]


def evaluate(
    model: nn.Module,
    task: TranslationTask,
    split: str = "test",
    beam_size: int = 1,
    alpha: float = 0.0,
    limit: int | None = None,
) -> dict:
    """Translate the source side of ``split`` and score it against the references.

    The arguments are :func:`translate_split`'s.

    Returns:
        ``{"split", "examples", "beam_size", "exact_match"}`` and, for a BLEU task,
        the three BLEU scores of :func:`~transformer_course.metrics.bleu_scores`; scores in percent.
    """
    hypotheses, references = translate_split(model, task, split, beam_size, alpha, limit)
    scores = {
        "split": split,
        "examples": len(references),
        "beam_size": beam_size,
        "exact_match": exact_match(hypotheses, references),
    }
    if task.metric == "bleu":
        scores.update(bleu_scores(hypotheses, references))
    return scores


def teacher_forced_loss(model: nn.Module, pairs: EncodedPairs, criterion: LabelSmoothingLoss, max_tokens: int) -> float:
    """The loss per target token over ``pairs``, with the reference as the decoder's input."""
    device = next(model.parameters()).device
    total, tokens = 0.0, 0
    with evaluation_mode(model):
        for indices in bucketed_batches(pairs.source_target_lengths(), max_tokens):
            batch = make_batch(pairs, indices).to(device)
            logits = model(batch.source, batch.target_input, padding_mask(batch.source, PAD_ID))
            count = batch.num_target_tokens
            total += criterion(logits, batch.target_output).item() * count
            tokens += count
    return total / tokens
