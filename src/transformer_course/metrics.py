"""Scores of translations: exact match and BLEU.

**BLEU** (Papineni et al., 2002) is the geometric mean of the 1- to 4-gram precisions of the
hypotheses against the references, over the whole corpus, times a penalty for output shorter
than the references; 0 … 100. The paper reports it on WMT 2014 (Table 2). Scores are only
comparable when computed the same way, so we use **sacreBLEU** (Post, 2018), the standard:
detokenised text in, its own ``13a`` tokenisation, case-sensitive.

Many published Multi30k notebooks instead report BLEU on lowercased, tokenised text, which is a
few points higher; :func:`bleu_scores` gives both, side by side, so that our numbers can be
compared with theirs.

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
        lowercase: compare lowercased text (the variant of many published Multi30k results).
        tokenize: sacreBLEU's tokeniser: ``"13a"`` (the standard), ``"zh"`` for Chinese, …
    """
    _check_lengths(hypotheses, references)
    return sacrebleu.corpus_bleu(list(hypotheses), [list(references)], lowercase=lowercase, tokenize=tokenize).score


def bleu_scores(hypotheses: Sequence[str], references: Sequence[str]) -> dict[str, float]:
    """``{"bleu": sacreBLEU, "bleu_lowercase": lowercased tokenised BLEU}``, to report side by side."""
    return {
        "bleu": corpus_bleu(hypotheses, references),
        "bleu_lowercase": corpus_bleu(hypotheses, references, lowercase=True),
    }
