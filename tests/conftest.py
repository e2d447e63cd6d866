"""Shared fixtures: the device a test runs on (the CPU, and a CUDA GPU when present), the test data, the
training tests' tiny model and task; and one CPU thread, which keeps timings of small tensor work steady on a
busy machine. What each layer needs is tests/suite_layers.py's; the grading tests' course is
tests/grading/conftest.py's."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

torch.set_num_threads(1)

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(
    params=[
        "cpu",
        pytest.param(
            "cuda",
            marks=[
                pytest.mark.cuda,
                pytest.mark.skipif(
                    not torch.cuda.is_available(), reason="needs a CUDA GPU; the CPU twin of this test runs"
                ),
            ],
        ),
    ]
)
def device(request: pytest.FixtureRequest) -> torch.device:
    """The device a test runs on: ``cpu``, then ``cuda`` when a GPU exists."""
    return torch.device(request.param)


@pytest.fixture
def fixtures() -> Path:
    """The directory of small data files the tests read (a Multi30k-format sample, …)."""
    return FIXTURES


@pytest.fixture(scope="session")
def tiny_task():
    """The training tests' copy task over six symbols (``tests/tiny.py``)."""
    from tiny import tiny_task

    return tiny_task()


@pytest.fixture(scope="session")
def tiny_model():
    """The training tests' model size: one layer, ``d_model`` 16 (``tests/tiny.py``)."""
    from tiny import TINY_MODEL

    return TINY_MODEL
