"""The tables and pictures of the section on the paper's experiments at small scale (chapter 8's last section).

    from transformer_course.book_programs.edition_figures import show_in_every_language, show_table_in_every_language
    show_table_in_every_language(table_3, variants, steps=200, seeds=3)   # the small Table 3 beside the paper's
    show_in_every_language(draw_seed_scores, variants)                     # every seed's scores against the base's

=================================  ================================================================
:func:`table_3`                    each variant's mean (lowest–highest) over its seeds, beside its paper line
:func:`draw_seed_scores`           every seed's two scores, the base's range shaded
:func:`table_2_runs`               what each model's runs cost and gave, on each task
:func:`table_2_paper`              the paper's Table 2 lines the records hold
:func:`draw_quality_against_cost`  quality against training FLOPs, each seed a point, the paper's lines beside
=================================  ================================================================

They read the records that ``transformer-course variations`` and ``transformer-course table2`` wrote
(:mod:`.variations`, :mod:`.table2`) as the page loads them: ``variants`` is a Table 3 record's
``variants`` with runs, the base first. Every number is the record's, formatted the same way in every
language; only the words change (:data:`WORDS`), so that the Chinese edition shows the English
edition's numbers in Chinese (:mod:`.edition_figures`).
"""

from __future__ import annotations

import html

import matplotlib.pyplot as plt
import matplotlib.ticker
from matplotlib.figure import Figure

from .edition_figures import words

BASE = "base"  # the name of the base model among a Table 3 record's variants

# The tables' and pictures' words, by language; counts and settings are filled in.
WORDS = {
    "en": {
        "row": "row",
        "variant": "variant",
        "parameters": "parameters",
        "perplexity": "perplexity",
        "exact match %": "exact match %",
        "ours": "numbers task, {steps} steps, {seeds} seeds: mean (lowest–highest)",
        "paper table 3": "paper, Table 3 (one run each)",
        "setting": "setting",
        "PPL": "PPL",
        "BLEU": "BLEU",
        "perplexity axis": "validation perplexity (lower is better)",
        "exact match axis": "validation exact match, % (higher is better)",
        "base's seeds": "the base's seeds",
        "seed": "seed {seed}",
        "mean": "mean",
        "task": "task",
        "model": "model",
        "seeds": "seeds",
        "updates": "updates",
        "CPU minutes": "CPU minutes",
        "FLOPs per update": "FLOPs per update",
        "training FLOPs": "training FLOPs",
        "test quality": "test: exact match % (numbers), sacreBLEU (Multi30k)",
        "model (paper)": "model (paper)",
        "BLEU EN-DE": "BLEU EN-DE",
        "BLEU EN-FR": "BLEU EN-FR",
        "FLOPs EN-DE": "FLOPs EN-DE",
        "FLOPs EN-FR": "FLOPs EN-FR",
        "one figure": "{flops} (one figure for both)",
        "task title": "{task}, {minutes} CPU minutes",
        "test exact match": "test exact match (%)",
        "test sacreBLEU": "test sacreBLEU",
        "paper FLOPs": "training FLOPs (the paper's estimate)",
        "paper title": "paper, EN-DE newstest2014",
    },
    "zh_CN": {
        "row": "行",
        "variant": "变体",
        "parameters": "参数量",
        "perplexity": "困惑度",
        "exact match %": "精确匹配率 %",
        "ours": "数字任务，{steps} 步，{seeds} 个种子：均值（最低–最高）",
        "paper table 3": "论文表 3（每行一次训练）",
        "setting": "设置",
        "PPL": "困惑度",
        "BLEU": "BLEU",
        "perplexity axis": "验证困惑度（越低越好）",
        "exact match axis": "验证精确匹配率，%（越高越好）",
        "base's seeds": "基础模型各种子的范围",
        "seed": "种子 {seed}",
        "mean": "均值",
        "task": "任务",
        "model": "模型",
        "seeds": "种子数",
        "updates": "更新次数",
        "CPU minutes": "CPU 分钟数",
        "FLOPs per update": "每次更新的 FLOPs",
        "training FLOPs": "训练 FLOPs",
        "test quality": "测试集：精确匹配率 %（数字任务），sacreBLEU（Multi30k）",
        "model (paper)": "模型（论文）",
        "BLEU EN-DE": "英德 BLEU",
        "BLEU EN-FR": "英法 BLEU",
        "FLOPs EN-DE": "英德 FLOPs",
        "FLOPs EN-FR": "英法 FLOPs",
        "one figure": "{flops}（论文对两者只给出一个数）",
        "task title": "{task}，{minutes} 分钟 CPU 时间",
        "test exact match": "测试精确匹配率（%）",
        "test sacreBLEU": "测试 sacreBLEU",
        "paper FLOPs": "训练 FLOPs（论文的估计）",
        "paper title": "论文，英德 newstest2014",
    },
}
# The names of variants, models, tasks and the paper's settings that are words, not formulas, by language:
# a name a language does not list reads the same as in English.
NAMES = {
    "en": {},
    "zh_CN": {
        "base": "基础模型",
        "learned positions": "可学习位置嵌入",
        "positional embedding": "可学习位置嵌入",
        "numbers": "数字任务",
        "multi30k": "Multi30k",
        "GRU with attention": "带注意力的 GRU",
        "Transformer (base)": "Transformer（基础模型）",
    },
}
COLOURS = {"Transformer": "tab:blue", "GRU with attention": "tab:orange"}  # Table 2's two models, in every panel


