"""The train and evaluate commands: options, devices, and one JSON line of results (resuming: test_cli_resume)."""

import argparse
import dataclasses
import hashlib
import importlib
import json
import subprocess
import sys

import pytest
from tiny import TINY_COMMAND_OPTIONS, TINY_GENERATED_TASK_OPTIONS, run_command, tiny_task, train_tiny

from transformer_course.cli import build_parser, main
from transformer_course.training import (
    ModelConfig,
    NonFiniteLossError,
    TrainingConfig,
    load_checkpoint,
)
from transformer_course.training import commands as training_commands


def test_train_prints_its_results_as_one_json_line_and_keeps_a_checkpoint(tmp_path, capsys):
    code, results = train_tiny(capsys, "reverse", 3, tmp_path, "--curves")
    assert code == 0
    assert results["task"] == "reverse" and results["steps"] == 3 and results["stopped_because"] == "max_steps"
    assert 0 <= results["validation_exact_match"] <= 100 and results["checkpoint"] == str(tmp_path / "checkpoint.pt")
    assert (tmp_path / "curves.png").exists()


def test_evaluate_decodes_the_test_split_and_prints_its_scores(tmp_path, capsys):
    train_tiny(capsys, "copy", 2, tmp_path)
    code, results = run_command(capsys, "evaluate", tmp_path / "checkpoint.pt", "--limit", 50, "--beam", 2)
    assert code == 0
    assert (
        results["task"] == "copy"
        and results["split"] == "test"
        and results["examples"] == 50
        and results["beam_size"] == 2
    )
    assert 0 <= results["exact_match"] <= 100


def test_train_size_sets_how_many_training_pairs_a_generated_task_makes(tmp_path, capsys):
    code, _ = run_command(
        capsys, "train", "--task", "reverse", "--train-size", 30, "--max-steps", 1, "--out", tmp_path, "--no-progress",
        *TINY_COMMAND_OPTIONS,
    )  # fmt: skip
    task = load_checkpoint(tmp_path / "checkpoint.pt").rebuild_task()
    assert code == 0 and len(task.splits["train"]) == 30, len(task.splits["train"])


def test_multi30k_trains_and_scores_bleu_on_local_files(tmp_path, capsys, fixtures):
    code, _ = run_command(
        capsys, "train", "--task", "multi30k", "--data", fixtures / "multi30k_tsv",
        "--vocab-size", 200, "--max-steps", 2,
        "--max-tokens", 256, "--out", tmp_path, "--no-progress", *TINY_COMMAND_OPTIONS,
    )  # fmt: skip
    assert code == 0
    code, results = run_command(capsys, "evaluate", tmp_path, "--split", "validation", "--beam", 2, "--alpha", 0.6)
    assert code == 0 and results["task"] == "multi30k" and results["examples"] == 10
    assert {"sacrebleu", "sacrebleu_lowercase", "tokenised_lowercase_bleu", "chrf", "exact_match"} <= set(results)


def test_evaluate_prints_each_scores_signature_and_the_checksums_of_the_files_it_scored(tmp_path, capsys, fixtures):
    run_command(
        capsys, "train", "--task", "multi30k", "--data", fixtures / "multi30k_tsv", "--vocab-size", 200,
        "--max-steps", 1, "--max-tokens", 256, "--out", tmp_path, "--no-progress", *TINY_COMMAND_OPTIONS,
    )  # fmt: skip
    code = main(["evaluate", str(tmp_path), "--limit", "4"])
    printed = capsys.readouterr()
    results = json.loads(printed.out.splitlines()[-1])
    assert code == 0
    for name, signature in results["signatures"].items():  # for a reader too, each score beside its signature
        assert f"{name} " in printed.err and f"{results[name]:6.2f}  {signature}" in printed.err
    assert set(results["signatures"]) == {"sacrebleu", "sacrebleu_lowercase", "tokenised_lowercase_bleu", "chrf"}
    assert results["signatures"]["sacrebleu"].startswith("nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:")
    assert results["signatures"]["chrf"].startswith("nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:")
    first_four = [line.split("\t") for line in (fixtures / "multi30k_tsv" / "test.tsv").read_text().splitlines()[:4]]
    assert results["sha256"] == {
        side: hashlib.sha256("".join(row[column] + "\n" for row in first_four).encode()).hexdigest()
        for column, side in enumerate(("source", "target"))
    }
    overlap = results["training_overlap"]  # the fixture's test sentences are none of its training sentences
    assert {key: overlap[key] for key in ("sources_in_training", "references_in_training", "examples_without")} == {
        "sources_in_training": 0,
        "references_in_training": 0,
        "examples_without": 4,
    }
    assert overlap["without"]["sacrebleu"] == results["sacrebleu"]


