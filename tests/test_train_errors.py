"""Training's user errors end the command in one line, ``error: …``, as the grading commands' do; a
resumed run may change its dropout and training settings, and is refused by name any other change."""

import json
import shutil
import subprocess
import sys

import pytest

from transformer_course.cli import main
from transformer_course.data import TranslationTask, Vocabulary
from transformer_course.training import TrainingConfig, load_checkpoint, train
from transformer_course.training.checkpoint import FORMAT_VERSION, load_tensors, save_tensors


@pytest.fixture(scope="module")
def trained_once(tiny_task, tiny_model, tmp_path_factory):
    """A run of 2 steps of the tiny copy task, trained once for the module."""
    directory = tmp_path_factory.mktemp("trained")
    config = TrainingConfig(
        max_steps=2, max_tokens=64, validate_every=2, validation_examples=4, out_dir=str(directory), curves=False
    )
    train(tiny_task, config, tiny_model, progress=False)
    return directory


@pytest.fixture
def trained(trained_once, tmp_path):
    """A copy of that run, for one test to resume."""
    return shutil.copytree(trained_once, tmp_path / "run")


def test_a_task_without_training_pairs_is_refused_before_training(tmp_path):
    """Without the check, the loop waits forever for a first batch that never comes."""
    empty = TranslationTask("copy", {"train": [], "validation": [("a", "a")]}, Vocabulary("ab"), Vocabulary("ab"))
    with pytest.raises(ValueError, match="task 'copy' has no training pairs"):
        train(empty, TrainingConfig(max_steps=1), progress=False)


def test_a_size_the_task_cannot_be_made_with_is_one_line_naming_it(tmp_path):
    with pytest.raises(SystemExit, match=r"^error: train_size must be at least 1, got 0$"):
        main(["train", "--task", "reverse", "--train-size", "0", "--max-steps", "1", "--out", str(tmp_path)])


def resume(directory, *options) -> list[str]:
    return ["train", "--resume", "--out", str(directory), "--max-steps", "4", "--no-progress", *map(str, options)]


@pytest.mark.slow  # a process of its own: its exit status and all it prints
def test_resuming_with_another_architecture_is_one_line_naming_the_setting_and_both_values(trained):
    command = [sys.executable, "-m", "transformer_course.cli", *resume(trained, "--d-model", 32)]
    finished = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert finished.returncode == 1 and finished.stdout == ""
    (line,) = finished.stderr.strip().splitlines()  # no traceback
    assert line.startswith("error: ") and "d_model: 16 there, 32 now" in line and "Traceback" not in line


@pytest.mark.parametrize(
    "options, refused",
    [(["--num-layers", 2], "num_layers: 1 there, 2 now"), (["--positional", "learned"], "positional: 'sinusoidal'")],
)
def test_every_architecture_setting_is_refused_by_name(trained, options, refused):
    with pytest.raises(SystemExit) as stopped:
        main(resume(trained, *options))
    assert str(stopped.value.code).startswith("error: ") and refused in str(stopped.value.code)


def test_dropout_and_the_learning_rate_may_change_when_a_run_resumes(trained, capsys):
    code = main(resume(trained, "--dropout", 0.3, "--learning-rate-scale", 0.25, "--label-smoothing", 0.0))
    captured = capsys.readouterr()
    assert code == 0 and json.loads(captured.out.strip().splitlines()[-1])["steps"] == 4
    saved = load_checkpoint(trained / "checkpoint.pt")
    assert saved.model_config.dropout == 0.3 and saved.model_config.d_model == 16
    assert saved.training_config.learning_rate_scale == 0.25 and saved.training_config.label_smoothing == 0.0


def test_resuming_says_which_settings_changed(trained, capsys):
    main(["train", "--resume", "--out", str(trained), "--max-steps", "3", "--dropout", "0.2", "--no-progress"])
    assert "resuming" not in capsys.readouterr().err  # no progress, no messages
    main(["train", "--resume", "--out", str(trained), "--max-steps", "4", "--dropout", "0.3"])
    err = capsys.readouterr().err
    assert "resuming" in err and "dropout 0.2 → 0.3" in err and "max_steps 3 → 4" in err


def test_evaluating_a_missing_checkpoint_is_one_line(tmp_path):
    with pytest.raises(SystemExit) as stopped:
        main(["evaluate", str(tmp_path / "nothing.pt")])
    assert stopped.value.code == f"error: no checkpoint at {tmp_path / 'nothing.pt'}"


def test_a_checkpoint_of_a_newer_format_is_one_line(trained):
    path = trained / "checkpoint.pt"
    save_tensors({**load_tensors(path), "format_version": FORMAT_VERSION + 1}, path)
    for argv in (["evaluate", str(trained), "--limit", "1"], resume(trained)):
        with pytest.raises(SystemExit) as stopped:
            main(argv)
        assert str(stopped.value.code).startswith("error: the checkpoint has format version")
