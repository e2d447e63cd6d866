"""Scores of translations: exact match and BLEU.

**BLEU** (Papineni et al., 2002) is the geometric mean of the 1- to 4-gram precisions of the
hypotheses against the references, over the whole corpus, times a penalty for output shorter
than the references; 0 … 100. The paper reports it on WMT 2014 (Table 2). Scores are only
comparable when computed the same way, so we use **sacreBLEU** (Post, 2018), the standard:
detokenised text in, its own ``13a`` tokenisation, case-sensitive.

:func:`bleu_scores` also gives ``bleu_lowercase``: the same sacreBLEU computation (``13a``
tokenisation) on lowercased hypotheses and references, i.e. case-insensitive sacreBLEU. It is
*not* the BLEU that many published Multi30k notebooks report: they lowercase the text, split it
into words with their own tokeniser (often spaCy's) and score those tokens with another BLEU
implementation (torchtext's, NLTK's, Hugging Face ``evaluate``'s). Such scores are computed
differently from both of ours, so no fixed offset converts one into the other; compare only scores
computed the same way.

**Exact match** is the share of hypotheses identical to their reference, the natural score of
tasks with one right answer (numbers, copy, reverse).
"""

from __future__ import annotations

from typing import Sequence

import sacrebleu


def _check_lengths(hypotheses: Sequence[str], references: Sequence[str]) -> None:
    if len(hypotheses) != len(references):
        raise ValueError(f"got {len(hypotheses)} hypotheses for {len(references)} references")
    if not references:
        raise ValueError("cannot score an empty list of translations")


def exact_match(hypotheses: Sequence[str], references: Sequence[str]) -> float:
    """Percentage (0 … 100) of hypotheses equal to their reference."""
    _check_lengths(hypotheses, references)
    return 100.0 * sum(hypothesis == reference for hypothesis, reference in zip(hypotheses, references)) / len(references)


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[str], lowercase: bool = False, tokenize: str = "13a") -> float:
    """sacreBLEU corpus BLEU (0 … 100) of detokenised hypotheses against one reference each.

    Args:
        lowercase: lowercase hypotheses and references first (case-insensitive BLEU).
        tokenize: sacreBLEU's tokeniser: ``"13a"`` (the standard), ``"zh"`` for Chinese, …
    """
    _check_lengths(hypotheses, references)
    return sacrebleu.corpus_bleu(list(hypotheses), [list(references)], lowercase=lowercase, tokenize=tokenize).score


def bleu_scores(hypotheses: Sequence[str], references: Sequence[str]) -> dict[str, float]:
    """``{"bleu": sacreBLEU, "bleu_lowercase": sacreBLEU on lowercased text}``, both with ``13a`` tokenisation."""
    return {
        "bleu": corpus_bleu(hypotheses, references),
        "bleu_lowercase": corpus_bleu(hypotheses, references, lowercase=True),
    }
