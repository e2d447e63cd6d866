"""Data-parallel training: two CPU processes on the gloo backend, over the loopback interface only."""

import os
import socket

import pytest
import torch
import torch.multiprocessing as multiprocessing
from tiny import TINY_MODEL, tiny_task

from transformer_course.training import TrainingConfig, load_checkpoint, train


def free_loopback_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def train_as_one_of_two(rank: int, port: int, out_dir: str, results_dir: str) -> None:
    """What ``torchrun --nproc_per_node=2`` would start: a process that knows its rank."""
    os.environ.update(
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
        RANK=str(rank),
        LOCAL_RANK=str(rank),
        WORLD_SIZE="2",
        GLOO_SOCKET_IFNAME="lo",
    )
    torch.set_num_threads(1)
    task = tiny_task()
    config = TrainingConfig(max_steps=6, max_tokens=64, warmup_steps=5, validate_every=6, device="cpu", out_dir=out_dir)
    result = train(task, config, TINY_MODEL, progress=False)
    torch.save({"steps": result.steps, "model": result.model.state_dict()}, os.path.join(results_dir, f"rank{rank}.pt"))


@pytest.mark.slow
def test_two_processes_finish_with_identical_parameters(tmp_path):
    out_dir, results_dir = tmp_path / "run", tmp_path / "results"
    results_dir.mkdir()
    multiprocessing.spawn(
        train_as_one_of_two, args=(free_loopback_port(), str(out_dir), str(results_dir)), nprocs=2, join=True
    )

    first, second = (torch.load(results_dir / f"rank{rank}.pt") for rank in (0, 1))
    assert first["steps"] == second["steps"] == 6
    for name, parameter in first["model"].items():
        assert torch.equal(parameter, second["model"][name]), name

    torch.manual_seed(0)
    untrained = TINY_MODEL.build(10, 10).state_dict()
    assert not torch.equal(
        first["model"]["encoder.layers.0.feed_forward.w_1.weight"],
        untrained["encoder.layers.0.feed_forward.w_1.weight"],
    )

    checkpoint = load_checkpoint(out_dir / "checkpoint.pt")  # written by rank 0 alone
    assert checkpoint.progress.step == 6
    assert len(checkpoint.random_states) == 2  # both processes' dropout generators, for resuming
    assert not torch.equal(checkpoint.random_states[0]["torch"], checkpoint.random_states[1]["torch"])
