"""Scores of translations: exact match, BLEU and chrF, with the signatures that say how each was computed.

**BLEU** (Papineni et al., 2002) is the geometric mean of the 1- to 4-gram precisions of the
hypotheses against the references, over the whole corpus, times a penalty for output shorter
than the references; 0 … 100. The paper reports it on WMT 2014 (Table 2). Scores are only
comparable when computed the same way, so we use **sacreBLEU** (Post, 2018), the standard:
detokenised text in, its own ``13a`` tokenisation, case-sensitive.

:func:`bleu_scores` gives the three BLEU scores that Multi30k results are reported in, each named
for what it is, so that a reader compares like with like:

* ``sacrebleu``: the standard above (``13a`` tokenisation, cased);
* ``sacrebleu_lowercase``: the same on lowercased hypotheses and references (case-insensitive);
* ``tokenised_lowercase_bleu``: the BLEU that published Multi30k notebooks report (Ben Trevett's
  PyTorch seq2seq tutorials, torchtext's ``bleu_score``): each sentence split into words by spaCy's
  English tokenizer, the words lowercased, and corpus BLEU computed on those words with no further
  tokenisation. It splits clitics and hyphens (``do n't``, ``boy - scout``), which sacreBLEU's
  ``13a`` keeps together, so the two do not agree even on lowercased text.

**chrF** (Popović, 2015) is an F-score of character n-grams (1 to 6, recall weighted twice as much as
precision): it gives partial credit for a word with the right stem and the wrong ending, which BLEU
scores as a miss. sacreBLEU computes it too; a second metric beside BLEU shows whether a gain is
the metric's or the translations'.

A **signature** is sacreBLEU's description of how a score was computed, e.g.
``nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0``: the number of references, case,
tokenisation, smoothing and sacreBLEU's version. Two scores with the same signature on the same test
file are comparable; :func:`translation_scores` returns every score with its signature.

**Exact match** is the share of hypotheses identical to their reference, the natural score of
tasks with one right answer (numbers, copy, reverse).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from importlib.metadata import version

import sacrebleu


def _check_lengths(hypotheses: Sequence[str], references: Sequence[str]) -> None:
    if len(hypotheses) != len(references):
        raise ValueError(f"got {len(hypotheses)} hypotheses for {len(references)} references")
    if not references:
        raise ValueError("cannot score an empty list of translations")


def exact_match(hypotheses: Sequence[str], references: Sequence[str]) -> float:
    """Percentage (0 … 100) of hypotheses equal to their reference."""
    _check_lengths(hypotheses, references)
    return (
        100.0 * sum(hypothesis == reference for hypothesis, reference in zip(hypotheses, references)) / len(references)
    )


def corpus_bleu(
    hypotheses: Sequence[str], references: Sequence[str], lowercase: bool = False, tokenize: str = "13a"
) -> float:
    """sacreBLEU corpus BLEU (0 … 100) of detokenised hypotheses against one reference each.

    Args:
        lowercase: lowercase hypotheses and references first (case-insensitive BLEU).
        tokenize: sacreBLEU's tokeniser: ``"13a"`` (the standard), ``"zh"`` for Chinese, …
    """
    _check_lengths(hypotheses, references)
    return sacrebleu.corpus_bleu(list(hypotheses), [list(references)], lowercase=lowercase, tokenize=tokenize).score


def tokenised_lowercase_bleu(hypotheses: Sequence[str], references: Sequence[str]) -> float:
    """Corpus BLEU (0 … 100) on spaCy's English words, lowercased: the Multi30k notebooks' metric.

    Words are taken as spaCy's rule-based English tokenizer splits the text, then lowercased, as
    torchtext's ``Field(tokenize=spacy, lower=True)`` did; BLEU is then computed on them without
    smoothing (as torchtext's ``bleu_score``: a corpus with no matching 4-gram scores 0).
    """
    return _tokenised_lowercase_bleu(hypotheses, references)[0]


def _tokenised_lowercase_bleu(hypotheses: Sequence[str], references: Sequence[str]) -> tuple[float, str]:
    """:func:`tokenised_lowercase_bleu` and its signature: sacreBLEU's, after the words it was given."""
    _check_lengths(hypotheses, references)
    tokenizer = _english_tokenizer()

    def words(text: str) -> str:
        return " ".join(token.text.lower() for token in tokenizer(text))

    # force: the words are tokenised on purpose
    metric = sacrebleu.BLEU(tokenize="none", smooth_method="none", force=True)
    score = metric.corpus_score([words(text) for text in hypotheses], [[words(text) for text in references]])
    return score.score, f"words:spacy-{version('spacy')}-en|lc:yes|{metric.get_signature()}"


@functools.cache
def _english_tokenizer():
    import spacy  # imported when first needed: loading it takes a second or two

    return spacy.blank("en").tokenizer


def bleu_scores(hypotheses: Sequence[str], references: Sequence[str]) -> dict[str, float]:
    """The three BLEU scores (see the module docstring).

    Keys: ``sacrebleu``, ``sacrebleu_lowercase``, ``tokenised_lowercase_bleu``."""
    return {
        "sacrebleu": corpus_bleu(hypotheses, references),
        "sacrebleu_lowercase": corpus_bleu(hypotheses, references, lowercase=True),
        "tokenised_lowercase_bleu": tokenised_lowercase_bleu(hypotheses, references),
    }


def translation_scores(hypotheses: Sequence[str], references: Sequence[str]) -> dict:
    """The three BLEU scores of :func:`bleu_scores` and chrF, each with its signature.

    Returns:
        ``{"sacrebleu", "sacrebleu_lowercase", "tokenised_lowercase_bleu", "chrf", "signatures"}``:
        the scores in percent, and ``signatures``: each score's name → the sacreBLEU signature it
        was computed with (``nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0`` for
        ``sacrebleu``). The tokenised BLEU's signature starts with the words sacreBLEU was given
        (spaCy's English words, lowercased), which sacreBLEU's own part cannot say.
    """
    _check_lengths(hypotheses, references)
    metrics = {
        "sacrebleu": sacrebleu.BLEU(),
        "sacrebleu_lowercase": sacrebleu.BLEU(lowercase=True),
        "chrf": sacrebleu.CHRF(),
    }
    scores = {name: metric.corpus_score(list(hypotheses), [list(references)]).score for name, metric in metrics.items()}
    signatures = {name: str(metric.get_signature()) for name, metric in metrics.items()}
    scores["tokenised_lowercase_bleu"], signatures["tokenised_lowercase_bleu"] = _tokenised_lowercase_bleu(
        hypotheses, references
    )
    order = ("sacrebleu", "sacrebleu_lowercase", "tokenised_lowercase_bleu", "chrf")
    return {**{name: scores[name] for name in order}, "signatures": {name: signatures[name] for name in order}}
