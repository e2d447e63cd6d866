"""The numbers model of the book: trained by chapter 8, decoded by chapter 9, from one place.

    from transformer_course.book_programs import book_numbers_run

    run = book_numbers_run(fresh=True)   # chapter 8: train it afresh (a few minutes on a CPU)
    run = book_numbers_run()             # chapter 9: load what chapter 8 saved, or train it the same way

The run is the course's numbers recipe at half the width, cut into segments with ``resume=True``
so that the training loop writes a checkpoint at each segment's end. The last
:attr:`BookRunPlan.averaged_count` segments end :attr:`BookRunPlan.checkpoint_spacing` steps apart,
and their weights are averaged, as the paper averaged its last checkpoints (§6.1).
The average and the last checkpoint are compared on the validation split (as much of it as the
training loop's validations decode), never on the test split, and the better one is the book's
model (the average on a tie, as the paper used it).

Everything lands in one directory, :data:`BOOK_RUN_DIRECTORY` (relative to the working directory:
``book/`` while the book builds): the training loop's ``checkpoint.pt`` and ``history.json``, and
``book-model.pt`` with the average and the choice. ``book-model.pt`` is written last,
so a directory that holds it holds a finished run.
"""

from __future__ import annotations

import dataclasses
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from torch import nn

from ..data import TranslationTask, load_task
from ..training.checkpoint import load_tensors, load_trained_model, save_tensors
from ..training.config import RECIPES, ModelConfig, TrainingConfig
from ..training.evaluation import evaluate
from ..training.loop import train

BOOK_RUN_DIRECTORY = Path("runs") / "book-numbers"
BOOK_MODEL_NAME = "book-model.pt"


@dataclass(frozen=True)
class BookRunPlan:
    """How the book's numbers model is trained.

    Attributes:
        task: the name and arguments of the task (:func:`~transformer_course.data.load_task`).
        model: the model's size.
        training: :class:`TrainingConfig` settings besides ``max_steps`` and ``out_dir``.
        steps: optimiser updates in all.
        averaged_count: how many of the last checkpoints are averaged.
        checkpoint_spacing: steps between two averaged checkpoints.
    """

    task: dict = field(default_factory=lambda: {"name": "numbers", "seed": 0})
    model: ModelConfig = field(
        default_factory=lambda: dataclasses.replace(RECIPES["numbers"].model, d_model=64, d_ff=256)
    )
    training: dict = field(
        default_factory=lambda: dict(
            warmup_steps=200, learning_rate_scale=0.5, validate_every=100, log_every=20, device="cpu"
        )
    )
    steps: int = 1000
    averaged_count: int = 5
    checkpoint_spacing: int = 50

    def __post_init__(self):
        if self.averaged_count < 1 or self.checkpoint_spacing < 1:
            raise ValueError(
                f"averaged_count and checkpoint_spacing must be positive, got {self.averaged_count} and "
                f"{self.checkpoint_spacing}"
            )
        if self.first_averaged_step < 1:
            raise ValueError(
                f"{self.averaged_count} checkpoints {self.checkpoint_spacing} steps apart "
                f"do not fit in {self.steps} steps"
            )

    @property
    def first_averaged_step(self) -> int:
        return self.steps - (self.averaged_count - 1) * self.checkpoint_spacing

    @property
    def segment_ends(self) -> list[int]:
        """The steps at which a segment of the run stops and the loop writes its checkpoint."""
        return list(range(self.first_averaged_step, self.steps + 1, self.checkpoint_spacing))

    def training_config(self, max_steps: int, out_dir: str | Path | None = None) -> TrainingConfig:
        return TrainingConfig(max_steps=max_steps, out_dir=None if out_dir is None else str(out_dir), **self.training)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclass
class BookRun:
    """The book's numbers model and what its run left behind.

    Attributes:
        model: the chosen model (the average or the last checkpoint), in eval mode on the CPU.
        last: the model after the last step.
        task: the task, with the tokenizers the model was trained with.
        history: the learning curves of the whole run (see :func:`train`).
        steps, seconds: optimiser updates and wall-clock seconds of training, validations included.
        validation_exact_match: ``{"last": ..., "averaged": ...}``, in percent.
        chosen: ``"averaged"`` or ``"last"``.
        plan: how it was trained.
    """

    model: nn.Module
    last: nn.Module
    task: TranslationTask
    history: dict
    steps: int
    seconds: float
    validation_exact_match: dict[str, float]
    chosen: str
    plan: BookRunPlan


def book_numbers_run(
    directory: str | Path = BOOK_RUN_DIRECTORY, *, fresh: bool = False, plan: BookRunPlan | None = None
) -> BookRun:
    """The book's numbers model: loaded from ``directory`` if a finished run of ``plan`` is there,
    trained there otherwise.

    Args:
        directory: where the run is kept.
        fresh: delete whatever ``directory`` holds and train afresh.
        plan: how to train (default :class:`BookRunPlan`); a directory holding a run of another plan
            is trained afresh.
    """
    plan, directory = plan or BookRunPlan(), Path(directory)
    saved = directory / BOOK_MODEL_NAME
    if not fresh and saved.is_file() and load_tensors(saved)["plan"] == plan.to_dict():
        return _load(directory, plan)
    shutil.rmtree(directory, ignore_errors=True)
    task = load_task(**plan.task)
    states = {}
    for end in plan.segment_ends:
        result = train(task, plan.training_config(end, directory), plan.model, progress=False, resume=True)
        states[end] = {name: tensor.clone() for name, tensor in result.model.state_dict().items()}
    averaged = {name: sum(state[name] for state in states.values()) / len(states) for name in states[plan.steps]}
    candidates = {"last": result.model.eval(), "averaged": _built(plan, task, averaged)}
    limit = plan.training_config(plan.steps).validation_examples  # as the validations during training
    exact = {
        name: evaluate(model, task, "validation", limit=limit)["exact_match"] for name, model in candidates.items()
    }
    chosen = "averaged" if exact["averaged"] >= exact["last"] else "last"
    book_model = {"plan": plan.to_dict(), "averaged": averaged}
    save_tensors({**book_model, "validation_exact_match": exact, "chosen": chosen}, saved)
    return _load(directory, plan)


def _built(plan: BookRunPlan, task: TranslationTask, state: dict) -> nn.Module:
    model = plan.model.build(len(task.source_tokenizer), len(task.target_tokenizer))
    model.load_state_dict(state)
    return model.eval()


def _load(directory: Path, plan: BookRunPlan) -> BookRun:
    last, task, checkpoint = load_trained_model(directory, device="cpu")
    saved = load_tensors(directory / BOOK_MODEL_NAME)
    averaged = _built(plan, task, saved["averaged"])
    return BookRun(
        model=averaged if saved["chosen"] == "averaged" else last,
        last=last,
        task=task,
        history=checkpoint.history,
        steps=checkpoint.progress.step,
        seconds=checkpoint.progress.seconds,
        validation_exact_match=saved["validation_exact_match"],
        chosen=saved["chosen"],
        plan=plan,
    )
