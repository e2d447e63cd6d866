"""The moving average of a run's weights: its update rule, what a run delivers and keeps, and resuming it."""

import pytest
import torch
from tiny import TINY_COMMAND_OPTIONS, TINY_MODEL, run_command
from torch import nn
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn

from transformer_course.training import TrainingConfig, commands, load_checkpoint, load_trained_model, train
from transformer_course.training.averaging import averaged_model
from transformer_course.training.evaluation import evaluate, teacher_forced_loss
from transformer_course.training.label_smoothing import LabelSmoothingLoss


def tiny_run(out_dir, steps: int, **options) -> TrainingConfig:
    settings = dict(
        max_steps=steps, max_tokens=64, warmup_steps=5, validate_every=3, device="cpu", out_dir=str(out_dir),
        curves=False, average_decay=0.9,
    )  # fmt: skip
    return TrainingConfig(**{**settings, **options})


def test_the_average_starts_at_the_first_weights_then_follows_the_capped_moving_average():
    model = nn.Linear(1, 1, bias=False)
    average = averaged_model(model, decay=0.5)
    expected = None
    for t, value in enumerate([4.0, 8.0, 2.0, 6.0] * 3):  # t: the updates averaged before; from t = 9 d caps it
        model.weight.data.fill_(value)
        average.update_parameters(model)
        decay = min(0.5, (1 + t) / (10 + t))
        expected = value if t == 0 else decay * expected + (1 - decay) * value  # the first update copies
        assert average.module.weight.item() == pytest.approx(expected)


def test_below_the_cap_the_average_is_torchs_own_exponential_moving_average():
    torch.manual_seed(0)
    model = nn.Linear(4, 3)
    ours = averaged_model(model, decay=0.05)  # the cap (1 + t) / (10 + t) is at least 0.1: it never binds
    torchs = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.05))
    for _ in range(12):
        with torch.no_grad():
            for parameter in model.parameters():
                parameter.normal_()
        ours.update_parameters(model)
        torchs.update_parameters(model)
        for name, tensor in torchs.module.state_dict().items():
            torch.testing.assert_close(ours.module.state_dict()[name], tensor, rtol=0, atol=1e-6, msg=name)


def test_a_decay_outside_0_to_1_is_refused():
    with pytest.raises(ValueError, match=r"decay must be in \[0, 1\), got 1.0"):
        averaged_model(nn.Linear(1, 1), decay=1.0)
    with pytest.raises(ValueError, match=r"average_decay must be in \[0, 1\), got -0.1"):
        TrainingConfig(max_steps=1, average_decay=-0.1)


def test_a_run_that_averages_delivers_the_average_and_keeps_both_weights(tiny_task, tmp_path):
    result = train(tiny_task, tiny_run(tmp_path, 6), TINY_MODEL, progress=False)
    checkpoint = load_checkpoint(tmp_path / "checkpoint.pt")
    average, _, _ = load_trained_model(tmp_path, device="cpu", weights="average")
    last, _, _ = load_trained_model(tmp_path, device="cpu", weights="last")
    for name, tensor in result.model.state_dict().items():
        assert torch.equal(average.state_dict()[name], tensor), name
        assert torch.equal(last.state_dict()[name], checkpoint.model[name]), name
    assert any(not torch.equal(average.state_dict()[name], last.state_dict()[name]) for name in checkpoint.model)


def test_validation_scores_the_average(tiny_task, tmp_path):
    result = train(tiny_task, tiny_run(tmp_path, 6), TINY_MODEL, progress=False)
    criterion = LabelSmoothingLoss(0.1, ignore_index=0)
    expected = teacher_forced_loss(result.model, tiny_task.encode("validation"), criterion, 64)
    assert result.history["validation"][-1]["validation_loss"] == pytest.approx(expected)


def test_without_an_average_both_choices_are_the_last_weights(tiny_task, tmp_path):
    train(tiny_task, tiny_run(tmp_path, 3, average_decay=None), TINY_MODEL, progress=False)
    assert load_checkpoint(tmp_path / "checkpoint.pt").average is None
    average, _, _ = load_trained_model(tmp_path, device="cpu", weights="average")
    last, _, _ = load_trained_model(tmp_path, device="cpu", weights="last")
    for name, tensor in last.state_dict().items():
        assert torch.equal(average.state_dict()[name], tensor), name


def test_a_resumed_run_ends_with_the_same_average_as_an_uninterrupted_one(tiny_task, tmp_path):
    straight = train(tiny_task, tiny_run(tmp_path / "straight", 8), TINY_MODEL, progress=False)
    train(tiny_task, tiny_run(tmp_path / "interrupted", 4, validate_every=100), TINY_MODEL, progress=False)
    resumed = train(tiny_task, tiny_run(tmp_path / "interrupted", 8), TINY_MODEL, resume=True, progress=False)
    for name, tensor in straight.model.state_dict().items():
        assert torch.equal(resumed.model.state_dict()[name], tensor), name


def test_evaluate_decodes_with_the_average_unless_asked_for_the_last_weights(tmp_path, capsys, monkeypatch):
    run_command(
        capsys, "train", "--task", "copy", "--max-steps", 4, "--average-decay", 0.9, "--out", tmp_path,
        "--no-progress", "--train-size", 400, *TINY_COMMAND_OPTIONS,
    )  # fmt: skip
    decoded = []

    def recording_evaluate(model, *arguments, **options):
        decoded.append({name: tensor.clone() for name, tensor in model.state_dict().items()})
        return evaluate(model, *arguments, **options)

    monkeypatch.setattr(commands, "evaluate", recording_evaluate)
    _, average = run_command(capsys, "evaluate", tmp_path, "--limit", 8)
    _, last = run_command(capsys, "evaluate", tmp_path, "--limit", 8, "--weights", "last")
    assert (average["weights"], last["weights"]) == ("average", "last")
    checkpoint = load_checkpoint(tmp_path / "checkpoint.pt")
    averaged = {name: checkpoint.average[f"module.{name}"] for name in checkpoint.model}  # AveragedModel's copy
    assert any(not torch.equal(averaged[name], tensor) for name, tensor in checkpoint.model.items())
    for name, tensor in checkpoint.model.items():
        assert torch.equal(decoded[0][name], averaged[name]), f"{name}: not the average's"
        assert torch.equal(decoded[1][name], tensor), f"{name}: not the last weights"
