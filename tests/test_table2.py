"""Table 2 at small scale: both models trained at the same budget, their cost counted, in a record that resumes."""

from __future__ import annotations

import dataclasses
import json

import pytest
import torch
from tiny import TINY_MODEL

from transformer_course.book_programs import table2
from transformer_course.book_programs.table2 import run_table2, update_flops


@pytest.mark.parametrize("architecture", ["transformer", "gru"])
def test_an_update_is_counted_in_flops_that_grow_with_the_models_width(tiny_task, architecture):
    def flops(width):
        torch.manual_seed(0)
        config = dataclasses.replace(TINY_MODEL, d_model=width, d_ff=2 * width, architecture=architecture)
        return update_flops(
            config.build(len(tiny_task.source_tokenizer), len(tiny_task.target_tokenizer)), tiny_task, 64
        )

    narrow, wide = flops(16), flops(32)
    assert narrow > 0 and wide > 2 * narrow, (narrow, wide)


@pytest.mark.slow  # trains in worker processes
def test_the_record_holds_each_model_and_seed_and_a_second_call_trains_nothing_new(tiny_task, tmp_path, monkeypatch):
    small = {"Transformer": TINY_MODEL, "GRU with attention": dataclasses.replace(TINY_MODEL, architecture="gru")}
    monkeypatch.setattr(table2, "ARCHITECTURES", small)
    out = tmp_path / "table2.json"
    record = run_table2(tiny_task, [0, 1], 0.02, out, workers=2)
    for name, entry in record["models"].items():
        assert sorted(entry["runs"]) == ["0", "1"], name
        run = entry["runs"]["0"]
        assert (
            run["steps"] > 0
            and run["cpu_minutes"] > 0
            and run["training_flops"] == run["steps"] * entry["update_flops"]
        )
        assert 0 <= run["test"]["exact_match"] <= 100 and run["validation"]["perplexity"] > 1
    assert json.loads(out.read_text(encoding="utf-8")) == record
    again = run_table2(tiny_task, [0, 1], 0.02, out, workers=2)
    assert again["models"] == record["models"], "runs the record held were trained again"
    with pytest.raises(ValueError, match="minutes: 0.02 there, 0.05 now"):
        run_table2(tiny_task, [0], 0.05, out)
