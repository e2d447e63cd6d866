"""Decode a split of a task and score it: the ``evaluate`` command, and validation during training."""

from __future__ import annotations

from torch import nn

from ..data import PAD_ID, EncodedPairs, TranslationTask, bucketed_batches, make_batch
from ..decoding import evaluation_mode, translate
from ..masks import padding_mask
from ..metrics import exact_match, translation_scores
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
        ``{"split", "examples", "beam_size", "alpha", "exact_match", "sha256", "training_overlap"}``
        and, for a BLEU task, the three BLEU scores and chrF with their sacreBLEU signatures
        (:func:`~transformer_course.metrics.translation_scores`); scores in percent. ``sha256``:
        the checksums of the source and reference files scored (:meth:`TranslationTask.sha256`).
        ``training_overlap`` (:func:`training_overlap`): how many of the pairs scored have a
        sentence that also occurs in the training split, and the scores without those pairs.
    """
    hypotheses, references = translate_split(model, task, split, beam_size, alpha, limit)
    scores = {"split": split, "examples": len(references), "beam_size": beam_size, "alpha": alpha}
    scores.update(_scores(task, hypotheses, references, signatures=True))
    scores["sha256"] = task.sha256(split, limit)
    if split != "train":
        scores["training_overlap"] = training_overlap(task, task.splits[split][:limit], hypotheses, references)
    return scores


def _scores(task: TranslationTask, hypotheses: list[str], references: list[str], signatures: bool) -> dict:
    """Exact match and, for a BLEU task, BLEU and chrF (with their signatures if ``signatures``)."""
    scores = {"exact_match": exact_match(hypotheses, references)}
    if task.metric == "bleu":
        scores.update(translation_scores(hypotheses, references))
        if not signatures:
            del scores["signatures"]
    return scores


def training_overlap(task: TranslationTask, pairs: list, hypotheses: list[str], references: list[str]) -> dict:
    """How many of ``pairs`` (and their translations) have a sentence that also occurs in the training split.

    A test set's sentence that the model saw in training measures memory, not translation. Sentences
    are compared with their whitespace collapsed, exactly otherwise (case and punctuation count).

    Returns:
        ``{"sources_in_training", "references_in_training", "examples_without", "without"}``: the
        pairs whose source sentence is a training source, those whose reference is a training
        target, how many pairs have neither, and the scores of those (``None`` if none is left).
    """
    sources = {_collapsed(source) for source, _ in task.splits["train"]}
    targets = {_collapsed(target) for _, target in task.splits["train"]}
    source_seen = [_collapsed(source) in sources for source, _ in pairs]
    reference_seen = [_collapsed(target) in targets for _, target in pairs]
    kept = [index for index in range(len(pairs)) if not (source_seen[index] or reference_seen[index])]
    without = [hypotheses[index] for index in kept], [references[index] for index in kept]
    return {
        "sources_in_training": sum(source_seen),
        "references_in_training": sum(reference_seen),
        "examples_without": len(kept),
        "without": _scores(task, *without, signatures=False) if kept else None,
    }


def _collapsed(text: str) -> str:
    return " ".join(text.split())


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
