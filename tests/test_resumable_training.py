"""The final project's scaffolding around the learner's own loop: the budgets, a checkpoint that the same call
resumes from, progress, mixed precision with loss scaling, and nothing of it while the notebook is graded."""

import time

import pytest
import torch
import torch.nn.functional as F
from tiny import tiny_task

import transformer_course as tc
from transformer_course.data import BOS_ID, EOS_ID, PAD_ID, bucketed_batches
from transformer_course.training import resumable
from transformer_course.training.resumable import MixedPrecisionModel, resumable_training

SETTINGS = dict(d_model=16, max_tokens=64, max_steps=12, max_seconds=None, log_every=4)


# A learner's parts 5 and 7, written to the notebook's specification.
def train_step(model, optimizer, scheduler, source, target, smoothing=0.1, clip_norm=1.0, pad_id=PAD_ID):
    model.train()
    batch = target.size(0)
    lengths = (target != pad_id).sum(dim=1)
    decoder_input = torch.cat([torch.full((batch, 1), BOS_ID, dtype=target.dtype, device=target.device), target], 1)
    decoder_output = torch.cat([target, torch.full((batch, 1), pad_id, dtype=target.dtype, device=target.device)], 1)
    decoder_output[torch.arange(batch, device=target.device), lengths] = EOS_ID
    logits = model(
        source, decoder_input, tc.padding_mask(source, pad_id), tc.padding_and_causal_mask(decoder_input, pad_id)
    )
    loss = F.cross_entropy(
        logits.reshape(-1, logits.size(-1)), decoder_output.reshape(-1), ignore_index=pad_id, label_smoothing=smoothing
    )
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), clip_norm)
    optimizer.step()
    scheduler.step()
    return loss.item()


def _pad(sequences):
    longest = max(len(sequence) for sequence in sequences)
    return torch.tensor([list(sequence) + [PAD_ID] * (longest - len(sequence)) for sequence in sequences])


def train_model(
    model, pairs, optimizer, scheduler, max_steps=None, max_seconds=None, max_tokens=1536, log_every=50, seed=0
):
    device = next(model.parameters()).device
    started, history, window, step, epoch = time.monotonic(), [], [], 0, 0
    while True:
        for indices in bucketed_batches(pairs.longer_side_lengths(), max_tokens, seed, epoch):
            source = _pad([pairs.sources[index] + [EOS_ID] for index in indices]).to(device)
            target = _pad([pairs.targets[index] for index in indices]).to(device)
            window.append(train_step(model, optimizer, scheduler, source, target))
            step += 1
            if step % log_every == 0:
                history.append({"step": step, "loss": sum(window) / len(window)})
                window = []
            if (max_steps is not None and step >= max_steps) or (
                max_seconds is not None and time.monotonic() - started > max_seconds
            ):
                return history
        epoch += 1


TASK = tiny_task()


def fresh(d_model=16, device="cpu"):
    """What the learner's cell makes before it trains: a model, its optimiser and schedule."""
    torch.manual_seed(0)
    vocabulary = len(TASK.source_tokenizer)
    model = tc.Transformer(vocabulary, vocabulary, d_model=d_model, num_heads=2, num_layers=1, d_ff=32).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    return model, optimizer, torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0)


def run(checkpoint, settings=SETTINGS, loop=train_model, **options):
    """The scaffolding around ``loop``, one log_every interval per call unless ``stretch_seconds`` is given."""
    options.setdefault("stretch_seconds", 0)
    model, optimizer, scheduler = fresh(settings["d_model"])
    history = resumable_training(
        loop, model, TASK.encode("train"), optimizer, scheduler, settings, checkpoint, **options
    )
    return history, model, scheduler


def counting(calls):
    def loop(*arguments):
        calls.append(arguments)
        return train_model(*arguments)

    return loop


@pytest.fixture(autouse=True)
def not_graded(monkeypatch):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)


def test_a_run_keeps_to_its_step_budget_and_returns_the_curve(tmp_path):
    history, _, scheduler = run(tmp_path / "run.pt", progress=False)
    assert [point["step"] for point in history] == [4, 8, 12]
    assert scheduler.last_epoch == 12


