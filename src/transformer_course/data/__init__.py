"""Data for the final project: tasks, tokenizers and length-bucketed batches.

==================  ==============================================================
``numbers``         English number phrases → Chinese numerals, generated offline
``toy_tasks``       copy and reverse, for debugging
``multi30k``        the Multi30k German → English corpus (its own files, Hugging Face, .jsonl/.tsv)
``vocabulary``      word- and character-level vocabularies with the special tokens
``subword``         a BPE tokenizer trained with Hugging Face ``tokenizers``
``batching``        padding, the token budget and bucketing by length
``tasks``           :class:`TranslationTask`: splits + tokenizers; :data:`TASKS`, every task by name
==================  ==============================================================
"""

from .batching import (
    Batch,
    EncodedPairs,
    bucketed_batches,
    make_batch,
    padding_fractions,
    random_batches,
)
from .multi30k import load_multi30k, read_pairs, read_parallel_files, split_pairs
from .numbers import (
    chinese_numerals,
    english_words,
    number_splits,
    parse_chinese,
    parse_english,
)
from .subword import SubwordTokenizer, train_subword_tokenizer
from .tasks import (
    GENERATED_TASKS,
    TASKS,
    TaskDefinition,
    TaskOption,
    TranslationTask,
    copy_task,
    load_task,
    multi30k_task,
    numbers_task,
    reverse_task,
    task_definition,
    task_from_dict,
    tokenizer_from_dict,
)
from .vocabulary import BOS_ID, EOS_ID, PAD_ID, SPECIAL_TOKENS, UNK_ID, Vocabulary

__all__ = [
    "BOS_ID",
    "Batch",
    "EOS_ID",
    "EncodedPairs",
    "PAD_ID",
    "SPECIAL_TOKENS",
    "SubwordTokenizer",
    "train_subword_tokenizer",
    "GENERATED_TASKS",
    "TASKS",
    "TaskDefinition",
    "TaskOption",
    "TranslationTask",
    "UNK_ID",
    "Vocabulary",
    "bucketed_batches",
    "chinese_numerals",
    "copy_task",
    "english_words",
    "load_multi30k",
    "load_task",
    "make_batch",
    "multi30k_task",
    "number_splits",
    "numbers_task",
    "padding_fractions",
    "parse_chinese",
    "parse_english",
    "random_batches",
    "read_pairs",
    "read_parallel_files",
    "reverse_task",
    "split_pairs",
    "task_definition",
    "task_from_dict",
    "tokenizer_from_dict",
]
