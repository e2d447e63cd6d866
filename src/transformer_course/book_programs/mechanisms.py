"""Pictures of the mechanisms the chapters teach, drawn from the package's own tensors and functions.

    from transformer_course.book_programs.mechanisms import draw_qkv, draw_head_split
    draw_qkv(tc.MultiHeadAttention(8, 1), torch.randn(1, 5, 8))   # chapter 1: Q = X W^Q, ...

=========================  ======================================================================
:func:`draw_qkv`           Q, K and V as products of X with W^Q, W^K, W^V (chapter 1)
:func:`draw_head_split`    ``split_heads`` and ``merge_heads`` on a real projection (chapter 2)
:func:`draw_decoder_masks` the padding, causal and target masks of one sentence (chapter 4)
:func:`draw_mask_graphs`   masks and the undirected graphs they make, with their λ₂ (chapter 4)
:func:`draw_sublayer_wiring`  Post-LN against Pre-LN, as ``SublayerConnection`` runs them (chapter 5)
:func:`draw_path_lengths`  which positions one layer connects, and the path first to last (chapter 6)
:func:`draw_batch_padding` random against length-bucketed batches, padding shaded (chapter 8)
:func:`draw_beam_tree`     the hypotheses ``beam_search`` keeps at each step (chapter 9)
=========================  ======================================================================

Every function returns its :class:`~matplotlib.figure.Figure`; the shapes, counts and scores in
its labels are read from the tensors it was given, never typed, as in :mod:`.diagrams`. Each draws
its words in English or in Chinese (``language="zh_CN"``, the words of :data:`WORDS`), for the
book's two editions (:mod:`.edition_figures`).

A mask is drawn one way everywhere, in the book and in the exercise notebooks: a cell whose query may
attend to its key (``True``) is dark, a blocked one (``False``) white, :data:`MASK_COLOURS`, and every
mask picture carries a key that says so (:func:`add_mask_key`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from unittest import mock

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.axes import Axes
from matplotlib.colorbar import Colorbar
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch
from torch import Tensor, nn

from .. import decoding
from ..data.batching import bucketed_batches, random_batches
from ..masks import causal_mask, local_window_mask, padding_and_causal_mask, padding_mask
from ..multi_head_attention import MultiHeadAttention
from ..sublayers import SublayerConnection
from .diagrams import EDGE, HIGHLIGHT, PLAIN
from .edition_figures import words

MATRIX_COLOURS = "RdBu_r"
# The colours of a mask's False (blocked) and True (may attend) cells: dark = may attend, in the book and the notebooks.
MASK_COLOURS = ("white", "dimgray")
HEAD_COLOURS = ("#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#eeca3b", "#9d755d")

# The pictures' words, by language (the glossary's terms); counts, shapes and scores are filled in.
WORDS = {
    "en": {
        "X": "X: {count} tokens\n{shape}",
        "qkv": "Queries, keys and values: three projections of the same tokens X",
        "head": "head {number}\n{shape}",
        "split": "split_heads: {projected} → {heads} (batch, h, L, d_v); merge_heads: back to {merged}. "
        "The first sequence of the batch is drawn.",
        "x": "x",
        "LayerNorm": "LayerNorm",
        "sublayer": "sublayer (attention or feed-forward)",
        "dropout": "dropout",
        "add": "add: x + ...",
        "output": "output",
        "Post-LN": "Post-LN (the paper): LayerNorm(x + Sublayer(x))",
        "Pre-LN": "Pre-LN: x + Sublayer(LayerNorm(x))",
        "Post-LN note": "every sublayer's output is normalised",
        "Pre-LN note": "x itself is never normalised:\na final LayerNorm ends the stack",
        "residual": "residual",
        "self-attention": "self-attention",
        "recurrent": "recurrent",
        "convolution": "convolution, k = {kernel}",
        "path of layers": "{name}:\npath of {length} layer{plural}",
        "path of steps": "{name}:\npath of {length} step{plural}",
        "position": "position",
        "layers": "layers (steps, for the recurrence)",
        "who hears whom": "Who hears whom in one layer, for n = {n} positions; the path from the first to the last",
        "random batches": "random batches of {size}",
        "bucketed batches": "bucketed_batches, max_tokens = {max_tokens}",
        "padding": "{name}: {batches} batches,\n{pad} <pad> cells, {share:.0%} of the tensors",
        "sequence": "sequence, in batch order",
        "step": "step",
        "beam rank": "beam rank",
        "beam search": "Beam search, {beams} beams: the hypotheses kept, with log P(y | x)",
        "blocked": "blocked",
        "may attend": "may attend",
        "padding mask": "padding mask, sentence {sentence}\n(broadcast over the queries)",
        "causal mask": "causal mask",
        "target mask": "target mask, sentence {sentence}\n= padding AND causal",
        "key (token id)": "key (token id)",
        "query position": "query position",
        "query": "query",
        "encoder": "encoder",
        "causal": "causal",
        "block": "block",
        "local window": "local window",
        "named mask": "{name} mask",
    },
    "zh_CN": {
        "X": "X：{count} 个词元\n{shape}",
        "qkv": "查询、键和值：同一组词元 X 的三个投影",
        "head": "第 {number} 个头\n{shape}",
        "split": "split_heads：{projected} → {heads} (batch, h, L, d_v)；merge_heads：还原为 {merged}。"
        "图中画的是批中的第一个序列。",
        "x": "x",
        "LayerNorm": "LayerNorm",
        "sublayer": "子层（注意力或前馈网络）",
        "dropout": "dropout（随机失活）",
        "add": "相加：x + ...",
        "output": "输出",
        "Post-LN": "后置层归一化（论文）：LayerNorm(x + Sublayer(x))",
        "Pre-LN": "前置层归一化：x + Sublayer(LayerNorm(x))",
        "Post-LN note": "每个子层的输出都经过归一化",
        "Pre-LN note": "x 本身从不被归一化：\n堆叠的末尾再加一个 LayerNorm",
        "residual": "残差",
        "self-attention": "自注意力",
        "recurrent": "循环网络",
        "convolution": "卷积，k = {kernel}",
        "path of layers": "{name}：\n路径长 {length} 层",
        "path of steps": "{name}：\n路径长 {length} 步",
        "position": "位置",
        "layers": "层（循环网络为步）",
        "who hears whom": "n = {n} 个位置时，一层之内谁能看到谁；以及从第一个位置到最后一个位置的路径",
        "random batches": "随机分批，每批 {size} 个",
        "bucketed batches": "bucketed_batches，max_tokens = {max_tokens}",
        "padding": "{name}：{batches} 个批，\n{pad} 个 <pad> 格，占张量的 {share:.0%}",
        "sequence": "序列（按批的顺序）",
        "step": "步",
        "beam rank": "束内排名",
        "beam search": "束搜索，束宽 {beams}：每一步保留的假设及其 log P(y | x)",
        "blocked": "被屏蔽",
        "may attend": "可以关注",
        "padding mask": "填充掩码，第 {sentence} 句\n（沿查询方向广播）",
        "causal mask": "因果掩码",
        "target mask": "目标掩码，第 {sentence} 句\n= 填充 AND 因果",
        "key (token id)": "键（词元 id）",
        "query position": "查询位置",
        "query": "查询",
        "encoder": "编码器",
        "causal": "因果",
        "block": "分块",
        "local window": "局部窗口",
        "named mask": "{name}掩码",
    },
}


def _shape(tensor: Tensor) -> str:
    return "(" + ", ".join(str(size) for size in tensor.shape) + ")"


def _matrix(ax: Axes, values: Tensor, title: str, limit: float) -> None:
    ax.imshow(values.detach().numpy(), cmap=MATRIX_COLOURS, vmin=-limit, vmax=limit)
    ax.set_title(title, fontsize=8)
    ax.set_xticks([])
    ax.set_yticks([])


def draw_qkv(attention: MultiHeadAttention, x: Tensor, language: str = "en") -> Figure:
    """Q = X W^Q, K = X W^K, V = X W^V for the first sequence of ``x`` ``(batch, L, d_model)``.

    Each matrix is drawn cell by cell (one colour scale for all), titled with its shape; the weights
    are the module's own (``nn.Linear`` stores W transposed, so the picture shows ``weight.T``).
    """
    said = words(WORDS, language)
    tokens = x[0].detach()
    with torch.no_grad():
        rows = [
            (name, layer.weight.T, layer(tokens), layer.bias is not None)
            for name, layer in (("Q", attention.w_q), ("K", attention.w_k), ("V", attention.w_v))
        ]
    limit = max(tensor.abs().max().item() for _, weight, output, _ in rows for tensor in (weight, output, tokens))
    fig = plt.figure(figsize=(8, 5.4))
    grid = fig.add_gridspec(3, 3, width_ratios=[1, 1, 1], wspace=0.5, hspace=0.45)
    _matrix(fig.add_subplot(grid[:, 0]), tokens, said["X"].format(count=tokens.size(0), shape=_shape(tokens)), limit)
    for row, (name, weight, output, bias) in enumerate(rows):
        _matrix(fig.add_subplot(grid[row, 1]), weight, f"$W^{name}$ {_shape(weight)}", limit)
        plus = f" + $b^{name}$" if bias else ""
        _matrix(fig.add_subplot(grid[row, 2]), output, f"{name} = X $W^{name}${plus} {_shape(output)}", limit)
    fig.suptitle(said["qkv"], fontsize=10)
    return fig


def draw_head_split(attention: MultiHeadAttention, x: Tensor, language: str = "en") -> Figure:
    """``split_heads`` and ``merge_heads`` on the values x W^V of the first sequence of ``x``.

    Left: x W^V ``(L, d_model)``, its columns coloured by the head that owns them; middle: one
    ``(L, d_v)`` matrix per head, as ``split_heads`` returns them; right: ``merge_heads`` of those.
    """
    said = words(WORDS, language)
    with torch.no_grad():
        projected = attention.w_v(x)  # (batch, L, d_model)
        heads = attention.split_heads(projected)  # (batch, h, L, d_v)
        merged = attention.merge_heads(heads)  # (batch, L, d_model)
    count, width = heads.size(1), heads.size(-1)
    limit = projected.abs().max().item()
    fig = plt.figure(figsize=(10, 2.9))
    grid = fig.add_gridspec(1, count + 2, width_ratios=[count, *[1] * count, count], wspace=0.35)
    for column, (tensor, name) in enumerate(((projected, "x $W^V$"), (merged, "merge_heads"))):
        ax = fig.add_subplot(grid[0, 0 if column == 0 else count + 1])
        _matrix(ax, tensor[0], f"{name} {_shape(tensor)}", limit)
        for head in range(count):  # the columns each head owns, framed in its colour
            frame = plt.Rectangle((head * width - 0.5, -0.5), width, tensor.size(1), fill=False, linewidth=2)
            frame.set_edgecolor(HEAD_COLOURS[head % len(HEAD_COLOURS)])
            ax.add_patch(frame)
    for head in range(count):
        ax = fig.add_subplot(grid[0, head + 1])
        _matrix(ax, heads[0, head], said["head"].format(number=head + 1, shape=_shape(heads[0, head])), limit)
        for spine in ax.spines.values():
            spine.set(edgecolor=HEAD_COLOURS[head % len(HEAD_COLOURS)], linewidth=2, visible=True)
    shapes = {"projected": _shape(projected), "heads": _shape(heads), "merged": _shape(merged)}
    fig.suptitle(said["split"].format(**shapes), fontsize=9)
    return fig


def draw_mask(mask: Tensor, ax: Axes) -> AxesImage:
    """A bool mask ``(L_q, L_k)`` on ``ax`` in :data:`MASK_COLOURS`: one row per query, one column per key."""
    mask = torch.as_tensor(mask).detach().cpu()
    if mask.dtype != torch.bool or mask.dim() != 2:
        raise ValueError(f"draw_mask expects a 2-D bool mask, got {mask.dtype} of shape {tuple(mask.shape)}")
    # Two colours, False at 0 and True at 1: each value sits in the middle of its colour's half of the scale.
    return ax.imshow(mask.float().numpy(), cmap=ListedColormap(MASK_COLOURS), vmin=-0.5, vmax=1.5)


def add_mask_key(image: AxesImage, axes, language: str = "en", **settings) -> Colorbar:
    """The key of mask pictures drawn by :func:`draw_mask`: a colour bar of its two colours, named."""
    said = words(WORDS, language)
    key = image.figure.colorbar(image, ax=axes, ticks=[0, 1], **settings)
    key.set_ticklabels([said["blocked"], said["may attend"]])
    return key


def draw_decoder_masks(tokens: Tensor, pad_id: int, sentence: int = 0, language: str = "en") -> Figure:
    """The package's padding mask (broadcast over the queries), causal mask and target mask (their AND)
    of sentence ``sentence`` of ``tokens`` ``(batch, L)``, side by side, the keys labelled by their token ids."""
    said = words(WORDS, language)
    length = tokens.size(1)
    panels = {
        said["padding mask"].format(sentence=sentence + 1): padding_mask(tokens, pad_id)[sentence, 0].expand(
            length, length
        ),
        said["causal mask"]: causal_mask(length),
        said["target mask"].format(sentence=sentence + 1): padding_and_causal_mask(tokens, pad_id)[sentence, 0],
    }
    fig, axes = plt.subplots(1, 3, figsize=(10.5, 3.4))
    for ax, (title, mask) in zip(axes, panels.items()):
        image = draw_mask(mask, ax)
        ax.set_title(title, fontsize=9)
        ax.set_xticks(range(length), [str(token) for token in tokens[sentence].tolist()])
        ax.set_yticks(range(length), [str(position) for position in range(1, length + 1)])
        ax.set_xlabel(said["key (token id)"])
    axes[0].set_ylabel(said["query position"])
    add_mask_key(image, axes, language, fraction=0.025)
    return fig


def undirected_adjacency(mask: Tensor) -> Tensor:
    """A_ij = 1 when i may attend to j or j to i (no self-loops): the graph of who can mix with whom in one layer."""
    adjacency = (mask | mask.T).double()
    adjacency.fill_diagonal_(0)
    return adjacency


def draw_mask_graphs(masks: dict[str, Tensor], lambda_2: dict[str, float], language: str = "en") -> Figure:
    """Each mask ``(n, n)`` over the undirected graph it makes (tokens on a circle, an edge where either token may
    attend to the other), titled with its algebraic connectivity ``lambda_2[name]``. The names are those of
    :data:`WORDS` (``"encoder"``, ``"causal"``, ``"block"``, ``"local window"``)."""
    said = words(WORDS, language)
    n = next(iter(masks.values())).size(0)
    angles = np.pi / 2 - 2 * np.pi * np.arange(n) / n
    xs, ys = np.cos(angles), np.sin(angles)
    fig, axes = plt.subplots(2, len(masks), figsize=(2.9 * len(masks), 5.6), squeeze=False)
    for column, (name, mask) in enumerate(masks.items()):
        image = draw_mask(mask, axes[0, column])
        axes[0, column].set_title(said["named mask"].format(name=said[name]), fontsize=9)
        axes[0, column].set_xticks(range(n), range(1, n + 1))
        axes[0, column].set_yticks(range(n), range(1, n + 1))
        ax = axes[1, column]
        adjacency = undirected_adjacency(mask)
        for i in range(n):
            for j in range(i + 1, n):
                if adjacency[i, j]:
                    ax.plot([xs[i], xs[j]], [ys[i], ys[j]], color="C0", linewidth=1.2, zorder=1)
        ax.scatter(xs, ys, s=320, color="white", edgecolor="black", zorder=2)
        for i in range(n):
            ax.text(xs[i], ys[i], str(i + 1), ha="center", va="center", fontsize=9, zorder=3)
        ax.set_title(f"$\\lambda_2$ = {lambda_2[name]:.3f}", fontsize=9)
        ax.set(xlim=(-1.3, 1.3), ylim=(-1.3, 1.3), aspect="equal")
        ax.axis("off")
    axes[0, 0].set_ylabel(said["query"])
    fig.tight_layout()
    add_mask_key(image, axes[0], language, fraction=0.02)
    return fig


def sublayer_wiring(norm_first: bool, d_model: int = 8) -> list[str]:
    """The steps of the package's :class:`SublayerConnection`, found by running it, input first.

    A LayerNorm shows as rows of mean 0 and variance 1: where the sublayer's input is normalised,
    the norm comes first (Pre-LN); where the output is, it comes after the sum (Post-LN).
    """
    connection = SublayerConnection(d_model, norm_first=norm_first).eval()
    x = 3.0 + 5.0 * torch.randn(2, 4, d_model, generator=torch.Generator().manual_seed(0))
    seen = {}

    def sublayer(h: Tensor) -> Tensor:
        seen["input"], seen["output"] = h, torch.tanh(h) + 1.0
        return seen["output"]

    with torch.no_grad():
        output = connection(x, sublayer)

    def normalised(t: Tensor) -> bool:
        mean, variance = t.mean(-1), t.var(-1, unbiased=False)
        return bool(
            torch.allclose(mean, torch.zeros_like(mean), atol=1e-4)
            and torch.allclose(variance, torch.ones_like(variance), atol=1e-3)
        )

    steps = ["x"] + ["LayerNorm"] * normalised(seen["input"]) + ["sublayer (attention or feed-forward)", "dropout"]
    summed = x + seen["output"]
    if not torch.allclose(connection.norm(summed) if normalised(output) else summed, output, atol=1e-5):
        raise AssertionError("SublayerConnection is neither Post-LN nor Pre-LN")
    return [*steps, "add: x + ...", *["LayerNorm"] * normalised(output), "output"]


def _box(ax: Axes, x: float, y: float, text: str, coloured: bool, width: float = 0.72, height: float = 0.075) -> None:
    colour = HIGHLIGHT if coloured else PLAIN
    ax.add_patch(
        FancyBboxPatch((x - width / 2, y - height / 2), width, height, boxstyle="round,pad=0.004",
                       facecolor=colour, edgecolor=EDGE, linewidth=0.8)
    )  # fmt: skip
    ax.text(x, y, text, ha="center", va="center", fontsize=8)


def _arrow(ax: Axes, start: tuple[float, float], end: tuple[float, float], **style) -> None:
    style = {"color": EDGE, "linewidth": 0.8, **style}
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=8, **style))


def draw_sublayer_wiring(language: str = "en") -> Figure:
    """Post-LN (the paper) beside Pre-LN, each as :func:`sublayer_wiring` finds the package runs it.

    The LayerNorm boxes are coloured; the dashed arrow is the residual path from x to the sum.
    """
    said = words(WORDS, language)
    step_words = {
        "x": said["x"], "LayerNorm": said["LayerNorm"], "sublayer (attention or feed-forward)": said["sublayer"],
        "dropout": said["dropout"], "add: x + ...": said["add"], "output": said["output"],
    }  # fmt: skip
    fig, axes = plt.subplots(1, 2, figsize=(8.4, 4.6))
    titles = (said["Post-LN"], said["Pre-LN"])
    notes = (said["Post-LN note"], said["Pre-LN note"])
    for ax, norm_first, title, note in zip(axes, (False, True), titles, notes):
        ax.text(0.5, -0.04, note, ha="center", va="top", fontsize=8, style="italic")
        steps = sublayer_wiring(norm_first)
        heights = np.linspace(0.06, 0.94, len(steps))
        for index, (step, y) in enumerate(zip(steps, heights)):
            _box(ax, 0.5, y, step_words[step], step == "LayerNorm")
            if index:
                _arrow(ax, (0.5, heights[index - 1] + 0.04), (0.5, y - 0.04))
        add = heights[steps.index("add: x + ...")]
        ax.plot([0.19, 0.1, 0.1], [heights[0], heights[0], add], color=EDGE, linewidth=0.8, linestyle=(0, (3, 2)))
        _arrow(ax, (0.1, add), (0.19, add), linestyle=(0, (3, 2)))
        ax.text(0.08, (heights[0] + add) / 2, said["residual"], rotation=90, ha="right", va="center", fontsize=7)
        ax.set_title(title, fontsize=9)
        ax.set(xlim=(0, 1), ylim=(0, 1))
        ax.axis("off")
    return fig


def one_layer_connections(n: int, kernel: int = 3) -> dict[str, Tensor]:
    """``(n, n)`` bool: position i hears position j in one layer (one step of the recurrence).

    From the package's masks: everything for self-attention; itself and the position before for a
    recurrence; the ``kernel`` positions up to itself for a one-sided (causal) convolution.
    """
    causal = causal_mask(n)
    return {
        "self-attention": torch.ones(n, n, dtype=torch.bool),
        "recurrent": local_window_mask(n, 1) & causal,
        f"convolution, k = {kernel}": local_window_mask(n, kernel - 1) & causal,
    }


def shortest_path(connections: Tensor) -> list[int]:
    """The positions, layer by layer, of a shortest path from the first position to the last."""
    n = connections.size(0)
    reached = [torch.arange(n) == 0]  # positions that have heard position 0, after 0, 1, ... layers
    while not reached[-1][-1]:
        reached.append((connections & reached[-1][None, :]).any(dim=1))
    path = [n - 1]
    for layer in range(len(reached) - 2, -1, -1):  # the furthest-back position it hears that had heard 0
        path.append(int(torch.nonzero(connections[path[-1]] & reached[layer])[0]))
    return path[::-1]


def draw_path_lengths(n: int = 8, kernel: int = 3, language: str = "en") -> Figure:
    """Table 1's maximum path lengths as graphs: positions in a row per layer, edges = who hears whom.

    Every edge of every layer is drawn in grey; a shortest path from the first position to the last
    is coloured, and each panel's title gives its length.
    """
    said = words(WORDS, language)
    graphs = one_layer_connections(n, kernel)
    names = {"self-attention": said["self-attention"], "recurrent": said["recurrent"],
             f"convolution, k = {kernel}": said["convolution"].format(kernel=kernel)}  # fmt: skip
    paths = [shortest_path(connections) for connections in graphs.values()]
    fig, axes = plt.subplots(1, len(graphs), figsize=(10, 4.2), sharey=True)
    for ax, (name, connections), path in zip(axes, graphs.items(), paths):
        hearer, heard = torch.nonzero(connections, as_tuple=True)
        for layer in range(1, len(path)):
            for i, j in zip(hearer.tolist(), heard.tolist()):
                ax.plot([j, i], [layer - 1, layer], color="0.82", linewidth=0.6, zorder=1)
            ax.plot(path[layer - 1 : layer + 1], [layer - 1, layer], color=HIGHLIGHT, linewidth=2.5, zorder=2)
        for layer in range(len(path)):
            ax.scatter(range(n), [layer] * n, s=22, color=EDGE, zorder=3)
        title = said["path of steps" if name == "recurrent" else "path of layers"]
        ax.set_title(title.format(name=names[name], length=len(path) - 1, plural="s" * (len(path) > 2)), fontsize=9)
        ax.set_xticks(range(n), [str(position + 1) for position in range(n)], fontsize=7)
        ax.set_xlabel(said["position"])
    axes[0].set_ylabel(said["layers"])
    axes[0].set_yticks(range(max(len(path) for path in paths)))
    fig.suptitle(said["who hears whom"].format(n=n), fontsize=10)
    fig.tight_layout()
    return fig


def padded_grid(sequences: Sequence[Sequence[int]], batches: list[list[int]]) -> np.ndarray:
    """The batches' tensors stacked: one row per sequence in batch order, each batch padded to its
    longest; a token's id, -1 for ``<pad>``, NaN beyond the batch's rectangle."""
    width = max(len(sequence) for sequence in sequences)
    rows = []
    for batch in batches:
        longest = max(len(sequences[index]) for index in batch)
        for index in batch:
            padding = longest - len(sequences[index])
            rows.append([*sequences[index], *[-1] * padding, *[math.nan] * (width - longest)])
    return np.array(rows, dtype=float)


def draw_batch_padding(
    sequences: Sequence[Sequence[int]], max_tokens: int, seed: int = 0, language: str = "en"
) -> Figure:
    """Random batches beside the package's :func:`bucketed_batches` on the same sequences.

    The random batches have the bucketed ones' average size. Cells hold token ids; ``<pad>`` cells
    are shaded; a line separates batches. Titles give each side's share of padding.
    """
    said = words(WORDS, language)
    bucketed = bucketed_batches([len(sequence) for sequence in sequences], max_tokens, seed=seed)
    size = round(len(sequences) / len(bucketed))
    sides = {
        said["random batches"].format(size=size): random_batches(len(sequences), size, seed=seed),
        said["bucketed batches"].format(max_tokens=max_tokens): bucketed,
    }
    fig, axes = plt.subplots(1, 2, figsize=(10, 0.22 * len(sequences) + 1.4))
    for ax, (name, batches) in zip(axes, sides.items()):
        grid = padded_grid(sequences, batches)
        pad = int((grid == -1).sum())
        ax.imshow(np.where(np.isnan(grid), np.nan, grid == -1), cmap="Greys", vmin=-0.15, vmax=2.2, aspect="auto")
        if grid.size <= 1200:
            for (row, column), value in np.ndenumerate(grid):
                if value >= 0:
                    ax.text(column, row, str(int(value)), ha="center", va="center", fontsize=5.5)
        for boundary in np.cumsum([len(batch) for batch in batches])[:-1]:
            ax.axhline(boundary - 0.5, color=HIGHLIGHT, linewidth=1.5)
        share = pad / int((~np.isnan(grid)).sum())
        title = said["padding"].format(name=name, batches=len(batches), pad=pad, share=share)
        ax.set_title(title, fontsize=9)
        ax.set(xlabel=said["position"], ylabel=said["sequence"], yticks=[])
    fig.tight_layout()
    return fig


def beam_search_steps(
    model: nn.Module, source: Tensor, beam_size: int, max_output_length: int, alpha: float = 0.0
) -> list[dict]:
    """Run the package's :func:`~transformer_course.decoding.beam_search` on one source ``(1, L_src)``
    with length penalty ``alpha``, and record the hypotheses it keeps at each step.

    Each step is a dict of lists, one entry per beam: the beam it extends (``origin``), its new
    ``token``, its log-probability ``score``, whether it is ``finished``, and whether the beam it
    extends already was (``was_finished``; then the new token is ``<pad>``).
    """
    steps: list[dict] = []
    choose = decoding._best_extensions

    def recording(*arguments):
        scores, lengths, finished, origin, token = result = choose(*arguments)
        steps.append({"origin": origin[0].tolist(), "token": token[0].tolist(), "score": scores[0].tolist(),
                      "finished": finished[0].tolist(), "was_finished": arguments[2][0].tolist()})  # fmt: skip
        return result

    with mock.patch.object(decoding, "_best_extensions", recording):
        decoding.beam_search(model, source[:1], beam_size, max_output_length, alpha)
    return steps


def draw_beam_tree(
    steps: list[dict], label: Callable[[int], str], ax: Axes | None = None, language: str = "en"
) -> Figure:
    """The tree of :func:`beam_search_steps`: step across, beam rank down, each kept hypothesis a node
    with its token and log P; the hypothesis that beam search returns is coloured. A finished
    hypothesis stays in the beam, extended only by ``<pad>``: those carried-over slots are left empty."""
    said = words(WORDS, language)
    if ax is None:
        _, ax = plt.subplots(figsize=(1.05 * len(steps) + 1.5, 0.75 * len(steps[0]["token"]) + 1.2))
    best = [0] * len(steps)  # the rank of the returned hypothesis' ancestor at each step
    for step in range(len(steps) - 1, 0, -1):
        best[step - 1] = steps[step]["origin"][best[step]]
    ax.text(0, 0, "<bos>", ha="center", va="center", fontsize=8, bbox={"facecolor": PLAIN, "edgecolor": EDGE})
    for step, kept in enumerate(steps, start=1):
        for rank, (origin, token, score) in enumerate(zip(kept["origin"], kept["token"], kept["score"])):
            if kept["was_finished"][origin]:
                continue  # a finished hypothesis carried over
            on_best = best[step - 1] == rank
            colour = HIGHLIGHT if on_best else PLAIN
            ax.plot([step - 1, step], [origin, rank], color=EDGE if on_best else "0.7", zorder=1)
            ax.text(step, rank, f"{label(token)}\n{score:.2f}", ha="center", va="center", fontsize=7,
                    bbox={"facecolor": colour, "edgecolor": EDGE, "boxstyle": "round,pad=0.25"}, zorder=2)  # fmt: skip
    ax.set(xlim=(-0.6, len(steps) + 0.6), ylim=(len(steps[0]["token"]) - 0.4, -0.6), xlabel=said["step"])
    ax.set_ylabel(said["beam rank"])
    ax.set_yticks(range(len(steps[0]["token"])))
    ax.set_title(said["beam search"].format(beams=len(steps[0]["token"])), fontsize=9)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.figure.tight_layout()
    return ax.figure
