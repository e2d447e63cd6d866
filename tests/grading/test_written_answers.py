"""A manual score belongs to the version of the written answer it was given to: a later version is named until the
instructor scores it again, and an unchanged answer never is."""

from __future__ import annotations

from transformer_course.grading.written_answers import ManualScore, WrittenAnswer, digest, follow

KEY = "attention/notes-written"
ONE = ManualScore(1.0, "Clear and right.")


def _after(previous: dict, text: str, scores: dict) -> tuple[dict, list[str]]:
    return follow(previous, {KEY: text}, scores)


def test_an_unchanged_answer_with_a_score_is_not_named():
    graded, _ = _after({}, "first", {})
    _, changed = _after(graded, "first", {KEY: ONE})
    assert changed == []


def test_an_answer_changed_after_its_score_was_given_is_named():
    graded, _ = _after({}, "first", {})
    _, changed = _after(graded, "second", {KEY: ONE})
    assert changed == [KEY]


def test_it_stays_named_at_every_later_run_until_it_is_scored_again():
    graded, _ = _after({}, "first", {})
    once, _ = _after(graded, "second", {KEY: ONE})
    _, changed = _after(once, "second", {KEY: ONE})
    assert changed == [KEY]


def test_a_score_given_again_to_the_new_version_is_not_named():
    graded, _ = _after({}, "first", {})
    once, _ = _after(graded, "second", {KEY: ONE})
    _, changed = _after(once, "second", {KEY: ManualScore(0.5, "Half right now.")})
    assert changed == []


def test_the_record_keeps_which_version_the_score_belongs_to():
    graded, _ = _after({}, "first", {})
    answers, _ = _after(graded, "second", {KEY: ONE})
    assert answers[KEY] == WrittenAnswer(digest("second"), digest("first"), 1.0, "Clear and right.")


def test_trailing_spaces_and_blank_lines_are_no_change():
    assert digest("An answer.  \n\n") == digest("An answer.")
