"""The assignments grade what they teach: a wrong implementation of a part fails that part's visible test and
loses that part's points only, and correct implementations written another way score full marks.

For each assignment, two submissions are graded together in one autograde run (each costs several seconds):

- ``variants``: the solution with answers rewritten another way (einsum instead of matmul, a logsumexp
  softmax, a loop over heads...); it must score the autogradable maximum.
- ``defects``: the solution with the defects that the course's issue found the old tests passing, one per
  part; it must lose exactly the points of those parts. Since later parts are graded with the reference of
  earlier parts in place of the learner's, a defect in an early part costs nothing downstream, and the
  score says so.

That the visible test of each defective part fails is checked in this process, by running the released
exercise with the defective answers filled in (no sandbox needed: these are the course's own notebooks).
The solution and the untouched exercise are graded by stories/test_each_assignment_graded.py.
"""

from __future__ import annotations

import contextlib
import io

import pytest
import torch
from grading_support import CLASS_LIMITS, exercise_notebook, full_marks, grade, solution_notebook, write_submissions
from notebook_runs import failing_visible_tests, visible_test_failures, with_answers

pytestmark = [pytest.mark.needs_nbgrader, pytest.mark.needs_bwrap]  # grades in the sandbox


def _nbgrader(cell: dict) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def points_of(notebook: dict, grade_ids: set[str]) -> float:
    return sum(
        _nbgrader(cell).get("points", 0) for cell in notebook["cells"] if _nbgrader(cell).get("grade_id") in grade_ids
    )


def solution_answers(assignment: str) -> dict[str, str]:
    return {
        _nbgrader(cell)["grade_id"]: "".join(cell["source"])
        for cell in solution_notebook(assignment)["cells"]
        if _nbgrader(cell).get("solution")
    }


# ----------------------------------------------------------------------------- assignment 1

ATTENTION_VARIANTS = {
    "attention-scores": """
def attention_scores(query, key):
    return torch.einsum("...qd,...kd->...qk", query, key)
""",
    "softmax": """
def softmax(scores):
    return (scores - scores.logsumexp(dim=-1, keepdim=True)).exp()
""",
    "apply-mask": """
def apply_mask(scores, mask):
    if not isinstance(mask, torch.Tensor) or mask.dtype is not torch.bool:
        raise TypeError("the mask has to be a Bool tensor")
    return torch.where(mask, scores, torch.tensor(float("-inf")))
""",
    "attention": """
def attention(query, key, value, mask=None, scale=True):
    d_k = query.shape[-1]
    scores = torch.einsum("...qd,...kd->...qk", query, key) / (d_k ** 0.5 if scale else 1.0)
    if mask is not None:
        scores = scores.masked_fill(mask.logical_not(), -torch.inf)
    weights = torch.nan_to_num(softmax(scores), nan=0.0)
    return torch.einsum("...qk,...kv->...qv", weights, value), weights
""",
    "cosine": """
def cosine_scores(query, key):
    dots = torch.einsum("...qd,...kd->...qk", query, key)
    return dots * query.pow(2).sum(-1).rsqrt()[..., :, None] * key.pow(2).sum(-1).rsqrt()[..., None, :]
""",
    "softmax-jacobian": """
def softmax_jacobian(weights):  # p_i delta_ij - p_i p_j, by einsum against an identity
    eye = torch.eye(weights.size(-1), dtype=weights.dtype)
    return torch.einsum("...i,ij->...ij", weights, eye) - torch.einsum("...i,...j->...ij", weights, weights)
""",
    "saturation-experiment": """
largest_weight, jacobian_norm = {}, {}
for kind in ("unscaled", "scaled"):  # one kind at a time, the norm as the square root of a sum of squares
    largest_weight[kind], jacobian_norm[kind] = [], []
    for d_k in saturation_widths:
        queries, keys = saturation_samples[d_k]
        scores = attention_scores(queries, keys).squeeze(1)
        if kind == "scaled":
            scores = scale_scores(scores, d_k)
        weights = softmax(scores)
        largest_weight[kind].append(float(weights.amax(dim=-1).mean()))
        jacobian_norm[kind].append(float(softmax_jacobian(weights).pow(2).sum(dim=(-2, -1)).sqrt().mean()))
""",
}

# Each defect is one the issue found passing the old tests; the attention defect shows that the parts
# after it (the worked example) keep their points.
ATTENTION_DEFECTS = {
    "softmax": """
def softmax(scores):
    exponentials = scores.exp()  # overflows for scores near 1000
    return exponentials / exponentials.sum(dim=-1, keepdim=True)
""",
    "apply-mask": """
def apply_mask(scores, mask):  # accepts a float mask of 0s and 1s without a word
    return scores.masked_fill(mask == 0, float("-inf"))
""",
    "attention": """
def attention(query, key, value, mask=None, scale=True):  # never scales
    scores = attention_scores(query, key)
    if mask is not None:
        scores = apply_mask(scores, mask)
    weights = softmax(scores)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ value, weights
""",
    # The saturation experiment after it measures with this Jacobian: it keeps its points.
    "softmax-jacobian": """
def softmax_jacobian(weights):  # forgets the diagonal p_i delta_ij
    return -weights.unsqueeze(-1) * weights.unsqueeze(-2)
""",
}
ATTENTION_DEFECT_TESTS = {"test-softmax", "test-apply-mask", "test-attention", "test-softmax-jacobian"}

# ----------------------------------------------------------------------------- assignment 2

MULTI_HEAD_VARIANTS = {
    "split-heads": """
def split_heads(x, num_heads):
    batch, length, d_model = x.shape
    if d_model % num_heads:
        raise ValueError(f"cannot split d_model={d_model} into num_heads={num_heads}")
    return torch.stack(x.chunk(num_heads, dim=-1), dim=1)
""",
    "merge-heads": """
def merge_heads(x):
    return torch.cat(x.unbind(dim=1), dim=-1)
""",
    "multi-head-attention": """
class MultiHeadAttention(nn.Module):
    # A loop over heads, each with its own slice of the projections, and einsum instead of matmul.
    def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
        super().__init__()
        if d_model % num_heads:
            raise ValueError(f"{d_model} % {num_heads} != 0")
        self.num_heads, self.d_k, self.dropout = num_heads, d_model // num_heads, dropout
        self.w_q, self.w_k, self.w_v, self.w_o = (nn.Linear(d_model, d_model, bias=bias) for _ in range(4))
        self.attention_weights = None

    def forward(self, query, key, value, mask=None):
        q, k, v = self.w_q(query), self.w_k(key), self.w_v(value)
        outputs, weights = [], []
        for head in range(self.num_heads):
            part = slice(head * self.d_k, (head + 1) * self.d_k)
            scores = torch.einsum("bqd,bkd->bqk", q[..., part], k[..., part]) / self.d_k**0.5
            if mask is not None:
                head_mask = mask if mask.dim() < 4 else mask[:, min(head, mask.shape[1] - 1)]
                scores = scores.masked_fill(~head_mask, float("-inf"))
            head_weights = torch.nan_to_num(scores.softmax(dim=-1), nan=0.0)
            if self.training and self.dropout:
                head_weights = nn.functional.dropout(head_weights, self.dropout)
            outputs.append(torch.einsum("bqk,bkd->bqd", head_weights, v[..., part]))
            weights.append(head_weights)
        self.attention_weights = torch.stack(weights, dim=1).detach()
        return self.w_o(torch.cat(outputs, dim=-1))
""",
    "two-needs": """
def train_two_needs(num_heads, seed):  # mse_loss, a while loop, the held-out batch drawn under no_grad
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    model = MultiHeadAttention(8, num_heads)
    adam = torch.optim.Adam(model.parameters(), lr=1e-2)
    step = 0
    while step < 300:
        inputs, wanted = two_needs_batch(128, generator)
        adam.zero_grad()
        nn.functional.mse_loss(model(inputs, inputs, inputs)[:, 0, :6], wanted).backward()
        adam.step()
        step += 1
    with torch.no_grad():
        inputs, wanted = two_needs_batch(1000, generator)
        return float(nn.functional.mse_loss(model(inputs, inputs, inputs)[:, 0, :6], wanted))


loss_one_head, loss_two_heads = (train_two_needs(heads, training_seed) for heads in (1, 2))
""",
}

