"""The real-corpus loader: the dataset's own files, the Hugging Face dataset, local JSONL or TSV, and the
multi30k task. (Downloading the dataset's files: test_multi30k_download.py.)"""

import gzip
import hashlib
import sys
import types
from pathlib import Path

import pytest
from multi30k_mirror import SHARED_MULTI30K

from transformer_course.data import (
    TranslationTask,
    Vocabulary,
    load_multi30k,
    multi30k_task,
    read_pairs,
    read_parallel_files,
    split_pairs,
    task_from_dict,
    train_subword_tokenizer,
)
from transformer_course.data import tasks as tasks_module
from transformer_course.data.multi30k import HUGGING_FACE_PATH
from transformer_course.training.evaluation import training_overlap

needs_the_corpus = pytest.mark.skipif(
    not (SHARED_MULTI30K / "train.de.gz").is_file(), reason=f"the Multi30k corpus is not at {SHARED_MULTI30K}"
)


def _write_layout(directory: Path, gzipped: bool, pairs: dict[str, list[tuple[str, str]]]) -> Path:
    """The dataset's own layout: <split name>.de and .en, line-aligned."""
    names = {"train": "train", "validation": "val", "test": "test_2016_flickr"}
    for split, rows in pairs.items():
        for column, language in enumerate(("de", "en")):
            text = "".join(row[column] + "\n" for row in rows)
            path = directory / f"{names[split]}.{language}{'.gz' if gzipped else ''}"
            path.write_bytes(gzip.compress(text.encode()) if gzipped else text.encode())
    return directory


PAIRS = {
    "train": [("Ein Hund\tläuft.", "A dog runs."), ("Zwei Katzen.", "Two cats.")],
    "validation": [("Ein Mann.", "A man.")],
    "test": [("Eine Frau.", "A woman.")],
}


@pytest.mark.parametrize("gzipped", [True, False], ids=["gzipped", "plain"])
def test_the_datasets_own_layout_is_read_gzipped_or_not(tmp_path, gzipped):
    assert load_multi30k(_write_layout(tmp_path, gzipped, PAIRS)) == PAIRS


def test_a_tab_inside_a_sentence_stays_in_it(tmp_path):
    splits = load_multi30k(_write_layout(tmp_path, True, PAIRS))
    assert splits["train"][0][0] == "Ein Hund\tläuft."


def test_files_of_different_lengths_are_refused_naming_both_and_their_counts(tmp_path):
    (tmp_path / "train.de").write_text("eins\nzwei\ndrei\n")
    (tmp_path / "train.en").write_text("one\ntwo\n")
    with pytest.raises(ValueError, match=r"train\.de has 3 lines but .*train\.en has 2"):
        read_parallel_files(tmp_path / "train.de", tmp_path / "train.en")


@needs_the_corpus
def test_the_shared_corpus_has_the_standard_splits_and_its_tab_line():
    splits = load_multi30k(SHARED_MULTI30K)
    assert {split: len(pairs) for split, pairs in splits.items()} == {
        "train": 29_000,
        "validation": 1_014,
        "test": 1_000,
    }
    assert "\t" in splits["train"][7_365][0]  # line 7,366 of train.de
    assert splits["test"][0] == (
        "Ein Mann mit einem orangefarbenen Hut, der etwas anstarrt.",
        "A man in an orange hat starring at something.",
    )


def test_jsonl_and_tsv_files_give_the_same_pairs(fixtures):
    assert load_multi30k(fixtures / "multi30k") == load_multi30k(fixtures / "multi30k_tsv")


def test_pairs_are_german_then_english(fixtures):
    pairs = read_pairs(fixtures / "multi30k" / "train.jsonl")
    assert pairs[0] == ("Ein Mann fährt Fahrrad.", "A man rides a bicycle.")


def test_the_languages_can_be_swapped(fixtures):
    pairs = read_pairs(fixtures / "multi30k" / "train.jsonl", source_language="en", target_language="de")
    assert pairs[0] == ("A man rides a bicycle.", "Ein Mann fährt Fahrrad.")


def test_a_single_file_is_split_without_overlap(fixtures):
    splits = load_multi30k(fixtures / "multi30k" / "train.jsonl", seed=1)
    assert sum(len(pairs) for pairs in splits.values()) == 40
    assert not set(splits["train"]) & set(splits["test"]) and not set(splits["train"]) & set(splits["validation"])
    assert len(splits["test"]) == len(splits["validation"]) == 2


