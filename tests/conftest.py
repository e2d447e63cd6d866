"""Shared fixtures: the device a test runs on (the CPU, and a CUDA GPU when present), a scratch course,
the test data; and one CPU thread, which keeps timings of small tensor work steady on a busy machine."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

torch.set_num_threads(1)

FIXTURES = Path(__file__).parent / "fixtures"

# The slower layers live in folders named for their marker. When a run deselects a layer
# (`-m "not grading and not book"`), its folder is not even imported, so the unit layer needs only
# the `test` extra, not the grading or book packages.
LAYER_FOLDERS = ("grading", "book")


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    deselected = config.getoption("markexpr") or ""
    for layer in LAYER_FOLDERS:
        folder = Path(__file__).parent / layer
        if f"not {layer}" in deselected and (collection_path == folder or folder in collection_path.parents):
            return True
    return None


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