# The split_heads defect shows that MultiHeadAttention, graded with the reference split_heads, keeps its points.
MULTI_HEAD_DEFECTS = {
    "split-heads": """
def split_heads(x, num_heads):  # head i gets every num_heads-th feature, not a block of d_k features
    batch, length, d_model = x.shape
    return x.view(batch, length, d_model // num_heads, num_heads).permute(0, 3, 1, 2)
""",
    "output-projection-block": """
def output_projection_block(linear, head, num_heads):  # rows of the weight: the right shape, the wrong block
    d_v = linear.in_features // num_heads
    return linear.weight[head * d_v:(head + 1) * d_v]
""",
}
MULTI_HEAD_DEFECT_TESTS = {"test-split-heads", "test-output-projection-block", "test-two-needs"}


def _solution_with(assignment: str, grade_id: str, old: str, new: str) -> str:
    """The solution's answer cell ``grade_id`` with ``old`` replaced by ``new``."""
    source = solution_answers(assignment)[grade_id]
    assert old in source, old
    return source.replace(old, new)


# Trained with one head whatever num_heads says: the two heads' errors fail, and only their part.
MULTI_HEAD_DEFECTS["two-needs"] = _solution_with(
    "02-multi-head-attention",
    "two-needs",
    "attention = MultiHeadAttention(8, num_heads)",
    "attention = MultiHeadAttention(8, 1)  # one head, whatever num_heads says",
)


# ----------------------------------------------------------------------------- assignment 3

POSITIONAL = "03-positional-encoding"
POSITIONAL_VARIANTS = {
    "sinusoidal-positional-encoding": """
def sinusoidal_positional_encoding(max_positions, d_model):  # exp-log frequencies, interleaved, float64 angles
    if min(max_positions, d_model) < 1:
        raise ValueError(f"sizes must be positive, got {max_positions} and {d_model}")
    frequencies = torch.exp(torch.arange(0, d_model, 2).double() * (-math.log(10000.0) / d_model))
    angles = torch.outer(torch.arange(max_positions).double(), frequencies)
    return torch.stack([angles.sin(), angles.cos()], dim=-1).flatten(1)[:, :d_model].float()
""",
    "positional-encoding-module": """
class SinusoidalPositionalEncoding(nn.Module):
    def __init__(self, d_model, max_positions=5000, dropout=0.0):
        super().__init__()
        self.register_buffer("encoding", sinusoidal_positional_encoding(max_positions, d_model), persistent=False)
        self.p = dropout

    def forward(self, x, start=0):
        if start + x.shape[1] > len(self.encoding):
            raise ValueError("the sequence runs past the table")
        return nn.functional.dropout(x + self.encoding.narrow(0, start, x.shape[1]).to(x.dtype), self.p, self.training)
""",
    "equivariance-gap": """
def equivariance_gap(encoder, x, permutation, positions=None):
    shift = 0 if positions is None else positions
    with torch.inference_mode():
        moved_first = encoder(x.index_select(1, permutation) + shift)
        moved_after = encoder(x + shift).index_select(1, permutation)
    return float(torch.max(torch.abs(moved_first - moved_after)))
""",
    "pooled-score": """
def pooled_score(encoder, sequence, direction, positions=None):
    inputs = sequence if positions is None else sequence + positions
    encoded = encoder(inputs.unsqueeze(0)).squeeze(0)
    return torch.dot(encoded.sum(dim=0) / len(sequence), direction).item()
""",
    "relative-position-map": """
def relative_position_map(offset, d_model):  # a loop over the pairs, angles in Python floats
    if d_model % 2 == 1:
        raise ValueError(f"odd d_model {d_model}")
    matrix = torch.zeros(d_model, d_model)
    for i in range(d_model // 2):
        angle = offset / 10000 ** (2 * i / d_model)
        c, s = math.cos(angle), math.sin(angle)
        matrix[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = torch.tensor([[c, -s], [s, c]])
    return matrix
""",
    "longest-wavelength": """
def longest_wavelength(d_model):  # 2π over the slowest frequency
    return 2 * math.pi / 10000 ** (-(d_model - 2) / d_model)
""",
    "root-mean-square": """
def root_mean_square(x):
    return (torch.linalg.vector_norm(x.double()) / math.sqrt(x.numel())).item()
""",
    "count-trainable-parameters": """
def count_trainable_parameters(module):
    return sum(parameter.numel() * parameter.requires_grad for parameter in module.parameters())
""",
    "shift-distance": """
def shift_distance(offset, d_model):  # 2 - 2 cos x = 4 sin^2(x / 2)
    return 2 * math.sqrt(sum(math.sin(offset * 10000 ** (-2 * i / d_model) / 2) ** 2 for i in range(d_model // 2)))
""",
    "order-training": """
def train_order_classifier(add_positions, seed):  # one nn.Sequential, the accuracy counted with torch.sum
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    encoder = tc.Encoder(tc.EncoderLayer(16, num_heads=2, d_ff=32, dropout=0.0), num_layers=2)
    classifier = nn.Linear(16, 2)
    steps = [SinusoidalPositionalEncoding(16, max_positions=2)] if add_positions else []
    model = nn.Sequential(*steps, encoder)
    optimiser = torch.optim.Adam(list(encoder.parameters()) + list(classifier.parameters()), lr=3e-3)
    for _ in range(300):
        sequences, labels = order_batch(128, generator)
        loss = nn.functional.cross_entropy(classifier(model(sequences).mean(dim=1)), labels)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    with torch.no_grad():
        right = torch.sum(classifier(model(test_sequences).mean(dim=1)).argmax(dim=-1) == test_labels)
    return float(loss), int(right) / len(test_labels)


loss_without_positions, accuracy_without_positions = train_order_classifier(False, training_seed)
loss_with_positions, accuracy_with_positions = train_order_classifier(True, training_seed)
""",
}

# The table defect (sine and cosine swapped) shows that the module, the gaps, the differences, the offset errors, the
# sizes and the spreads, graded with the reference table or against the learner's own numbers, keep their points; the
# equivariance_gap, pooled_score, relative_position_map and root_mean_square defects that the measurements made with
# them keep theirs.
POSITIONAL_DEFECTS = {
    "sinusoidal-positional-encoding": _solution_with(
        POSITIONAL,
        "sinusoidal-positional-encoding",
        "table[:, 0::2] = torch.sin(angle)\n    table[:, 1::2] = torch.cos(angle[:, : d_model // 2])",
        "table[:, 0::2] = torch.cos(angle)  # sine and cosine swapped\n"
        "    table[:, 1::2] = torch.sin(angle[:, : d_model // 2])",
    ),
    "positional-encoding-module": _solution_with(
        POSITIONAL,
        "positional-encoding-module",
        "return self.dropout(x + self.encoding[start:end].to(x.dtype))",
        "return self.dropout(x + self.encoding[: x.size(1)].to(x.dtype))  # start ignored",
    ),
    "equivariance-gap": _solution_with(
        POSITIONAL,
        "equivariance-gap",
        "encoder(x[:, permutation] + positions)",
        "encoder((x + positions)[:, permutation])  # the positions move with the tokens",
    ),
    "pooled-score": _solution_with(POSITIONAL, "pooled-score", "encoded.mean(dim=1)", "encoded.sum(dim=1)"),
    "relative-position-map": _solution_with(
        POSITIONAL, "relative-position-map", "# k * w_i", "# w_i: the offset ignored"
    ).replace("angle = offset * 10000.0", "angle = 10000.0"),
    "longest-wavelength": _solution_with(
        POSITIONAL,
        "longest-wavelength",
        "10000 ** ((d_model - 2) / d_model)",
        "10000 ** ((1024 - 2) / 1024)  # the printed width's answer, whatever the width",
    ),
    "root-mean-square": _solution_with(
        POSITIONAL, "root-mean-square", ".pow(2).mean().sqrt().item()", ".pow(2).mean().item()  # no square root"
    ),
    "count-trainable-parameters": _solution_with(
        POSITIONAL, "count-trainable-parameters", " if parameter.requires_grad)", ")  # frozen ones too"
    ),
    "shift-distance": _solution_with(
        POSITIONAL, "shift-distance", "return math.sqrt(", "return (  # the square\n        "
    ),
    "order-training": _solution_with(
        POSITIONAL, "order-training", "sequences = positions(sequences)", "pass  # the positions are built, never added"
    ),
}
POSITIONAL_DEFECT_TESTS = {f"test-{grade_id}" for grade_id in POSITIONAL_DEFECTS}

