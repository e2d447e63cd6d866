"""Label smoothing, the schedule, checkpoints, resumption, the NaN guard, the training loop and its callbacks."""

import dataclasses
import os
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from tiny import TINY_MODEL, TINY_TASK_ARGUMENTS
from torch.optim.optimizer import register_optimizer_step_post_hook

from transformer_course import atomic_files
from transformer_course.book_programs.record import write_record
from transformer_course.data import copy_task
from transformer_course.training import (
    LabelSmoothingLoss,
    ModelConfig,
    NonFiniteGradientError,
    NonFiniteLossError,
    RunState,
    Trainer,
    TrainingConfig,
    load_checkpoint,
    load_trained_model,
    run_state,
    train,
    transformer_learning_rate,
    transformer_optimizer,
    warmup_scheduler,
)
from transformer_course.training import callbacks as callbacks_module
from transformer_course.training import loop as training_loop
from transformer_course.training.checkpoint import CheckpointError, load_tensors, save_tensors
from transformer_course.training.distributed import ProcessGroup

TINY = TINY_MODEL


@pytest.fixture
def task(tiny_task):
    return tiny_task


def tiny_run(out_dir, max_steps, **options):
    """A tiny run's settings; without its curves unless asked (``curves=True``): drawing them costs more
    than the run."""
    settings = dict(
        max_steps=max_steps, max_tokens=64, warmup_steps=5, validate_every=4, log_every=2, out_dir=str(out_dir),
        curves=False,
    )  # fmt: skip
    settings.update(options)
    return TrainingConfig(**settings)


# ---- label smoothing ---------------------------------------------------------------------------


def test_label_smoothing_equals_pytorch_cross_entropy_with_label_smoothing():
    torch.manual_seed(0)
    logits, targets = torch.randn(4, 7, 11), torch.randint(1, 11, (4, 7))
    targets[0, 4:] = 0  # padding
    expected = F.cross_entropy(logits.view(-1, 11), targets.view(-1), label_smoothing=0.1, ignore_index=0)
    torch.testing.assert_close(LabelSmoothingLoss(0.1, ignore_index=0)(logits, targets), expected)


def test_label_smoothing_of_zero_is_cross_entropy():
    torch.manual_seed(1)
    logits, targets = torch.randn(5, 9), torch.randint(0, 9, (5,))
    torch.testing.assert_close(
        LabelSmoothingLoss(0.0, ignore_index=-100)(logits, targets), F.cross_entropy(logits, targets)
    )


def test_padding_positions_do_not_change_the_loss():
    torch.manual_seed(2)
    logits, targets = torch.randn(1, 6, 8), torch.tensor([[3, 4, 5, 0, 0, 0]])
    changed = logits.clone()
    changed[0, 3:] = 100.0
    criterion = LabelSmoothingLoss(0.1)
    torch.testing.assert_close(criterion(logits, targets), criterion(changed, targets))


def test_label_smoothing_rejects_mismatched_shapes_and_bad_epsilon():
    with pytest.raises(ValueError, match=r"logits \(2, 3, 5\) and targets \(2, 4\)"):
        LabelSmoothingLoss()(torch.randn(2, 3, 5), torch.zeros(2, 4, dtype=torch.long))
    with pytest.raises(ValueError, match="smoothing"):
        LabelSmoothingLoss(1.0)


# ---- optimiser and schedule --------------------------------------------------------------------


def test_schedule_is_equation_3_of_the_paper():
    assert transformer_learning_rate(1, 512, 4000) == pytest.approx(512**-0.5 * 4000**-1.5)
    assert transformer_learning_rate(10_000, 512, 4000) == pytest.approx(512**-0.5 * 10_000**-0.5)
    assert transformer_learning_rate(100, 512, 4000, scale=2.0) == pytest.approx(
        2 * transformer_learning_rate(100, 512, 4000)
    )


