"""Exact match and BLEU (sacreBLEU, and the lowercased variant)."""

import pytest
import sacrebleu

from transformer_course.metrics import bleu_scores, corpus_bleu, exact_match


def test_exact_match_is_the_percentage_of_identical_strings():
    assert exact_match(["一万", "十", "二"], ["一万", "十一", "二"]) == pytest.approx(200 / 3)


def test_identical_corpora_score_100_bleu():
    sentences = ["A man rides a bicycle .", "Two dogs play in the park ."]
    assert corpus_bleu(sentences, sentences) == pytest.approx(100.0)


def test_bleu_is_sacrebleus_corpus_bleu():
    hypotheses = ["A man is riding a bike.", "Two dogs are playing in a park."]
    references = ["A man rides a bicycle.", "Two dogs play in the park."]
    assert corpus_bleu(hypotheses, references) == pytest.approx(sacrebleu.corpus_bleu(hypotheses, [references]).score)


def test_lowercased_bleu_ignores_case_and_cased_bleu_does_not():
    hypotheses = ["a man rides a bicycle on the street."]
    references = ["A Man rides a bicycle on the Street."]
    scores = bleu_scores(hypotheses, references)
    assert scores["bleu_lowercase"] == pytest.approx(100.0)
    assert scores["bleu"] < 100.0


def test_mismatched_lists_are_rejected():
    with pytest.raises(ValueError, match="2 hypotheses for 1 references"):
        exact_match(["a", "b"], ["a"])
    with pytest.raises(ValueError, match="empty"):
        corpus_bleu([], [])
