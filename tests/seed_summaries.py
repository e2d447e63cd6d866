"""A summary of Multi30k seeds as benchmarks/multi30k_seeds.py writes it, for the tests of the tables that read it."""

from __future__ import annotations

from transformer_course.book_programs import seed_tables


def seeds_summary(reached: bool = True) -> dict:
    """A summary as multi30k_seeds.summarise makes it: two seeds, each step a point above the one before."""
    rows = []
    for seed, base in ((0, 38.0), (1, 39.0)):
        steps = {f"test_sacrebleu_{step}": base + index for index, step in enumerate(seed_tables.STEPS)}
        minutes = 20.5 + seed if reached or seed == 0 else None
        rows.append({
            "seed": seed, "steps": 2100 + seed, "test_sacrebleu": steps["test_sacrebleu_delivered"], "test_chrf": 60.0,
            "test_sacrebleu_without_overlap": steps["test_sacrebleu_delivered"], "chosen_alpha": 0.6, **steps,
            "minutes_to_target": minutes, "minutes_to_target_without_validation": None if minutes is None else 19.0,
        })  # fmt: skip
    mean_std = {
        key: {"mean": (rows[0][key] + rows[1][key]) / 2, "std": abs(rows[0][key] - rows[1][key]) / 2**0.5}
        for key in rows[0]
        if key != "seed" and None not in (rows[0][key], rows[1][key])
    }
    return {"target": 40.0, "seeds": rows, "mean_std": mean_std}
