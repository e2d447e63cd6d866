"""The paper's Figures 1 and 2, drawn from the package, with the shapes of a real forward pass.

    from transformer_course.book_programs.diagrams import draw_figure_1, draw_figure_2
    draw_figure_1(highlight={"attention"})      # the encoder-decoder, its attentions in colour

Every box of Figure 1 is labelled with the shape of the tensor that the package's own
:class:`~transformer_course.Transformer` produces there, recorded by forward hooks on a pass at the
paper's base size (``d_model`` 512, 8 heads, 6 + 6 layers, ``d_ff`` 2048) over a small batch, so
the figure cannot drift from the code. Figure 2's shapes come the same way from
:class:`~transformer_course.MultiHeadAttention`. Each chapter of the book draws the figure with its
own part highlighted; the parts are the keys of :data:`PARTS`. Both figures are drawn in English or
in Chinese (``language="zh_CN"``, the words of :data:`WORDS`, the glossary's terms), for the book's
two editions (:mod:`.edition_figures`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import matplotlib.pyplot as plt
import torch
from matplotlib.axes import Axes
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from ..masks import padding_mask
from ..model import Transformer
from ..multi_head_attention import MultiHeadAttention
from .edition_figures import words

# What a chapter can highlight, and the boxes of Figure 1 each part colours.
PARTS = {
    "embeddings": ("source embedding", "target embedding"),
    "positions": ("source positions", "target positions"),
    "attention": ("encoder self-attention", "decoder self-attention", "cross-attention"),
    "masks": ("decoder self-attention", "cross-attention", "encoder self-attention"),
    "add-norm": (
        "encoder add & norm 1",
        "encoder add & norm 2",
        "decoder add & norm 1",
        "decoder add & norm 2",
        "decoder add & norm 3",
    ),
    "feed-forward": ("encoder feed-forward", "decoder feed-forward"),
    "output": ("output projection", "softmax", "target tokens"),
    # Decoding closes a loop the figure leaves out: the token chosen from the softmax is the next input.
    "decoding": ("softmax", "target tokens"),
}
EXAMPLE = {"batch": 2, "source_length": 7, "target_length": 6, "vocabulary": 1000}
HIGHLIGHT, PLAIN, EDGE = "#f6c453", "#eef0f3", "#4a4f57"

# The figures' words, by language: Figure 1's boxes by their key, then the other labels. Shapes and
# sizes are filled in from the package ({heads}, {d_k}...).
WORDS = {
    "en": {
        "source tokens": "inputs: source token ids",
        "source embedding": "input embedding × √d_model",
        "source positions": "+ positional encoding, dropout",
        "encoder self-attention": "multi-head self-attention",
        "add & norm": "add & norm",
        "feed-forward": "feed-forward",
        "target tokens": "outputs (shifted right): target ids",
        "target embedding": "output embedding × √d_model",
        "target positions": "+ positional encoding, dropout",
        "decoder self-attention": "masked multi-head self-attention",
        "cross-attention": "multi-head attention over the encoder",
        "output projection": "linear (tied to the embedding)",
        "softmax": "softmax: output probabilities",
        "figure 1": "Figure 1 with the shapes of one forward pass: batch {batch}, {source_length} source and "
        "{target_length} target tokens, vocabulary {vocabulary}",
        "memory": "memory",
        "decoding": "decoding:\nthe chosen\ntoken is the\nnext input",
        "Q, K": "Q, K (batch, heads, L, d_k)",
        "MatMul": "MatMul: Q Kᵀ",
        "scale": "scale: ÷ √d_k = ÷ √{d_k}",
        "mask": "mask (optional): −∞ where blocked",
        "softmax over the keys": "softmax over the keys",
        "MatMul with V": "MatMul with V (batch, heads, L, d_v)",
        "scaled dot-product attention": "scaled dot-product attention",
        "linear and split": "linear W_i^Q, W_i^K, W_i^V, split into {heads} heads",
        "attention of every head": "scaled dot-product attention, {heads} heads at once",
        "concat": "concat the heads",
        "linear W^O": "linear W^O",
        "multi-head attention": "multi-head attention (d_model {d_model}, h = {heads})",
    },
    "zh_CN": {
        "source tokens": "输入：源语言词元 id",
        "source embedding": "输入嵌入 × √d_model",
        "source positions": "+ 位置编码，随机失活",
        "encoder self-attention": "多头自注意力",
        "add & norm": "残差相加 & 层归一化",
        "feed-forward": "前馈网络",
        "target tokens": "输出（右移一位）：目标词元 id",
        "target embedding": "输出嵌入 × √d_model",
        "target positions": "+ 位置编码，随机失活",
        "decoder self-attention": "带掩码的多头自注意力",
        "cross-attention": "对编码器输出的多头注意力",
        "output projection": "线性层（与嵌入共享权重）",
        "softmax": "softmax：输出概率",
        "figure 1": "图 1，标出一次前向传播的形状：批大小 {batch}，源序列 {source_length} 个词元，"
        "目标序列 {target_length} 个词元，词表 {vocabulary}",
        "memory": "编码器输出",
        "decoding": "解码：\n选出的词元\n就是下一步\n的输入",
        "Q, K": "Q、K (batch, heads, L, d_k)",
        "MatMul": "矩阵乘法：Q Kᵀ",
        "scale": "缩放：÷ √d_k = ÷ √{d_k}",
        "mask": "掩码（可选）：被屏蔽处为 −∞",
        "softmax over the keys": "对各个键做 softmax",
        "MatMul with V": "与 V 相乘 (batch, heads, L, d_v)",
        "scaled dot-product attention": "缩放点积注意力",
        "linear and split": "线性层 W_i^Q、W_i^K、W_i^V，拆成 {heads} 个头",
        "attention of every head": "缩放点积注意力，{heads} 个头同时计算",
        "concat": "拼接各个头",
        "linear W^O": "线性层 W^O",
        "multi-head attention": "多头注意力（d_model {d_model}，h = {heads}）",
    },
}


@dataclass(frozen=True)
class _Box:
    key: str
    label: str
    x: float
    y: float
    width: float = 0.34


@functools.cache
def transformer_shapes() -> dict[str, tuple[int, ...]]:
    """The shape of every tensor Figure 1 labels, from one forward pass of the base model.

    The weights are left uninitialised (``to_empty``): only the shapes are kept, so the pass is quick.
    """
    with torch.device("meta"):
        model = Transformer(EXAMPLE["vocabulary"], EXAMPLE["vocabulary"], shared_vocabulary=True)
    model = model.to_empty(device="cpu").eval()
    shapes: dict[str, tuple[int, ...]] = {}

    def record(name):
        def hook(module, inputs, output):
            shapes.setdefault(name, tuple(output.shape))

        return hook

    layer, decoder_layer = model.encoder.layers[0], model.decoder.layers[0]
    hooks = {
        "source embedding": model.source_embedding, "source positions": model.source_positions,
        "encoder self-attention": layer.self_attention, "encoder add & norm 1": layer.attention_sublayer,
        "encoder feed-forward": layer.feed_forward, "encoder add & norm 2": layer.feed_forward_sublayer,
        "target embedding": model.target_embedding, "target positions": model.target_positions,
        "decoder self-attention": decoder_layer.self_attention,
        "decoder add & norm 1": decoder_layer.self_attention_sublayer,
        "cross-attention": decoder_layer.cross_attention,
        "decoder add & norm 2": decoder_layer.cross_attention_sublayer,
        "decoder feed-forward": decoder_layer.feed_forward, "decoder add & norm 3": decoder_layer.feed_forward_sublayer,
        "output projection": model.output_projection,
    }  # fmt: skip
    handles = [module.register_forward_hook(record(name)) for name, module in hooks.items()]
    source = torch.randint(4, EXAMPLE["vocabulary"], (EXAMPLE["batch"], EXAMPLE["source_length"]))
    target = torch.randint(4, EXAMPLE["vocabulary"], (EXAMPLE["batch"], EXAMPLE["target_length"]))
    with torch.no_grad():
        logits = model(source, target, padding_mask(source, 0))
    for handle in handles:
        handle.remove()
    shapes.update(
        {"source tokens": tuple(source.shape), "target tokens": tuple(target.shape), "softmax": tuple(logits.shape)}
    )
    return shapes


def _shape(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(size) for size in shape) + ")"


def _draw_box(ax: Axes, box: _Box, text: str, highlighted: bool, height: float = 0.05) -> None:
    ax.add_patch(
        FancyBboxPatch(
            (box.x - box.width / 2, box.y - height / 2),
            box.width,
            height,
            boxstyle="round,pad=0.004",
            facecolor=HIGHLIGHT if highlighted else PLAIN,
            edgecolor=EDGE,
            linewidth=0.8,
        )
    )
    ax.text(box.x, box.y, text, ha="center", va="center", fontsize=7.2)


def _arrow(ax: Axes, start: tuple[float, float], end: tuple[float, float], **style) -> None:
    style = {"color": EDGE, "linewidth": 0.8, **style}
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=7, **style))


def draw_figure_1(
    highlight: set[str] | frozenset[str] = frozenset(), ax: Axes | None = None, language: str = "en"
) -> Axes:
    """Figure 1 of the paper: the encoder (left) and the decoder (right), boxes labelled with shapes.

    Args:
        highlight: parts to colour (keys of :data:`PARTS`; unknown names raise ``ValueError``).
        ax: where to draw (a new figure if omitted).
        language: of the labels, a key of :data:`WORDS`.
    """
    unknown = set(highlight) - set(PARTS)
    if unknown:
        raise ValueError(f"unknown parts {sorted(unknown)}; the parts are {sorted(PARTS)}")
    coloured = {key for part in highlight for key in PARTS[part]}
    said = words(WORDS, language)
    shapes = transformer_shapes()
    if ax is None:
        _, ax = plt.subplots(figsize=(8.2, 7.4))
    encoder_x, decoder_x = 0.27, 0.73
    columns = (_column_boxes(ENCODER_COLUMN, encoder_x, said), _column_boxes(DECODER_COLUMN, decoder_x, said))
    for column in columns:
        for lower, upper in zip(column, column[1:]):
            _arrow(ax, (lower.x, lower.y + 0.025), (upper.x, upper.y - 0.025))
        for box in column:
            _draw_box(ax, box, f"{box.label}\n{_shape(shapes[box.key])}", box.key in coloured)
        _draw_residual_connections(ax, column)
    _draw_stacks(ax, encoder_x, decoder_x, said["memory"])
    if "decoding" in highlight:
        _draw_feedback(ax, decoder_x, said["decoding"])
    ax.set_title(said["figure 1"].format(**EXAMPLE), fontsize=8.5)
    ax.set(xlim=(0, 1.06 if "decoding" in highlight else 1), ylim=(0, 1))
    ax.axis("off")
    return ax


# Figure 1's two columns, bottom to top: each box's key, the entry of WORDS that labels it, and its height.
ENCODER_COLUMN = [
    ("source tokens", "source tokens", 0.04),
    ("source embedding", "source embedding", 0.13),
    ("source positions", "source positions", 0.22),
    ("encoder self-attention", "encoder self-attention", 0.34),
    ("encoder add & norm 1", "add & norm", 0.42),
    ("encoder feed-forward", "feed-forward", 0.50),
    ("encoder add & norm 2", "add & norm", 0.58),
]
DECODER_COLUMN = [
    ("target tokens", "target tokens", 0.04),
    ("target embedding", "target embedding", 0.13),
    ("target positions", "target positions", 0.22),
    ("decoder self-attention", "decoder self-attention", 0.34),
    ("decoder add & norm 1", "add & norm", 0.42),
    ("cross-attention", "cross-attention", 0.50),
    ("decoder add & norm 2", "add & norm", 0.58),
    ("decoder feed-forward", "feed-forward", 0.66),
    ("decoder add & norm 3", "add & norm", 0.74),
    ("output projection", "output projection", 0.86),
    ("softmax", "softmax", 0.95),
]


def _column_boxes(column: list[tuple[str, str, float]], x: float, said: dict[str, str]) -> list[_Box]:
    return [_Box(key, said[word], x, y) for key, word, y in column]


def _draw_residual_connections(ax: Axes, column: list[_Box]) -> None:
    """Each add & norm adds its sublayer's input back to the sublayer's output: a dashed bypass."""
    add_norms = ("norm 1", "norm 2", "norm 3")
    for sublayer, add_norm in zip(column, column[1:]):
        if add_norm.key.endswith(add_norms) and not sublayer.key.endswith(add_norms):
            start, end = (sublayer.x - 0.17, sublayer.y - 0.035), (add_norm.x - 0.17, add_norm.y)
            _arrow(ax, start, end, connectionstyle="bar,fraction=-0.35", linestyle=(0, (2, 1.5)))


def _draw_stacks(ax: Axes, encoder_x: float, decoder_x: float, memory: str) -> None:
    """The stacks of N identical layers, and the memory feeding every decoder layer."""
    for x, height in ((encoder_x, 0.325), (decoder_x, 0.485)):
        frame = FancyBboxPatch(
            (x - 0.21, 0.295), 0.42, height, boxstyle="round,pad=0.01", fill=False, edgecolor=EDGE, linestyle="--"
        )
        frame.set_linewidth(0.8)
        ax.add_patch(frame)
    ax.text(encoder_x - 0.235, 0.45, "N = 6 ×", ha="right", va="center", fontsize=8)
    ax.text(decoder_x + 0.235, 0.53, "× N = 6", ha="left", va="center", fontsize=8)
    _arrow(ax, (encoder_x + 0.17, 0.58), (decoder_x - 0.17, 0.50), connectionstyle="arc3,rad=-0.25")
    ax.text(0.5, 0.60, memory, ha="center", fontsize=7, style="italic")


def _draw_feedback(ax: Axes, x: float, note: str) -> None:
    """At inference, the token chosen from the output probabilities is fed back as the next input."""
    # Right of the stack's "× N = 6": the bar's offset is a fraction of the arrow's length.
    _arrow(ax, (x + 0.17, 0.95), (x + 0.17, 0.04), connectionstyle="bar,fraction=-0.15", color=HIGHLIGHT, linewidth=2)
    ax.text(x + 0.18, 0.17, note, ha="left", va="center", fontsize=7)


@functools.cache
def attention_shapes(
    d_model: int = 512, num_heads: int = 8, batch: int = 2, length: int = 7
) -> dict[str, tuple[int, ...]]:
    """The shapes inside one :class:`MultiHeadAttention` call (Figure 2), recorded while it runs."""
    attention = MultiHeadAttention(d_model, num_heads).eval()
    x = torch.randn(batch, length, d_model)
    shapes = {"input": tuple(x.shape)}
    with torch.no_grad():
        heads = attention.split_heads(attention.w_q(x))
        shapes["heads"] = tuple(heads.shape)
        output = attention(x, x, x)
    shapes["weights"] = tuple(attention.attention_weights.shape)
    shapes["concatenated"] = tuple(attention.merge_heads(heads).shape)
    shapes["output"] = tuple(output.shape)
    return shapes


def draw_figure_2(
    highlight: set[str] | frozenset[str] = frozenset(), axes: tuple[Axes, Axes] | None = None, language: str = "en"
) -> tuple[Axes, Axes]:
    """Figure 2 of the paper: scaled dot-product attention (left) and multi-head attention (right).

    Args:
        highlight: ``{"scaled dot-product"}``, ``{"multi-head"}``, ``{"masks"}`` or several.
        axes: two axes to draw on (a new figure if omitted).
        language: of the labels, a key of :data:`WORDS`.
    """
    said = words(WORDS, language)
    shapes = attention_shapes()
    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(9, 4.4))
    left, right = axes
    batch, heads, length, d_k = shapes["heads"]
    single = "scaled dot-product" in highlight
    steps = [
        (said["Q, K"], _shape(shapes["heads"]), False),
        (said["MatMul"], _shape(shapes["weights"]), single),
        (said["scale"].format(d_k=d_k), _shape(shapes["weights"]), single),
        (said["mask"], _shape(shapes["weights"]), "masks" in highlight),
        (said["softmax over the keys"], _shape(shapes["weights"]), single),
        (said["MatMul with V"], _shape(shapes["heads"]), single),
    ]
    for index, (label, shape, coloured) in enumerate(steps):
        box = _Box(label, label, 0.5, 0.08 + index * 0.165, width=0.8)
        _draw_box(left, box, f"{label}\n{shape}", coloured, height=0.1)
        if index:
            _arrow(left, (0.5, box.y - 0.165 + 0.05), (0.5, box.y - 0.05))
    left.set_title(said["scaled dot-product attention"], fontsize=9)
    multi = "multi-head" in highlight
    blocks = [
        ("V, K, Q", _shape(shapes["input"]), False),
        (said["linear and split"].format(heads=heads), _shape(shapes["heads"]), multi),
        (said["attention of every head"].format(heads=heads), _shape(shapes["heads"]), single or multi),
        (said["concat"], _shape(shapes["concatenated"]), multi),
        (said["linear W^O"], _shape(shapes["output"]), multi),
    ]
    for index, (label, shape, coloured) in enumerate(blocks):
        box = _Box(label, label, 0.5, 0.1 + index * 0.2, width=0.86)
        _draw_box(right, box, f"{label}\n{shape}", coloured, height=0.11)
        if index:
            _arrow(right, (0.5, box.y - 0.2 + 0.055), (0.5, box.y - 0.055))
    right.set_title(said["multi-head attention"].format(d_model=shapes["input"][-1], heads=heads), fontsize=9)
    for ax in axes:
        ax.set(xlim=(0, 1), ylim=(0, 1))
        ax.axis("off")
    return left, right