# More defects of the same answer cells, each checked against the visible tests alone:
# (answer cell, text replaced, replacement, the test cell that must fail).
POSITIONAL_VISIBLE_DEFECTS = {
    "table with the frequency base 1000": (
        "sinusoidal-positional-encoding",
        "10000.0 ** (-two_i / d_model)",
        "1000.0 ** (-two_i / d_model)",
        "test-sinusoidal-positional-encoding",
    ),
    "table that refuses an odd d_model (the old rule)": (
        "sinusoidal-positional-encoding",
        "if max_positions <= 0 or d_model <= 0:",
        "if max_positions <= 0 or d_model <= 0 or d_model % 2:",
        "test-sinusoidal-positional-encoding",
    ),
    "table whose odd width divides by d_model + 1": (
        "sinusoidal-positional-encoding",
        "10000.0 ** (-two_i / d_model)",
        "10000.0 ** (-two_i / (d_model + d_model % 2))",
        "test-sinusoidal-positional-encoding",
    ),
    "module that drops out the positions only": (
        "positional-encoding-module",
        "return self.dropout(x + self.encoding[start:end].to(x.dtype))",
        "return x + self.dropout(self.encoding[start:end].to(x.dtype))",
        "test-positional-encoding-module",
    ),
    "module whose table is a parameter": (
        "positional-encoding-module",
        'self.register_buffer("encoding", sinusoidal_positional_encoding(max_positions, d_model), persistent=False)',
        "self.encoding = nn.Parameter(sinusoidal_positional_encoding(max_positions, d_model))",
        "test-positional-encoding-module",
    ),
    "pooled score that forgets the positions": (
        "pooled-score",
        "sequence = sequence + positions",
        "pass",
        "test-pooled-score",
    ),
    "relative map that turns the other way": (
        "relative-position-map",
        "rotation[1::2, 0::2] = torch.diag(sin)",
        "rotation[1::2, 0::2] = torch.diag(-sin)",
        "test-relative-position-map",
    ),
    "relative map with the frequency base 1000": (
        "relative-position-map",
        "angle = offset * 10000.0",
        "angle = offset * 1000.0",
        "test-relative-position-map",
    ),
}


# ----------------------------------------------------------------------------- assignment 4

MASKS_VARIANTS = {
    "causal-mask": """
def causal_mask(size):
    if size < 0:
        raise ValueError(f"size {size} < 0")
    positions = torch.arange(size)
    return positions[None, :] <= positions[:, None]
""",
    "padding-mask": """
def padding_mask(tokens, pad_id):
    if tokens.dtype in (torch.float16, torch.float32, torch.float64, torch.bool):
        raise TypeError(f"integer ids expected, got {getattr(tokens, 'dtype', type(tokens))}")
    if tokens.ndim != 2:
        raise ValueError(f"(batch, L) expected, got {tuple(tokens.shape)}")
    return tokens.ne(pad_id).unsqueeze(1).unsqueeze(1)
""",
    "additive-mask": """
def additive_mask(mask, dtype=torch.float32):
    if mask.dtype is not torch.bool:
        raise TypeError("bool mask expected")
    return torch.where(mask, torch.tensor(0.0, dtype=dtype), torch.tensor(float("-inf"), dtype=dtype))
""",
    "minimum-c": """
def minimum_c(scores, allowed, epsilon):  # the same equation, in log space
    log_a = torch.logsumexp(scores[allowed].double(), dim=0).item()
    log_b = torch.logsumexp(scores[~allowed].double(), dim=0).item()
    return log_b - log_a + math.log1p(-epsilon) - math.log(epsilon)
""",
    "masked-softmax": """
def masked_softmax(scores, mask):
    filled = scores.masked_fill(~mask, -1e30 if scores.dtype != torch.float16 else -1e4)
    exps = (filled - filled.amax(dim=-1, keepdim=True)).exp() * mask
    total = exps.sum(dim=-1, keepdim=True)
    return exps / torch.where(total > 0, total, torch.ones_like(total))
""",
    "change-in-the-past": """
def change_in_the_past(layers, x, mask, start):  # torch.where over the later positions, the change as a max-norm
    later = (torch.arange(x.size(1)) >= start)[None, :, None]
    other = torch.where(later, torch.randn(x.shape), x)
    with torch.no_grad():
        difference = layers(other, mask) - layers(x, mask)
    return torch.linalg.vector_norm(difference[:, :start], ord=float("inf")).item()
""",
    "promise": """
changes_with_your_mask, changes_without_mask, changes_with_peeking_mask = (
    [change_in_the_past(stack, stack_inputs, mask, start) for start in range(1, 6)]
    for mask in (causal_mask(6), None, peeking_mask)
)
""",
}

# The padding defect (a hard-coded 0) shows that padding_and_causal_mask, graded with the reference masks, keeps its
# points; the minimum_c defect (the C of epsilon alone) that the example's numbers, consistent with it, keep theirs.
MASKS_DEFECTS = {
    "padding-mask": """
def padding_mask(tokens, pad_id):  # pad_id ignored: 0 is always padding
    if tokens.is_floating_point() or tokens.dtype == torch.bool:
        raise TypeError(f"integer ids expected, got {tokens.dtype}")
    if tokens.dim() != 2:
        raise ValueError(f"(batch, L) expected, got {tuple(tokens.shape)}")
    return (tokens != 0)[:, None, None, :]
""",
    "minimum-c": """
def minimum_c(scores, allowed, epsilon):  # an approximation that forgets the scores
    return math.log(1 / epsilon)
""",
    "masked-softmax": """
def masked_softmax(scores, mask):  # right forward, but 0/0 in the fully masked row sends nan backward
    exps = (scores - scores.amax(dim=-1, keepdim=True)).exp() * mask
    return torch.nan_to_num(exps / exps.sum(dim=-1, keepdim=True))
""",
    "attention-shapes": """
def attention_shapes(batch, heads, target_length, source_length, d_model, steps):  # cross cache grows per step
    d_k = d_model // heads
    return {
        "encoder_self_weights": (batch, heads, source_length, source_length),
        "decoder_self_weights": (batch, heads, target_length, target_length),
        "cross_weights": (batch, heads, target_length, source_length),
        "cross_mask": (batch, 1, 1, source_length),
        "self_cache": (batch, heads, steps, d_k),
        "cross_cache": (batch, heads, steps, d_k),
    }


example_shapes = attention_shapes(32, 8, 20, 25, 512, 7)
""",
    # The three masks' changes, measured with this probe, keep their points: they are graded with the reference probe.
    "change-in-the-past": """
def change_in_the_past(layers, x, mask, start):  # off by one: changes the positions after start, not from it
    changed = x.clone()
    changed[:, start + 1 :] = torch.randn_like(x[:, start + 1 :])
    with torch.no_grad():
        before, after = layers(x, mask), layers(changed, mask)
    return (after[:, :start] - before[:, :start]).abs().max().item()
""",
}
MASKS_DEFECT_TESTS = {
    "test-padding-mask",
    "test-minimum-c",
    "test-masked-softmax",
    "test-attention-shapes",
    "test-change-in-the-past",
}

# ----------------------------------------------------------------------------- assignment 5

RESIDUALS_VARIANTS = {
    "layer-norm": """
def layer_norm(x, weight, bias, eps=1e-5):
    centred = x - x.mean(dim=-1, keepdim=True)
    return centred * torch.rsqrt(x.var(dim=-1, unbiased=False, keepdim=True) + eps) * weight + bias
""",
    "batch-norm": """
def batch_norm(x, eps=1e-5):
    rows = x.view(-1, x.shape[-1])
    return (x - rows.mean(dim=0)) * torch.rsqrt(rows.var(dim=0, unbiased=False) + eps)
""",
    "positionwise-feed-forward": """
class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.0):
        super().__init__()
        self.w_1, self.w_2, self.p = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model), dropout

    def forward(self, x):
        hidden = nn.functional.relu(self.w_1(x))
        return self.w_2(nn.functional.dropout(hidden, self.p, self.training))
""",
    "sublayer-connection": """
class SublayerConnection(nn.Module):
    def __init__(self, d_model, dropout=0.0, norm_first=False):
        super().__init__()
        self.norm, self.dropout, self.norm_first = LayerNorm(d_model), nn.Dropout(dropout), norm_first

    def forward(self, x, sublayer):
        branch = sublayer(self.norm(x) if self.norm_first else x)
        total = torch.add(x, self.dropout(branch))
        return total if self.norm_first else self.norm(total)
""",
    "input-gradient": """
def input_gradient(weights, output_gradient, residual=True):  # autograd instead of the Jacobians by hand
    x = torch.zeros_like(output_gradient, requires_grad=True)
    h = x
    for weight in weights:
        h = h + weight @ h if residual else weight @ h
    (h * output_gradient).sum().backward()
    return x.grad
""",
}

