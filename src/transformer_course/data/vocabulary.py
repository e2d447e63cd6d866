"""Word- and character-level vocabularies: text ↔ token ids.

Every vocabulary of the package starts with the same four special tokens, at the same ids
(:mod:`transformer_course.special_tokens`).

The number task tokenises English at word level, with each hyphen as a token of its own
("ninety-nine" → ``ninety - nine``), and Chinese character by character (一万零五 → 一 万 零 五).
The subword tokenizer of the real corpus (:mod:`.subword`) offers the same methods.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ..special_tokens import BOS_ID, EOS_ID, PAD_ID, SPECIAL_TOKENS, UNK_ID

UNITS = {
    "words": lambda text: re.findall(r"[^\s-]+|-", text),  # whitespace-separated words; "-" alone
    "characters": lambda text: [character for character in text if not character.isspace()],
}


class Vocabulary:
    """A fixed list of tokens; a token's id is its position in the list.

    Args:
        tokens: the ordinary tokens (the four special tokens are put in front).
        unit: what a text is cut into: ``"words"`` (split on whitespace, hyphens as tokens) or
            ``"characters"``.

    Attributes:
        pad_id, bos_id, eos_id, unk_id: the special ids, 0 … 3.
    """

    pad_id, bos_id, eos_id, unk_id = PAD_ID, BOS_ID, EOS_ID, UNK_ID

    def __init__(self, tokens: Iterable[str], unit: str = "words"):
        _check_unit(unit)
        self.unit = unit
        self.tokens = list(SPECIAL_TOKENS) + [token for token in dict.fromkeys(tokens) if token not in SPECIAL_TOKENS]
        self.ids = {token: index for index, token in enumerate(self.tokens)}

    @classmethod
    def from_texts(cls, texts: Iterable[str], unit: str = "words") -> Vocabulary:
        """Every token of ``texts``, in sorted order (so the ids do not depend on the text order)."""
        _check_unit(unit)
        return cls(sorted({token for text in texts for token in UNITS[unit](text)}), unit)

    def __len__(self) -> int:
        return len(self.tokens)

    def tokenize(self, text: str) -> list[str]:
        """ "ninety-nine" → ``["ninety", "-", "nine"]`` (words) or 九十九 → ``["九", "十", "九"]``."""
        return UNITS[self.unit](text)

    def encode(self, text: str) -> list[int]:
        """Text → ids, without ``<bos>``/``<eos>`` (the batching adds them)."""
        return [self.ids.get(token, UNK_ID) for token in self.tokenize(text)]

    def pieces(self, ids: Sequence[int]) -> list[str]:
        """Ids → the tokens they stand for, special tokens included (labels for attention maps)."""
        return [
            self.tokens[int(index)] if 0 <= int(index) < len(self.tokens) else SPECIAL_TOKENS[UNK_ID] for index in ids
        ]

    def decode(self, ids: Sequence[int]) -> str:
        """Ids → text: stops at the first ``<eos>``, drops ``<pad>`` and ``<bos>``."""
        tokens = []
        for index in ids:
            index = int(index)
            if index == EOS_ID:
                break
            if index not in (PAD_ID, BOS_ID):
                tokens.append(self.tokens[index] if 0 <= index < len(self.tokens) else SPECIAL_TOKENS[UNK_ID])
        if self.unit == "characters":
            return "".join(tokens)
        return " ".join(tokens).replace(" - ", "-")

    def to_dict(self) -> dict:
        """A JSON-friendly description, stored in checkpoints (see :func:`tokenizer_from_dict`)."""
        return {"kind": "vocabulary", "unit": self.unit, "tokens": self.tokens[len(SPECIAL_TOKENS) :]}

    def __repr__(self) -> str:
        return f"Vocabulary({len(self)} tokens, unit={self.unit!r})"


def _check_unit(unit: str) -> None:
    if unit not in UNITS:
        raise ValueError(f"unit must be one of {sorted(UNITS)}, got {unit!r}")