def name_in(name: str, language: str) -> str:
    """A variant's, model's, task's or setting's name in ``language`` (a formula stays as it is)."""
    return words(NAMES, language).get(name, name)


def seed_scores(entry: dict, metric: str) -> list[float]:
    """Every seed's ``metric`` of a record's entry (a variant or a model)."""
    return [run[metric] for run in entry["runs"].values()]


def beyond_base(entry: dict, base: dict, metric: str) -> int:
    """+1 if every seed of ``entry`` lies above every seed of ``base``, -1 if below, 0 if the ranges overlap."""
    values, base_values = seed_scores(entry, metric), seed_scores(base, metric)
    return 1 if min(values) > max(base_values) else -1 if max(values) < min(base_values) else 0


def _cell(entry: dict, base: dict, metric: str, digits: int) -> str:
    """'mean (lowest–highest)', the mean in bold where all the seeds lie beyond all of the base's."""
    summary = entry[metric]
    mean = f"{summary['mean']:.{digits}f}"
    if entry is not base and beyond_base(entry, base, metric):
        mean = f"<b>{mean}</b>"
    return f"<td>{mean} ({summary['min']:.{digits}f}–{summary['max']:.{digits}f})</td>"


def table_3(variants: dict[str, dict], steps: int, seeds: int, language: str = "en") -> str:
    """The small Table 3 as HTML: each variant's scores over its seeds, beside the paper's line it imitates."""
    said = words(WORDS, language)
    base = variants[BASE]
    rows = "".join(
        f"<tr><td>{html.escape(name_in(entry['row'], language))}</td><td>{html.escape(name_in(name, language))}</td>"
        f"<td>{entry['parameters']:,}</td>"
        f"{_cell(entry, base, 'perplexity', 3)}{_cell(entry, base, 'exact_match', 1)}"
        f"<td>{html.escape(name_in(entry['paper']['setting'], language))}</td>"
        f"<td>{entry['paper']['perplexity']:.2f}</td><td>{entry['paper']['bleu']:.1f}</td></tr>"
        for name, entry in variants.items()
    )
    ours = said["ours"].format(steps=steps, seeds=seeds)
    return (
        f"<table style='font-size: 0.9em'><thead><tr><th rowspan='2'>{said['row']}</th>"
        f"<th colspan='4'>{ours}</th><th colspan='3'>{said['paper table 3']}</th></tr>"
        f"<tr><th>{said['variant']}</th><th>{said['parameters']}</th><th>{said['perplexity']}</th>"
        f"<th>{said['exact match %']}</th><th>{said['setting']}</th><th>{said['PPL']}</th><th>{said['BLEU']}</th></tr>"
        f"</thead><tbody>{rows}</tbody></table>"
    )


def draw_seed_scores(variants: dict[str, dict], language: str = "en") -> Figure:
    """Every seed's validation perplexity and exact match, one dot per seed and a bar at each variant's mean,
    the range of the base's seeds shaded across each panel; a line between the rows (A to E) of Table 3."""
    said = words(WORDS, language)
    names = list(variants)
    seed_names = list(variants[BASE]["runs"])
    fig, axes = plt.subplots(1, 2, figsize=(11, 0.32 * len(names) + 1.2), sharey=True)
    axis_labels = (said["perplexity axis"], said["exact match axis"])
    for ax, metric, label in zip(axes, ("perplexity", "exact_match"), axis_labels):
        base_values = seed_scores(variants[BASE], metric)
        ax.axvspan(min(base_values), max(base_values), color="0.88", zorder=0, label=said["base's seeds"])
        for position, name in enumerate(names):
            entry = variants[name]
            for seed_index, seed in enumerate(seed_names):
                ax.plot(entry["runs"][seed][metric], position, "o", color=f"C{seed_index}", alpha=0.8, markersize=5,
                        label=said["seed"].format(seed=seed) if position == 0 else None)  # fmt: skip
            ax.plot(entry[metric]["mean"], position, "|", color="black", markersize=14, markeredgewidth=2,
                    label=said["mean"] if position == 0 else None)  # fmt: skip
        # The rows of Table 3 apart: grid lines at minor ticks, which a description does not read as data.
        row_ends = [position - 0.5 for position in range(1, len(names))
                    if variants[names[position]]["row"] != variants[names[position - 1]]["row"]]  # fmt: skip
        ax.set_yticks(row_ends, minor=True)
        ax.tick_params(axis="y", which="minor", left=False)
        ax.grid(axis="y", which="minor", color="0.7", linewidth=0.6)
        ax.set(xlabel=label)
    labels = [name_in(name, language) if name == BASE else f"{variants[name]['row']}  {name_in(name, language)}"
              for name in names]  # fmt: skip
    axes[0].set_yticks(range(len(names)), labels)
    axes[0].invert_yaxis()
    axes[1].legend(loc="upper left", bbox_to_anchor=(1.02, 1), fontsize=8)
    fig.tight_layout()
    return fig


