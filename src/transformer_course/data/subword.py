"""A byte-pair-encoding (BPE) tokenizer for real sentences, trained with Hugging Face ``tokenizers``.

A word-level vocabulary of a real corpus is large and still meets unknown words; characters make
sequences long. BPE (Sennrich et al., 2016) starts from characters and repeatedly merges the most
frequent adjacent pair into a new symbol until the vocabulary has the size asked for: frequent
words become one token, rare ones are spelled from pieces ("Skateboarder" → ``▁Skate board er``).
The paper used a BPE vocabulary shared by source and target (§5.1); so does :mod:`.multi30k`.

Spaces are kept as the marker ``▁`` at the start of a piece (the Metaspace scheme), so decoding
gives back the original text exactly, which sacreBLEU needs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .vocabulary import BOS_ID, EOS_ID, PAD_ID, SPECIAL_TOKENS, UNK_ID


class SubwordTokenizer:
    """Text ↔ ids with a trained BPE model; the same methods as :class:`~.vocabulary.Vocabulary`.

    Build one with :func:`train_subword_tokenizer`. Wraps a ``tokenizers.Tokenizer``.
    """

    pad_id, bos_id, eos_id, unk_id = PAD_ID, BOS_ID, EOS_ID, UNK_ID

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer
        for index, token in enumerate(SPECIAL_TOKENS):
            if tokenizer.token_to_id(token) != index:
                raise ValueError(f"the BPE tokenizer must have {token} at id {index}")

    def __len__(self) -> int:
        return self.tokenizer.get_vocab_size()

    def tokenize(self, text: str) -> list[str]:
        """ "A skateboarder." → ``["▁A", "▁skate", "board", "er", "."]`` (the pieces depend on training)."""
        return self.tokenizer.encode(text).tokens

    def encode(self, text: str) -> list[int]:
        """Text → ids, without ``<bos>``/``<eos>``."""
        return self.tokenizer.encode(text).ids

    def pieces(self, ids: Sequence[int]) -> list[str]:
        """Ids → the pieces they stand for, special tokens included (labels for attention maps)."""
        return [self.tokenizer.id_to_token(int(index)) or SPECIAL_TOKENS[UNK_ID] for index in ids]

    def decode(self, ids: Sequence[int]) -> str:
        """Ids → text: stops at the first ``<eos>``, drops the special tokens."""
        ids = [int(index) for index in ids]
        if EOS_ID in ids:
            ids = ids[: ids.index(EOS_ID)]
        return self.tokenizer.decode(ids, skip_special_tokens=True)

    def to_dict(self) -> dict:
        """A JSON-friendly description, stored in checkpoints (see :func:`tokenizer_from_dict`)."""
        return {"kind": "subword", "tokenizer": self.tokenizer.to_str()}

    def __repr__(self) -> str:
        return f"SubwordTokenizer({len(self)} tokens, BPE)"


def train_subword_tokenizer(texts: Iterable[str], vocab_size: int = 8000, min_frequency: int = 2) -> SubwordTokenizer:
    """Learn BPE merges from ``texts`` until the vocabulary has ``vocab_size`` tokens.

    Args:
        texts: training sentences (both languages, for a shared vocabulary).
        vocab_size: size of the vocabulary, the four special tokens included.
        min_frequency: a pair must occur this often to be merged.
    """
    from tokenizers import (
        Tokenizer,
        decoders,
        models,
        normalizers,
        pre_tokenizers,
        trainers,
    )

    tokenizer = Tokenizer(models.BPE(unk_token=SPECIAL_TOKENS[UNK_ID]))
    tokenizer.normalizer = normalizers.NFC()
    # "▁" marks where a space was; punctuation becomes pieces of its own: "▁hat", ".".
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Metaspace(), pre_tokenizers.Punctuation()])
    tokenizer.decoder = decoders.Metaspace()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, min_frequency=min_frequency, special_tokens=list(SPECIAL_TOKENS)
    )
    tokenizer.train_from_iterator(texts, trainer)
    return SubwordTokenizer(tokenizer)
