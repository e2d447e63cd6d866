"""Training the encoder-decoder (paper §5): label smoothing, Adam with the warmup schedule, and a
training loop with checkpoints, resumption, mixed precision and several processes.

    from transformer_course.data import numbers_task
    from transformer_course.training import ModelConfig, TrainingConfig, evaluate, plot_training_curves, train

    task = numbers_task(seed=0)
    result = train(task, TrainingConfig(minutes=10, out_dir="runs/numbers"), ModelConfig())
    evaluate(result.model, task, "test", beam_size=4)      # {"exact_match": ..., ...}
    plot_training_curves(result.history)

=====================  ==============================================================
``label_smoothing``    the loss, ε_ls = 0.1 (§5.4)
``schedule``           Adam (β₁ = 0.9, β₂ = 0.98, ε = 10⁻⁹) and the warmup schedule (§5.3)
``config``             :class:`ModelConfig`, :class:`TrainingConfig`, each task's :class:`Recipe` (``recipe_for``)
``loop``               :func:`train` and its :class:`Trainer`: the loop, the step, mixed precision, DDP
``averaging``          the moving average of the weights that a run may keep: checkpoint averaging (§6.1)
``callbacks``          around the steps: the learning curves, validation and checkpoints
``run_state``          what a run is, how its checkpoint keeps it and how it is resumed
``non_finite``         stopping a run that diverges (NaN or infinite loss, gradient, weights)
``checkpoint``         atomic checkpoint files
``distributed``        joining the ``torchrun`` process group
``evaluation``         :func:`evaluate`: decode a split and score it (:func:`translate_split`: decode it)
``plots``              the learning curves
``commands``           the ``train`` and ``evaluate`` commands
``resumable``          the final project's scaffolding around the learner's own loop: progress, checkpoints, AMP
=====================  ==============================================================

The book's own programs (its numbers run, records, the Table 3 study) are built on this library in
:mod:`transformer_course.book_programs`; nothing here imports them.
"""

from .checkpoint import load_checkpoint, load_trained_model, save_checkpoint
from .config import CPU_RECIPES, RECIPES, ModelConfig, Recipe, TrainingConfig, recipe_for
from .evaluation import evaluate, teacher_forced_loss, translate_split
from .label_smoothing import LabelSmoothingLoss
from .loop import Trainer, TrainingResult, train
from .non_finite import NonFiniteGradientError, NonFiniteLossError
from .plots import plot_training_curves
from .run_state import RunState, SavedRun
from .schedule import transformer_learning_rate, transformer_optimizer, warmup_scheduler

__all__ = [
    "LabelSmoothingLoss",
    "ModelConfig",
    "CPU_RECIPES",
    "RECIPES",
    "Recipe",
    "NonFiniteGradientError",
    "NonFiniteLossError",
    "RunState",
    "SavedRun",
    "Trainer",
    "TrainingConfig",
    "TrainingResult",
    "evaluate",
    "load_checkpoint",
    "load_trained_model",
    "plot_training_curves",
    "save_checkpoint",
    "teacher_forced_loss",
    "recipe_for",
    "train",
    "translate_split",
    "transformer_learning_rate",
    "transformer_optimizer",
    "warmup_scheduler",
]
