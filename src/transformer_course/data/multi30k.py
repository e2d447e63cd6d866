"""Multi30k German → English (Elliott et al., 2016): 31,014 image captions in both languages.

    de: Zwei junge Männer spielen Fußball auf einem Feld.
    en: Two young men are playing soccer on a field.

The standard splits are 29,000 training, 1,014 validation and 1,000 test pairs (the 2016 Flickr
test set). Two sources give the same pairs:

* the Hugging Face dataset ``bentrevett/multi30k`` (on Colab; needs ``pip install datasets``,
  imported only when used);
* local files, one per split: ``train``, ``validation`` and ``test`` with the suffix ``.jsonl``
  (one ``{"de": ..., "en": ...}`` object per line, the dataset's own rows) or ``.tsv``
  (``german<TAB>english`` per line). A single such file is split by :func:`split_pairs`.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

DATASET_NAME = "bentrevett/multi30k"
SPLIT_NAMES = ("train", "validation", "test")
Pair = tuple[str, str]


def read_pairs(path: str | Path, source_language: str = "de", target_language: str = "en") -> list[Pair]:
    """Read ``(source, target)`` sentence pairs from a ``.jsonl`` or ``.tsv`` file.

    JSONL rows are objects with the keys ``source_language`` and ``target_language``; TSV rows
    are ``source<TAB>target``. Blank lines are skipped.
    """
    path = Path(path)
    pairs = []
    with path.open(encoding="utf-8") as file:
        for line_number, line in enumerate(file, start=1):
            line = line.rstrip("\n")
            if not line.strip():
                continue
            if path.suffix == ".jsonl":
                row = json.loads(line)
                if source_language not in row or target_language not in row:
                    raise ValueError(
                        f"{path}:{line_number}: expected keys {source_language!r} and {target_language!r}, got {sorted(row)}"
                    )
                pairs.append((row[source_language], row[target_language]))
            elif path.suffix == ".tsv":
                columns = line.split("\t")
                if len(columns) != 2:
                    raise ValueError(f"{path}:{line_number}: expected 2 tab-separated columns, got {len(columns)}")
                pairs.append((columns[0], columns[1]))
            else:
                raise ValueError(f"{path}: pairs must be in a .jsonl or .tsv file")
    return pairs


def split_pairs(
    pairs: list[Pair], seed: int = 0, validation_fraction: float = 0.05, test_fraction: float = 0.05
) -> dict[str, list[Pair]]:
    """Shuffle ``pairs`` with ``seed`` and cut them into train / validation / test.

    Pairs that occur twice are kept once, so that no pair is in two splits.
    """
    unique = list(dict.fromkeys(pairs))
    random.Random(seed).shuffle(unique)
    test_size = round(len(unique) * test_fraction)
    validation_size = round(len(unique) * validation_fraction)
    return {
        "test": unique[:test_size],
        "validation": unique[test_size : test_size + validation_size],
        "train": unique[test_size + validation_size :],
    }


def load_multi30k(
    path: str | Path | None = None, source_language: str = "de", target_language: str = "en", seed: int = 0
) -> dict[str, list[Pair]]:
    """The train / validation / test pairs of Multi30k (or of any corpus in the same formats).

    Args:
        path: ``None`` for the Hugging Face dataset; a directory with ``train``, ``validation``
            and ``test`` files (``.jsonl`` or ``.tsv``); or one such file, split by ``seed``.
        source_language, target_language: the JSONL keys (and the dataset's columns).
        seed: shuffles a single file before it is split.

    Returns:
        ``{"train": [(source, target), ...], "validation": [...], "test": [...]}``.
    """
    if path is None:
        return _load_from_hugging_face(source_language, target_language)
    path = Path(path)
    if path.is_file():
        return split_pairs(read_pairs(path, source_language, target_language), seed)
    if not path.is_dir():
        raise FileNotFoundError(f"no such file or directory: {path}")
    splits = {}
    for split in SPLIT_NAMES:
        files = [path / f"{split}{suffix}" for suffix in (".jsonl", ".tsv") if (path / f"{split}{suffix}").exists()]
        if not files:
            raise FileNotFoundError(f"{path} has no {split}.jsonl or {split}.tsv")
        splits[split] = read_pairs(files[0], source_language, target_language)
    return splits


def _load_from_hugging_face(source_language: str, target_language: str) -> dict[str, list[Pair]]:
    try:
        import datasets
    except ImportError:
        raise ImportError(
            f"loading {DATASET_NAME} needs the Hugging Face datasets package: pip install datasets "
            "(or pass the path of local .jsonl/.tsv files)"
        ) from None
    dataset = datasets.load_dataset(DATASET_NAME)
    return {split: [(row[source_language], row[target_language]) for row in dataset[split]] for split in SPLIT_NAMES}
