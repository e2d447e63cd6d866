"""Vocabularies, the BPE tokenizer, the copy and reverse tasks, and building tasks by name."""

import pytest

from transformer_course.data import (
    SPECIAL_TOKENS,
    TASKS,
    UNK_ID,
    Vocabulary,
    copy_task,
    load_task,
    numbers_task,
    reverse_task,
    tokenizer_from_dict,
    train_subword_tokenizer,
)
from transformer_course.data.multi30k import load_multi30k


def test_special_tokens_come_first_at_fixed_ids():
    vocabulary = Vocabulary(["b", "a"])
    assert vocabulary.tokens[:4] == ["<pad>", "<bos>", "<eos>", "<unk>"]
    assert (vocabulary.pad_id, vocabulary.bos_id, vocabulary.eos_id, vocabulary.unk_id) == (0, 1, 2, 3)


def test_english_words_split_hyphens_into_their_own_token():
    task = numbers_task(train_size=10, validation_size=6, test_size=6)
    assert task.source_tokenizer.tokenize("ninety-nine thousand and one") == [
        "ninety",
        "-",
        "nine",
        "thousand",
        "and",
        "one",
    ]


def test_chinese_is_split_into_characters():
    task = numbers_task(train_size=10, validation_size=6, test_size=6)
    assert task.target_tokenizer.tokenize("一万零五") == ["一", "万", "零", "五"]


def test_numbers_vocabularies_hold_every_token_and_nothing_unknown():
    task = numbers_task(train_size=2000, validation_size=60, test_size=60)
    assert len(task.source_tokenizer) == 4 + 33 and len(task.target_tokenizer) == 4 + 14
    encoded = task.encode("train")
    assert all(UNK_ID not in ids for ids in encoded.sources + encoded.targets)


def test_encode_then_decode_gives_back_the_text():
    task = numbers_task(train_size=2000, validation_size=60, test_size=60)
    for source, target in task.splits["train"]:
        assert task.source_tokenizer.decode(task.source_tokenizer.encode(source)) == source
        assert task.target_tokenizer.decode(task.target_tokenizer.encode(target)) == target


def test_decode_stops_at_eos_and_skips_pad_and_bos():
    vocabulary = Vocabulary.from_texts(["一二三"], unit="characters")
    one, two = vocabulary.encode("一二")
    assert vocabulary.decode([vocabulary.bos_id, one, two, vocabulary.eos_id, one, vocabulary.pad_id]) == "一二"


def test_unknown_tokens_become_unk():
    assert Vocabulary(["a"]).encode("a z") == [4, UNK_ID]


def test_a_vocabulary_survives_its_dictionary():
    vocabulary = Vocabulary.from_texts(["c b-a"])
    rebuilt = tokenizer_from_dict(vocabulary.to_dict())
    assert rebuilt.tokens == vocabulary.tokens and rebuilt.unit == vocabulary.unit


def test_a_vocabulary_stored_with_its_unit_under_the_older_name_split_still_loads():
    description = Vocabulary.from_texts(["四 十 七"], unit="characters").to_dict()
    description["split"] = description.pop("unit")
    assert tokenizer_from_dict(description).unit == "characters"


def test_an_unknown_unit_is_rejected():
    with pytest.raises(ValueError, match="unit must be one of"):
        Vocabulary(["a"], unit="bytes")


def test_bpe_tokenizer_round_trips_sentences_and_has_the_special_tokens(fixtures):
    splits = load_multi30k(fixtures / "multi30k")
    tokenizer = train_subword_tokenizer((text for pair in splits["train"] for text in pair), vocab_size=300)
    assert [tokenizer.tokenizer.id_to_token(index) for index in range(4)] == list(SPECIAL_TOKENS)
    for german, english in splits["train"]:
        assert tokenizer.decode(tokenizer.encode(english)) == english
        assert tokenizer.decode(tokenizer.encode(german) + [tokenizer.eos_id, 7]) == german


def test_bpe_maps_a_character_never_seen_in_training_to_unk(fixtures):
    splits = load_multi30k(fixtures / "multi30k")
    tokenizer = train_subword_tokenizer((text for pair in splits["train"] for text in pair), vocab_size=300)
    assert UNK_ID in tokenizer.encode("Ein Mann auf einer Leiter.")  # no "L" in the training sentences


def test_bpe_splits_punctuation_from_words(fixtures):
    splits = load_multi30k(fixtures / "multi30k")
    tokenizer = train_subword_tokenizer((text for pair in splits["train"] for text in pair), vocab_size=300)
    assert tokenizer.tokenize("A dog.")[-1] == "."


def test_a_bpe_tokenizer_survives_its_dictionary(fixtures):
    splits = load_multi30k(fixtures / "multi30k")
    tokenizer = train_subword_tokenizer((text for pair in splits["train"] for text in pair), vocab_size=300)
    rebuilt = tokenizer_from_dict(tokenizer.to_dict())
    sentence = "Ein Mann spielt Gitarre."
    assert rebuilt.encode(sentence) == tokenizer.encode(sentence) and len(rebuilt) == len(tokenizer)


def test_copy_targets_equal_their_sources():
    task = copy_task(train_size=200)
    assert all(source == target for source, target in task.splits["train"])


def test_reverse_targets_are_their_sources_backwards():
    task = reverse_task(train_size=200)
    assert all(target.split() == source.split()[::-1] for source, target in task.splits["train"])


def test_copy_splits_share_no_sequence():
    task = copy_task(train_size=2000)
    sources = [{source for source, _ in task.splits[split]} for split in ("train", "validation", "test")]
    assert sum(len(split) for split in sources) == len(set.union(*sources)) == 3000


def test_tasks_are_rebuilt_by_name_from_their_arguments():
    task = reverse_task(seed=5, train_size=100)
    rebuilt = load_task(task.name, **task.arguments)
    assert rebuilt.splits == task.splits


@pytest.mark.parametrize("build", [copy_task, reverse_task, numbers_task])
@pytest.mark.parametrize(
    "sizes, refused",
    [({"train_size": 0}, "train_size must be at least 1, got 0"), ({"test_size": -1}, "test_size must be 0 or more")],
)
def test_a_generated_task_refuses_sizes_it_cannot_be_made_with(build, sizes, refused):
    with pytest.raises(ValueError, match=refused):
        build(**{"train_size": 10, **sizes})


def test_unknown_task_name_is_rejected():
    with pytest.raises(ValueError, match="unknown task 'sorting'"):
        load_task("sorting")


def test_every_task_has_a_training_recipe_and_every_recipe_a_task():
    from transformer_course.training import CPU_RECIPES, RECIPES

    assert set(RECIPES) == set(TASKS) and set(CPU_RECIPES) <= set(TASKS)