def test_a_run_keeps_to_its_time_budget(tmp_path):
    history, _, scheduler = run(tmp_path / "run.pt", {**SETTINGS, "max_steps": None, "max_seconds": 0}, progress=False)
    assert scheduler.last_epoch == 1  # the learner's loop stops after its first update past the budget


def test_each_call_of_the_learners_loop_draws_from_a_shuffle_of_its_own(tmp_path):
    calls = []
    run(tmp_path / "run.pt", loop=counting(calls), progress=False)
    assert [call[-1] for call in calls] == [0, 1, 2]  # train_model's seed


def test_after_the_first_interval_the_loop_runs_whole_intervals_of_about_stretch_seconds(tmp_path):
    calls = []
    history, _, _ = run(
        tmp_path / "run.pt", {**SETTINGS, "max_steps": 40}, loop=counting(calls), stretch_seconds=30, progress=False
    )
    assert [call[4] for call in calls] == [4, 36]  # max_steps: one interval, then the rest (tiny steps are fast)
    assert [call[7] for call in calls] == [4, 4]  # log_every
    assert [point["step"] for point in history] == list(range(4, 41, 4))


def test_running_again_with_a_larger_budget_resumes_where_the_checkpoint_left_off(tmp_path):
    run(tmp_path / "run.pt", {**SETTINGS, "max_steps": 8}, progress=False)
    calls = []
    history, _, scheduler = run(
        tmp_path / "run.pt", {**SETTINGS, "max_steps": 16}, loop=counting(calls), progress=False
    )
    assert [point["step"] for point in history] == [4, 8, 12, 16]
    assert scheduler.last_epoch == 16 and len(calls) == 2


def test_a_resumed_run_starts_from_the_checkpoints_weights(tmp_path):
    _, trained, _ = run(tmp_path / "run.pt", progress=False)
    calls = []
    _, resumed, _ = run(tmp_path / "run.pt", loop=counting(calls), progress=False)
    assert calls == []  # its budget was spent: nothing more to train
    for (name, weight), again in zip(trained.state_dict().items(), resumed.state_dict().values()):
        assert torch.equal(weight, again), name


def test_a_run_cut_off_resumes_from_its_last_checkpoint(tmp_path):
    def cut_off_at_the_third_stretch(*arguments):
        if arguments[-1] == 2:
            raise KeyboardInterrupt  # Colab disconnected
        return train_model(*arguments)

    with pytest.raises(KeyboardInterrupt):
        run(tmp_path / "run.pt", loop=cut_off_at_the_third_stretch, checkpoint_minutes=0, progress=False)
    calls = []
    history, _, _ = run(tmp_path / "run.pt", loop=counting(calls), progress=False)
    assert [call[-1] for call in calls] == [2] and [point["step"] for point in history] == [4, 8, 12]


def test_a_checkpoint_waits_for_checkpoint_minutes(tmp_path, monkeypatch):
    saved = []
    monkeypatch.setattr(resumable, "save_tensors", lambda state, path: saved.append(state["run"]["step"]))
    run(tmp_path / "run.pt", checkpoint_minutes=60, progress=False)
    assert saved == [12]  # only the one at the end


def test_with_checkpoint_minutes_passed_a_checkpoint_follows_every_stretch(tmp_path, monkeypatch):
    saved = []
    monkeypatch.setattr(resumable, "save_tensors", lambda state, path: saved.append(state["run"]["step"]))
    run(tmp_path / "run.pt", checkpoint_minutes=0, progress=False)
    assert saved == [4, 8, 12, 12]


def test_a_checkpoint_of_other_settings_is_refused_naming_them(tmp_path):
    run(tmp_path / "run.pt", progress=False)
    with pytest.raises(ValueError, match=r"run.pt holds a run with other settings \(d_model: 16 there, 32 now\)"):
        run(tmp_path / "run.pt", {**SETTINGS, "d_model": 32}, progress=False)


def test_the_progress_bar_shows_the_step_the_loss_and_tokens_per_second(tmp_path, capsys):
    run(tmp_path / "run.pt")
    shown = capsys.readouterr().err
    assert "12/12" in shown and "loss=" in shown and "tokens_per_s=" in shown