def test_split_pairs_drops_duplicates_so_no_pair_is_in_two_splits():
    pairs = [("a", "b")] * 10 + [(str(index), str(index)) for index in range(40)]
    splits = split_pairs(pairs, seed=0, validation_fraction=0.1, test_fraction=0.1)
    assert sum(len(split) for split in splits.values()) == 41


def test_wrong_jsonl_keys_are_reported_with_the_line(tmp_path):
    path = tmp_path / "pairs.jsonl"
    path.write_text('{"fr": "Bonjour", "en": "Hello"}\n')
    with pytest.raises(ValueError, match=r"pairs.jsonl:1: expected keys 'de' and 'en'"):
        read_pairs(path)


def test_a_tsv_line_without_two_columns_is_reported(tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_text("only one column\n")
    with pytest.raises(ValueError, match="pairs.tsv:1: expected 2 tab-separated columns"):
        read_pairs(path)


def test_a_directory_missing_a_split_is_reported(tmp_path):
    (tmp_path / "train.tsv").write_text("a\tb\n")
    with pytest.raises(
        FileNotFoundError, match=r"no val\.de\[\.gz\] and val\.en\[\.gz\], nor validation\.jsonl or validation\.tsv"
    ):
        load_multi30k(tmp_path)


def test_the_hugging_face_path_reads_the_dataset_through_datasets(monkeypatch):
    requested = []

    def load_dataset(name):
        requested.append(name)
        row = {"de": "Ein Hund.", "en": "A dog."}
        return {"train": [row, row], "validation": [row], "test": [row]}

    monkeypatch.setitem(sys.modules, "datasets", types.SimpleNamespace(load_dataset=load_dataset))
    splits = load_multi30k(HUGGING_FACE_PATH)
    assert requested == ["bentrevett/multi30k"]
    assert splits["train"] == [("Ein Hund.", "A dog.")] * 2 and len(splits["test"]) == 1


def test_without_datasets_installed_the_error_says_how_to_get_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "datasets", None)  # makes "import datasets" fail
    with pytest.raises(ImportError, match="pip install datasets"):
        load_multi30k(HUGGING_FACE_PATH)


def test_the_multi30k_task_shares_one_bpe_vocabulary_and_scores_with_bleu(fixtures):
    task = multi30k_task(fixtures / "multi30k", vocab_size=300)
    assert task.source_tokenizer is task.target_tokenizer
    assert task.metric == "bleu" and len(task.splits["test"]) == 10
    assert task.arguments == {"path": str(fixtures / "multi30k"), "vocab_size": 300, "seed": 0}


def test_a_task_rebuilt_from_its_description_keeps_its_bpe_vocabulary_without_training_one(fixtures, monkeypatch):
    task = multi30k_task(fixtures / "multi30k", vocab_size=300)
    description = task.to_dict()

    def retrain(*arguments, **options):
        raise AssertionError("the BPE vocabulary was trained again")

    monkeypatch.setattr(tasks_module, "train_subword_tokenizer", retrain)
    rebuilt = task_from_dict(description)
    assert rebuilt.source_tokenizer is rebuilt.target_tokenizer  # still one shared vocabulary
    assert rebuilt.splits == task.splits
    sentence = task.splits["test"][0][1]
    assert rebuilt.target_tokenizer.encode(sentence) == task.target_tokenizer.encode(sentence)


def test_on_a_cpu_multi30k_trains_with_its_cpu_recipe(tmp_path, fixtures):
    from transformer_course.cli import main
    from transformer_course.training import CPU_RECIPES, RECIPES, load_checkpoint, recipe_for

    assert (
        recipe_for("multi30k", "cpu") is CPU_RECIPES["multi30k"]
        and recipe_for("multi30k", "cuda") is RECIPES["multi30k"]
    )
    assert recipe_for("numbers", "cpu") is RECIPES["numbers"]  # a task without a CPU recipe trains the same everywhere
    main(
        ["train", "--task", "multi30k", "--data", str(fixtures / "multi30k"), "--vocab-size", "200",
         "--max-steps", "1", "--device", "cpu", "--out", str(tmp_path), "--no-progress"]
    )  # fmt: skip
    saved = load_checkpoint(tmp_path / "checkpoint.pt")
    assert saved.model_config == CPU_RECIPES["multi30k"].model
    assert saved.training_config.warmup_steps == CPU_RECIPES["multi30k"].training["warmup_steps"]