# Pre-LN without its norm shows that EncoderLayer and the bonus ratios, graded with the reference sublayer or
# against the learner's own numbers, keep their points.
RESIDUALS_DEFECTS = {
    "sublayer-connection": _solution_with(
        "05-residuals-layernorm",
        "sublayer-connection",
        "return x + self.dropout(sublayer(self.norm(x)))  # Pre-LN",
        "return x + self.dropout(sublayer(x))  # Pre-LN without its norm",
    ),
    "positionwise-feed-forward": _solution_with(
        "05-residuals-layernorm",
        "positionwise-feed-forward",
        "return self.w_2(self.dropout(torch.relu(self.w_1(x))))",
        "return self.dropout(self.w_2(torch.relu(self.w_1(x))))  # dropout on the output",
    ),
}
RESIDUALS_DEFECT_TESTS = {"test-sublayer-connection", "test-positionwise-feed-forward"}

# ----------------------------------------------------------------------------- assignment 6

COMPLEXITY = "06-complexity"
COMPLEXITY_VARIANTS = {
    "self-attention-flops": """
def self_attention_flops(n, d):
    return 4 * d * n**2
""",
    "recurrent-flops": """
def recurrent_flops(n, d):  # position by position, product by product
    total = 0
    for _ in range(n):
        for _weight in ("W_hh", "W_xh"):
            total += 2 * d * d
    return total
""",
    "convolution-flops": """
def convolution_flops(n, d, k):  # a (d x k d) matrix times the k stacked input vectors, at every position
    return n * 2 * d * (k * d)
""",
    "sequential-operations": """
def sequential_operations(layer, n):
    steps = {"self-attention": 1, "recurrent": n, "convolution": 1, "dilated-convolution": 1}
    if layer not in steps:
        raise ValueError(f"{layer} is none of " + ", ".join(steps))
    return steps[layer]
""",
    "maximum-path-length": """
def maximum_path_length(layer, n, k=3):  # math.ceil of an exact fraction, an integer logarithm by powers
    from fractions import Fraction

    if layer == "self-attention":
        return 1
    if layer == "recurrent":
        return n - 1
    if layer == "convolution":
        return math.ceil(Fraction(n - 1, k - 1))
    if layer == "dilated-convolution":
        return next(depth for depth in range(n + 1) if k**depth >= n)
    raise ValueError(f"layer must be one of {LAYERS}, not {layer!r}")
""",
    "crossover-length": """
def crossover_length(d):  # bisection: attention is cheaper below the crossover, not above it
    low, high = 0, 1
    while self_attention_flops(high, d) < recurrent_flops(high, d):
        low, high = high, 2 * high
    while high - low > 1:
        middle = (low + high) // 2
        if self_attention_flops(middle, d) < recurrent_flops(middle, d):
            low = middle
        else:
            high = middle
    return high
""",
    "activation-bytes": """
def activation_bytes(layer, batch, n, d, heads=8, bytes_per_value=4):
    shapes = {"self-attention": (batch, heads, n, n), "recurrent": (batch, n, d), "convolution": (batch, n, d)}
    if layer not in shapes:
        raise ValueError(f"layer {layer!r} is not one of {sorted(shapes)}")
    return math.prod(shapes[layer]) * bytes_per_value
""",
    "crossover-numbers": """
base_crossover = crossover_length(384)
sentence_cost_ratio = 512 / 50  # n d^2 / (n^2 d) = d / n
long_attention_mib = 8 * 4096**2 * 4 / 2**20
long_recurrent_mib = float(4096 * 512 * 4) / 1024 / 1024
""",
    "time-attention": """
def time_attention(length, d_k=64, heads=2, repeats=5):  # no_grad, nanoseconds, a list of timings
    query, key, value = torch.randn(3, 1, heads, length, d_k).unbind(0)
    with torch.no_grad():
        tc.scaled_dot_product_attention(query, key, value)
        timings = []
        for _ in range(repeats):
            start = time.thread_time_ns()
            tc.scaled_dot_product_attention(query, key, value)
            timings.append((time.thread_time_ns() - start) / 1e9)
    return min(timings)
""",
    "fit-exponent": """
def fit_exponent(lengths, seconds):  # statistics.linear_regression on math.log
    import statistics

    return statistics.linear_regression([math.log(n) for n in lengths], [math.log(t) for t in seconds]).slope
""",
    "attention-timing": """
seconds = list(map(time_attention, lengths))
measured_exponent = float(fit_exponent(tuple(lengths), tuple(seconds)))
""",
    "block-diagonal-attention": """
def block_diagonal_attention(query, key, value, block_size):  # einsum over (blocks, b, d) views, softmax by hand
    n = query.shape[-2]
    if key.shape[-2] != n or value.shape[-2] != n or n % block_size:
        raise ValueError(f"lengths {n}, {key.shape[-2]}, {value.shape[-2]} and block_size {block_size} do not fit")
    q, k, v = (x.unflatten(-2, (n // block_size, block_size)) for x in (query, key, value))
    scores = torch.einsum("...iqd,...ikd->...iqk", q, k) / math.sqrt(query.shape[-1])
    weights = (scores - scores.amax(dim=-1, keepdim=True)).exp()
    weights = weights / weights.sum(dim=-1, keepdim=True)
    return torch.einsum("...iqk,...ikd->...iqd", weights, v).flatten(-3, -2)
""",
    "block-sparse-flops": """
def block_sparse_flops(n, d, block_size):
    return 4 * n * block_size * d
""",
    "block-sparse-numbers": """
dense_flops = 4 * sparse_n**2 * sparse_d
sparse_flops = block_sparse_flops(sparse_n, sparse_d, sparse_block)
flops_saving = sparse_n / sparse_block
with torch.device("meta"):
    q = torch.empty(1, sparse_n, sparse_d)
measured_saving = counted_flops(lambda: tc.scaled_dot_product_attention(q, q, q)) / counted_flops(
    lambda: block_diagonal_attention(q, q, q, sparse_block)
)
""",
    "self-attention-cache-bytes": """
def self_attention_cache_bytes(layers, batch, heads, d_k, generated_length, bytes_per_value):
    return math.prod((2, layers, batch, heads, d_k, generated_length, bytes_per_value))
""",
    "cross-attention-cache-bytes": """
def cross_attention_cache_bytes(layers, batch, heads, d_k, source_length, bytes_per_value):  # layer by layer
    per_layer = {"keys": batch * heads * source_length * d_k, "values": batch * heads * source_length * d_k}
    return sum(sum(per_layer.values()) * bytes_per_value for _ in range(layers))
""",
    "base-model-cache": """
base_self_cache_bytes = self_attention_cache_bytes(6, 32, 8, 64, 80, 2)
base_cross_cache_bytes = cross_attention_cache_bytes(6, 32, 8, 64, 60, 2)
bytes_per_generated_token = self_attention_cache_bytes(6, 32, 8, 64, 1, 2)
big_to_base_cache_ratio = 16 / 8  # the heads double, nothing else changes
""",
}

# One defect in every function that later parts build on or stand beside; the parts built on them (crossover_length and
# block_sparse_flops, graded with the reference counts) and every stored number (accepted when it is what the learner's
# own functions give) are left right, and keep their points.
COMPLEXITY_DEFECTS = {
    "self-attention-flops": _solution_with(
        COMPLEXITY,
        "self-attention-flops",
        "return 2 * n * n * d + 2 * n * n * d",
        "return n * n * d + n * n * d  # multiply-adds: the factor 2 forgotten",
    ),
    "recurrent-flops": _solution_with(
        COMPLEXITY,
        "recurrent-flops",
        "return n * (2 * d * d + 2 * d * d)",
        "return n * 2 * d * d  # W_xh x_t forgotten",
    ),
    "convolution-flops": _solution_with(
        COMPLEXITY,
        "convolution-flops",
        "return n * k * 2 * d * d",
        "return n * 2 * d * d  # the kernel width forgotten",
    ),
    "sequential-operations": _solution_with(
        COMPLEXITY,
        "sequential-operations",
        'return n if layer == "recurrent" else 1',
        'return n - 1 if layer == "recurrent" else 1  # hand-overs, not operations',
    ),
    "maximum-path-length": _solution_with(
        COMPLEXITY, "maximum-path-length", "return n - 1", "return n  # positions, not hand-overs"
    ),
    "activation-bytes": _solution_with(
        COMPLEXITY,
        "activation-bytes",
        "return batch * heads * n * n * bytes_per_value",
        "return batch * n * n * bytes_per_value  # the heads forgotten",
    ),
    "time-attention": _solution_with(
        COMPLEXITY, "time-attention", "for _ in range(repeats):", "for _ in range(1):  # repeats ignored"
    ),
    "fit-exponent": _solution_with(
        COMPLEXITY,
        "fit-exponent",
        "return (((x - x.mean()) * (y - y.mean())).sum() / ((x - x.mean()) ** 2).sum()).item()",
        "return ((y[-1] - y[0]) / (x[-1] - x[0])).item()  # the first and the last point only",
    ),
    "block-diagonal-attention": _solution_with(
        COMPLEXITY,
        "block-diagonal-attention",
        "output, _ = tc.scaled_dot_product_attention(split(query), split(key), split(value))",
        "output, _ = tc.scaled_dot_product_attention(query, key, value)  # across the blocks",
    ),
    "self-attention-cache-bytes": _solution_with(
        COMPLEXITY,
        "self-attention-cache-bytes",
        "return 2 * layers * batch * heads * generated_length * d_k * bytes_per_value  # keys and values",
        "return layers * batch * heads * generated_length * d_k * bytes_per_value  # the keys only",
    ),
    "cross-attention-cache-bytes": _solution_with(
        COMPLEXITY,
        "cross-attention-cache-bytes",
        "return 2 * layers * batch * heads * source_length * d_k * bytes_per_value",
        "return 2 * batch * heads * source_length * d_k * bytes_per_value  # one layer's",
    ),
}
COMPLEXITY_DEFECT_TESTS = {f"test-{grade_id}" for grade_id in COMPLEXITY_DEFECTS}