def test_while_graded_it_is_the_learners_loop_alone_with_the_budgets(tmp_path, monkeypatch):
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    calls = []
    model, optimizer, scheduler = fresh()
    pairs = TASK.encode("train")
    resumable_training(counting(calls), model, pairs, optimizer, scheduler, SETTINGS, tmp_path / "run.pt")
    assert len(calls) == 1 and calls[0][:4] == (model, pairs, optimizer, scheduler)
    assert calls[0][4:] == (12, None, 64, 4)
    assert not (tmp_path / "run.pt").exists()


def test_without_a_budget_it_is_refused():
    model, optimizer, scheduler = fresh()
    with pytest.raises(ValueError, match="give a budget"):
        resumable_training(
            train_model, model, TASK.encode("train"), optimizer, scheduler, {**SETTINGS, "max_steps": None}, "x.pt"
        )


def _gradients(model, wrapped):
    source = torch.tensor([[4, 5, EOS_ID]])
    target = torch.tensor([[BOS_ID, 4, 5]])
    torch.manual_seed(1)
    wrapped(source, target).logsumexp(-1).sum().backward()
    return {name: parameter.grad.clone() for name, parameter in model.named_parameters()}


def test_the_loss_scale_is_removed_before_the_learners_code_sees_the_gradients():
    model, optimizer, _ = fresh()
    plain = _gradients(model, MixedPrecisionModel(model, dtype=None))
    model.zero_grad()
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**10)
    wrapped = MixedPrecisionModel(model, dtype=None, scaler=scaler)
    wrapped.optimizer = optimizer
    scaled = _gradients(model, wrapped)
    for name, gradient in plain.items():
        assert torch.equal(scaled[name], gradient), name  # times 2^10, then divided by it: exactly the same


# The skipped update is the point: PyTorch then warns that the schedule stepped without the optimizer.
@pytest.mark.filterwarnings("ignore:Detected call of `lr_scheduler.step\\(\\)` before `optimizer.step\\(\\)`")
def test_an_update_whose_scaled_gradients_overflow_is_skipped(tmp_path, monkeypatch):
    model, optimizer, scheduler = fresh()
    before = {name: weight.clone() for name, weight in model.state_dict().items()}
    scaler = torch.amp.GradScaler("cpu", init_scale=float("inf"))
    wrapped = MixedPrecisionModel(model, dtype=None, scaler=scaler)
    wrapped.optimizer = optimizer
    train_model(wrapped, TASK.encode("train"), resumable.CountingOptimizer(optimizer, scaler, lambda: None), scheduler,
                max_steps=1, max_tokens=64)  # fmt: skip
    for name, weight in model.state_dict().items():
        assert torch.equal(weight, before[name]), name


def test_the_model_runs_in_the_autocast_dtype_and_gives_float32_logits():
    model, _, _ = fresh()
    seen = []
    model.output_projection.register_forward_hook(lambda module, inputs, output: seen.append(output.dtype))
    logits = MixedPrecisionModel(model, dtype=torch.bfloat16)(torch.tensor([[4, 5, EOS_ID]]), torch.tensor([[BOS_ID]]))
    assert seen == [torch.bfloat16] and logits.dtype == torch.float32


def test_float16_devices_train_with_a_gradient_scaler_kept_in_the_checkpoint(tmp_path, monkeypatch):
    monkeypatch.setattr(resumable, "autocast_dtype", lambda device: torch.float16)
    run(tmp_path / "run.pt", progress=False)
    state = torch.load(tmp_path / "run.pt", weights_only=True)
    assert state["scaler"] is not None and state["scaler"]["scale"] > 0


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU; the tests above are its CPU twins")
def test_on_a_gpu_the_learners_loop_trains_in_mixed_precision(tmp_path):
    model, optimizer, scheduler = fresh(device="cuda")
    dtypes = set()
    model.output_projection.register_forward_hook(lambda module, inputs, output: dtypes.add(output.dtype))
    history = resumable_training(
        train_model, model, TASK.encode("train"), optimizer, scheduler, SETTINGS, tmp_path / "run.pt", progress=False
    )
    assert [point["step"] for point in history] == [4, 8, 12] and history[-1]["loss"] < history[0]["loss"]
    assert dtypes == {torch.bfloat16 if torch.cuda.get_device_capability()[0] >= 8 else torch.float16}
