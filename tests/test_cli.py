"""The train and evaluate commands: options, resumption, and one JSON line of results."""

import json

import pytest

from transformer_course.cli import main
from transformer_course.data import tasks as tasks_module
from transformer_course.training import NonFiniteLossError, load_checkpoint
from transformer_course.training import commands as training_commands

TINY_MODEL = ["--d-model", "16", "--num-heads", "2", "--num-layers", "1", "--d-ff", "32"]


def run_command(capsys, *argv) -> tuple[int, dict]:
    code = main([str(argument) for argument in argv])
    lines = capsys.readouterr().out.strip().splitlines()
    return code, json.loads(lines[-1])


def test_train_prints_its_results_as_one_json_line_and_keeps_a_checkpoint(tmp_path, capsys):
    code, results = run_command(
        capsys, "train", "--task", "reverse", "--max-steps", 3, "--out", tmp_path, "--no-progress", *TINY_MODEL
    )
    assert code == 0
    assert results["task"] == "reverse" and results["steps"] == 3 and results["stopped_because"] == "max_steps"
    assert 0 <= results["validation_exact_match"] <= 100 and results["checkpoint"] == str(tmp_path / "checkpoint.pt")
    assert (tmp_path / "curves.png").exists()


def test_evaluate_decodes_the_test_split_and_prints_its_scores(tmp_path, capsys):
    run_command(capsys, "train", "--task", "copy", "--max-steps", 2, "--out", tmp_path, "--no-progress", *TINY_MODEL)
    code, results = run_command(capsys, "evaluate", tmp_path / "checkpoint.pt", "--limit", 50, "--beam", 2)
    assert code == 0
    assert (
        results["task"] == "copy"
        and results["split"] == "test"
        and results["examples"] == 50
        and results["beam_size"] == 2
    )
    assert 0 <= results["exact_match"] <= 100


def test_resume_takes_every_option_not_given_from_the_checkpoint(tmp_path, capsys):
    run_command(
        capsys,
        "train",
        "--task",
        "copy",
        "--max-steps",
        2,
        "--out",
        tmp_path,
        "--no-progress",
        "--warmup-steps",
        7,
        *TINY_MODEL,
    )
    code, results = run_command(capsys, "train", "--resume", "--max-steps", 4, "--out", tmp_path, "--no-progress")
    assert code == 0 and results["task"] == "copy" and results["steps"] == 4
    saved = load_checkpoint(tmp_path / "checkpoint.pt")
    assert saved["model_config"]["d_model"] == 16 and saved["training_config"]["warmup_steps"] == 7
    assert saved["training_config"]["max_steps"] == 4


def test_multi30k_trains_and_scores_bleu_on_local_files(tmp_path, capsys, fixtures):
    code, _ = run_command(
        capsys, "train", "--task", "multi30k", "--data", fixtures / "multi30k_tsv",
        "--vocab-size", 200, "--max-steps", 2,
        "--max-tokens", 256, "--out", tmp_path, "--no-progress", *TINY_MODEL,
    )  # fmt: skip
    assert code == 0
    code, results = run_command(capsys, "evaluate", tmp_path, "--split", "validation", "--beam", 2, "--alpha", 0.6)
    assert code == 0 and results["task"] == "multi30k" and results["examples"] == 10
    assert {"sacrebleu", "sacrebleu_lowercase", "tokenised_lowercase_bleu", "exact_match"} <= set(results)


def test_record_keeps_the_runs_command_curves_scores_examples_and_attention(tmp_path, capsys, fixtures):
    run_command(
        capsys, "train", "--task", "multi30k", "--data", fixtures / "multi30k", "--vocab-size", 200, "--max-steps", 4,
        "--validate-every", 2, "--max-tokens", 256, "--out", tmp_path, "--no-progress", *TINY_MODEL,
    )  # fmt: skip
    code, results = run_command(
        capsys, "record", tmp_path, "--out", tmp_path / "record.json", "--examples", 3, "--beam", 2
    )
    record = json.loads((tmp_path / "record.json").read_text(encoding="utf-8"))
    assert code == 0 and results["record"] == str(tmp_path / "record.json")
    assert record["provenance"]["commands"][0].startswith("transformer-course train --task multi30k")
    assert record["steps"] == 4 and [row["step"] for row in record["history"]["validation"]] == [2, 4]
    assert record["test"]["beam"]["beam_size"] == 2 and "tokenised_lowercase_bleu" in record["test"]["greedy"]
    assert len(record["examples"]) == 3 and set(record["examples"][0]) == {"source", "reference", "greedy", "beam"}
    attention = record["cross_attention"]
    assert len(attention["weights"]) == len(attention["target_pieces"]) and len(attention["weights"][0]) == len(
        attention["source_pieces"]
    )
    assert all(abs(sum(row) - 1) < 0.01 for row in attention["weights"])  # rows of weights, rounded to 3 decimals
    assert len(attention["layers"]) == 1 and len(attention["layers"][0]) == 2  # TINY_MODEL: 1 layer of 2 heads


def test_a_non_finite_loss_exits_with_status_1_and_says_why(tmp_path, capsys, monkeypatch):
    def diverging_train(*arguments, **options):
        raise NonFiniteLossError("the training loss became nan at step 3")

    monkeypatch.setattr(training_commands, "train", diverging_train)
    code = main(["train", "--task", "copy", "--max-steps", "3", "--out", str(tmp_path), *TINY_MODEL])
    captured = capsys.readouterr()
    assert code == 1
    assert "loss became nan at step 3" in captured.err
    assert json.loads(captured.out.strip())["error"].startswith("the training loss became nan")


def test_a_budget_is_required(tmp_path, capsys):
    with pytest.raises(SystemExit, match="give a budget"):
        main(["train", "--task", "copy", "--out", str(tmp_path)])


def test_resuming_a_run_of_another_task_is_refused(tmp_path, capsys):
    run_command(capsys, "train", "--task", "copy", "--max-steps", 1, "--out", tmp_path, "--no-progress", *TINY_MODEL)
    with pytest.raises(SystemExit, match="holds a copy run, not reverse"):
        main(["train", "--task", "reverse", "--resume", "--max-steps", "2", "--out", str(tmp_path)])


def test_the_results_line_reports_the_last_training_loss_even_before_the_first_log_interval(tmp_path, capsys):
    _, results = run_command(
        capsys,
        "train",
        "--task",
        "copy",
        "--max-steps",
        2,
        "--log-every",
        50,
        "--out",
        tmp_path,
        "--no-progress",
        *TINY_MODEL,
    )
    assert results["train_loss"] > 0


def test_resuming_a_multi30k_run_reuses_the_checkpoints_bpe_vocabulary_instead_of_retraining_it(
    tmp_path, capsys, fixtures, monkeypatch
):
    run_command(
        capsys, "train", "--task", "multi30k", "--data", fixtures / "multi30k_tsv",
        "--vocab-size", 200, "--max-steps", 2,
        "--max-tokens", 256, "--out", tmp_path, "--no-progress", *TINY_MODEL,
    )  # fmt: skip
    trained_with = load_checkpoint(tmp_path / "checkpoint.pt")["task"]["tokenizers"]

    def retrain(*arguments, **options):
        raise AssertionError("a resumed run retrained the BPE vocabulary")

    monkeypatch.setattr(tasks_module, "train_subword_tokenizer", retrain)
    code, results = run_command(capsys, "train", "--resume", "--max-steps", 4, "--out", tmp_path, "--no-progress")
    assert code == 0 and results["steps"] == 4
    assert load_checkpoint(tmp_path / "checkpoint.pt")["task"]["tokenizers"] == trained_with
