"""A command that resumes a run: what it takes from the checkpoint, what it refuses, and that it goes on as a
resumed ``train`` call does, keeping standard output for its one results line."""

import dataclasses
import json
import shutil

import pytest
import torch
from tiny import TINY_COMMAND_OPTIONS, run_command, train_tiny

from transformer_course.cli import main
from transformer_course.data import tasks as tasks_module
from transformer_course.training import SavedRun, load_checkpoint, train


def test_resume_takes_every_option_not_given_from_the_checkpoint(tmp_path, capsys):
    train_tiny(capsys, "copy", 2, tmp_path, "--warmup-steps", 7)
    code, results = run_command(capsys, "train", "--resume", "--max-steps", 4, "--out", tmp_path, "--no-progress")
    assert code == 0 and results["task"] == "copy" and results["steps"] == 4
    saved = load_checkpoint(tmp_path / "checkpoint.pt")
    assert saved.model_config.d_model == 16 and saved.training_config.warmup_steps == 7
    assert saved.training_config.max_steps == 4


def test_resuming_a_run_of_another_task_is_refused(tmp_path, capsys):
    train_tiny(capsys, "copy", 1, tmp_path)
    with pytest.raises(SystemExit, match="holds a copy run, not reverse"):
        main(["train", "--task", "reverse", "--resume", "--max-steps", "2", "--out", str(tmp_path)])


def test_resuming_a_multi30k_run_reuses_the_checkpoints_bpe_vocabulary_instead_of_retraining_it(
    tmp_path, capsys, fixtures, monkeypatch
):
    run_command(
        capsys, "train", "--task", "multi30k", "--data", fixtures / "multi30k_tsv",
        "--vocab-size", 200, "--max-steps", 2,
        "--max-tokens", 256, "--out", tmp_path, "--no-progress", *TINY_COMMAND_OPTIONS,
    )  # fmt: skip
    trained_with = load_checkpoint(tmp_path / "checkpoint.pt").task["tokenizers"]

    def retrain(*arguments, **options):
        raise AssertionError("a resumed run retrained the BPE vocabulary")

    monkeypatch.setattr(tasks_module, "train_subword_tokenizer", retrain)
    code, results = run_command(capsys, "train", "--resume", "--max-steps", 4, "--out", tmp_path, "--no-progress")
    assert code == 0 and results["steps"] == 4
    assert load_checkpoint(tmp_path / "checkpoint.pt").task["tokenizers"] == trained_with


def test_a_resumed_command_and_a_resumed_train_call_continue_a_run_alike(tmp_path, capsys):
    train_tiny(capsys, "copy", 2, tmp_path / "command", "--validate-every", 2)
    shutil.copytree(tmp_path / "command", tmp_path / "call")
    run_command(capsys, "train", "--resume", "--max-steps", 4, "--out", tmp_path / "command", "--no-progress")
    saved = SavedRun.read(tmp_path / "call")
    config = dataclasses.replace(saved.training_config, max_steps=4, out_dir=str(tmp_path / "call"))
    train(saved.task(), config, saved.model_config, resume=True, progress=False)
    by_command, by_call = (load_checkpoint(tmp_path / run / "checkpoint.pt") for run in ("command", "call"))
    assert by_command.progress.step == by_call.progress.step == 4
    for name, parameter in by_command.model.items():
        assert torch.equal(parameter, by_call.model[name]), name
    assert by_command.optimizer["state"][0]["exp_avg"].equal(by_call.optimizer["state"][0]["exp_avg"])


def test_a_resumed_run_keeps_standard_output_for_its_results_line_alone(tmp_path, capsys):
    train_tiny(capsys, "copy", 1, tmp_path)
    main(["train", "--resume", "--max-steps", "2", "--out", str(tmp_path)])
    captured = capsys.readouterr()
    lines = captured.out.strip().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["steps"] == 2, f"standard output: {captured.out!r}"
    assert "resuming" in captured.err, f"standard error: {captured.err!r}"
