"""Table 3 at small scale: every variant with every seed, their spread, restarts, and the command."""

import json
import statistics
from pathlib import Path

import pytest
from tiny import TINY_MODEL, TINY_TASK_ARGUMENTS

from transformer_course.book_programs import variations
from transformer_course.book_programs.variations import Variant, run_variations, variants_of_rows
from transformer_course.cli import main
from transformer_course.data import copy_task

RECORDS = Path(__file__).resolve().parents[1] / "book" / "records"
TINY_TRAINING = {"max_tokens": 64, "warmup_steps": 5, "label_smoothing": 0.1}
TINY_VARIANTS = [
    Variant("base", "base"),
    Variant("A", "h=1", {"num_heads": 1}),
    Variant("D", "ε_ls=0.0", training={"label_smoothing": 0.0}),
]


def copy_task_of_seed(name: str, seed: int):
    """``load_task`` for the command: the tiny copy task, with the seed it is given."""
    assert name == "copy"
    return copy_task(**{**TINY_TASK_ARGUMENTS, "seed": seed})


@pytest.fixture
def task(tiny_task):
    return tiny_task


def run(task, out, seeds=(0, 1), steps=2, variants=TINY_VARIANTS):
    return run_variations(
        task, variants, list(seeds), steps, out, base_model=TINY_MODEL, base_training=TINY_TRAINING, device="cpu"
    )


def count_training_runs(monkeypatch) -> list:
    calls = []
    train = variations.train

    def counting_train(*arguments, **options):
        calls.append(arguments[1].seed)
        return train(*arguments, **options)

    monkeypatch.setattr(variations, "train", counting_train)
    return calls


def test_the_record_holds_every_variant_with_every_seed(task, tmp_path):
    run(task, tmp_path / "table3.json", seeds=(0, 1))
    record = json.loads((tmp_path / "table3.json").read_text(encoding="utf-8"))
    assert list(record["variants"]) == [variant.name for variant in TINY_VARIANTS]
    for entry in record["variants"].values():
        assert list(entry["runs"]) == ["0", "1"]
        assert all({"perplexity", "exact_match", "seconds"} <= set(scores) for scores in entry["runs"].values())


def test_each_variants_spread_is_computed_from_its_per_seed_scores(task, tmp_path):
    record = run(task, tmp_path / "table3.json", seeds=(0, 1, 2))
    for entry in record["variants"].values():
        for metric in ("perplexity", "exact_match"):
            values = [scores[metric] for scores in entry["runs"].values()]
            summary = entry[metric]
            assert summary["mean"] == pytest.approx(statistics.mean(values), abs=1e-4)
            assert summary["std"] == pytest.approx(statistics.stdev(values), abs=1e-4)
            assert (summary["min"], summary["max"]) == (min(values), max(values))


def test_runs_with_different_seeds_differ(task, tmp_path):
    record = run(task, tmp_path / "table3.json", seeds=(0, 1), variants=TINY_VARIANTS[:1])
    runs = record["variants"]["base"]["runs"]
    assert runs["0"]["perplexity"] != runs["1"]["perplexity"]


def test_a_restart_trains_only_the_runs_the_record_lacks(task, tmp_path, monkeypatch):
    first = run(task, tmp_path / "table3.json", seeds=(0,))
    calls = count_training_runs(monkeypatch)
    second = run(task, tmp_path / "table3.json", seeds=(0, 1))
    assert calls == [1] * len(TINY_VARIANTS)
    for name, entry in first["variants"].items():
        assert second["variants"][name]["runs"]["0"] == entry["runs"]["0"]


def test_the_record_is_written_after_every_run(task, tmp_path, monkeypatch):
    calls = count_training_runs(monkeypatch)
    train_and_score = variations.train_and_score

    def interrupted_after_two_runs(*arguments):
        if len(calls) == 2:
            raise KeyboardInterrupt
        return train_and_score(*arguments)

    monkeypatch.setattr(variations, "train_and_score", interrupted_after_two_runs)
    with pytest.raises(KeyboardInterrupt):
        run(task, tmp_path / "table3.json", seeds=(0, 1))
    record = json.loads((tmp_path / "table3.json").read_text(encoding="utf-8"))
    assert sum(len(entry["runs"]) for entry in record["variants"].values()) == 2


def test_a_record_made_with_other_settings_is_refused(task, tmp_path):
    run(task, tmp_path / "table3.json", seeds=(0,), steps=2)
    with pytest.raises(ValueError, match="other settings.*steps: 2 there, 3 now"):
        run(task, tmp_path / "table3.json", seeds=(0,), steps=3)


def test_a_variant_changed_under_the_same_name_is_refused(task, tmp_path):
    run(task, tmp_path / "table3.json", seeds=(0,), variants=[Variant("A", "h=1", {"num_heads": 1})])
    with pytest.raises(ValueError, match="'h=1' made with other changes"):
        run(task, tmp_path / "table3.json", seeds=(0,), variants=[Variant("A", "h=1", {"num_heads": 2})])


def test_rows_choose_their_variants_and_the_base_comes_with_them():
    chosen = variants_of_rows(["B", "E"])
    assert {variant.row for variant in chosen} == {"base", "B", "E"}
    assert chosen[0].row == "base"


def test_an_unknown_row_is_refused():
    with pytest.raises(ValueError, match="no rows \\['F'\\]"):
        variants_of_rows(["A", "F"])


def test_the_command_writes_the_record_and_prints_one_json_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(variations, "load_task", copy_task_of_seed)
    out = tmp_path / "table3.json"
    code = main(["variations", "--task", "copy", "--seeds", "0", "1", "--steps", "2", "--rows", "E", "--out", str(out)])
    results = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    record = json.loads(out.read_text(encoding="utf-8"))
    assert code == 0 and results["record"] == str(out) and results["runs"] == 4
    assert list(record["variants"]) == ["base", "learned positions"] and record["settings"]["task"]["name"] == "copy"
    assert record["provenance"]["commands"] == [
        f"transformer-course variations --task copy --seeds 0 1 --steps 2 --rows E --out {out}"
    ]


@pytest.mark.slow
def test_runs_in_worker_processes_score_as_runs_in_this_one(task, tmp_path):
    here = run(task, tmp_path / "here.json", seeds=(0, 1), variants=TINY_VARIANTS[:2])
    apart = run_variations(
        task, TINY_VARIANTS[:2], [0, 1], 2, tmp_path / "apart.json", base_model=TINY_MODEL,
        base_training=TINY_TRAINING, device="cpu", workers=2, threads=1,
    )  # fmt: skip
    for name, entry in here["variants"].items():
        for seed, scores in entry["runs"].items():
            other = apart["variants"][name]["runs"][seed]
            assert (other["perplexity"], other["exact_match"]) == (scores["perplexity"], scores["exact_match"])


@pytest.mark.parametrize(
    "record, key",
    [
        ("table3-numbers.json", "base_training"),
        ("table2-numbers.json", "training"),
        ("table2-multi30k.json", "training"),
    ],
)
def test_a_committed_study_keeps_the_training_settings_its_command_records(record, key):
    """Else the command would refuse to extend the book's record, as made "with other settings"."""
    stored = json.loads((RECORDS / record).read_text(encoding="utf-8"))["settings"][key]
    assert set(variations.recorded_training(stored)) == set(stored)


def test_a_study_whose_runs_average_their_weights_records_the_decay():
    stored = json.loads((RECORDS / "table3-numbers.json").read_text(encoding="utf-8"))["settings"]["base_training"]
    assert variations.recorded_training({**stored, "average_decay": 0.99})["average_decay"] == 0.99
