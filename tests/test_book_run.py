"""The book's numbers model: trained once into its directory, loaded from there afterwards, trained
again only when asked to or when the directory holds another plan's run."""

import shutil
from pathlib import Path

import pytest
import torch
from tiny import TINY_MODEL, TINY_TASK_ARGUMENTS

import transformer_course
from transformer_course.book_programs import BookRunPlan, book_numbers_run
from transformer_course.book_programs import book_run as book_run_module
from transformer_course.training import train

# A plan of the same shape as the book's, small enough for a unit test: the copy task instead of the
# numbers, validations that decode a few examples only, and no learning curves drawn.
TINY_PLAN = BookRunPlan(
    task=dict(name="copy", **TINY_TASK_ARGUMENTS),
    model=TINY_MODEL,
    training=dict(
        warmup_steps=5,
        validate_every=100,
        validation_examples=4,
        log_every=2,
        max_tokens=256,
        device="cpu",
        curves=False,
    ),
    steps=8,
    averaged_count=3,
    checkpoint_spacing=2,
)


@pytest.fixture(scope="module")
def run_directory(tmp_path_factory):
    directory = tmp_path_factory.mktemp("book-run")
    book_numbers_run(directory, fresh=True, plan=TINY_PLAN)
    return directory


def _state(model):
    return {name: tensor.clone() for name, tensor in model.state_dict().items()}


def _average(models):
    states = [_state(model) for model in models]
    return {name: sum(state[name] for state in states) / len(states) for name in states[0]}


def _refuse_training(*args, **kwargs):
    raise AssertionError("trained although a finished run was there")


def test_the_plan_cuts_the_run_at_every_averaged_checkpoint():
    assert TINY_PLAN.segment_ends == [4, 6, 8]


def test_more_averaged_checkpoints_than_the_run_holds_are_refused():
    with pytest.raises(ValueError, match="5 checkpoints 2 steps apart do not fit in 8 steps"):
        BookRunPlan(steps=8, averaged_count=5, checkpoint_spacing=2)


def test_a_finished_run_is_loaded_without_training(run_directory, monkeypatch):
    first = book_numbers_run(run_directory, plan=TINY_PLAN)
    monkeypatch.setattr(book_run_module, "train", _refuse_training)
    again = book_numbers_run(run_directory, plan=TINY_PLAN)
    assert again.steps == TINY_PLAN.steps
    for name, tensor in _state(first.model).items():
        torch.testing.assert_close(again.model.state_dict()[name], tensor)


def test_the_averaged_weights_are_the_mean_of_the_last_checkpoints(run_directory):
    run = book_numbers_run(run_directory, plan=TINY_PLAN)
    # A resumed run ends with the parameters of an uninterrupted one, so each checkpoint can be retrained alone.
    states = [
        _state(train(run.task, TINY_PLAN.training_config(end), TINY_PLAN.model, progress=False).model)
        for end in TINY_PLAN.segment_ends
    ]
    saved = torch.load(run_directory / book_run_module.BOOK_MODEL_NAME, weights_only=True)["averaged"]
    for name, tensor in saved.items():
        torch.testing.assert_close(tensor, sum(state[name] for state in states) / len(states))


@pytest.mark.parametrize("averaged, last, chosen", [(50.0, 50.0, "averaged"), (50.0, 60.0, "last")])  # the edges
def test_the_book_model_is_the_average_unless_the_last_checkpoint_is_better_on_validation(
    averaged, last, chosen, tmp_path, monkeypatch
):
    plan = BookRunPlan(**{**TINY_PLAN.__dict__, "steps": 4, "averaged_count": 2})

    trained_models = []

    def training(*args, **kwargs):
        result = train(*args, **kwargs)
        trained_models.append(result.model)
        return result

    def scored(model, task, split, limit=None):  # the last segment's model, or the average built afresh
        assert split == "validation"
        return {"exact_match": last if model is trained_models[-1] else averaged}

    monkeypatch.setattr(book_run_module, "train", training)
    monkeypatch.setattr(book_run_module, "evaluate", scored)
    run = book_numbers_run(tmp_path, plan=plan, fresh=True)
    assert run.chosen == chosen and run.validation_exact_match == {"last": last, "averaged": averaged}
    expected = _state(trained_models[-1]) if chosen == "last" else _average(trained_models[-2:])
    for name, tensor in expected.items():
        torch.testing.assert_close(run.model.state_dict()[name], tensor)


def test_fresh_trains_again_although_a_finished_run_is_there(tmp_path, monkeypatch):
    plan = BookRunPlan(**{**TINY_PLAN.__dict__, "steps": 6, "averaged_count": 2})
    book_numbers_run(tmp_path, plan=plan)
    trained = []
    monkeypatch.setattr(
        book_run_module, "train", lambda *args, **kwargs: trained.append(args) or train(*args, **kwargs)
    )
    book_numbers_run(tmp_path, plan=plan, fresh=True)
    assert len(trained) == len(plan.segment_ends)


def test_a_directory_holding_another_plans_run_is_trained_afresh(run_directory, tmp_path, monkeypatch):
    directory = shutil.copytree(run_directory, tmp_path / "copy")
    other = BookRunPlan(**{**TINY_PLAN.__dict__, "steps": 6, "averaged_count": 2})
    trained = []
    monkeypatch.setattr(
        book_run_module, "train", lambda *args, **kwargs: trained.append(args) or train(*args, **kwargs)
    )
    run = book_numbers_run(directory, plan=other)
    assert trained and run.steps == other.steps


def _imported_modules(path) -> set[str]:
    """The modules ``path`` imports, made absolute: ``..book_programs`` in ``training/x.py`` is
    ``transformer_course.book_programs``; and the package's modules it names in strings, for importlib."""
    import ast

    package = ["transformer_course", *path.parent.relative_to(PACKAGE).parts]
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            names.update([module, *(f"{module}.{alias.name}" for alias in node.names)])
        elif isinstance(node, ast.Constant) and str(node.value).startswith("transformer_course."):
            names.add(node.value)
    return names


PACKAGE = Path(transformer_course.__file__).parent
MODEL_FLOOR = ["attention", "multi_head_attention", "positional_encoding", "masks", "sublayers", "feed_forward"]
MODEL_FLOOR += ["embeddings", "encoder", "decoder", "model", "device", "decoding", "metrics", "special_tokens"]


def test_neither_training_nor_the_model_imports_the_books_programs():
    below = [*sorted((PACKAGE / "training").glob("*.py")), *(PACKAGE / f"{name}.py" for name in MODEL_FLOOR)]
    below += sorted((PACKAGE / "data").glob("*.py"))
    reaching_up = {
        str(path.relative_to(PACKAGE)): sorted(name for name in _imported_modules(path) if "book_programs" in name)
        for path in below
    }
    assert {path: names for path, names in reaching_up.items() if names} == {}
    # The check sees imports, and the modules cli.py names for importlib.
    assert "transformer_course.book_programs.commands" in _imported_modules(PACKAGE / "cli.py")
    assert "transformer_course.training.checkpoint" in _imported_modules(PACKAGE / "book_programs" / "commands.py")
