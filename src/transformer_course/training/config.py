"""The settings of a run: the model's size and the training recipe, as two small dataclasses.

Both are stored in every checkpoint (as plain dicts), so a checkpoint alone can rebuild its model
and continue its run.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields

from torch import nn

from ..model import Transformer
from ..recurrent import RecurrentEncoderDecoder


@dataclass
class ModelConfig:
    """The hyperparameters of :class:`~transformer_course.Transformer` (paper Table 3 names them).

    The defaults are a small model that learns the numbers task on a CPU in minutes; the paper's
    base model is ``ModelConfig(d_model=512, num_heads=8, num_layers=6, d_ff=2048)``.
    """

    d_model: int = 128
    num_heads: int = 4
    d_k: int | None = None  # each head's query/key size; None: d_model / num_heads (Table 3 row B varies it)
    num_layers: int = 2
    d_ff: int = 512
    dropout: float = 0.1
    norm_first: bool = False
    max_positions: int = 512
    tie_embeddings: bool = True
    positional: str = "sinusoidal"
    shared_vocabulary: bool = False  # one vocabulary for both sides: the source embedding is tied too
    # "transformer", or "gru": Table 2's recurrent baseline (recurrent.py), which reads d_model, num_layers,
    # dropout and tie_embeddings and has no heads, feed-forward networks or positions.
    architecture: str = "transformer"

    def build(self, source_vocab_size: int, target_vocab_size: int) -> nn.Module:
        """A freshly initialised model with these hyperparameters."""
        settings = asdict(self)
        architecture = settings.pop("architecture")
        if architecture == "gru":
            return RecurrentEncoderDecoder(
                source_vocab_size, target_vocab_size, self.d_model, self.num_layers, self.dropout, self.tie_embeddings
            )
        if architecture != "transformer":
            raise ValueError(f"unknown architecture {architecture!r}: 'transformer' or 'gru'")
        return Transformer(source_vocab_size, target_vocab_size, **settings, fused_attention=True)

    def to_dict(self) -> dict:
        return asdict(self)

    def architecture_changes(self, other: ModelConfig) -> dict[str, tuple]:
        """``{setting: (this value, other's value)}`` for every setting but dropout that differs: those
        that shape the parameters or the computation, which a resumed run cannot change."""
        mine, theirs = self.to_dict(), other.to_dict()
        return {
            name: (mine[name], theirs[name])
            for name in mine
            if name not in RESUMABLE_MODEL_SETTINGS and mine[name] != theirs[name]
        }

    @classmethod
    def from_dict(cls, values: dict) -> ModelConfig:
        """The config a checkpoint stored, including one written before ``max_len`` was named ``max_positions``."""
        renamed = {RENAMED_MODEL_SETTINGS.get(name, name): value for name, value in values.items()}
        return cls(**_known(cls, renamed))


# Settings stored in older checkpoints under another name: {old name: current name}.
RENAMED_MODEL_SETTINGS = {"max_len": "max_positions"}
# The model's settings that a resumed run may change, as nanoGPT lets dropout be set anew on resume:
# dropout shapes no parameter. Every training setting may change too (the learning rate's schedule,
# label smoothing, clipping, batches, budgets).
RESUMABLE_MODEL_SETTINGS = ("dropout",)


@dataclass
class TrainingConfig:
    """How to train: budget, batches, optimiser, regularisation, bookkeeping.

    The defaults are the numbers task's recipe for a CPU: small batches of about 150 sentences
    (1536 tokens) and a peak learning rate of ``0.5 · (128 · 400)^-0.5 ≈ 0.0022`` for the 128-wide
    model, because on a CPU many small updates teach more per minute than a few large ones, and a
    Post-LN model diverges at a much higher rate (``benchmarks/README.md`` has the runs).

    Attributes:
        minutes: stop after this much wall-clock time in all, across resumptions (validation and
            checkpoints included).
        max_steps: stop after this many optimiser updates in all, across resumptions. At least one
            budget must be given; with both, whichever comes first.
        max_tokens: token budget of a batch (``sentences × longest sequence``; see
            :func:`~transformer_course.data.bucketed_batches`), per process.
        warmup_steps: steps over which the learning rate rises to its peak (Eq. 3, :mod:`.schedule`).
        learning_rate_scale: a factor on the whole schedule of Eq. 3.
        label_smoothing: ε_ls (paper: 0.1).
        clip_norm: clip the gradient's global norm to this (``None``: no clipping).
        average_decay: keep a moving average of the weights with this decay, over about the last
            1 / (1 - decay) updates (:mod:`.averaging`: the paper's checkpoint averaging for a run
            stopped by the clock); validation scores it and the checkpoint keeps it for
            ``evaluate`` (``None``: no average, the last weights are the model).
        validate_every: steps between validations; a checkpoint is written after each one.
        validation_examples: decode only the first this many validation pairs for the validation
            score (``None``: all); the validation loss always uses every pair. Decoding is the
            slow part of a validation on a CPU.
        log_every: steps between the training-loss points of the curve.
        seed: seeds the model's initialisation, dropout and the batch order (``transformer-course
            train`` also builds a new run's data with it; ``variations`` keeps the data of seed 0).
        device: ``"auto"`` (a GPU if there is one), ``"cpu"``, ``"cuda"``, ``"cuda:1"`` …
        out_dir: where ``checkpoint.pt``, ``history.json`` and ``curves.png`` go (``None``: nowhere).
        curves: draw the learning curves into ``out_dir/curves.png`` as the run goes (a drawing
            costs about a fifth of a second: a program that trains many short runs may leave it out).
    """

    minutes: float | None = None
    max_steps: int | None = None
    max_tokens: int = 1536
    warmup_steps: int = 400
    learning_rate_scale: float = 0.5
    label_smoothing: float = 0.1
    clip_norm: float | None = 1.0
    average_decay: float | None = None
    validate_every: int = 500
    validation_examples: int | None = None
    log_every: int = 50
    seed: int = 0
    device: str = "auto"
    out_dir: str | None = None
    curves: bool = True

    def __post_init__(self):
        if self.minutes is None and self.max_steps is None:
            raise ValueError("give a budget: minutes, max_steps or both")
        if self.average_decay is not None and not 0.0 <= self.average_decay < 1.0:
            raise ValueError(f"average_decay must be in [0, 1), got {self.average_decay}")
        if self.validate_every < 1 or self.log_every < 1:
            raise ValueError(
                f"validate_every and log_every must be positive, got {self.validate_every} and {self.log_every}"
            )

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict) -> TrainingConfig:
        return cls(**_known(cls, values))


def _known(cls, values: dict) -> dict:
    names = {field.name for field in fields(cls)}
    unknown = sorted(set(values) - names)
    if unknown:
        raise ValueError(f"{cls.__name__} has no settings {unknown}")
    return dict(values)


@dataclass(frozen=True)
class Recipe:
    """Where ``transformer-course train --task NAME`` starts.

    Attributes:
        model: the model's size.
        training: the :class:`TrainingConfig` settings that differ from its defaults.
        task: arguments of the task's builder (the size of a BPE vocabulary).
    """

    model: ModelConfig
    training: dict = field(default_factory=dict)
    task: dict = field(default_factory=dict)


# Each task's recipe; where a task trains differently on a CPU, its CPU recipe is in CPU_RECIPES
# (benchmarks/README.md has their runs).
RECIPES: dict[str, Recipe] = {
    "numbers": Recipe(ModelConfig()),
    "copy": Recipe(
        ModelConfig(d_model=64, num_heads=4, num_layers=2, d_ff=256, shared_vocabulary=True), {"warmup_steps": 200}
    ),
    "reverse": Recipe(
        ModelConfig(d_model=64, num_heads=4, num_layers=2, d_ff=256, shared_vocabulary=True), {"warmup_steps": 200}
    ),
    "multi30k": Recipe(
        ModelConfig(d_model=256, num_heads=8, num_layers=3, d_ff=1024, dropout=0.1, shared_vocabulary=True),
        {"max_tokens": 4096, "warmup_steps": 1000, "learning_rate_scale": 0.7, "validate_every": 1000},
        {"vocab_size": 8000},
    ),
}
# Multi30k on a laptop CPU in half an hour: half the width of the GPU recipe (a quarter of the work
# per token), and a schedule that peaks early enough for the ~2,000 steps half an hour allows. The
# run delivers a moving average of its weights over about its last 100 updates: a run still
# improving this fast loses by averaging longer spans. Chosen on the validation split
# (benchmarks/README.md).
CPU_RECIPES: dict[str, Recipe] = {
    "multi30k": Recipe(
        ModelConfig(d_model=128, num_heads=4, num_layers=3, d_ff=512, dropout=0.1, shared_vocabulary=True),
        {
            "max_tokens": 4096,
            "warmup_steps": 600,
            "learning_rate_scale": 1.0,
            "validate_every": 250,
            "average_decay": 0.99,
        },
        {"vocab_size": 8000},
    ),
}


def recipe_for(task_name: str, device_type: str) -> Recipe:
    """The recipe of ``task_name`` for a ``device_type`` (``"cpu"``, ``"cuda"``).

    On a CPU, the task's CPU recipe if it has one."""
    if task_name not in RECIPES:
        raise ValueError(f"no recipe for task {task_name!r}; the tasks are {sorted(RECIPES)}")
    if device_type == "cpu" and task_name in CPU_RECIPES:
        return CPU_RECIPES[task_name]
    return RECIPES[task_name]
