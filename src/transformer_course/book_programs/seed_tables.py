"""Chapter 9's tables of the Multi30k CPU recipe over several seeds, as a benchmark publishes them.

    from transformer_course.book_programs.edition_figures import show_table_in_every_language
    summary = json.loads(Path("records/multi30k-cpu-seeds.json").read_text(encoding="utf-8"))
    show_table_in_every_language(seeds_table, summary)   # each seed's test scores and time to validation 40
    show_table_in_every_language(steps_table, summary)   # what each step to the delivered model bought

=======================  ========================================================================
:func:`seeds_table`      each seed's steps, test sacreBLEU and chrF, the score without the test
                         pairs that occur in the training split, and the minutes to validation 40;
                         then their mean ± sample standard deviation
:func:`steps_table`      the test sacreBLEU of each step from the last weights to the delivered
                         model, each seed and the mean, and the mean gain of each step
=======================  ========================================================================

They read the summary that ``benchmarks/multi30k_seeds.py`` wrote (:func:`summarise` there); the
numbers are the record's in every language, only the words change (:data:`WORDS`).
"""

from __future__ import annotations

import html
import statistics

from .edition_figures import words

# The steps from the run's last weights to the model the recipe delivers, in order (the keys are the
# summary's ``test_sacrebleu_<step>`` columns).
STEPS = ("last_greedy", "last_beam", "average_greedy", "average_beam", "delivered")

WORDS = {
    "en": {
        "seed": "seed",
        "steps": "updates",
        "sacrebleu": "test sacreBLEU",
        "chrf": "test chrF",
        "without overlap": "test sacreBLEU without the pairs also in training",
        "minutes": "minutes to validation sacreBLEU {target:g}",
        "minutes without": "the same, without validation",
        "not reached": "not reached",
        "mean": "mean ± std",
        "step": "the model and its decoding",
        "gain": "mean gain",
        "seed column": "seed {seed}",
        "last_greedy": "last weights, greedy",
        "last_beam": "last weights, beam 4, α 0.6",
        "average_greedy": "moving average of the weights, greedy",
        "average_beam": "moving average, beam 4, α 0.6",
        "delivered": "moving average, beam 4, α chosen on validation",
    },
    "zh_CN": {
        "seed": "种子",
        "steps": "更新次数",
        "sacrebleu": "测试 sacreBLEU",
        "chrf": "测试 chrF",
        "without overlap": "去掉也出现在训练集中的句子对后的测试 sacreBLEU",
        "minutes": "验证 sacreBLEU 达到 {target:g} 所用分钟数",
        "minutes without": "同上，不计验证时间",
        "not reached": "未达到",
        "mean": "均值 ± 标准差",
        "step": "模型与解码方式",
        "gain": "平均增益",
        "seed column": "种子 {seed}",
        "last_greedy": "最后的权重，贪心解码",
        "last_beam": "最后的权重，束宽 4，α 0.6",
        "average_greedy": "权重的滑动平均，贪心解码",
        "average_beam": "滑动平均，束宽 4，α 0.6",
        "delivered": "滑动平均，束宽 4，α 在验证集上选定",
    },
}


def _number(value: float | None, digits: int, said: dict[str, str]) -> str:
    return said["not reached"] if value is None else f"{value:,.{digits}f}"


def _mean_std(summary: dict, key: str, digits: int) -> str:
    """'mean ± std' of a column over the seeds; a dash where a seed has no value (a time never reached)."""
    entry = summary["mean_std"].get(key)
    if entry is None:
        return "—"
    mean = f"{entry['mean']:,.{digits}f}"
    return mean if entry["std"] is None else f"{mean} ± {entry['std']:,.{digits}f}"


def seeds_table(summary: dict, language: str = "en") -> str:
    """Each seed's headline numbers and their mean ± sample standard deviation, as HTML."""
    said = words(WORDS, language)
    columns = (
        ("steps", said["steps"], 0),
        ("test_sacrebleu", said["sacrebleu"], 2),
        ("test_chrf", said["chrf"], 2),
        ("test_sacrebleu_without_overlap", said["without overlap"], 2),
        ("minutes_to_target", said["minutes"].format(target=summary["target"]), 1),
        ("minutes_to_target_without_validation", said["minutes without"], 1),
    )
    head = f"<th scope='col'>{said['seed']}</th>" + "".join(f"<th scope='col'>{title}</th>" for _, title, _ in columns)
    rows = "".join(
        f"<tr><th scope='row'>{row['seed']}</th>"
        + "".join(f"<td>{_number(row[key], digits, said)}</td>" for key, _, digits in columns)
        + "</tr>"
        for row in summary["seeds"]
    )
    mean = (
        f"<tr><th scope='row'>{said['mean']}</th>"
        + "".join(f"<td>{_mean_std(summary, key, digits)}</td>" for key, _, digits in columns)
        + "</tr>"
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}{mean}</tbody></table>"


def step_gains(summary: dict) -> dict[str, float | None]:
    """Each step's mean gain in test sacreBLEU over the step before it (the mean of the seeds' own
    differences); the first step has none."""
    gains: dict[str, float | None] = {STEPS[0]: None}
    for before, step in zip(STEPS, STEPS[1:]):
        differences = [row[f"test_sacrebleu_{step}"] - row[f"test_sacrebleu_{before}"] for row in summary["seeds"]]
        gains[step] = statistics.mean(differences)
    return gains


def steps_table(summary: dict, language: str = "en") -> str:
    """The test sacreBLEU of each step from the last weights to the delivered model: every seed, the
    mean ± std, and the step's mean gain over the one before, as HTML."""
    said = words(WORDS, language)
    seeds = [row["seed"] for row in summary["seeds"]]
    head = (
        f"<th scope='col'>{said['step']}</th>"
        + "".join(f"<th scope='col'>{said['seed column'].format(seed=seed)}</th>" for seed in seeds)
        + f"<th scope='col'>{said['mean']}</th><th scope='col'>{said['gain']}</th>"
    )
    gains = step_gains(summary)
    rows = "".join(
        f"<tr><th scope='row'>{html.escape(said[step])}</th>"
        + "".join(f"<td>{row[f'test_sacrebleu_{step}']:.2f}</td>" for row in summary["seeds"])
        + f"<td>{_mean_std(summary, f'test_sacrebleu_{step}', 2)}</td>"
        + ("<td>—</td>" if gains[step] is None else f"<td>{gains[step]:+.2f}</td>")
        + "</tr>"
        for step in STEPS
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"
