"""Shared fixtures: the device a test runs on (the CPU, and a CUDA GPU when present), a scratch course,
the test data; and one CPU thread, which keeps timings of small tensor work steady on a busy machine."""

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


@pytest.fixture(scope="session")
def course(tmp_path_factory):
    """A scratch copy of the course (solutions, exercises, nbgrader config) that grading may write into."""
    from grading_support import copy_course  # the grading packages, only for the tests that grade

    return copy_course(tmp_path_factory.mktemp("course"))


@pytest.fixture
def fixtures() -> Path:
    """The directory of small data files the tests read (a Multi30k-format sample, …)."""
    return FIXTURES
