"""Tasks: sentence pairs per split, and the tokenizers that turn them into ids.

A :class:`TranslationTask` is everything the training loop needs to know about the data::

    task = numbers_task(seed=0)
    task.splits["train"][0]          # ('forty-two thousand and seven', '四万二千零七')
    task.encode("train")             # token ids, ready for batching
    task.source_tokenizer.decode(ids)

:func:`load_task` builds any task by name from its arguments; :func:`task_from_dict` rebuilds the
task stored in a checkpoint, with the tokenizers the model was trained with, so that a trained
model can be evaluated, or its training resumed, on the same splits and the same token ids.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from . import numbers, toy_tasks
from .batching import EncodedPairs
from .multi30k import load_multi30k
from .pairs import Pair
from .subword import SubwordTokenizer, train_subword_tokenizer
from .vocabulary import Vocabulary


class Tokenizer(Protocol):
    """What the package needs of a tokenizer (:class:`Vocabulary`, :class:`SubwordTokenizer`)."""

    pad_id: int
    bos_id: int
    eos_id: int
    unk_id: int

    def __len__(self) -> int: ...
    def pieces(self, ids: Sequence[int]) -> list[str]: ...
    def encode(self, text: str) -> list[int]: ...
    def decode(self, ids: Sequence[int]) -> str: ...
    def to_dict(self) -> dict: ...


@dataclass
class TranslationTask:
    """Sentence pairs per split, with the tokenizers of the source and target side.

    Attributes:
        name: its name in :data:`TASKS`.
        splits: ``{"train": [(source, target), ...], "validation": [...], "test": [...]}``.
        source_tokenizer, target_tokenizer: text ↔ ids (possibly the same object).
        metric: the headline score: ``"exact_match"`` or ``"bleu"``.
        arguments: the keyword arguments of :func:`load_task` that rebuild this task.
    """

    name: str
    splits: dict[str, list[Pair]]
    source_tokenizer: Tokenizer
    target_tokenizer: Tokenizer
    metric: str = "exact_match"
    arguments: dict = field(default_factory=dict)

    def encode(self, split: str) -> EncodedPairs:
        """The pairs of ``split`` as token ids (no ``<bos>``/``<eos>`` yet)."""
        if split not in self.splits:
            raise ValueError(f"task {self.name!r} has no split {split!r}; it has {sorted(self.splits)}")
        pairs = self.splits[split]
        return EncodedPairs(
            sources=[self.source_tokenizer.encode(source) for source, _ in pairs],
            targets=[self.target_tokenizer.encode(target) for _, target in pairs],
        )

    def sha256(self, split: str, limit: int | None = None) -> dict[str, str]:
        """The SHA-256 of each side of ``split`` (its first ``limit`` pairs) as a text file: one
        sentence per line, UTF-8, a newline after each. For Multi30k's own files these are the
        checksums of the uncompressed files (``zcat test_2016_flickr.en.gz | sha256sum``), so a
        score can name the test file it was computed on.

        Returns:
            ``{"source": ..., "target": ...}``, hexadecimal digests.
        """
        if split not in self.splits:
            raise ValueError(f"task {self.name!r} has no split {split!r}; it has {sorted(self.splits)}")
        pairs = self.splits[split][:limit]
        return {
            side: hashlib.sha256("".join(pair[column] + "\n" for pair in pairs).encode("utf-8")).hexdigest()
            for column, side in enumerate(("source", "target"))
        }

    def tokenizers_to_dict(self) -> dict:
        return {"source": self.source_tokenizer.to_dict(), "target": self.target_tokenizer.to_dict()}

    def to_dict(self) -> dict:
        """Name, arguments and tokenizers, as stored in checkpoints (see :func:`task_from_dict`)."""
        return {"name": self.name, "arguments": dict(self.arguments), "tokenizers": self.tokenizers_to_dict()}

    def __repr__(self) -> str:
        sizes = ", ".join(f"{split}={len(pairs):,}" for split, pairs in self.splits.items())
        return (
            f"TranslationTask({self.name!r}, {sizes}, source vocabulary {len(self.source_tokenizer)}, "
            f"target vocabulary {len(self.target_tokenizer)})"
        )


def numbers_task(
    seed: int = 0, train_size: int = 200_000, validation_size: int = 1_000, test_size: int = 2_000
) -> TranslationTask:
    """English number phrases → Chinese numerals (see :mod:`.numbers`).

    The vocabularies hold every word and character the task can produce: 33 English tokens and 14
    Chinese characters, plus the four special tokens.
    """
    splits = {
        split: numbers.number_pairs(values)
        for split, values in numbers.number_splits(seed, train_size, validation_size, test_size).items()
    }
    english = Vocabulary.from_texts(numbers.ONES + numbers.TENS[2:] + ["hundred", "thousand", "million", "and", "-"])
    chinese = Vocabulary.from_texts(
        [numbers.CHINESE_DIGITS + "".join(numbers.CHINESE_UNITS) + numbers.WAN], unit="characters"
    )
    arguments = {"seed": seed, "train_size": train_size, "validation_size": validation_size, "test_size": test_size}
    return TranslationTask("numbers", splits, english, chinese, "exact_match", arguments)


def copy_task(seed: int = 0, **sizes: int) -> TranslationTask:
    """Copy a sequence of letters (see :mod:`.toy_tasks`).

    ``sizes`` are the keyword arguments of :func:`.toy_tasks.sequence_task_splits`
    (``vocabulary_size``, ``max_length``, ``train_size``, ``validation_size``, ``test_size``).
    """
    return _sequence_task("copy", toy_tasks.copy_sequence, seed=seed, **sizes)


def reverse_task(seed: int = 0, **sizes: int) -> TranslationTask:
    """Reverse a sequence of letters (see :mod:`.toy_tasks`); ``sizes`` as for :func:`copy_task`."""
    return _sequence_task("reverse", toy_tasks.reverse_sequence, seed=seed, **sizes)


def _sequence_task(name: str, transform, **options: int) -> TranslationTask:
    # Every argument, defaults included, is kept with the task so that a checkpoint can rebuild it.
    bound = inspect.signature(toy_tasks.sequence_task_splits).bind(transform, **options)
    bound.apply_defaults()
    arguments = {key: value for key, value in bound.arguments.items() if key != "transform"}
    splits = toy_tasks.sequence_task_splits(transform, **arguments)
    vocabulary = Vocabulary(toy_tasks.symbols(arguments["vocabulary_size"]))
    return TranslationTask(name, splits, vocabulary, vocabulary, "exact_match", arguments)


def multi30k_task(
    path: str | None = None, vocab_size: int = 8000, seed: int = 0, tokenizer: SubwordTokenizer | None = None
) -> TranslationTask:
    """Multi30k German → English (see :mod:`.multi30k`), with one BPE vocabulary for both languages.

    Args:
        path: a local copy (see :func:`~transformer_course.data.load_multi30k`), or ``None``: the
            dataset's own files, downloaded once into the cache.
        vocab_size: size of the shared BPE vocabulary trained on the training split.
        seed: splits a single local file.
        tokenizer: an already trained tokenizer (from a checkpoint) instead of training one.
    """
    splits = load_multi30k(path, seed=seed)
    if tokenizer is None:
        tokenizer = train_subword_tokenizer((text for pair in splits["train"] for text in pair), vocab_size)
    arguments = {"path": None if path is None else str(path), "vocab_size": vocab_size, "seed": seed}
    return TranslationTask("multi30k", splits, tokenizer, tokenizer, "bleu", arguments)


@dataclass(frozen=True)
class TaskOption:
    """An argument of a task's builder that ``transformer-course train`` offers as an option.

    Attributes:
        flag: the option, e.g. ``"--vocab-size"``.
        argument: the builder's keyword argument it sets, e.g. ``"vocab_size"``.
        type: what the option's text is turned into.
        help: what it means, for ``--help``.
    """

    flag: str
    argument: str
    type: Callable[[str], object] = str
    help: str = ""


@dataclass(frozen=True)
class TaskDefinition:
    """A task that can be built by name.

    Attributes:
        build: builds the task from keyword arguments (the ones it keeps in ``task.arguments``).
        options: the builder's arguments that the ``train`` command offers.
        takes_tokenizer: ``build`` trains its tokenizer, and takes an already trained one as
            ``tokenizer=`` instead, so that a task rebuilt from a checkpoint keeps the token ids its
            model was trained with.
        generated: ``build`` makes the pairs from a seed, with no files to read.
    """

    build: Callable[..., TranslationTask]
    options: tuple[TaskOption, ...] = ()
    takes_tokenizer: bool = False
    generated: bool = False


# The generated tasks' size: fewer training pairs make a quicker run, to try a setting or debug a model.
TRAIN_SIZE = TaskOption("--train-size", "train_size", int, "how many training pairs to generate (default: the task's)")

# Every task by name. A task's training recipe is in transformer_course.training.RECIPES, under the same name.
TASKS: dict[str, TaskDefinition] = {
    "numbers": TaskDefinition(numbers_task, options=(TRAIN_SIZE,), generated=True),
    "copy": TaskDefinition(copy_task, options=(TRAIN_SIZE,), generated=True),
    "reverse": TaskDefinition(reverse_task, options=(TRAIN_SIZE,), generated=True),
    "multi30k": TaskDefinition(
        multi30k_task,
        options=(
            TaskOption(
                "--data", "path", str,
                "a directory of the dataset's own files (train.de.gz + train.en.gz, val.*, test_2016_flickr.*, "
                "gzipped or not) or of train/validation/test .jsonl or .tsv files, or one such file (default: download "
                "the dataset's own files once into the cache; MULTI30K_BASE_URL names a mirror)",
            ),
            TaskOption("--vocab-size", "vocab_size", int, "size of the shared BPE vocabulary (default: the recipe's)"),
        ),
        takes_tokenizer=True,
    ),
}  # fmt: skip
# The tasks built from a seed alone (the book's studies train on these).
GENERATED_TASKS = tuple(name for name, definition in TASKS.items() if definition.generated)


def task_definition(name: str) -> TaskDefinition:
    """The definition of the task ``name`` (a key of :data:`TASKS`)."""
    if name not in TASKS:
        raise ValueError(f"unknown task {name!r}; choose one of {sorted(TASKS)}")
    return TASKS[name]


def load_task(name: str, **arguments) -> TranslationTask:
    """Build the task ``name`` (one of :data:`TASKS`) with the keyword ``arguments`` of its builder."""
    return task_definition(name).build(**arguments)


def task_from_dict(description: dict) -> TranslationTask:
    """Rebuild a task from :meth:`TranslationTask.to_dict` (e.g. a checkpoint's ``"task"``).

    The splits are rebuilt from the arguments; the tokenizers are *not* rebuilt but restored from
    the description, so the token ids are those the model was trained with. A BPE vocabulary
    retrained on the same data could differ (another ``tokenizers`` version, say) and would give
    the model's embeddings other tokens; restoring it also skips the training.
    """
    tokenizers = description["tokenizers"]
    source = tokenizer_from_dict(tokenizers["source"])
    target = source if tokenizers["target"] == tokenizers["source"] else tokenizer_from_dict(tokenizers["target"])
    arguments = dict(description["arguments"])
    if task_definition(description["name"]).takes_tokenizer:
        arguments["tokenizer"] = source  # the shared vocabulary, instead of training a new one
    task = load_task(description["name"], **arguments)
    task.source_tokenizer, task.target_tokenizer = source, target
    return task


def tokenizer_from_dict(description: dict) -> Tokenizer:
    """Rebuild a :class:`Vocabulary` or :class:`SubwordTokenizer` from its ``to_dict()``."""
    if description.get("kind") == "vocabulary":
        unit = description.get("unit", description.get("split"))  # "split" in checkpoints of earlier versions
        return Vocabulary(description["tokens"], unit)
    if description.get("kind") == "subword":
        from tokenizers import Tokenizer as HuggingFaceTokenizer

        return SubwordTokenizer(HuggingFaceTokenizer.from_str(description["tokenizer"]))
    raise ValueError(f"unknown tokenizer description of kind {description.get('kind')!r}")