# Defects of the parts built on others and of the stored numbers, and more of the same answer cells, each checked
# against the visible tests alone: (answer cell, text replaced, replacement, the test cell that must fail).
COMPLEXITY_VISIBLE_DEFECTS = {
    "self-attention FLOPs of the scores only": (
        "self-attention-flops",
        "return 2 * n * n * d + 2 * n * n * d",
        "return 2 * n * n * d",
        "test-self-attention-flops",
    ),
    "convolutions' path without the ceiling": (
        "maximum-path-length",
        "return -(-(n - 1) // (k - 1))",
        "return (n - 1) // (k - 1)",
        "test-maximum-path-length",
    ),
    "dilated path by math.log": (
        "maximum-path-length",
        "layers, field = 0, 1\n    while field < n:",
        "return math.ceil(math.log(n, k))\n    layers, field = 0, 1\n    while field < n:",
        "test-maximum-path-length",
    ),
    "crossover one past the first length": (
        "crossover-length",
        "while self_attention_flops(n, d) < recurrent_flops(n, d):",
        "while self_attention_flops(n, d) <= recurrent_flops(n, d):",
        "test-crossover-length",
    ),
    "activation error that names no layer": (
        "activation-bytes",
        'raise ValueError(f"unknown layer {layer!r}; expected self-attention, recurrent or convolution")',
        'raise ValueError("unknown layer")',
        "test-activation-bytes",
    ),
    "cost ratio upside down": (
        "crossover-numbers",
        "sentence_cost_ratio = recurrent_flops(50, 512) / self_attention_flops(50, 512)",
        "sentence_cost_ratio = self_attention_flops(50, 512) / recurrent_flops(50, 512)",
        "test-crossover-numbers",
    ),
    "timing without the heads": (
        "time-attention",
        "(torch.randn(1, heads, length, d_k) for _ in range(3))",
        "(torch.randn(1, length, d_k) for _ in range(3))",
        "test-time-attention",
    ),
    "exponent fitted with the axes swapped": (
        "attention-timing",
        "measured_exponent = fit_exponent(lengths, seconds)",
        "measured_exponent = fit_exponent(seconds, lengths)",
        "test-attention-timing",
    ),
    "blocks of n / b positions instead of b": (
        "block-diagonal-attention",
        "return x.reshape(*x.shape[:-2], blocks, block_size, x.size(-1))",
        "return x.reshape(*x.shape[:-2], block_size, blocks, x.size(-1))",
        "test-block-diagonal-attention",
    ),
    "block attention that never checks the length": (
        "block-diagonal-attention",
        "if n % block_size != 0:",
        "if False:",
        "test-block-diagonal-attention",
    ),
    "block-sparse count of one block": (
        "block-sparse-flops",
        "return (n // block_size) * self_attention_flops(block_size, d)",
        "return self_attention_flops(block_size, d)",
        "test-block-sparse-flops",
    ),
    "saving upside down": (
        "block-sparse-numbers",
        "flops_saving = dense_flops / sparse_flops",
        "flops_saving = sparse_flops / dense_flops",
        "test-block-sparse-numbers",
    ),
    "cache in values, not bytes": (
        "self-attention-cache-bytes",
        " * d_k * bytes_per_value",
        " * d_k",
        "test-self-attention-cache-bytes",
    ),
    "growth per token of one sentence": (
        "base-model-cache",
        "bytes_per_generated_token = self_attention_cache_bytes(6, 32, 8, 64, 81, 2) - base_self_cache_bytes",
        "bytes_per_generated_token = self_attention_cache_bytes(6, 1, 8, 64, 1, 2)",
        "test-base-model-cache",
    ),
}


CASES = {
    "01-attention": (ATTENTION_VARIANTS, ATTENTION_DEFECTS, ATTENTION_DEFECT_TESTS),
    "02-multi-head-attention": (MULTI_HEAD_VARIANTS, MULTI_HEAD_DEFECTS, MULTI_HEAD_DEFECT_TESTS),
    "03-positional-encoding": (POSITIONAL_VARIANTS, POSITIONAL_DEFECTS, POSITIONAL_DEFECT_TESTS),
    "04-masks": (MASKS_VARIANTS, MASKS_DEFECTS, MASKS_DEFECT_TESTS),
    "05-residuals-layernorm": (RESIDUALS_VARIANTS, RESIDUALS_DEFECTS, RESIDUALS_DEFECT_TESTS),
    "06-complexity": (COMPLEXITY_VARIANTS, COMPLEXITY_DEFECTS, COMPLEXITY_DEFECT_TESTS),
}


@pytest.fixture(scope="module", params=sorted(CASES))
def graded(request, course, tmp_path_factory) -> tuple[str, dict]:
    """The variants and the defects of one assignment, graded together in one autograde run."""
    assignment = request.param
    variants, defects, _ = CASES[assignment]
    solution = solution_notebook(assignment)
    submissions = write_submissions(
        tmp_path_factory.mktemp(f"teach-{assignment}"),
        assignment,
        {"variants": with_answers(solution, variants), "defects": with_answers(solution, defects)},
    )
    return assignment, grade(course, assignment, submissions, limits=CLASS_LIMITS, jobs=2)


def test_correct_implementations_written_another_way_score_full_marks(graded):
    assignment, results = graded
    result = results["variants"]
    expected = full_marks(assignment)
    assert result.status == "graded", result.message
    assert result.score == expected, f"{assignment}: variants scored {result.score}, expected {expected} (full marks)"


def test_each_defect_loses_its_own_parts_points_only(graded):
    assignment, results = graded
    result = results["defects"]
    solution = solution_notebook(assignment)
    _, _, defect_tests = CASES[assignment]
    expected = full_marks(assignment) - points_of(solution, defect_tests)
    assert result.status == "graded", result.message
    assert result.score == expected, (
        f"{assignment}: the defects scored {result.score}, expected {expected}: full marks less the points of "
        f"{sorted(defect_tests)} only"
    )


@pytest.mark.parametrize("assignment", sorted(CASES))
def test_the_visible_test_of_each_defective_part_fails(assignment):
    _, defects, defect_tests = CASES[assignment]
    answers = solution_answers(assignment)
    for grade_id, source in defects.items():
        failing = failing_visible_tests(with_answers(exercise_notebook(assignment), {**answers, grade_id: source}))
        expected = {test for test in defect_tests if test == f"test-{grade_id}"} or defect_tests
        assert failing and failing <= expected, (
            f"{assignment}: with the defective {grade_id}, the visible tests that fail are {sorted(failing)}; "
            f"expected the test of {grade_id} alone"
        )


@pytest.mark.parametrize("assignment", sorted(CASES))
def test_the_visible_tests_pass_the_solution_and_the_variants(assignment):
    variants, _, _ = CASES[assignment]
    answers = solution_answers(assignment)
    assert failing_visible_tests(with_answers(exercise_notebook(assignment), answers)) == set()
    failing = failing_visible_tests(with_answers(exercise_notebook(assignment), {**answers, **variants}))
    assert failing == set(), f"{assignment}: the variants fail the visible tests {sorted(failing)}"


