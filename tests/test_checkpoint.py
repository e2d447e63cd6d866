"""The checkpoint of a run: one typed record with a format version, and every older layout still read."""

import pytest
import torch
from tiny import TINY_MODEL

from transformer_course.training import TrainingConfig, load_checkpoint, load_trained_model, train
from transformer_course.training.checkpoint import FORMAT_VERSION, Checkpoint, load_tensors, save_tensors


def tiny_run(out_dir, steps: int) -> TrainingConfig:
    return TrainingConfig(
        max_steps=steps, max_tokens=64, warmup_steps=5, validate_every=2, device="cpu", out_dir=str(out_dir),
        curves=False,
    )  # fmt: skip


@pytest.fixture(scope="module")
def saved_run(tiny_task, tmp_path_factory):
    """A run of 4 steps, as the current version writes its checkpoint: the file's plain dict."""
    out_dir = tmp_path_factory.mktemp("run")
    train(tiny_task, tiny_run(out_dir, 4), TINY_MODEL, progress=False)
    return load_tensors(out_dir / "checkpoint.pt")


def written_by_version_2(current: dict) -> dict:
    """As the package wrote checkpoints before a run could keep an average of its weights."""
    training = {key: value for key, value in current["training_config"].items() if key != "average_decay"}
    old = {key: value for key, value in current.items() if key != "average"}
    return {**old, "format_version": 2, "training_config": training}


def written_by_version_1(current: dict) -> dict:
    """As the package wrote checkpoints from the run's provenance on to the format version: no version."""
    return {key: value for key, value in written_by_version_2(current).items() if key != "format_version"}


def written_by_version_0(current: dict) -> dict:
    """As the first training loop wrote them: no provenance; ``max_len`` for ``max_positions``; no
    ``d_k``, ``shared_vocabulary`` nor ``validation_examples``; a vocabulary's unit called its ``split``."""
    old = {key: value for key, value in written_by_version_1(current).items() if key != "provenance"}
    model = {key: value for key, value in current["model_config"].items() if key not in ("d_k", "shared_vocabulary")}
    model["max_len"] = model.pop("max_positions")
    training = {key: value for key, value in current["training_config"].items() if key != "validation_examples"}
    tokenizers = {
        side: {"kind": "vocabulary", "split": tokenizer["unit"], "tokens": tokenizer["tokens"]}
        for side, tokenizer in current["task"]["tokenizers"].items()
    }
    return {
        **old,
        "model_config": model,
        "training_config": training,
        "task": {**current["task"], "tokenizers": tokenizers},
    }


def test_a_checkpoint_is_written_with_its_format_version_and_read_back_as_it_was(saved_run, tmp_path):
    assert saved_run["format_version"] == FORMAT_VERSION
    checkpoint = Checkpoint.from_dict(saved_run)
    assert (checkpoint.progress.step, checkpoint.progress.batch_in_epoch) == (4, 4)
    assert checkpoint.model_config == TINY_MODEL and checkpoint.training_config.max_steps == 4
    assert checkpoint.provenance["commands"] == [] and checkpoint.history["validation"][-1]["step"] == 4
    checkpoint.save(tmp_path / "again.pt")
    again = load_checkpoint(tmp_path / "again.pt")
    plain = ("model_config", "training_config", "task", "scheduler", "scaler", "progress", "history", "provenance")
    assert {name: getattr(again, name) for name in plain} == {name: getattr(checkpoint, name) for name in plain}
    for name, tensor in checkpoint.model.items():
        assert torch.equal(again.model[name], tensor), name
    assert again.optimizer["state"][0]["exp_avg"].equal(checkpoint.optimizer["state"][0]["exp_avg"])


@pytest.mark.parametrize(
    "layout",
    [written_by_version_0, written_by_version_1, written_by_version_2],
    ids=["version 0", "version 1", "version 2"],
)
def test_an_older_checkpoint_still_loads_rebuilds_its_model_and_resumes(layout, saved_run, tiny_task, tmp_path):
    save_tensors(layout(saved_run), tmp_path / "checkpoint.pt")
    checkpoint = load_checkpoint(tmp_path / "checkpoint.pt")
    assert checkpoint.model_config == TINY_MODEL and checkpoint.progress.step == 4
    assert checkpoint.provenance == (saved_run["provenance"] if layout is not written_by_version_0 else {})
    assert checkpoint.average is None and checkpoint.training_config.average_decay is None
    model, task, _ = load_trained_model(tmp_path, device="cpu")
    assert task.to_dict()["tokenizers"] == saved_run["task"]["tokenizers"]
    for name, tensor in model.state_dict().items():
        assert torch.equal(tensor, saved_run["model"][name]), name
    resumed = train(tiny_task, tiny_run(tmp_path, 6), TINY_MODEL, resume=True, progress=False)
    assert resumed.steps == 6 and load_checkpoint(tmp_path / "checkpoint.pt").progress.step == 6


def test_a_checkpoint_of_a_newer_format_is_refused_by_name(saved_run, tmp_path):
    save_tensors({**saved_run, "format_version": FORMAT_VERSION + 1}, tmp_path / "checkpoint.pt")
    with pytest.raises(ValueError, match=f"format version {FORMAT_VERSION + 1}, newer than this package's"):
        load_checkpoint(tmp_path / "checkpoint.pt")
