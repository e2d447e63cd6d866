"""The numbers task: English number phrases → Chinese numerals, and its splits."""

import random

import pytest

from transformer_course.data import chinese_numerals, english_words, number_splits, parse_chinese, parse_english
from transformer_course.data.numbers import digit_range, sample_number

# Each case checked by hand against the rules in the module docstring.
CASES = [
    (0, "zero", "零"),
    (7, "seven", "七"),
    (10, "ten", "十"),
    (11, "eleven", "十一"),
    (20, "twenty", "二十"),
    (99, "ninety-nine", "九十九"),
    (100, "one hundred", "一百"),
    (101, "one hundred and one", "一百零一"),
    (110, "one hundred and ten", "一百一十"),
    (112, "one hundred and twelve", "一百一十二"),
    (222, "two hundred and twenty-two", "二百二十二"),
    (1000, "one thousand", "一千"),
    (1001, "one thousand and one", "一千零一"),
    (1010, "one thousand and ten", "一千零一十"),
    (1100, "one thousand one hundred", "一千一百"),
    (2005, "two thousand and five", "二千零五"),
    (10000, "ten thousand", "一万"),
    (10001, "ten thousand and one", "一万零一"),
    (10010, "ten thousand and ten", "一万零一十"),
    (10100, "ten thousand one hundred", "一万零一百"),
    (11000, "eleven thousand", "一万一千"),
    (12005, "twelve thousand and five", "一万二千零五"),
    (100000, "one hundred thousand", "十万"),
    (105000, "one hundred and five thousand", "十万五千"),
    (150000, "one hundred and fifty thousand", "十五万"),
    (1000000, "one million", "一百万"),
    (1000001, "one million and one", "一百万零一"),
    (1000010, "one million and ten", "一百万零一十"),
    (1005000, "one million five thousand", "一百万五千"),
    (2300000, "two million three hundred thousand", "二百三十万"),
    (10100000, "ten million one hundred thousand", "一千零一十万"),
    (20000000, "twenty million", "二千万"),
    (20000200, "twenty million two hundred", "二千万零二百"),
    (
        99999999,
        "ninety-nine million nine hundred and ninety-nine thousand nine hundred and ninety-nine",
        "九千九百九十九万九千九百九十九",
    ),
]


@pytest.mark.parametrize("number, english, chinese", CASES)
def test_english_words_of_hand_checked_numbers(number, english, chinese):
    assert english_words(number) == english


@pytest.mark.parametrize("number, english, chinese", CASES)
def test_chinese_numerals_of_hand_checked_numbers(number, english, chinese):
    assert chinese_numerals(number) == chinese


def sampled_numbers(count=5000, seed=1):
    rng = random.Random(seed)
    return [sample_number(rng) for _ in range(count)]


def test_parsing_the_chinese_gives_back_every_sampled_number():
    for number in sampled_numbers():
        assert parse_chinese(chinese_numerals(number)) == number


def test_parsing_the_english_gives_back_every_sampled_number():
    for number in sampled_numbers():
        assert parse_english(english_words(number)) == number


def test_chinese_never_ends_in_zero_nor_repeats_it_nor_uses_liang():
    for number in sampled_numbers():
        text = chinese_numerals(number)
        if number:
            assert not text.endswith("零"), text
        assert "零零" not in text and "两" not in text, text


def test_chinese_has_a_bare_shi_only_at_the_very_start():
    for number in sampled_numbers():
        text = chinese_numerals(number)
        assert not text.startswith("一十"), text
        for index, character in enumerate(text):
            if character == "十" and index > 0:
                assert text[index - 1] in "零一二三四五六七八九", text  # 一十 inside, never a bare 十


def test_english_says_and_after_hundred_or_before_a_final_part_below_one_hundred():
    for number in sampled_numbers():
        words = english_words(number).split()
        for index, word in enumerate(words):
            if word == "and" and words[index - 1] != "hundred":
                assert 0 < number % 1000 < 100, words
                assert " ".join(words[index + 1 :]) == english_words(number % 1000), words


def test_numbers_outside_the_range_are_rejected():
    with pytest.raises(ValueError, match="99,999,999"):
        chinese_numerals(100_000_000)
    with pytest.raises(ValueError, match="-1"):
        english_words(-1)
    with pytest.raises(TypeError, match="float"):
        english_words(1.0)


def test_parsers_reject_foreign_characters():
    with pytest.raises(ValueError, match="两"):
        parse_chinese("两百")
    with pytest.raises(ValueError, match="dozen"):
        parse_english("one dozen")


def test_sampling_is_even_over_the_number_of_digits():
    counts = [0] * 9
    for number in sampled_numbers(16_000):
        counts[len(str(number))] += 1
    assert all(abs(count - 2000) < 200 for count in counts[1:]), counts


def test_splits_share_no_number():
    splits = number_splits(seed=0, train_size=20_000, validation_size=600, test_size=1200)
    train, validation, test = (set(splits[name]) for name in ("train", "validation", "test"))
    assert not train & validation and not train & test and not validation & test
    assert len(validation) == 600 and len(test) == 1200  # held-out numbers are distinct


def test_small_numbers_are_training_numbers_only():
    splits = number_splits(seed=0, train_size=20_000, validation_size=600, test_size=1200)
    assert set(range(100)) <= set(splits["train"])
    assert min(splits["validation"] + splits["test"]) >= 100


def test_held_out_numbers_are_even_over_three_to_eight_digits():
    test = number_splits(seed=0, train_size=100, test_size=1200)["test"]
    assert [sum(len(str(number)) == digits for number in test) for digits in range(3, 9)] == [200] * 6


def test_splits_are_deterministic_from_the_seed():
    assert number_splits(seed=3, train_size=500) == number_splits(seed=3, train_size=500)
    assert number_splits(seed=3, train_size=500) != number_splits(seed=4, train_size=500)


def test_digit_range_covers_exactly_the_numbers_with_that_many_digits():
    assert digit_range(1) == range(0, 10)
    assert digit_range(3) == range(100, 1000)
    with pytest.raises(ValueError, match="digits"):
        digit_range(9)
