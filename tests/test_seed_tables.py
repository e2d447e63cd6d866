"""Chapter 9's tables of the Multi30k CPU recipe over several seeds (book_programs.seed_tables): what they
read from the summary that benchmarks/multi30k_seeds.py writes, and how they show it."""

from __future__ import annotations

import re

import pytest
from seed_summaries import seeds_summary

from transformer_course.book_programs import seed_tables


def cells(table: str) -> list[str]:
    return re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", table)


def test_the_seeds_table_gives_each_seed_then_the_mean_and_standard_deviation():
    table = cells(seed_tables.seeds_table(seeds_summary()))
    assert table[7:9] == ["0", "2,100"] and table[14:16] == ["1", "2,101"]
    assert table[21:24] == ["mean ± std", "2,100 ± 1", "42.50 ± 0.71"]


def test_a_seed_that_never_reached_the_target_says_so_and_the_time_has_no_mean():
    table = cells(seed_tables.seeds_table(seeds_summary(reached=False)))
    assert table[19] == "not reached" and table[-2] == "—"


def test_each_steps_gain_is_the_mean_of_the_seeds_own_differences():
    summary = seeds_summary()
    summary["seeds"][1]["test_sacrebleu_delivered"] += 1.0  # seed 1's last step gains 2 points, seed 0's one
    gains = seed_tables.step_gains(summary)
    assert gains["last_greedy"] is None and gains["average_greedy"] == pytest.approx(1.0)
    assert gains["delivered"] == pytest.approx(1.5)


def test_the_steps_table_has_a_row_per_step_in_order_with_each_seed_the_mean_and_the_gain():
    rows = re.findall(r"<tr>(.*?)</tr>", seed_tables.steps_table(seeds_summary()))[1:]
    assert [cells(row)[0] for row in rows] == [seed_tables.WORDS["en"][step] for step in seed_tables.STEPS]
    assert cells(rows[0])[1:] == ["38.00", "39.00", "38.50 ± 0.71", "—"]
    assert cells(rows[-1])[1:] == ["42.00", "43.00", "42.50 ± 0.71", "+1.00"]


def test_every_header_cell_names_its_scope_for_a_screen_reader():
    for table in (seed_tables.seeds_table(seeds_summary()), seed_tables.steps_table(seeds_summary())):
        assert all("scope=" in header for header in re.findall(r"<th(?:\s[^>]*)?>", table))
