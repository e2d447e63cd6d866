"""benchmarks/multi30k_snapshot_averages.py's arithmetic: the weighted mean of a run's snapshots."""

import importlib.util
from pathlib import Path

import torch

_SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "multi30k_snapshot_averages.py"
_SPEC = importlib.util.spec_from_file_location("multi30k_snapshot_averages", _SCRIPT)
averages = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(averages)


def test_the_weighted_average_of_snapshots_weighs_each_by_its_share_of_the_weights():
    states = [{"w": torch.tensor([0.0, 4.0])}, {"w": torch.tensor([3.0, 8.0])}]
    assert torch.equal(averages.weighted_average(states, [3.0, 1.0])["w"], torch.tensor([0.75, 5.0]))


def test_a_snapshot_weighted_zero_leaves_the_average_unchanged():
    states = [{"w": torch.tensor([2.0])}, {"w": torch.tensor([100.0])}]
    assert torch.equal(averages.weighted_average(states, [1.0, 0.0])["w"], torch.tensor([2.0]))


def test_tensors_that_are_not_weights_are_the_latest_snapshots_not_averaged():
    states = [{"count": torch.tensor(7)}, {"count": torch.tensor(3)}]
    assert averages.weighted_average(states, [1.0, 1.0])["count"].item() == 7