@pytest.mark.slow
@needs_the_corpus
def test_a_short_run_on_the_real_corpus_lowers_the_loss(tmp_path):
    from transformer_course.data import multi30k_task
    from transformer_course.training import CPU_RECIPES, TrainingConfig, train

    recipe = CPU_RECIPES["multi30k"]
    task = multi30k_task(SHARED_MULTI30K, vocab_size=2000)
    task.splits["validation"] = task.splits["validation"][:20]  # the run validates once, when it stops
    config = TrainingConfig(
        **{**recipe.training, "max_tokens": 1024, "warmup_steps": 20}, max_steps=60, log_every=10, device="cpu"
    )
    history = train(task, config, recipe.model, progress=False).history["train"]
    assert history[-1]["train_loss"] < history[0]["train_loss"] - 0.5, [row["train_loss"] for row in history]


# Words that only the validation and test splits hold, each often enough that BPE would make it a token
# of its own if those splits' text reached the tokenizer's training.
HELD_OUT_WORDS = {"validation": ("Quokka", "Wombats"), "test": ("Axolotl", "Kakapos")}


def _with_held_out_words(splits: dict) -> dict:
    splits = {split: list(pairs) for split, pairs in splits.items()}
    for split, (german, english) in HELD_OUT_WORDS.items():
        splits[split] = [(f"{german} {german} {german}.", f"{english} {english} {english}.")] * 20 + splits[split]
    return splits


def test_the_bpe_vocabulary_is_learned_from_the_training_split_alone(fixtures, tmp_path):
    splits = _with_held_out_words(load_multi30k(fixtures / "multi30k"))
    directory = _write_layout(tmp_path, True, splits)
    task = multi30k_task(directory, vocab_size=400)
    from_training_text = train_subword_tokenizer((text for pair in splits["train"] for text in pair), vocab_size=400)
    assert task.source_tokenizer.to_dict() == from_training_text.to_dict()
    pieces = set(task.source_tokenizer.tokenizer.get_vocab())
    for word in (word for words in HELD_OUT_WORDS.values() for word in words):
        assert f"▁{word}" not in pieces, f"{word} is a token: the vocabulary saw the validation or test split"


def test_a_splits_checksums_are_those_of_its_uncompressed_files(tmp_path):
    directory = _write_layout(tmp_path, True, PAIRS)
    task = multi30k_task(directory, vocab_size=40)
    assert task.sha256("test") == {
        side: hashlib.sha256(gzip.decompress((directory / f"test_2016_flickr.{language}.gz").read_bytes())).hexdigest()
        for side, language in (("source", "de"), ("target", "en"))
    }


@needs_the_corpus
def test_the_test_splits_checksums_are_those_of_the_corpus_files():
    splits = load_multi30k(SHARED_MULTI30K)
    task = TranslationTask("multi30k", splits, Vocabulary([]), Vocabulary([]), "bleu")
    files = {"source": "test_2016_flickr.de.gz", "target": "test_2016_flickr.en.gz"}
    assert task.sha256("test") == {
        side: hashlib.sha256(gzip.decompress((SHARED_MULTI30K / name).read_bytes())).hexdigest()
        for side, name in files.items()
    }


def test_test_pairs_with_a_sentence_seen_in_training_are_counted_and_left_out_of_the_scores_without_them():
    splits = {
        "train": [("Ein Hund läuft.", "A dog runs."), ("Zwei Katzen.", "Two cats.")],
        "test": [
            ("Ein  Hund läuft.", "A dog is running."),
            ("Eine Frau.", "Two cats."),
            ("Ein Mann fährt ein rotes Fahrrad.", "A man rides a red bicycle."),
        ],
    }
    task = TranslationTask("multi30k", splits, Vocabulary([]), Vocabulary([]), "bleu")
    hypotheses = ["A dog runs.", "A woman.", "A man rides a red bicycle."]
    overlap = training_overlap(task, splits["test"], hypotheses, [target for _, target in splits["test"]])
    # the first source differs from a training source by a space only; the second reference is a training target
    assert (overlap["sources_in_training"], overlap["references_in_training"], overlap["examples_without"]) == (1, 1, 1)
    assert overlap["without"]["exact_match"] == 100.0 and overlap["without"]["sacrebleu"] == pytest.approx(100.0)


@needs_the_corpus
def test_no_test_sentence_of_the_corpus_occurs_in_its_training_split():
    splits = load_multi30k(SHARED_MULTI30K)
    task = TranslationTask("multi30k", splits, Vocabulary([]), Vocabulary([]), "bleu")
    test = splits["test"]
    overlap = training_overlap(task, test, [target for _, target in test], [target for _, target in test])
    assert (overlap["sources_in_training"], overlap["references_in_training"]) == (0, 0)
    assert overlap["examples_without"] == 1_000