def test_record_keeps_the_runs_command_curves_scores_examples_and_attention(tmp_path, capsys, fixtures):
    run_command(
        capsys, "train", "--task", "multi30k", "--data", fixtures / "multi30k", "--vocab-size", 200, "--max-steps", 4,
        "--validate-every", 2, "--max-tokens", 256, "--out", tmp_path, "--no-progress", *TINY_COMMAND_OPTIONS,
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
    # The tiny model (TINY_COMMAND_OPTIONS) has 1 layer of 2 heads.
    assert len(attention["layers"]) == 1 and len(attention["layers"][0]) == 2


def test_a_non_finite_loss_exits_with_status_1_and_says_why(tmp_path, capsys, monkeypatch):
    def diverging_train(*arguments, **options):
        raise NonFiniteLossError("the training loss became nan at step 3")

    monkeypatch.setattr(training_commands, "train", diverging_train)
    code = main(["train", "--task", "copy", "--max-steps", "3", "--out", str(tmp_path), *TINY_GENERATED_TASK_OPTIONS])
    captured = capsys.readouterr()
    assert code == 1
    assert "loss became nan at step 3" in captured.err
    assert json.loads(captured.out.strip())["error"].startswith("the training loss became nan")


def test_a_budget_is_required(tmp_path, capsys):
    with pytest.raises(SystemExit, match="give a budget"):
        main(["train", "--task", "copy", "--out", str(tmp_path)])


def test_the_results_line_reports_the_last_training_loss_even_before_the_first_log_interval(tmp_path, capsys):
    _, results = train_tiny(capsys, "copy", 2, tmp_path, "--log-every", 50)
    assert results["train_loss"] > 0


def test_every_setting_of_the_model_and_the_recipe_is_an_option():
    arguments = vars(build_parser().parse_args(["train"]))
    assert {field.name for field in dataclasses.fields(ModelConfig)} <= set(arguments)
    assert {field.name for field in dataclasses.fields(TrainingConfig)} <= set(arguments)


def test_options_keep_their_types_and_booleans_can_be_switched_off(tmp_path):
    arguments = build_parser().parse_args(
        ["train", "--d-model", "8", "--dropout", "0.2", "--clip-norm", "0.5", "--no-norm-first", "--out", str(tmp_path)]
    )
    assert (arguments.d_model, arguments.dropout, arguments.clip_norm, arguments.norm_first) == (8, 0.2, 0.5, False)
    assert arguments.out_dir == str(tmp_path)


def test_an_option_of_another_task_is_refused(tmp_path):
    with pytest.raises(SystemExit, match="--vocab-size is not an option of the copy task"):
        main(["train", "--task", "copy", "--vocab-size", "100", "--max-steps", "1", "--out", str(tmp_path)])


def _commands_with_device(run_directory, record_path) -> dict[str, list[str]]:
    """Every command that takes --device, with arguments that make it quick (a trained tiny run to read)."""
    return {
        "train": ["train", "--task", "copy", "--max-steps", "1", "--out", str(run_directory / "again"), "--no-progress",
                  *TINY_GENERATED_TASK_OPTIONS],
        "evaluate": ["evaluate", str(run_directory), "--limit", "5"],
        "record": ["record", str(run_directory), "--out", str(record_path), "--examples", "2", "--beam", "2"],
        "variations": ["variations", "--task", "copy", "--seeds", "0", "--steps", "1", "--rows", "E",
                       "--out", str(run_directory / "table3.json")],
    }  # fmt: skip


DEVICE_COMMANDS = ["train", "evaluate", "record", "variations"]


def test_the_device_tests_cover_every_command_with_a_device_option():
    subcommands = next(action for action in build_parser()._actions if isinstance(action, argparse._SubParsersAction))
    with_device = {
        name
        for name, parser in subcommands.choices.items()
        if any("--device" in action.option_strings for action in parser._actions)
    }
    assert with_device == set(DEVICE_COMMANDS)


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory):
    directory = tmp_path_factory.mktemp("run")
    main(
        [
            "train",
            "--task",
            "copy",
            "--max-steps",
            "2",
            "--out",
            str(directory),
            "--no-progress",
            *TINY_GENERATED_TASK_OPTIONS,
        ]
    )
    return directory


@pytest.mark.parametrize("command", DEVICE_COMMANDS)
def test_every_command_runs_with_device_auto(command, trained_run, tmp_path, capsys, monkeypatch):
    from transformer_course.book_programs import variations

    monkeypatch.setattr(variations, "load_task", lambda name, seed: tiny_task())
    argv = _commands_with_device(trained_run, tmp_path / "record.json")[command]
    code, results = run_command(capsys, *argv, "--device", "auto")
    assert code == 0 and "error" not in results


@pytest.mark.parametrize("command", DEVICE_COMMANDS)
def test_every_command_refuses_an_unknown_device_in_one_line(command, trained_run, tmp_path, capsys):
    argv = _commands_with_device(trained_run, tmp_path / "record.json")[command]
    with pytest.raises(SystemExit):
        main([*argv, "--device", "gpu"])
    assert "argument --device: unknown device 'gpu'" in capsys.readouterr().err


def test_each_command_group_registers_the_commands_cli_names_for_it():
    from transformer_course.cli import COMMAND_GROUPS

    for module, names in COMMAND_GROUPS.items():
        parser = argparse.ArgumentParser()
        importlib.import_module(module).register(parser.add_subparsers())
        subcommands = next(action for action in parser._actions if isinstance(action, argparse._SubParsersAction))
        registered = tuple(subcommands.choices)
        assert registered == names, f"{module} registers {registered}, cli names {names}"


def test_grading_commands_start_without_the_training_stack_or_matplotlib():
    """A fresh interpreter parses check's and autograde's help; the modules it loaded are listed on stdout."""
    program = (
        "import sys\n"
        "from transformer_course.cli import main\n"
        "for command in ('check', 'autograde'):\n"
        "    try:\n        main([command, '--help'])\n    except SystemExit:\n        pass\n"
        "print('LOADED', ' '.join(sorted(sys.modules)))\n"
    )
    finished = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120, check=True)
    loaded = set(finished.stdout.split("LOADED", 1)[1].split())
    unwanted = {name for name in loaded if name.split(".")[0] == "matplotlib"} | {
        name for name in loaded if name.startswith(("transformer_course.training", "transformer_course.book_programs"))
    }
    assert "transformer_course.grading.commands" in loaded, "the grading commands were not loaded at all"
    assert not unwanted, f"check and autograde --help loaded {sorted(unwanted)[:8]}"