# Defects that share an answer cell with one of the graded defects: each is checked against the visible tests alone.
# (assignment, answer cell, text replaced, replacement, the test cell that must fail)
VISIBLE_DEFECTS = {
    # Plausible mistakes that passed every visible test, so that a learner heard of them from the grade alone.
    "blocked_mass takes the softmax over the wrong dimension": (
        "04-masks",
        "blocked-mass",
        "weights = torch.softmax(scores - c * (~allowed).to(scores.dtype), dim=-1)",
        "weights = torch.softmax(scores - c * (~allowed).to(scores.dtype), dim=0)",
        "test-blocked-mass",
    ),
    "the saturation experiment scales by d_k instead of its square root": (
        "01-attention",
        "saturation-experiment",
        '("scaled", scale_scores(raw, d_k))',
        '("scaled", raw / d_k)',
        "test-saturation-experiment",
    ),
    "layer_norm adds eps outside the square root": (
        "05-residuals-layernorm",
        "layer-norm",
        "/ torch.sqrt(variance + eps)",
        "/ (torch.sqrt(variance) + eps)",
        "test-layer-norm",
    ),
    "layer_gradient_norms keeps the gradients of the call before": (
        "05-residuals-layernorm",
        "layer-gradient-norms",
        "    encoder.zero_grad(set_to_none=True)  # start from no gradient, whatever ran before\n",
        "",
        "test-layer-gradient-norms",
    ),
    "MultiHeadAttention skips w_o": (
        "02-multi-head-attention",
        "multi-head-attention",
        "return self.w_o(merge_heads(heads))",
        "return merge_heads(heads)",
        "test-multi-head-attention",
    ),
    "MultiHeadAttention projects values with w_k": (
        "02-multi-head-attention",
        "multi-head-attention",
        "v = split_heads(self.w_v(value)",
        "v = split_heads(self.w_k(value)",
        "test-multi-head-attention",
    ),
    "MultiHeadAttention swaps key and value": (
        "02-multi-head-attention",
        "multi-head-attention",
        "k = split_heads(self.w_k(key)",
        "k = split_heads(self.w_k(value)",
        "test-multi-head-attention",
    ),
    "Post-LN drops out the residual sum": (
        "05-residuals-layernorm",
        "sublayer-connection",
        "return self.norm(x + self.dropout(sublayer(x)))  # Post-LN",
        "return self.norm(self.dropout(x + sublayer(x)))",
        "test-sublayer-connection",
    ),
    # LayerNorm forgives h -> a·h + b, so these passed a Post-LN test around h -> 2h + 1; the encoder layer's test
    # passes them, as its output is what the learner's own sublayers give.
    "Post-LN forgets the residual": (
        "05-residuals-layernorm",
        "sublayer-connection",
        "return self.norm(x + self.dropout(sublayer(x)))  # Post-LN",
        "return self.norm(self.dropout(sublayer(x)))",
        "test-sublayer-connection",
    ),
    "Post-LN doubles the branch": (
        "05-residuals-layernorm",
        "sublayer-connection",
        "return self.norm(x + self.dropout(sublayer(x)))  # Post-LN",
        "return self.norm(x + 2 * self.dropout(sublayer(x)))",
        "test-sublayer-connection",
    ),
    "Pre-LN drops out the residual sum": (
        "05-residuals-layernorm",
        "sublayer-connection",
        "return x + self.dropout(sublayer(self.norm(x)))  # Pre-LN",
        "return self.dropout(x + sublayer(self.norm(x)))",
        "test-sublayer-connection",
    ),
}


# Assignments 3 and 6 keep theirs beside their cases, without the assignment's name.
VISIBLE_DEFECTS |= {defect: (POSITIONAL, *case) for defect, case in POSITIONAL_VISIBLE_DEFECTS.items()}
VISIBLE_DEFECTS |= {defect: (COMPLEXITY, *case) for defect, case in COMPLEXITY_VISIBLE_DEFECTS.items()}


@pytest.mark.parametrize("defect", sorted(VISIBLE_DEFECTS))
def test_the_visible_tests_catch(defect):
    assignment, grade_id, old, new, test_cell = VISIBLE_DEFECTS[defect]
    answers = {**solution_answers(assignment), grade_id: _solution_with(assignment, grade_id, old, new)}
    failing = failing_visible_tests(with_answers(exercise_notebook(assignment), answers))
    assert failing == {test_cell}, f"{defect}: the failing visible tests are {sorted(failing)}, expected {test_cell}"


# Plausible mistakes that once passed every visible test of assignments 1 to 4: each now fails the visible test of
# its own part, whose message says what was expected and what came. (assignment, answer cell, text replaced,
# replacement, the test cell that must fail)
PLAUSIBLE_MISTAKES = {
    "softmax subtracts the global maximum, not each row's": (
        "01-attention",
        "softmax",
        "shifted = scores - scores.max(dim=-1, keepdim=True).values",
        "shifted = scores - scores.max()",
        "test-softmax",
    ),
    "the dot-product and cosine winners swapped": (
        "01-attention",
        "winners",
        "dot_winner = int(attention_scores(query_2d, keys_2d).argmax())\ncosine_winner = int(cosine_scores(",
        "dot_winner = int(cosine_scores(query_2d, keys_2d).argmax())\ncosine_winner = int(attention_scores(",
        "test-winners",
    ),
    "a tie factor typed in": (
        "01-attention",
        "winners",
        "tie_factor = (query_2d @ keys_2d[0]).item() / (query_2d @ keys_2d[1]).item()",
        "tie_factor = 4.0",
        "test-winners",
    ),
    "split_heads without its ValueError": (
        "02-multi-head-attention",
        "split-heads",
        "if d_model % num_heads != 0:",
        "if False:",
        "test-split-heads",
    ),
    "the single head unscaled": (
        "02-multi-head-attention",
        "two-head-example",
        "tc.scaled_dot_product_attention(single_query[None, :], single_keys, single_values)",
        "tc.scaled_dot_product_attention(single_query[None, :] * 2, single_keys, single_values)  # sqrt(4) undone",
        "test-two-head-example",
    ),
    "the heads' scores divided by d_k": (
        "02-multi-head-attention",
        "two-head-example",
        "tc.scaled_dot_product_attention(head_queries[:, None, :], head_keys, head_values)",
        "tc.scaled_dot_product_attention(head_queries[:, None, :] / math.sqrt(2), head_keys, head_values)",
        "test-two-head-example",
    ),
    "the dominant tokens by the smallest weight": (
        "02-multi-head-attention",
        "effective-resolution",
        "head_weights.argmax(dim=-1)",
        "head_weights.argmin(dim=-1)",
        "test-effective-resolution",
    ),
    "the single head's share of the last token, not of dog": (
        "02-multi-head-attention",
        "effective-resolution",
        "dog_share_single_head = single_weights[0].item()",
        "dog_share_single_head = single_weights[-1].item()",
        "test-effective-resolution",
    ),
    "the best head's share of dog read in the first head": (
        "02-multi-head-attention",
        "effective-resolution",
        "dog_share_best_head = head_weights[:, 0].max().item()",
        "dog_share_best_head = head_weights[0, 0].item()  # the first head's",
        "test-effective-resolution",
    ),
    "the base layer's count without W^O": (
        "02-multi-head-attention",
        "parameter-counts",
        "parameters_base = multi_head_parameter_count(512, 8)",
        "parameters_base = 3 * 512 * 512 + 3 * 512",
        "test-parameter-counts",
    ),
    "the base layer's count without biases": (
        "02-multi-head-attention",
        "parameter-counts",
        "parameters_base = multi_head_parameter_count(512, 8)",
        "parameters_base = 4 * 512 * 512",
        "test-parameter-counts",
    ),
    "BERT-base's heads of one layer": (
        "02-multi-head-attention",
        "parameter-counts",
        "bert_base_heads = 12 * 12",
        "bert_base_heads = 12",
        "test-parameter-counts",
    ),
    "BERT-base's attention parameters of one layer": (
        "02-multi-head-attention",
        "parameter-counts",
        "bert_base_attention_parameters = 12 * multi_head_parameter_count(768, 12)",
        "bert_base_attention_parameters = multi_head_parameter_count(768, 12) * 10",
        "test-parameter-counts",
    ),
    "one head's W_i^Q counted as the whole W^Q": (
        "02-multi-head-attention",
        "parameter-counts",
        "query_matrix_per_head = 512 * (512 // 8)",
        "query_matrix_per_head = 512 * 512 // 2",
        "test-parameter-counts",
    ),
    "the count said to depend on the heads": (
        "02-multi-head-attention",
        "parameter-counts",
        "depends_on_heads = len(set(parameters_by_heads.values())) > 1",
        "depends_on_heads = True",
        "test-parameter-counts",
    ),
    "the table's angles in float32": (
        POSITIONAL,
        "sinusoidal-positional-encoding",
        "dtype=torch.float64",
        "dtype=torch.float32",
        "test-sinusoidal-positional-encoding",
    ),
    "the module refuses a sequence that ends exactly at the table's end": (
        POSITIONAL,
        "positional-encoding-module",
        "if end > self.encoding.size(0):",
        "if end >= self.encoding.size(0):",
        "test-positional-encoding-module",
    ),
    "the module returns float32 for any input": (
        POSITIONAL,
        "positional-encoding-module",
        "self.encoding[start:end].to(x.dtype)",
        "self.encoding[start:end]",
        "test-positional-encoding-module",
    ),
    "the embeddings scaled by d_model": (
        POSITIONAL,
        "embedding-scale",
        "root_mean_square(vectors * math.sqrt(d_model))",
        "root_mean_square(vectors * d_model)",
        "test-embedding-scale",
    ),
    "the allowed positions read from 0": (
        "04-masks",
        "finite-c",
        "example_allowed[[position - 1 for position in (2, 4, 7)]] = True",
        "example_allowed[[2, 4, 6]] = True  # positions 2 and 4, and the last",
        "test-finite-c",
    ),
    "the block mask split 4 + 4": (
        "04-masks",
        "mask-graph",
        "block_mask[:3, :3] = True\nblock_mask[3:, 3:] = True",
        "block_mask[:4, :4] = True\nblock_mask[4:, 4:] = True",
        "test-mask-graph",
    ),
    "the window mask of radius 2": (
        "04-masks",
        "mask-graph",
        "window_mask = (positions[:, None] - positions[None, :]).abs() <= 1",
        "window_mask = (positions[:, None] - positions[None, :]).abs() <= 2",
        "test-mask-graph",
    ),
}