def test_schedule_rises_linearly_then_peaks_at_warmup_then_decays():
    rates = [transformer_learning_rate(step, 128, 100) for step in range(1, 400)]
    assert max(range(len(rates)), key=rates.__getitem__) + 1 == 100
    assert rates[49] == pytest.approx(rates[99] / 2)  # linear: half the steps, half the rate
    assert rates[399 - 1] == pytest.approx(rates[99] * (100 / 399) ** 0.5)  # 1/√step after the peak


def test_scheduler_sets_each_updates_learning_rate_from_step_one():
    model = torch.nn.Linear(2, 2)
    optimizer = transformer_optimizer(model)
    scheduler = warmup_scheduler(optimizer, d_model=64, warmup_steps=10, scale=0.5)
    for step in range(1, 15):
        assert optimizer.param_groups[0]["lr"] == pytest.approx(transformer_learning_rate(step, 64, 10, 0.5))
        optimizer.step()
        scheduler.step()


def test_optimizer_is_adam_with_the_papers_betas_and_epsilon():
    optimizer = transformer_optimizer(torch.nn.Linear(2, 2))
    assert isinstance(optimizer, torch.optim.Adam)
    assert optimizer.defaults["betas"] == (0.9, 0.98) and optimizer.defaults["eps"] == 1e-9


def test_a_run_needs_a_budget():
    with pytest.raises(ValueError, match="budget"):
        TrainingConfig()


# ---- checkpoints --------------------------------------------------------------------------------


def test_a_file_of_tensors_round_trips(tmp_path):
    values = {"model": {"weight": torch.arange(4.0)}, "progress": {"step": 3}}
    save_tensors(values, tmp_path / "checkpoint.pt")
    loaded = load_tensors(tmp_path / "checkpoint.pt")
    assert torch.equal(loaded["model"]["weight"], torch.arange(4.0)) and loaded["progress"] == {"step": 3}


