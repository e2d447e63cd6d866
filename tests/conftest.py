"""Shared test settings: one CPU thread (steady on a busy machine), fixtures' location."""

from pathlib import Path

import pytest
import torch

torch.set_num_threads(1)

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES
