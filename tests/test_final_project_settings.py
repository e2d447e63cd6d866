"""The final project's settings cell: on a GPU its Multi30k preset is the package's GPU recipe, on a CPU its CPU
recipe, and the corpus comes from the download, not from a folder only the course's own machine has; the graded
run is described as the load-task cell makes it, everywhere it is described."""

import ast
import json
import re
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


# A time budget given to the graded run in words: "at most 40 seconds", "a 40 s cap", "stops after 40 seconds".
TIME_BUDGET = re.compile(r"(at most|cap(ped)? (at|of)|stops after|within) \d+ ?s(econds)?\b|\d+ ?s(econds)? cap")


def graded_settings() -> dict:
    """The SETTINGS that the load-task cell puts in place while the notebook is graded (NBGRADER_EXECUTION set)."""
    cell = next(cell for cell in json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"] if cell["id"] == "load-task")
    branch = next(node for node in ast.walk(ast.parse("".join(cell["source"]))) if isinstance(node, ast.If))
    assert ast.unparse(branch.test) == "GRADING", "the load-task cell's first branch is the graded run's"
    call = next(node.value for node in branch.body if isinstance(node, ast.Assign) and node.targets[0].id == "SETTINGS")
    return {keyword.arg: ast.literal_eval(keyword.value) for keyword in call.keywords}


def descriptions_of_the_graded_run() -> dict[str, str]:
    """Every paragraph that tells what happens while the final project is graded: README's, the notebook's Markdown
    (English), and grading.yml's comment."""
    readme = (REPOSITORY / "README.md").read_text(encoding="utf-8")
    notebook = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    markdown = "\n\n".join("".join(cell["source"]) for cell in notebook["cells"] if cell["cell_type"] == "markdown")
    policy = (NOTEBOOK.parent / "grading.yml").read_text(encoding="utf-8")
    found = {}
    for name, text in {"README.md": readme, "the notebook": markdown, "grading.yml": policy}.items():
        for number, paragraph in enumerate(re.split(r"\n\s*\n", text)):
            if "NBGRADER_EXECUTION" in paragraph or "graded run" in paragraph or "is graded" in paragraph:
                found[f"{name}, paragraph {number}"] = " ".join(paragraph.split())
    return found


def test_the_graded_run_trains_a_fixed_number_of_updates_without_a_time_budget():
    settings = graded_settings()
    assert isinstance(settings["max_steps"], int) and settings["max_seconds"] is None, settings


def test_no_description_of_the_graded_run_gives_it_a_time_budget():
    budgets = {where: text for where, text in descriptions_of_the_graded_run().items() if TIME_BUDGET.search(text)}
    assert not budgets, f"the graded run has no time budget, but these say it has one: {budgets}"


@pytest.mark.parametrize("source", ["README.md", "the notebook", "grading.yml"])
def test_readme_the_notebook_and_grading_yml_each_give_the_graded_runs_number_of_updates(source):
    updates = f"{graded_settings()['max_steps']} updates"
    texts = [text for where, text in descriptions_of_the_graded_run().items() if where.startswith(source)]
    assert any(updates in text for text in texts), f"{source} does not say the graded run trains {updates}: {texts}"
