"""The offline translation task: English number phrases → Chinese numerals.

    "twelve thousand and five"                → 一万二千零五
    "one hundred and ten"                     → 一百一十
    "two million three hundred thousand"      → 二百三十万

It needs no download, is generated from a seed, and is hard enough to be interesting: the two
languages group digits differently (English by thousands, Chinese by ten-thousands, 万), so the
model must learn to re-group, to insert 零 where Chinese skips a place, and to drop the "and"
and the hyphens of British English. A translation is right or wrong, so exact match measures it.

English follows British usage: "and" before a final part below 100 ("one hundred and five",
"twelve thousand and five") and hyphens in "ninety-nine". Chinese follows the ordinary rules:

* digits are grouped by 万 (10^4): 1234 5678 → 一千二百三十四万五千六百七十八;
* one 零 stands for each run of zeros inside a number (一千零一, 一万零五十), including a low group
  below 1000 after 万 (一万零五, 一百万零一十); a number never ends in 零;
* 十 alone at the very start (十二, 十五万), 一十 inside (一百一十二, 一万零一十);
* 二, not 两, before every unit.
"""

from __future__ import annotations

import random

from .pairs import check_split_sizes

ONES = [
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
    "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
]  # fmt: skip
TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
SCALES = [(1_000_000, "million"), (1_000, "thousand")]

CHINESE_DIGITS = "零一二三四五六七八九"
CHINESE_UNITS = {"十": 10, "百": 100, "千": 1000}  # the places inside a group of four digits
WAN = "万"  # 10^4

LARGEST = 99_999_999  # eight digits: at most 9999万9999


def _check_number(number: int) -> None:
    if not isinstance(number, int) or isinstance(number, bool):
        raise TypeError(f"number must be an int, got {type(number).__name__}")
    if not 0 <= number <= LARGEST:
        raise ValueError(f"number must be in 0 … {LARGEST:,}, got {number:,}")


# ---------------------------------------------------------------------------------------------
# English
# ---------------------------------------------------------------------------------------------


def _english_below_hundred(number: int) -> str:
    """1 … 99: "seven", "seventeen", "seventy", "seventy-seven"."""
    if number < 20:
        return ONES[number]
    tens, ones = divmod(number, 10)
    return TENS[tens] if ones == 0 else f"{TENS[tens]}-{ONES[ones]}"


def _english_below_thousand(number: int) -> str:
    """1 … 999: "five", "one hundred", "one hundred and five"."""
    hundreds, rest = divmod(number, 100)
    if hundreds == 0:
        return _english_below_hundred(rest)
    words = f"{ONES[hundreds]} hundred"
    return words if rest == 0 else f"{words} and {_english_below_hundred(rest)}"


def english_words(number: int) -> str:
    """``number`` (0 … 99,999,999) in British English words.

    >>> english_words(12005)
    'twelve thousand and five'
    >>> english_words(2_300_000)
    'two million three hundred thousand'
    """
    _check_number(number)
    if number == 0:
        return "zero"
    parts = []
    for scale, name in SCALES:
        count, number = divmod(number, scale)
        if count:
            parts.append(f"{_english_below_thousand(count)} {name}")
    if number:
        # British "and" before a final part below 100 that follows a larger part.
        and_ = "and " if parts and number < 100 else ""
        parts.append(and_ + _english_below_thousand(number))
    return " ".join(parts)


def parse_english(words: str) -> int:
    """The inverse of :func:`english_words`: "twelve thousand and five" → 12005."""
    total, group = 0, 0  # finished millions/thousands, and the group below 1000 being read
    for word in words.replace("-", " ").split():
        if word in ONES:
            group += ONES.index(word)
        elif word in TENS[2:]:
            group += 10 * TENS.index(word)
        elif word == "hundred":
            group *= 100
        elif word in ("thousand", "million"):
            total += group * (1000 if word == "thousand" else 1_000_000)
            group = 0
        elif word != "and":
            raise ValueError(f"not an English number word: {word!r} in {words!r}")
    return total + group


# ---------------------------------------------------------------------------------------------
# Chinese
# ---------------------------------------------------------------------------------------------


def _chinese_group(number: int) -> str:
    """1 … 9999 read within one group of four places: 2005 → 二千零五, 10 → 一十, 110 → 一百一十.

    Walk the places from 千 down to 个: a nonzero digit is written with its unit; zeros are
    remembered and written as one 零 only if a nonzero digit follows (no trailing 零).
    """
    characters = []
    zeros_pending = False
    for place in (1000, 100, 10, 1):
        digit = number // place % 10
        if digit == 0:
            zeros_pending = bool(characters)  # a zero after a written digit; leading zeros vanish
            continue
        if zeros_pending:
            characters.append("零")
            zeros_pending = False
        unit = {1000: "千", 100: "百", 10: "十", 1: ""}[place]
        characters.append(CHINESE_DIGITS[digit] + unit)
    return "".join(characters)