def _seeds_range(spread: dict, digits: int) -> str:
    """'mean (min–max)' over the seeds, or the one value of a single seed."""
    text = f"{spread['mean']:,.{digits}f}"
    return text if spread["std"] is None else f"{text} ({spread['min']:,.{digits}f}–{spread['max']:,.{digits}f})"


def table_2_runs(records: dict[str, dict], metrics: dict[str, str], language: str = "en") -> str:
    """The small Table 2 as HTML: one row per task and model, its cost and its test quality (``metrics[task]``),
    each the mean over the seeds with their range."""
    said = words(WORDS, language)
    rows = "".join(
        f"<tr><td>{name_in(task, language)}</td><td>{name_in(name, language)}</td><td>{entry['parameters']:,}</td>"
        f"<td>{len(entry['runs'])}</td><td>{_seeds_range(entry['steps'], 0)}</td>"
        f"<td>{entry['cpu_minutes']['mean']:.2f}</td><td>{entry['update_flops']:.2e}</td>"
        f"<td>{entry['training_flops']['mean']:.2e}</td><td>{_seeds_range(entry['test'][metrics[task]], 1)}</td></tr>"
        for task, record in records.items()
        for name, entry in record["models"].items()
    )
    columns = ("task", "model", "parameters", "seeds", "updates", "CPU minutes", "FLOPs per update", "training FLOPs",
               "test quality")  # fmt: skip
    head = "".join(f"<th>{said[column]}</th>" for column in columns)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


def table_2_paper(paper_rows: list[dict], language: str = "en") -> str:
    """The paper's Table 2 lines as HTML: BLEU on newstest2014 and the training cost the paper estimated.
    A row without its own English-French cost is one figure the paper gives for both language pairs."""
    said = words(WORDS, language)

    def costs(row: dict) -> str:
        if "flops_en_fr" in row:
            return f"<td>{row['flops_en_de']:.1e}</td><td>{row['flops_en_fr']:.1e}</td>"
        both = said["one figure"].format(flops=f"{row['flops_en_de']:.1e}")
        return f"<td colspan='2'>{both}</td>"

    rows = "".join(
        f"<tr><td>{name_in(row['model'], language)}</td><td>{row['bleu_en_de']}</td><td>{row['bleu_en_fr']}</td>"
        f"{costs(row)}</tr>"
        for row in paper_rows
    )
    columns = ("model (paper)", "BLEU EN-DE", "BLEU EN-FR", "FLOPs EN-DE", "FLOPs EN-FR")
    head = "".join(f"<th>{said[column]}</th>" for column in columns)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


def draw_quality_against_cost(
    records: dict[str, dict], metrics: dict[str, str], paper_rows: list[dict], language: str = "en"
) -> Figure:
    """Table 2 as it is read: test quality (``metrics[task]``) against training FLOPs, one panel per task with
    each seed a point, and the paper's English-German lines on a logarithmic axis in the last panel."""
    said = words(WORDS, language)
    fig, axes = plt.subplots(1, len(records) + 1, figsize=(12, 3.4))
    for ax, (task, record) in zip(axes, records.items()):
        for name, entry in record["models"].items():
            runs = list(entry["runs"].values())
            ax.scatter([run["training_flops"] for run in runs], [run["test"][metrics[task]] for run in runs],
                       color=COLOURS[name], label=name_in(name, language))  # fmt: skip
        title = said["task title"].format(task=name_in(task, language), minutes=f"{record['settings']['minutes']:g}")
        ylabel = said["test exact match"] if metrics[task] == "exact_match" else said["test sacreBLEU"]
        ax.set(xlabel=said["training FLOPs"], title=title, ylabel=ylabel)
        ax.ticklabel_format(axis="x", style="sci", scilimits=(0, 0))
        ax.margins(0.15)
        ax.legend(fontsize=8)
    paper = axes[-1]
    for row in paper_rows:
        colour = COLOURS["Transformer"] if "Transformer" in row["model"] else "gray"
        paper.scatter(row["flops_en_de"], row["bleu_en_de"], color=colour, label=name_in(row["model"], language))
        paper.annotate(name_in(row["model"], language), (row["flops_en_de"], row["bleu_en_de"]), fontsize=8,
                       xytext=(4, 4), textcoords="offset points")  # fmt: skip
    paper.set(xscale="log", xlabel=said["paper FLOPs"], ylabel=said["BLEU"], title=said["paper title"])
    paper.margins(0.2)
    paper.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())  # the decades alone, readable
    fig.tight_layout()
    return fig
