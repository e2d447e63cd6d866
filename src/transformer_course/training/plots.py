"""The learning curves of a run, drawn with matplotlib."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..atomic_files import write_atomically

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def plot_training_curves(history: dict, path: str | Path | None = None, title: str | None = None) -> Figure:
    """Training and validation loss against the step, and the validation score beside them.

    Args:
        history: ``{"train": [{"step", "train_loss", ...}], "validation": [{"step", "validation_loss",
        "validation_<metric>"}]}``
            as kept by :func:`~transformer_course.training.train`.
        path: save the figure there (PNG) if given, atomically.
        title: the figure's title.

    Returns:
        the figure (a notebook displays it).
    """
    # Here, not at the top: the commands start without matplotlib.
    from matplotlib.figure import Figure
    from matplotlib.ticker import LogFormatter

    # Fixed margins rather than a layout engine, and the log axis labelled in plain numbers rather than
    # mathtext powers of ten: a run redraws this figure as it goes (callbacks.CURVES_SECONDS), and the
    # two together made each drawing about three times slower.
    figure = Figure(figsize=(10, 4))
    figure.subplots_adjust(left=0.07, right=0.98, bottom=0.13, top=0.84 if title else 0.9, wspace=0.22)
    losses, scores = figure.subplots(1, 2)
    train, validation = history.get("train", []), history.get("validation", [])
    losses.plot([row["step"] for row in train], [row["train_loss"] for row in train], label="training (label-smoothed)")
    losses.plot(
        [row["step"] for row in validation],
        [row["validation_loss"] for row in validation],
        "o-",
        label="validation (label-smoothed)",
    )
    losses.set(xlabel="step", ylabel="loss per target token", yscale="log", title="loss")
    losses.yaxis.set_major_formatter(LogFormatter())
    losses.yaxis.set_minor_formatter(LogFormatter(labelOnlyBase=False, minor_thresholds=(2, 0.5)))
    losses.legend()
    not_scores = ("validation_loss", "validation_seconds")
    metric_names = [
        key for key in (validation[0] if validation else {}) if key.startswith("validation_") and key not in not_scores
    ]
    for name in metric_names:
        scores.plot(
            [row["step"] for row in validation],
            [row[name] for row in validation],
            "o-",
            label=name.removeprefix("validation_"),
        )
    scores.set(xlabel="step", ylabel="score (%)", ylim=(0, 100), title="validation score")
    if metric_names:
        scores.legend(loc="lower right")  # scores rise to the top right: keep the legend clear of them
    if title:
        figure.suptitle(title)
    if path is not None:  # atomically, as every file a run keeps
        write_atomically(path, lambda file: figure.savefig(file, format="png", dpi=100))
    return figure
