"""safeguards.pristine: a fresh, untouched copy of any reference module of the package."""

from __future__ import annotations

import pytest
import torch

import transformer_course
from transformer_course.grading import safeguards

MODULES = [
    "transformer_course.attention",
    "transformer_course.multi_head_attention",  # defines a dataclass (KeyValueCache)
    "transformer_course.positional_encoding",
    "transformer_course.masks",
    "transformer_course.decoder",  # defines a dataclass (DecoderLayerCache)
]


@pytest.mark.parametrize("module_name", MODULES)
def test_pristine_loads_every_reference_module(module_name):
    copy = safeguards.pristine(module_name)
    assert copy is not transformer_course and copy.__name__.startswith("_pristine_")


def test_pristine_copy_is_untouched_by_monkeypatching(monkeypatch):
    monkeypatch.setattr(transformer_course.masks, "causal_mask", lambda size, device=None: torch.zeros(size, size, dtype=torch.bool))
    copy = safeguards.pristine("transformer_course.masks")
    assert copy.causal_mask(3).equal(torch.ones(3, 3, dtype=torch.bool).tril())
