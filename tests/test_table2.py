"""Table 2 at small scale: both models trained at the same budget, their cost counted, in a record that resumes."""

from __future__ import annotations

import dataclasses
import json

import pytest
import torch
from tiny import TINY_MODEL

from transformer_course.book_programs.table2 import Plan, plan_for, run_table2, update_flops


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
def test_the_record_holds_each_model_and_seed_and_a_second_call_trains_nothing_new(tiny_task, tmp_path):
    plan = Plan(TINY_MODEL, {"warmup_steps": 10})
    out = tmp_path / "table2.json"
    record = run_table2(tiny_task, plan, [0, 1], 0.02, out, workers=2)
    assert sorted(record["models"]) == ["GRU with attention", "Transformer"]
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
    again = run_table2(tiny_task, plan, [0, 1], 0.02, out, workers=2)
    assert again["models"] == record["models"], "runs the record held were trained again"
    with pytest.raises(ValueError, match="minutes: 0.02 there, 0.05 now"):
        run_table2(tiny_task, plan, [0], 0.05, out)


def test_the_numbers_task_trains_chapter_8s_model_and_multi30k_its_cpu_recipe():
    from transformer_course.book_programs.variations import BASE_MODEL
    from transformer_course.training import recipe_for

    assert plan_for("numbers").model == BASE_MODEL
    multi30k = plan_for("multi30k")
    assert multi30k.model == recipe_for("multi30k", "cpu").model and multi30k.task == {"vocab_size": 8000}
    gru = multi30k.architectures()["GRU with attention"]
    assert (gru.architecture, gru.d_model, gru.num_layers) == ("gru", multi30k.model.d_model, multi30k.model.num_layers)


def test_a_local_copy_of_the_data_is_refused_for_a_generated_task(tmp_path):
    import argparse

    from transformer_course.book_programs.table2 import run_command

    arguments = argparse.Namespace(
        task="numbers", data=str(tmp_path), seeds=[0], minutes=1.0, workers=1, out=str(tmp_path / "t2.json"),
        command_line=["table2"],
    )  # fmt: skip
    with pytest.raises(SystemExit, match="--data is for multi30k; the numbers task is generated"):
        run_command(arguments)
    assert not (tmp_path / "t2.json").exists()