@pytest.mark.parametrize("mistake", sorted(PLAUSIBLE_MISTAKES))
def test_a_plausible_mistake_fails_its_own_visible_test_saying_what_was_expected_and_what_came(mistake):
    assignment, grade_id, old, new, test_cell = PLAUSIBLE_MISTAKES[mistake]
    answers = {**solution_answers(assignment), grade_id: _solution_with(assignment, grade_id, old, new)}
    failures = visible_test_failures(with_answers(exercise_notebook(assignment), answers))
    assert set(failures) == {test_cell}, f"{mistake}: the failing visible tests are {failures}, expected {test_cell}"
    message = failures[test_cell].lower()
    assert "expected" in message and "got" in message, (
        f"{mistake}: the failure should say what was expected and what came; it says {failures[test_cell]!r}"
    )


# ----------------------------------------------------------------------------- assignment 7

FINAL_PROJECT = "07-final-project"
# Part 8 decoded into empty strings: today's exact-match floor and empty-hypothesis check refuse it.
EMPTY_HYPOTHESES = _solution_with(
    FINAL_PROJECT,
    "train-and-evaluate",
    "hypotheses += [task.target_tokenizer.decode(row) for row in output.tolist()]",
    'hypotheses += ["" for row in output.tolist()]  # never decoded',
)
# A shifting bug (part 4) and a decoder that reads the first position instead of the last (part 6): parts 5 and 7
# are graded with the reference shift and step, so these cost parts 4 and 6 only (and part 8, lost anyway).
FINAL_PROJECT_DEFECTS = {
    "decoder-input-and-output": _solution_with(
        FINAL_PROJECT,
        "decoder-input-and-output",
        "decoder_output[torch.arange(batch, device=target.device), lengths] = eos_id",
        "decoder_output[:, -1] = eos_id  # <eos> in the last column, after the padding",
    ),
    "greedy-decode": _solution_with(
        FINAL_PROJECT,
        "greedy-decode",
        "token = model.next_token_logits(hidden[:, -1]).argmax(dim=-1)",
        "token = model.next_token_logits(hidden[:, 0]).argmax(dim=-1)  # the first position, not the last",
    ),
    "train-and-evaluate": EMPTY_HYPOTHESES,
}
FINAL_PROJECT_DEFECT_TESTS = {"test-decoder-input-and-output", "test-greedy-decode", "test-train-and-evaluate"}
FINAL_PROJECT_VARIANTS = {
    "parameter-count": """
def count_parameters(model):  # distinct storages, counted once each
    seen = {}
    for parameter in model.parameters():
        if parameter.requires_grad:
            seen[id(parameter)] = parameter.numel()
    return int(sum(seen.values()))


numbers_model_parameters = count_parameters(EncoderDecoder(37, 18, d_model=96, num_heads=4, num_layers=3, d_ff=384))
with torch.device("meta"):
    base_model = EncoderDecoder(32000, 32000, d_model=512, num_heads=8, num_layers=6, d_ff=2048)
base_model_parameters = count_parameters(base_model) - 32000 * 512
embedding_fraction = 32000 * 512 / base_model_parameters
tying_saves = 2 * 32000 * 512
""",
    "decoder-input-and-output": """
def decoder_input_and_output(target, pad_id=PAD_ID, bos_id=BOS_ID, eos_id=EOS_ID):  # row by row
    inputs, outputs = [], []
    for row in target.tolist():
        real = [token for token in row if token != pad_id]
        padding = [pad_id] * (len(row) - len(real))
        inputs.append([bos_id] + real + padding)
        outputs.append(real + [eos_id] + padding)
    return torch.tensor(inputs, dtype=target.dtype), torch.tensor(outputs, dtype=target.dtype)
""",
    "greedy-decode": """
def greedy_decode(model, source, max_output_length=100, pad_id=PAD_ID, bos_id=BOS_ID, eos_id=EOS_ID):  # a list
    mode = model.training
    model.eval()
    with torch.no_grad():
        source_mask = tc.padding_mask(source, pad_id)
        memory = model.encode(source, source_mask)
        written = [torch.full((source.size(0),), bos_id, dtype=torch.long, device=source.device)]
        done = torch.zeros(source.size(0), dtype=torch.bool, device=source.device)
        while len(written) <= max_output_length and not bool(done.all()):
            logits = model.next_token_logits(model.decode(torch.stack(written, dim=1), memory, source_mask))
            token = torch.where(done, torch.full_like(written[0], pad_id), logits[:, -1, :].argmax(-1))
            written.append(token)
            done = done | (token == eos_id)
    model.train(mode)
    return torch.stack(written[1:], dim=1)
""",
}


def visible_tests_before_training(answers: dict[str, str]) -> set[str]:
    """The failing visible tests of the final project's parts 1 to 7 (part 8 would train for minutes)."""
    exercise = with_answers(exercise_notebook(FINAL_PROJECT), {**solution_answers(FINAL_PROJECT), **answers})
    cells = exercise["cells"]
    last = next(index for index, cell in enumerate(cells) if cell.get("id") == "part-8")  # its heading
    return failing_visible_tests({**exercise, "cells": cells[:last]})


@pytest.mark.parametrize("grade_id", ["decoder-input-and-output", "greedy-decode"])
def test_final_project_defect_fails_its_own_visible_test(grade_id):
    failing = visible_tests_before_training({grade_id: FINAL_PROJECT_DEFECTS[grade_id]})
    assert failing == {f"test-{grade_id}"}, f"defective {grade_id}: the failing visible tests are {sorted(failing)}"


# Plausible mistakes in parts 3 to 7 that passed every visible test: (answer cell, text replaced, replacement).
FINAL_PROJECT_VISIBLE_DEFECTS = {
    "the schedule one update behind after the first": (
        "schedule",
        "lambda step: learning_rate(step + 1, d_model, warmup_steps, scale)",
        "lambda step: learning_rate(max(step, 1), d_model, warmup_steps, scale)",
    ),
    "train_step counts the padding in the loss": ("train-step", "ignore_index=pad_id, ", ""),
    "train_step shifts the target the wrong way": (
        "train-step",
        "decoder_input, decoder_output = decoder_input_and_output(",
        "decoder_output, decoder_input = decoder_input_and_output(",
    ),
    "greedy_decode writes on after <eos>": ("greedy-decode", "token = token.masked_fill(finished, pad_id)", "pass"),
    "greedy_decode feeds the decoder the newest token only": (
        "greedy-decode",
        "hidden = model.decode(prefix, memory, source_mask)",
        "hidden = model.decode(prefix[:, -1:], memory, source_mask)",
    ),
    "train_model logs the last loss instead of the mean": ("train-model", "sum(window) / len(window)", "window[-1]"),
}


