"""The final project's settings cell: on a GPU its Multi30k preset is the package's GPU recipe, on a CPU its CPU
recipe, and the corpus comes from the download, not from a folder only the course's own machine has."""

import json
from pathlib import Path

import pytest
import torch

from transformer_course.training import CPU_RECIPES, RECIPES

REPOSITORY = Path(__file__).resolve().parents[1]
NOTEBOOK = REPOSITORY / "solutions" / "07-final-project" / "final_project.ipynb"


def settings_on(monkeypatch, gpu: bool, task: str = "multi30k") -> dict:
    """The SETTINGS that the notebook's settings cell makes, for ``task``, with or without a GPU."""
    cell = next(cell for cell in json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"] if cell["id"] == "cell-027")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: gpu)
    names = {"torch": torch}
    exec("".join(cell["source"]).replace('TASK = "numbers"', f"TASK = {task!r}", 1), names)
    return names["SETTINGS"]


def as_recipe(settings: dict) -> dict:
    return {key: settings[key] for key in ("d_model", "num_heads", "num_layers", "d_ff", "dropout", "max_tokens",
                                           "warmup_steps", "learning_rate_scale")}  # fmt: skip


def recipe_values(recipe) -> dict:
    model, training = recipe.model, recipe.training
    return {
        "d_model": model.d_model, "num_heads": model.num_heads, "num_layers": model.num_layers, "d_ff": model.d_ff,
        "dropout": model.dropout, "max_tokens": training["max_tokens"], "warmup_steps": training["warmup_steps"],
        "learning_rate_scale": training["learning_rate_scale"],
    }  # fmt: skip


def test_with_a_gpu_multi30k_takes_the_packages_gpu_recipe(monkeypatch):
    assert as_recipe(settings_on(monkeypatch, gpu=True)) == recipe_values(RECIPES["multi30k"])


def test_on_a_cpu_multi30k_takes_the_packages_cpu_recipe(monkeypatch):
    assert as_recipe(settings_on(monkeypatch, gpu=False)) == recipe_values(CPU_RECIPES["multi30k"])


@pytest.mark.parametrize("gpu", [True, False], ids=["gpu", "cpu"])
def test_multi30k_is_downloaded_not_read_from_a_folder_beside_the_course(monkeypatch, gpu):
    assert settings_on(monkeypatch, gpu)["data"] is None


def test_the_numbers_task_keeps_its_cpu_recipe_on_a_gpu_too(monkeypatch):
    assert settings_on(monkeypatch, gpu=True, task="numbers") == settings_on(monkeypatch, gpu=False, task="numbers")


def test_no_file_a_learner_or_an_instructor_receives_names_the_courses_own_data_folder():
    files = [
        REPOSITORY / "README.md",
        *REPOSITORY.glob("book/*.md"),
        *REPOSITORY.glob("exercises/*/*.ipynb"),
        *REPOSITORY.glob("solutions/*/*.ipynb"),
        *REPOSITORY.glob("src/transformer_course/**/*.py"),
    ]
    naming = [str(path.relative_to(REPOSITORY)) for path in files if "../shared" in path.read_text(encoding="utf-8")]
    assert naming == []
