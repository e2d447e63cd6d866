"""Multi30k German → English (Elliott et al., 2016): 31,014 image captions in both languages.

    de: Zwei junge Männer spielen Fußball auf einem Feld.
    en: Two young men are playing soccer on a field.

The standard splits are 29,000 training, 1,014 validation and 1,000 test pairs (the 2016 Flickr
test set). Three sources give the same pairs:

* the dataset's own files (the ``data/task1/raw`` folder of its repository): one file per split and
  language, line *i* of the German file translating line *i* of the English one, gzipped or not:
  ``train.de.gz`` + ``train.en.gz``, ``val.*`` and ``test_2016_flickr.*``. Without a path they are
  downloaded once into the user's cache, checked against their SHA-256 (:mod:`.download`: a mirror
  and the cache folder can be set there); a folder holding them is read offline;
* the Hugging Face dataset ``bentrevett/multi30k``, as the path ``hf://bentrevett/multi30k`` (needs
  ``pip install datasets``, imported only when used);
* local files, one per split: ``train``, ``validation`` and ``test`` with the suffix ``.jsonl``
  (one ``{"de": ..., "en": ...}`` object per line, the Hugging Face rows) or ``.tsv``
  (``german<TAB>english`` per line). A ``.tsv`` file cannot hold a sentence that contains a tab
  (line 7,366 of Multi30k's ``train.de`` does): use the dataset's own files or ``.jsonl`` for those.
  A single such file is split by :func:`split_pairs`.
"""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

from .download import download_multi30k
from .pairs import Pair

DATASET_NAME = "bentrevett/multi30k"
HUGGING_FACE_PATH = f"hf://{DATASET_NAME}"  # the path that reads the Hugging Face copy
SPLIT_NAMES = ("train", "validation", "test")
# The file names of the splits in the dataset's own layout: <name>.<language>[.gz].
RAW_SPLIT_NAMES = {"train": "train", "validation": "val", "test": "test_2016_flickr"}


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
                        f"{path}:{line_number}: expected keys {source_language!r} and {target_language!r}, got "
                        f"{sorted(row)}"
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


def read_parallel_files(source_path: str | Path, target_path: str | Path) -> list[Pair]:
    """Pair line *i* of ``source_path`` with line *i* of ``target_path`` (UTF-8, gzipped if ``.gz``).

    Lines are split at newlines only, so a tab or any other character inside a sentence stays in it.

    Raises:
        ValueError: the two files have different numbers of lines.
    """
    source_lines, target_lines = _lines(Path(source_path)), _lines(Path(target_path))
    if len(source_lines) != len(target_lines):
        raise ValueError(
            f"{source_path} has {len(source_lines):,} lines but {target_path} has {len(target_lines):,}: "
            "the two languages of a split must be line-aligned"
        )
    return list(zip(source_lines, target_lines))


def _lines(path: Path) -> list[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8", newline="") as file:
        text = file.read()
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the newline that ends the last line
    return [line.removesuffix("\r") for line in lines]


def raw_split_files(
    directory: Path, split: str, source_language: str, target_language: str
) -> tuple[Path, Path] | None:
    """The two files of ``split`` in the dataset's own layout in ``directory`` (gzipped or not), if there."""
    name = RAW_SPLIT_NAMES[split]
    for suffix in (".gz", ""):
        source, target = (
            directory / f"{name}.{source_language}{suffix}",
            directory / f"{name}.{target_language}{suffix}",
        )
        if source.is_file() and target.is_file():
            return source, target
    return None


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
        path: ``None`` for the dataset's own files, downloaded once into the cache
            (:func:`~transformer_course.data.download.download_multi30k`); a directory in the
            dataset's own layout (``train.de.gz`` …) or with ``train``, ``validation`` and ``test``
            files (``.jsonl`` or ``.tsv``); one such file, split by ``seed``; or
            ``"hf://bentrevett/multi30k"`` for the Hugging Face copy.
        source_language, target_language: the languages (file suffixes, JSONL keys, the dataset's columns).
        seed: shuffles a single file before it is split.

    Returns:
        ``{"train": [(source, target), ...], "validation": [...], "test": [...]}``.

    Raises:
        DownloadError: (``path=None``) the files could not be downloaded, or arrived changed.
    """
    if path is None:
        path = download_multi30k()
    elif str(path) == HUGGING_FACE_PATH:
        return _load_from_hugging_face(source_language, target_language)
    path = Path(path)
    if path.is_file():
        return split_pairs(read_pairs(path, source_language, target_language), seed)
    if not path.is_dir():
        raise FileNotFoundError(f"no such file or directory: {path}")
    splits = {}
    for split in SPLIT_NAMES:
        raw = raw_split_files(path, split, source_language, target_language)
        files = [path / f"{split}{suffix}" for suffix in (".jsonl", ".tsv") if (path / f"{split}{suffix}").exists()]
        if raw is not None:
            splits[split] = read_parallel_files(*raw)
        elif files:
            splits[split] = read_pairs(files[0], source_language, target_language)
        else:
            name = RAW_SPLIT_NAMES[split]
            raise FileNotFoundError(
                f"{path} has no {name}.{source_language}[.gz] and {name}.{target_language}[.gz], "
                f"nor {split}.jsonl or {split}.tsv"
            )
    return splits


def _load_from_hugging_face(source_language: str, target_language: str) -> dict[str, list[Pair]]:
    try:
        import datasets
    except ImportError:
        raise ImportError(
            f"loading {DATASET_NAME} needs the Hugging Face datasets package: pip install datasets "
            "(or leave the path out: the dataset's own files are downloaded without it)"
        ) from None
    dataset = datasets.load_dataset(DATASET_NAME)
    return {split: [(row[source_language], row[target_language]) for row in dataset[split]] for split in SPLIT_NAMES}