def chinese_numerals(number: int) -> str:
    """``number`` (0 … 99,999,999) in Chinese numerals.

    >>> chinese_numerals(12005)
    '一万二千零五'
    >>> chinese_numerals(1_000_010)
    '一百万零一十'
    """
    _check_number(number)
    if number == 0:
        return "零"
    high, low = divmod(number, 10_000)  # the 万 group and the group below it
    text = _chinese_group(high) + WAN if high else ""
    if low:
        if high and low < 1000:
            text += "零"  # the low group's leading zeros: 一万零五, 一百万零一十
        text += _chinese_group(low)
    if text.startswith("一十"):
        text = text[1:]  # 十 alone at the very start: 十二, 十五万
    return text


def parse_chinese(text: str) -> int:
    """The inverse of :func:`chinese_numerals`: 一万二千零五 → 12005."""
    if not text:
        raise ValueError("cannot parse an empty string as a Chinese number")
    if WAN in text:
        high, _, low = text.partition(WAN)
        return _parse_chinese_group(high, text) * 10_000 + _parse_chinese_group(low, text)
    return _parse_chinese_group(text, text)


def _parse_chinese_group(text: str, whole: str) -> int:
    total, digit = 0, None  # digit: the digit read but not yet multiplied by a unit
    for character in text:
        if character in CHINESE_UNITS:
            total += (1 if digit is None else digit) * CHINESE_UNITS[character]  # a bare 十 is 一十
            digit = None
        elif character in CHINESE_DIGITS:
            digit = CHINESE_DIGITS.index(character) or None  # 零 only marks a gap
        else:
            raise ValueError(f"not a Chinese numeral character: {character!r} in {whole!r}")
    return total + (digit or 0)


# ---------------------------------------------------------------------------------------------
# Sampling and splits
# ---------------------------------------------------------------------------------------------


def digit_range(digits: int) -> range:
    """The numbers with exactly ``digits`` digits: 1 → 0 … 9, 2 → 10 … 99, …, 8 → 10^7 … 10^8 - 1."""
    if not 1 <= digits <= 8:
        raise ValueError(f"digits must be in 1 … 8, got {digits}")
    return range(0 if digits == 1 else 10 ** (digits - 1), 10**digits)


def sample_number(rng: random.Random) -> int:
    """A number drawn evenly over the number of digits (1 … 8), then evenly among those numbers."""
    return rng.choice(digit_range(rng.randint(1, 8)))


def number_splits(
    seed: int = 0, train_size: int = 200_000, validation_size: int = 1_000, test_size: int = 2_000
) -> dict[str, list[int]]:
    """Disjoint train / validation / test lists of numbers, deterministic from ``seed``.

    Validation and test hold *distinct* numbers of 3 … 8 digits, evenly over the digit count;
    no number is in both. Training numbers are drawn with :func:`sample_number` (so small
    numbers repeat, as they must) from every number except the held-out ones.

    Small numbers are training numbers only: there are just 10 one-digit and 90 two-digit
    numbers, the building blocks of all the others ("seven", "seventy-seven"), too few to share
    between splits, and a model that never saw "seven" alone could not be blamed for missing it.
    With the default sizes, 501 of the 900 three-digit numbers are held out; the other 399, and
    the three-digit groups inside every longer number, teach that pattern.

    Returns:
        ``{"train": [...], "validation": [...], "test": [...]}``.
    """
    check_split_sizes(train_size, validation_size, test_size)
    rng = random.Random(seed)
    held_out: dict[str, list[int]] = {}
    taken: set[int] = set()
    for split, size in (("test", test_size), ("validation", validation_size)):
        numbers: list[int] = []
        for index, digits in enumerate(range(3, 9)):
            wanted = len(numbers) + size // 6 + (1 if index < size % 6 else 0)
            while len(numbers) < wanted:
                number = rng.choice(digit_range(digits))
                if number not in taken:
                    numbers.append(number)
                    taken.add(number)
        rng.shuffle(numbers)
        held_out[split] = numbers
    train = []
    while len(train) < train_size:
        number = sample_number(rng)
        if number not in taken:
            train.append(number)
    return {"train": train, "validation": held_out["validation"], "test": held_out["test"]}


def number_pairs(numbers: list[int]) -> list[tuple[str, str]]:
    """``(english_words(n), chinese_numerals(n))`` for each number."""
    return [(english_words(number), chinese_numerals(number)) for number in numbers]
