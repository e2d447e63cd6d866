"""Pictures of attention for the book, drawn with matplotlib.

from transformer_course.book_programs.plots import attention_heatmap
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import torch
from matplotlib.axes import Axes
from torch import Tensor


def attention_heatmap(
    weights: Tensor,
    queries: Sequence[str] | None = None,
    keys: Sequence[str] | None = None,
    *,
    ax: Axes | None = None,
    title: str | None = None,
    annotate: bool | None = None,
) -> Axes:
    """Draw an attention matrix: one row per query, one column per key, colour = weight.

    Args:
        weights: ``(L_q, L_k)`` attention weights in [0, 1] (each row sums to 1).
        queries: labels of the rows (e.g. the query tokens); positions 0, 1, ... when omitted.
        keys: labels of the columns.
        ax: the axes to draw on; a new figure when omitted.
        title: the axes' title.
        annotate: write each weight in its cell; by default when the matrix has at most 12 × 12 cells.

    Returns:
        The axes; ``ax.images[0]`` is the image (for a colour bar).
    """
    weights = torch.as_tensor(weights).detach().float().cpu()
    if weights.dim() != 2:
        raise ValueError(f"attention_heatmap expects weights of shape (L_q, L_k), got shape {tuple(weights.shape)}")
    rows, columns = weights.shape
    for name, labels, size in (("queries", queries, rows), ("keys", keys, columns)):
        if labels is not None and len(labels) != size:
            raise ValueError(
                f"{name} has {len(labels)} labels for {size} {'rows' if name == 'queries' else 'columns'} of weights "
                f"{tuple(weights.shape)}"
            )
    if ax is None:
        _, ax = plt.subplots(figsize=(0.6 * columns + 1.6, 0.5 * rows + 1.2))
    ax.imshow(weights.numpy(), cmap="viridis", vmin=0.0, vmax=1.0)
    ax.set_xticks(range(columns), keys if keys is not None else range(columns))
    ax.set_yticks(range(rows), queries if queries is not None else range(rows))
    ax.set_xlabel("key")
    ax.set_ylabel("query")
    if title:
        ax.set_title(title)
    if annotate is None:
        annotate = rows <= 12 and columns <= 12
    if annotate:
        for row in range(rows):
            for column in range(columns):
                value = weights[row, column].item()
                ax.text(
                    column,
                    row,
                    f"{value:.2f}",
                    ha="center",
                    va="center",
                    color="black" if value > 0.6 else "white",
                    fontsize=9,
                )
    return ax
