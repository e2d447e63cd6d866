"""Exact match, the three BLEU scores and chrF with their signatures, each against sacreBLEU computed directly on known
sentences."""

import pytest
import sacrebleu

from transformer_course.metrics import (
    bleu_scores,
    corpus_bleu,
    exact_match,
    tokenised_lowercase_bleu,
    translation_scores,
)


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
    assert scores["sacrebleu_lowercase"] == pytest.approx(100.0)
    assert scores["sacrebleu"] < 100.0


HYPOTHESES = ["Two young, White men don't play soccer on a field.", "A boy-scout sits in a 3-year-old U.S. car!"]
REFERENCES = ["Two young white men are playing soccer in a field.", "A boy scout sits in a three-year-old car."]


def test_the_three_bleu_scores_are_sacrebleus_own_on_the_same_text():
    scores = bleu_scores(HYPOTHESES, REFERENCES)
    assert scores["sacrebleu"] == pytest.approx(sacrebleu.corpus_bleu(HYPOTHESES, [REFERENCES]).score)
    assert scores["sacrebleu_lowercase"] == pytest.approx(
        sacrebleu.corpus_bleu(HYPOTHESES, [REFERENCES], lowercase=True).score
    )
    # spaCy's English words, lowercased, as torchtext's lowercasing Field made them:
    hypotheses = [
        "two young , white men do n't play soccer on a field .",
        "a boy - scout sits in a 3 - year - old u.s. car !",
    ]
    references = [
        "two young white men are playing soccer in a field .",
        "a boy scout sits in a three - year - old car .",
    ]
    expected = sacrebleu.corpus_bleu(hypotheses, [references], tokenize="none", smooth_method="none").score
    assert scores["tokenised_lowercase_bleu"] == pytest.approx(expected)


def test_tokenised_bleu_splits_what_sacrebleu_keeps_whole_so_the_scores_differ():
    scores = bleu_scores(HYPOTHESES, REFERENCES)
    assert len({round(score, 6) for score in scores.values()}) == 3


def test_tokenised_bleu_of_identical_text_is_100():
    assert tokenised_lowercase_bleu(REFERENCES, REFERENCES) == pytest.approx(100.0)


def test_mismatched_lists_are_rejected():
    with pytest.raises(ValueError, match="2 hypotheses for 1 references"):
        exact_match(["a", "b"], ["a"])
    with pytest.raises(ValueError, match="empty"):
        corpus_bleu([], [])


def test_each_score_comes_with_the_signature_sacrebleu_gives_it():
    signatures = translation_scores(HYPOTHESES, REFERENCES)["signatures"]
    version = sacrebleu.__version__
    assert signatures["sacrebleu"] == f"nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:{version}"
    assert signatures["sacrebleu_lowercase"] == f"nrefs:1|case:lc|eff:no|tok:13a|smooth:exp|version:{version}"
    assert signatures["chrf"] == f"nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:{version}"


def test_the_tokenised_bleus_signature_names_the_words_it_was_computed_on():
    signature = translation_scores(HYPOTHESES, REFERENCES)["signatures"]["tokenised_lowercase_bleu"]
    assert signature.startswith("words:spacy-") and "|lc:yes|" in signature
    assert signature.endswith(f"tok:none|smooth:none|version:{sacrebleu.__version__}")


def test_chrf_is_sacrebleus_own_and_the_bleu_scores_are_bleu_scores():
    scores = translation_scores(HYPOTHESES, REFERENCES)
    assert scores["chrf"] == pytest.approx(sacrebleu.corpus_chrf(HYPOTHESES, [REFERENCES]).score)
    assert {name: scores[name] for name in bleu_scores(HYPOTHESES, REFERENCES)} == bleu_scores(HYPOTHESES, REFERENCES)


def test_chrf_gives_credit_for_a_word_with_the_wrong_ending_where_bleu_gives_none():
    references = ["The dogs are running."]
    assert corpus_bleu(["The dog is running."], references) == pytest.approx(
        corpus_bleu(["The cat is running."], references)
    )
    dog, cat = (
        translation_scores([text], references)["chrf"] for text in ("The dog is running.", "The cat is running.")
    )
    assert dog > cat