def test_a_failed_save_leaves_the_old_checkpoint_and_no_temporary_file(tmp_path, monkeypatch):
    path = tmp_path / "checkpoint.pt"
    save_tensors({"step": 1}, path)
    before = path.read_bytes()

    def crash_midway(state, file):
        file.write(b"half a checkpoint")
        raise OSError("disk full")

    monkeypatch.setattr(torch, "save", crash_midway)
    with pytest.raises(OSError, match="disk full"):
        save_tensors({"step": 2}, path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["checkpoint.pt"]


def test_a_failed_record_write_leaves_the_old_record_and_no_temporary_file(tmp_path, monkeypatch):
    path = tmp_path / "record.json"
    write_record({"runs": 1}, path)
    before = path.read_bytes()

    def crash(descriptor):
        raise OSError("disk full")

    monkeypatch.setattr(atomic_files.os, "fsync", crash)
    with pytest.raises(OSError, match="disk full"):
        write_record({"runs": 2}, path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["record.json"]


def test_every_file_a_run_keeps_is_written_atomically(task, tmp_path, monkeypatch):
    renamed = []
    replace = atomic_files.os.replace
    monkeypatch.setattr(
        atomic_files.os, "replace", lambda source, target: renamed.append(target) or replace(source, target)
    )
    train(task, tiny_run(tmp_path, 2, validate_every=2, curves=True), TINY, progress=False)
    kept = {path.name for path in tmp_path.iterdir()}
    assert kept == {"checkpoint.pt", "history.json", "curves.png"}
    assert sorted(path.name for path in map(Path, renamed)) == sorted(kept)  # each through a temporary file


def test_loading_a_missing_checkpoint_names_it(tmp_path):
    with pytest.raises(FileNotFoundError, match="nothing.pt"):
        load_checkpoint(tmp_path / "nothing.pt")


# ---- the loop -----------------------------------------------------------------------------------


def test_training_lowers_the_validation_loss(task, tmp_path):
    result = train(task, tiny_run(tmp_path, 24, validate_every=12), TINY, progress=False)
    loss_at_start = result.history["train"][0]["train_loss"]  # the untrained model's loss
    assert result.steps == 24 and result.stopped_because == "max_steps"
    assert result.history["validation"][-1]["validation_loss"] < loss_at_start - 0.3


def test_a_run_writes_its_checkpoint_history_and_curves(task, tmp_path):
    result = train(task, tiny_run(tmp_path, 4, curves=True), TINY, progress=False)
    assert result.checkpoint == tmp_path / "checkpoint.pt"
    assert {"checkpoint.pt", "history.json", "curves.png"} <= set(os.listdir(tmp_path))
    assert (tmp_path / "curves.png").read_bytes()[:4] == b"\x89PNG"


def test_a_run_without_curves_keeps_its_checkpoint_and_history_only(task, tmp_path):
    train(task, tiny_run(tmp_path, 4, curves=False), TINY, progress=False)
    assert set(os.listdir(tmp_path)) == {"checkpoint.pt", "history.json"}


def _drawings(monkeypatch) -> list[int]:
    """The number of validation rows at each drawing of the curves."""
    drawn = []
    draw = callbacks_module.plot_training_curves
    monkeypatch.setattr(
        callbacks_module,
        "plot_training_curves",
        lambda history, *a, **k: drawn.append(len(history["validation"])) or draw(history, *a, **k),
    )
    return drawn


def test_the_curves_are_drawn_when_the_run_stops_not_at_every_validation_of_a_short_run(task, tmp_path, monkeypatch):
    drawn = _drawings(monkeypatch)
    train(task, tiny_run(tmp_path, 4, validate_every=1, curves=True), TINY, progress=False)
    assert drawn == [4], f"expected one drawing, after the 4th validation; drawn after {drawn}"


def test_the_curves_follow_a_long_run_every_curves_seconds(task, tmp_path, monkeypatch):
    monkeypatch.setattr(callbacks_module, "CURVES_SECONDS", 0.0)
    drawn = _drawings(monkeypatch)
    train(task, tiny_run(tmp_path, 3, validate_every=1, curves=True), TINY, progress=False)
    assert drawn == [1, 2, 3], f"expected a drawing at every validation once CURVES_SECONDS had passed; got {drawn}"


def test_a_resumed_run_ends_with_the_same_parameters_as_an_uninterrupted_one(task, tmp_path):
    straight = train(task, tiny_run(tmp_path / "straight", 12), TINY, progress=False)
    train(task, tiny_run(tmp_path / "interrupted", 6, validate_every=100), TINY, progress=False)
    resumed = train(task, tiny_run(tmp_path / "interrupted", 12), TINY, resume=True, progress=False)
    assert resumed.steps == 12
    for (name, expected), actual in zip(straight.model.state_dict().items(), resumed.model.state_dict().values()):
        assert torch.equal(expected, actual), name


def test_resuming_in_the_middle_of_an_epoch_continues_with_the_next_batch(task, tmp_path):
    train(task, tiny_run(tmp_path, 5, validate_every=100), TINY, progress=False)
    progress = load_checkpoint(tmp_path / "checkpoint.pt").progress
    assert (progress.step, progress.epoch, progress.batch_in_epoch) == (5, 0, 5)


def test_a_time_budget_stops_the_run(task, tmp_path):
    result = train(task, TrainingConfig(minutes=0.002, max_tokens=64, out_dir=str(tmp_path)), TINY, progress=False)
    assert result.stopped_because == "minutes" and 1 <= result.steps < 1000
    again = train(
        task, TrainingConfig(minutes=0.002, max_tokens=64, out_dir=str(tmp_path)), TINY, resume=True, progress=False
    )
    assert again.steps == result.steps  # the budget is total: a resumed run that has spent it stops at once


def all_finite(parameters) -> bool:
    return all(torch.isfinite(parameter).all() for parameter in parameters)


def tiny_model(task):
    """The TINY model for ``task``, seeded, for tests that hook into it before training."""
    torch.manual_seed(0)
    return TINY.build(len(task.source_tokenizer), len(task.target_tokenizer))


def test_a_nan_loss_stops_the_run_and_keeps_the_last_good_checkpoint(task, tmp_path):
    model = tiny_model(task)
    training_forwards = []

    def poison_step_6(module, inputs, output):
        if module.training:
            training_forwards.append(1)
            if len(training_forwards) == 6:
                return output * float("nan")
        return output

    model.register_forward_hook(poison_step_6)
    with pytest.raises(
        NonFiniteLossError, match=r"loss became nan at step 6 .*checkpoint.pt \(step 4\), is left as it was"
    ):
        train(task, tiny_run(tmp_path, 10), TINY, model=model, progress=False)
    assert load_checkpoint(tmp_path / "checkpoint.pt").progress.step == 4
    assert all_finite(model.parameters())  # not updated with the NaN


@pytest.mark.parametrize("clip_norm", [1.0, None], ids=["clipped", "unclipped"])
def test_non_finite_gradients_with_a_finite_loss_stop_the_run_and_keep_the_last_good_checkpoint(
    task, tmp_path, clip_norm
):
    model = tiny_model(task)
    backward_passes = []

    def infinite_gradient_at_step_8(gradient):
        backward_passes.append(1)
        return torch.full_like(gradient, float("inf")) if len(backward_passes) == 8 else gradient

    model.encoder.layers[0].feed_forward.w_1.weight.register_hook(infinite_gradient_at_step_8)
    # Step 8 is a validation step: had its update gone through, NaN weights would be checkpointed.
    with pytest.raises(
        NonFiniteGradientError,
        match=r"gradient norm became inf .* at step 8 .*checkpoint.pt \(step 4\), is left as it was",
    ):
        train(task, tiny_run(tmp_path, 12, clip_norm=clip_norm), TINY, model=model, progress=False)
    saved = load_checkpoint(tmp_path / "checkpoint.pt")
    assert saved.progress.step == 4
    assert all_finite(saved.model.values())
    assert all_finite(model.parameters())  # the step was not taken


def test_a_checkpoint_is_never_written_from_non_finite_parameters(task, tmp_path):
    updates = []

    def nan_weights_after_update_8(optimizer, args, kwargs):
        updates.append(1)
        if len(updates) == 8:  # the update of step 8, a validation step
            with torch.no_grad():
                optimizer.param_groups[0]["params"][0].fill_(float("nan"))

    handle = register_optimizer_step_post_hook(nan_weights_after_update_8)
    try:
        with pytest.raises(
            NonFiniteLossError, match=r"parameters became non-finite at step 8; no checkpoint was written"
        ):
            train(task, tiny_run(tmp_path, 12), TINY, progress=False)
    finally:
        handle.remove()
    saved = load_checkpoint(tmp_path / "checkpoint.pt")
    assert saved.progress.step == 4 and all_finite(saved.model.values())


def test_a_checkpoint_is_never_written_with_a_non_finite_validation_loss(task, tmp_path):
    model = tiny_model(task)
    training_forwards = []

    def nan_in_evaluation_after_step_4(module, inputs, output):
        if module.training:
            training_forwards.append(1)
        elif len(training_forwards) > 4:
            return output * float("nan")
        return output

    model.register_forward_hook(nan_in_evaluation_after_step_4)
    with pytest.raises(NonFiniteLossError, match=r"validation loss became nan at step 8; no checkpoint was written"):
        train(task, tiny_run(tmp_path, 12), TINY, model=model, progress=False)
    assert load_checkpoint(tmp_path / "checkpoint.pt").progress.step == 4


def training_dtypes(model) -> set:
    """The dtypes of the logits of ``model``'s training forward passes, as they are computed (under
    autocast, before the loss casts them): the precision its matrix products ran in."""
    seen = set()

    def note(module, inputs, output):
        if module.training:
            seen.add(output.dtype)

    model.output_projection.register_forward_hook(note)
    return seen


@pytest.mark.parametrize("precision, scaled", [(torch.float16, True), (torch.bfloat16, False), (None, False)])
def test_training_runs_in_the_devices_precision_with_a_scaler_exactly_in_float16(
    task, tmp_path, monkeypatch, precision, scaled
):
    monkeypatch.setattr(training_loop, "autocast_dtype", lambda device: precision)  # CPU autocast has both
    model = tiny_model(task)
    dtypes = training_dtypes(model)
    train(task, tiny_run(tmp_path, 2, validate_every=2), TINY, model=model, progress=False)
    assert dtypes == {precision or torch.float32}
    scaler_state = load_checkpoint(tmp_path / "checkpoint.pt").scaler  # empty when no scaler is enabled
    assert bool(scaler_state) is scaled


def test_a_checkpoint_rebuilds_the_trained_model_and_its_task(task, tmp_path):
    result = train(task, tiny_run(tmp_path, 4), TINY, progress=False)
    model, rebuilt_task, state = load_trained_model(tmp_path / "checkpoint.pt", device="cpu")
    assert rebuilt_task.splits == task.splits and state.progress.step == 4
    source = torch.tensor([[5, 6, 2]])
    result.model.eval()
    torch.testing.assert_close(model(source, source), result.model(source, source))


def test_resuming_with_another_model_size_is_refused(task, tmp_path):
    train(task, tiny_run(tmp_path, 2), TINY, progress=False)
    wider = ModelConfig(d_model=32, num_heads=2, num_layers=1, d_ff=32)
    with pytest.raises(CheckpointError, match=r"another architecture \(d_model: 16 there, 32 now\)"):
        train(task, tiny_run(tmp_path, 4), wider, resume=True, progress=False)


def test_resuming_with_another_dropout_goes_on_with_it(task, tmp_path):
    train(task, tiny_run(tmp_path, 2), TINY, progress=False)
    result = train(task, tiny_run(tmp_path, 4), dataclasses.replace(TINY, dropout=0.0), resume=True, progress=False)
    assert result.steps == 4 and load_checkpoint(tmp_path / "checkpoint.pt").model_config.dropout == 0.0
    assert all(module.p == 0.0 for module in result.model.modules() if isinstance(module, torch.nn.Dropout))


def training_step_runs_on(device, task, tmp_path):
    """Train on ``device``; returns the dtypes its training forward passes computed their logits in."""
    config = tiny_run(tmp_path, 3, device=device, validate_every=3)
    model = tiny_model(task)
    dtypes = training_dtypes(model)
    result = train(task, config, TINY, model=model, progress=False)
    assert all_finite(result.model.parameters())
    assert next(result.model.parameters()).device.type == torch.device(device).type
    assert next(result.model.parameters()).dtype == torch.float32  # the weights stay float32
    return dtypes


@pytest.mark.cuda
@pytest.mark.skipif(
    not torch.cuda.is_available(), reason="needs a CUDA GPU: mixed precision (bf16 or fp16 + GradScaler)"
)
def test_training_runs_in_mixed_precision_on_a_gpu(task, tmp_path):
    expected = torch.bfloat16 if torch.cuda.get_device_capability()[0] >= 8 else torch.float16
    assert training_step_runs_on("cuda", task, tmp_path) == {expected}


def test_training_runs_in_float32_on_the_cpu(task, tmp_path):
    assert training_step_runs_on("cpu", task, tmp_path) == {torch.float32}


# ---- the model given, the trainer's callbacks, resuming through the run state ----------------------


@pytest.mark.parametrize(
    "model_size, config_size, problem",
    [
        (dict(d_model=32), {}, r"the model's source_embedding.embedding.weight has shape \(\d+, 32\); .* \(\d+, 16\)"),
        (dict(num_layers=2), {}, r"the model has encoder.layers.1.\S+, which model_config does not build"),
        ({}, dict(num_layers=2), r"the model has no encoder.layers.1.\S+, which model_config builds"),
    ],
    ids=["wider", "deeper", "shallower"],
)
def test_a_model_that_model_config_does_not_build_is_refused_naming_the_first_difference(
    task, tmp_path, model_size, config_size, problem
):
    model_config, config = (ModelConfig(**{**TINY.to_dict(), **size}) for size in (model_size, config_size))
    model = model_config.build(len(task.source_tokenizer), len(task.target_tokenizer))
    with pytest.raises(ValueError, match=problem):
        train(task, tiny_run(tmp_path, 2), config, model=model, progress=False)


def test_a_model_built_by_model_config_is_accepted_and_trained(task, tmp_path):
    model = tiny_model(task)
    before = model.encoder.layers[0].feed_forward.w_1.weight.detach().clone()
    result = train(task, tiny_run(tmp_path, 2), TINY, model=model, progress=False)
    assert result.model is model and not torch.equal(model.encoder.layers[0].feed_forward.w_1.weight, before)


def test_resuming_with_another_task_is_refused(task, tmp_path):
    train(task, tiny_run(tmp_path, 2), TINY, progress=False)
    other = copy_task(**{**TINY_TASK_ARGUMENTS, "seed": 1})
    with pytest.raises(ValueError, match="holds a copy run with other arguments"):
        train(other, tiny_run(tmp_path, 4), TINY, resume=True, progress=False)


def test_a_resumed_run_reads_its_checkpoint_once(task, tmp_path, monkeypatch):
    train(task, tiny_run(tmp_path, 4), TINY, progress=False)
    reads = []
    monkeypatch.setattr(run_state, "load_checkpoint", lambda path: reads.append(path) or load_checkpoint(path))
    train(task, tiny_run(tmp_path, 8), TINY, resume=True, progress=False)
    assert reads == [tmp_path / "checkpoint.pt"]


def test_the_trainer_calls_back_after_every_step_and_once_at_the_start_and_the_end(task, tmp_path):
    state = RunState(task, tiny_run(tmp_path, 5, validate_every=100), TINY)
    trainer = Trainer(state, None, torch.device("cpu"), ProcessGroup())
    events = []
    trainer.add_callback("on_train_start", lambda trainer: events.append(("start", trainer.state.step)))
    trainer.add_callback("on_batch_end", lambda trainer: events.append(("batch", trainer.state.step)))
    trainer.add_callback("on_train_end", lambda trainer: events.append(("end", trainer.stopped_because)))
    assert trainer.run() == "max_steps"
    assert events == [("start", 0)] + [("batch", step) for step in range(1, 6)] + [("end", "max_steps")]


def test_an_unknown_event_is_refused(task, tmp_path):
    trainer = Trainer(RunState(task, tiny_run(tmp_path, 1), TINY), None, torch.device("cpu"), ProcessGroup())
    with pytest.raises(ValueError, match="unknown event 'on_step'"):
        trainer.add_callback("on_step", print)


def test_a_model_config_stored_under_an_older_setting_name_still_loads():
    stored = {**ModelConfig(max_positions=64).to_dict()}
    stored["max_len"] = stored.pop("max_positions")
    assert ModelConfig.from_dict(stored) == ModelConfig(max_positions=64)


def test_an_unknown_model_setting_is_refused_by_name():
    with pytest.raises(ValueError, match="no settings \\['width'\\]"):
        ModelConfig.from_dict({**ModelConfig().to_dict(), "width": 3})


def test_a_resumed_run_without_progress_prints_nothing(task, tmp_path, capsys):
    config = TrainingConfig(max_steps=1, validate_every=1, out_dir=str(tmp_path), device="cpu")
    train(task, config, TINY, progress=False)
    capsys.readouterr()
    train(task, dataclasses.replace(config, max_steps=2), TINY, progress=False, resume=True)
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == "", f"printed {captured.out!r} and {captured.err!r}"
