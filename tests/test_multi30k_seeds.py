"""benchmarks/multi30k_seeds.py's arithmetic: the time to a validation score, and the mean ± std over seeds."""

import importlib.util
from pathlib import Path

import pytest

_SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "multi30k_seeds.py"
_SPEC = importlib.util.spec_from_file_location("multi30k_seeds", _SCRIPT)
seeds = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(seeds)

# Each row's "seconds": when its validation began; "validation_seconds": how long it decoded.
VALIDATION = [
    {"step": 250, "validation_sacrebleu": 30.0, "seconds": 600.0, "validation_seconds": 12.0},
    {"step": 500, "validation_sacrebleu": 40.2, "seconds": 1200.0, "validation_seconds": 18.0},
    {"step": 750, "validation_sacrebleu": 41.0, "seconds": 1800.0, "validation_seconds": 6.0},
]


def test_the_time_to_a_score_is_its_first_validation_with_and_without_the_validations_before_it():
    assert seeds.time_to(VALIDATION, 40.0) == {
        "target": 40.0, "step": 500, "minutes": 20.0, "minutes_without_validation": round((1200 - 12) / 60, 2),
    }  # fmt: skip


def test_a_run_that_never_reaches_the_score_has_no_time_to_it():
    assert seeds.time_to(VALIDATION, 42.0) is None


def _run(seed: int, bleu: float, validation: list[dict]) -> dict:
    def scores(sacrebleu: float) -> dict:
        return {
            "sacrebleu": sacrebleu,
            "chrf": 60.0,
            "signatures": {"sacrebleu": "s", "chrf": "c"},
            "sha256": {"source": "a", "target": "b"},
            "training_overlap": {
                "sources_in_training": 2, "references_in_training": 1, "examples_without": 997,
                "without": {"sacrebleu": sacrebleu - 0.5},
            },
        }  # fmt: skip

    test = {step: scores(bleu - 1.0) for step in seeds.STEPS}
    return {
        "seed": seed, "steps": 1000, "machine": {}, "validation": validation, "chosen_alpha": 1.0,
        "time_to_target": seeds.time_to(validation, 40.0), "test": {**test, "delivered": scores(bleu)},
    }  # fmt: skip


def test_the_summary_gives_each_seed_and_the_mean_and_sample_standard_deviation():
    summary = seeds.summarise([_run(0, 41.0, VALIDATION), _run(1, 43.0, VALIDATION)], 40.0)
    assert [row["test_sacrebleu"] for row in summary["seeds"]] == [41.0, 43.0]
    assert summary["mean_std"]["test_sacrebleu"] == {"mean": 42.0, "std": pytest.approx(2**0.5)}


def test_the_headline_score_is_the_delivered_models_and_each_step_before_it_is_kept():
    summary = seeds.summarise([_run(0, 41.0, VALIDATION)], 40.0)
    row = summary["seeds"][0]
    assert row["test_sacrebleu"] == row["test_sacrebleu_delivered"] == 41.0
    assert row["test_sacrebleu_last_greedy"] == 40.0 and row["chosen_alpha"] == 1.0
    assert row["test_sacrebleu_without_overlap"] == 40.5


def test_the_summary_counts_the_test_pairs_that_occur_in_the_training_split():
    summary = seeds.summarise([_run(0, 41.0, VALIDATION)], 40.0)
    assert summary["training_overlap"] == {
        "sources_in_training": 2,
        "references_in_training": 1,
        "examples_without": 997,
    }


def test_the_tables_give_every_seed_and_the_mean_and_name_the_signatures():
    table = seeds.markdown(seeds.summarise([_run(0, 41.0, VALIDATION), _run(1, 43.0, VALIDATION)], 40.0))
    assert "| mean ± std | 1,000 ± 0 | 42.00 ± 1.41 | 60.00 ± 0.00 | 41.50 ± 1.41 |" in table
    assert "| 1 | 42.00 | 42.00 | 42.00 | 42.00 | 43.00 |" in table
    assert "sacreBLEU: s; chrF: c" in table


def test_the_time_to_a_score_has_no_mean_when_a_seed_never_reached_it():
    summary = seeds.summarise([_run(0, 41.0, VALIDATION), _run(1, 39.0, VALIDATION[:1])], 40.0)
    assert "minutes_to_target" not in summary["mean_std"]
    assert summary["seeds"][1]["minutes_to_target"] is None


def test_the_length_penalty_each_seed_chose_is_listed_but_not_averaged():
    summary = seeds.summarise([_run(0, 41.0, VALIDATION), _run(1, 43.0, VALIDATION)], 40.0)
    assert [row["chosen_alpha"] for row in summary["seeds"]] == [1.0, 1.0]
    assert "chosen_alpha" not in summary["mean_std"]