@pytest.mark.parametrize("defect", sorted(FINAL_PROJECT_VISIBLE_DEFECTS))
def test_final_project_visible_tests_catch(defect):
    grade_id, old, new = FINAL_PROJECT_VISIBLE_DEFECTS[defect]
    failing = visible_tests_before_training({grade_id: _solution_with(FINAL_PROJECT, grade_id, old, new)})
    assert failing == {f"test-{grade_id}"}, f"{defect}: the failing visible tests are {sorted(failing)}"


def test_final_project_variants_pass_the_visible_tests():
    failing = visible_tests_before_training(FINAL_PROJECT_VARIANTS)
    assert failing == set(), f"the variants fail the visible tests {sorted(failing)}"


def test_final_project_part_8_with_empty_hypotheses_fails_its_visible_test():
    """Part 8's visible test, run on what the defective cell leaves behind: a trained model, a falling curve,
    the right references and empty hypotheses (training is not run: only the test cell's reading matters)."""
    from transformer_course.data import numbers_task

    exercise = exercise_notebook(FINAL_PROJECT)
    cells = {_nbgrader(cell).get("grade_id"): "".join(cell["source"]) for cell in exercise["cells"]}
    namespace: dict = {"__name__": "__notebook__"}
    with torch.random.fork_rng(devices=[]), contextlib.redirect_stdout(io.StringIO()):
        exec(compile(cells["imports"], "imports", "exec"), namespace)
        exec(compile(solution_answers(FINAL_PROJECT)["encoder-decoder"], "encoder-decoder", "exec"), namespace)
        test_pairs = numbers_task(seed=0, train_size=1_000).splits["test"][:300]
        namespace.update(
            GRADING=True,  # the floor and the empty check read the graded run
            TASK="numbers",
            model=namespace["EncoderDecoder"](11, 13, d_model=16, num_heads=2, num_layers=1, d_ff=32),
            history=[{"step": 10, "loss": 3.2}, {"step": 250, "loss": 1.0}],
            test_pairs=test_pairs,
            references=[reference for _, reference in test_pairs],
            hypotheses=[""] * len(test_pairs),
            test_exact_match=0.0,
        )
        with pytest.raises(AssertionError, match="empty"):
            exec(compile(cells["test-train-and-evaluate"], "test-train-and-evaluate", "exec"), namespace)
        # The same test with right hypotheses passes: it fails on the emptiness, not on the setup.
        namespace.update(hypotheses=list(namespace["references"]), test_exact_match=100.0)
        exec(compile(cells["test-train-and-evaluate"], "test-train-and-evaluate", "exec"), namespace)


def part_8_test_namespace(history: list[dict], grading: bool) -> dict:
    """What part 8's answer cell leaves behind for its visible test: a model, ``history``, right hypotheses."""
    from transformer_course.data import numbers_task

    cells = {
        _nbgrader(cell).get("grade_id"): "".join(cell["source"]) for cell in exercise_notebook(FINAL_PROJECT)["cells"]
    }
    namespace: dict = {"__name__": "__notebook__"}
    with torch.random.fork_rng(devices=[]), contextlib.redirect_stdout(io.StringIO()):
        exec(compile(cells["imports"], "imports", "exec"), namespace)
        exec(compile(solution_answers(FINAL_PROJECT)["encoder-decoder"], "encoder-decoder", "exec"), namespace)
    test_pairs = numbers_task(seed=0, train_size=1_000).splits["test"][:300]
    references = [reference for _, reference in test_pairs]
    namespace.update(
        GRADING=grading,
        model=namespace["EncoderDecoder"](11, 13, d_model=16, num_heads=2, num_layers=1, d_ff=32),
        history=history,
        test_pairs=test_pairs,
        references=references,
        hypotheses=list(references),
        test_exact_match=100.0,
    )
    return namespace, cells["test-train-and-evaluate"]


@pytest.mark.parametrize("history", [[], [{"step": 50, "loss": 3.1}]], ids=["no point", "one point"])
def test_final_project_part_8_passes_a_learners_own_run_too_short_to_log_twice(history):
    namespace, test = part_8_test_namespace(history, grading=False)
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(test, "test-train-and-evaluate", "exec"), namespace)
    namespace, test = part_8_test_namespace(history, grading=True)  # the graded run logs 25 points: too few fail
    with pytest.raises(AssertionError, match="the graded run logs a point every 10"):
        exec(compile(test, "test-train-and-evaluate", "exec"), namespace)


# One bug in each part that part 8's run builds on: part 1 (an untied output layer), part 3 (the schedule one update
# behind), part 5 (the padding counted in the loss), part 6 (the decoder fed the newest token only) and part 7 (the
# last loss logged, not the mean). Parts 2 and 8 are graded with correct answers to those parts in their place, so
# each bug costs its own part alone.
FINAL_PROJECT_EARLY_BUGS = {
    "encoder-decoder": _solution_with(
        FINAL_PROJECT,
        "encoder-decoder",
        "self.output_projection.weight = self.target_embedding.weight  # weight tying (§3.4)",
        "pass  # the output layer keeps weights of its own",
    ),
    "greedy-decode": _solution_with(
        FINAL_PROJECT,
        "greedy-decode",
        "hidden = model.decode(prefix, memory, source_mask)",
        "hidden = model.decode(prefix[:, -1:], memory, source_mask)",
    ),
    **{
        grade_id: _solution_with(FINAL_PROJECT, grade_id, old, new)
        for grade_id, old, new in (
            FINAL_PROJECT_VISIBLE_DEFECTS["the schedule one update behind after the first"],
            FINAL_PROJECT_VISIBLE_DEFECTS["train_step counts the padding in the loss"],
            FINAL_PROJECT_VISIBLE_DEFECTS["train_model logs the last loss instead of the mean"],
        )
    },
}
FINAL_PROJECT_EARLY_BUG_TESTS = {f"test-{grade_id}" for grade_id in FINAL_PROJECT_EARLY_BUGS}


@pytest.fixture(scope="module")
def final_project_graded(course, tmp_path_factory) -> dict:
    """One autograde run of three final projects (a few minutes: each graded run trains 250 updates)."""
    solution = solution_notebook(FINAL_PROJECT)
    submissions = write_submissions(
        tmp_path_factory.mktemp("teach-final-project"),
        FINAL_PROJECT,
        {
            "variants": with_answers(solution, FINAL_PROJECT_VARIANTS),
            "defects": with_answers(solution, FINAL_PROJECT_DEFECTS),
            "early-bugs": with_answers(solution, FINAL_PROJECT_EARLY_BUGS),
        },
    )
    return grade(course, FINAL_PROJECT, submissions, limits=CLASS_LIMITS, jobs=2)


def test_final_project_written_another_way_scores_full_marks(final_project_graded):
    result = final_project_graded["variants"]
    assert result.status == "graded", result.message
    assert result.score == full_marks(FINAL_PROJECT), f"variants scored {result.score}, expected full marks"


def test_final_project_defects_lose_their_own_parts_points_only(final_project_graded):
    """Empty hypotheses in part 8, a shifting bug in part 4 and a decoder reading the wrong position in part 6:
    the hidden exact-match floor and the visible test refuse part 8, and parts 5 and 7, graded with the reference
    shift and step, keep their points."""
    result = final_project_graded["defects"]
    expected = full_marks(FINAL_PROJECT) - points_of(solution_notebook(FINAL_PROJECT), FINAL_PROJECT_DEFECT_TESTS)
    assert result.status == "graded", result.message
    assert result.score == expected, (
        f"the defects scored {result.score}, expected {expected}: full marks less the points of "
        f"{sorted(FINAL_PROJECT_DEFECT_TESTS)} only"
    )


def test_final_project_bugs_in_the_parts_part_8_builds_on_cost_those_parts_only(final_project_graded):
    """Part 2 counts the parameters of a correct EncoderDecoder, and part 8 trains and decodes with correct answers
    to parts 1, 3, 5, 6 and 7, put in place of the learner's when those failed: no bug is charged twice."""
    result = final_project_graded["early-bugs"]
    lost = points_of(solution_notebook(FINAL_PROJECT), FINAL_PROJECT_EARLY_BUG_TESTS)
    assert result.status == "graded", result.message
    assert result.score == full_marks(FINAL_PROJECT) - lost, (
        f"the bugs in parts 1 and 6 scored {result.score}, expected {full_marks(FINAL_PROJECT) - lost}"
    )
