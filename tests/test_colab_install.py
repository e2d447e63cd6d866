"""Colab, played without a network: the course installed from a tag into a fresh Colab-like environment.

The fixture does what an instructor and a learner do, with nothing reachable but the package
registries: a bare git repository of this checkout with the version's tag (``v<version>``), a scratch
copy of the course whose ``_config.yml`` names it (a ``file://`` URL), ``transformer-course release``
there, and a new virtual environment holding only a Colab-like stack (torch, numpy, matplotlib,
pandas, as the registry gives them, not this course's pins) and an importable ``google.colab``.
The tests then run released setup cells there, and the final project (its solution) on the numbers
task and on Multi30k downloaded from a mirror on 127.0.0.1, each with a tiny budget.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from multi30k_mirror import SHARED_MULTI30K, serving

REPOSITORY = Path(__file__).resolve().parents[1]
# Colab's own packages; torch==2.13.0 is the build this machine keeps on disk (any other release
# would download gigabytes of CUDA packages); the others are whatever the registry has.
COLAB_STACK = ["torch==2.13.0", "numpy", "matplotlib", "pandas"]

pytestmark = pytest.mark.slow

# Runs in the Colab-like environment: the cells of a notebook, one after another in one namespace, as
# a kernel would, after importing google.colab as Colab's kernel does; after each cell, the code given
# for it. Reports (lines "@runner {json}") each cell's id and when it ended, and when part 8 first
# called the learner's train_step.
CELL_RUNNER = """
import json, sys, time
import google.colab  # noqa: F401  (Colab's kernel has it imported)

cells, after = json.load(open(sys.argv[1], encoding="utf-8")), json.load(open(sys.argv[2], encoding="utf-8"))
namespace = {"__name__": "__main__"}
started = time.monotonic()


def report(**values):
    print("@runner " + json.dumps(values), flush=True)


def timing_the_first_call(learners_step):
    def train_step(*arguments, **options):
        if not train_step.called:
            train_step.called = True
            report(first_training_step=time.monotonic() - started)
        return learners_step(*arguments, **options)

    train_step.called = False
    return train_step


for cell in cells:
    if cell["id"] == "train-and-evaluate":  # part 8: the learner's train_model calls train_step by its name
        namespace["train_step"] = timing_the_first_call(namespace["train_step"])
    exec(compile(cell["source"], cell["id"], "exec"), namespace)
    exec(after.get(cell["id"], ""), namespace)
    report(cell=cell["id"], seconds=time.monotonic() - started)
"""


def _run(command, **options) -> subprocess.CompletedProcess:
    finished = subprocess.run(command, capture_output=True, text=True, **options)
    assert finished.returncode == 0, f"{command} failed:\n{finished.stdout[-4000:]}\n{finished.stderr[-4000:]}"
    return finished


def _tag_the_checkout(scratch: Path, version: str) -> Path:
    """A bare repository holding this checkout as it is (uncommitted changes too) on its main branch,
    tagged ``v<version>``."""
    bare = scratch / "course.git"
    _run(["git", "init", "--quiet", "--bare", "--initial-branch=main", str(bare)])
    index = dict(os.environ, GIT_INDEX_FILE=str(scratch / "index"))
    _run(["git", "add", "--all", "."], cwd=REPOSITORY, env=index)
    tree = _run(["git", "write-tree"], cwd=REPOSITORY, env=index).stdout.strip()
    identity = {"GIT_AUTHOR_NAME": "course", "GIT_AUTHOR_EMAIL": "course@localhost"}
    identity.update(GIT_COMMITTER_NAME="course", GIT_COMMITTER_EMAIL="course@localhost")
    commit = _run(
        ["git", "commit-tree", tree, "-m", f"v{version}"], cwd=REPOSITORY, env=dict(os.environ, **identity)
    ).stdout.strip()
    # As on a real server: the branch, and the tag that the setup cell installs.
    _run(
        ["git", "push", "--quiet", str(bare), f"{commit}:refs/heads/main", f"{commit}:refs/tags/v{version}"],
        cwd=REPOSITORY,
    )
    return bare


def _released_course(scratch: Path, bare: Path) -> Path:
    """A scratch copy of the course that names ``bare`` as its repository, with two assignments released."""
    from transformer_course.grading.course import copy_course

    course = copy_course(REPOSITORY, scratch / "course").root
    config = course / "_config.yml"
    config.write_text(re.sub(r"(?m)^  url: .*$", f"  url: file://{bare}", config.read_text(encoding="utf-8")))
    release = [sys.executable, "-m", "transformer_course.cli", "release"]
    for assignment in ("01-attention", "07-final-project"):
        _run([*release, assignment], cwd=course)
    return course


def _colab_environment(scratch: Path) -> dict:
    """A fresh virtual environment with Colab's stack and an importable google.colab; the variables to run it."""
    venv = scratch / "colab"
    _run([sys.executable, "-m", "venv", str(venv)])
    python = venv / "bin" / "python"
    # Colab's pip is a recent one; the pip that venv bundles may be too old to read a git+file:// requirement.
    _run([str(python), "-m", "pip", "install", "--quiet", "--upgrade", "pip"])
    _run([str(python), "-m", "pip", "install", "--quiet", *COLAB_STACK])
    colab = scratch / "google-colab"
    (colab / "google" / "colab").mkdir(parents=True)  # "google" stays a namespace package, as on Colab
    (colab / "google" / "colab" / "__init__.py").write_text('"""Stands in for Colab\'s own module."""\n')
    site_packages = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"]).stdout
    (Path(site_packages.strip()) / "google-colab.pth").write_text(f"{colab}\n")
    variables = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    variables.pop("NBGRADER_EXECUTION", None)
    variables.update(
        PATH=f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}",
        MPLBACKEND="Agg",
        OMP_NUM_THREADS="1",  # one thread, as the grader trains: on a busy 2-core machine more only wait for each other
        TRANSFORMER_COURSE_CACHE=str(scratch / "cache"),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    return {"python": str(python), "variables": variables}


def _installed(colab: dict, names: list[str]) -> dict[str, tuple[str, int]]:
    """Each package's version and the modification time of its ``__init__.py``: changed if pip touched it."""
    code = (
        "import importlib, importlib.metadata, json, os, sys\n"
        "print(json.dumps({name: (importlib.metadata.version(name), "
        "os.stat(importlib.import_module(name).__file__).st_mtime_ns) for name in sys.argv[1:]}))"
    )
    finished = _run([colab["python"], "-c", code, *names], env=colab["variables"])
    return {name: tuple(value) for name, value in json.loads(finished.stdout).items()}


@pytest.fixture(scope="module")
def colab(tmp_path_factory):
    """Everything Colab has before a learner runs a notebook's first cell; ``times`` collects measurements."""
    from transformer_course.grading.course import Course
    from transformer_course.grading.release import package_version

    scratch = tmp_path_factory.mktemp("colab")
    started = time.monotonic()
    bare = _tag_the_checkout(scratch, package_version(Course(REPOSITORY)))
    course = _released_course(scratch, bare)
    released = time.monotonic()
    environment = _colab_environment(scratch)
    environment.update(scratch=scratch, course=course, times={"tag and release": released - started})
    environment["times"]["fresh environment with the Colab stack"] = time.monotonic() - released
    environment["before"] = _installed(environment, ["torch", "numpy"])
    setup = _setup_cell(course / "exercises" / "01-attention" / "attention.ipynb")
    installing = time.monotonic()
    environment["setup"] = _run_cells(environment, [setup], {}, scratch / "exercise")
    environment["times"]["setup cell (pip install from the tag)"] = time.monotonic() - installing
    yield environment
    print("\n".join(f"{phase}: {seconds:.1f} s" for phase, seconds in environment["times"].items()))


def _setup_cell(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))["cells"][0]


def _run_cells(colab: dict, cells: list[dict], after: dict[str, str], directory: Path) -> list[dict]:
    """Run ``cells`` (``{"id", "source"}``) in the Colab environment, in ``directory``; returns what
    the runner printed: one ``{"cell", "seconds"}`` per cell, and ``{"first_training_step"}``."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "cells.json").write_text(
        json.dumps([{"id": cell["id"], "source": "".join(cell["source"])} for cell in cells]), encoding="utf-8"
    )
    (directory / "after.json").write_text(json.dumps(after), encoding="utf-8")
    (directory / "runner.py").write_text(CELL_RUNNER, encoding="utf-8")
    finished = _run(
        [colab["python"], "runner.py", "cells.json", "after.json"], cwd=directory, env=colab["variables"], timeout=900
    )
    return [
        json.loads(line.removeprefix("@runner "))
        for line in finished.stdout.splitlines()
        if line.startswith("@runner ")
    ]


def _final_project_solution() -> dict:
    return json.loads(
        (REPOSITORY / "solutions" / "07-final-project" / "final_project.ipynb").read_text(encoding="utf-8")
    )


def _final_project(
    colab: dict, settings: str, directory: Path, variables: dict | None = None, setup: bool = True
) -> list[dict]:
    """The final project as the learner runs it on Colab: the released setup cell (unless ``setup`` is
    False: a learner who runs the notebook again with other settings has the package already), then
    the solution's cells (their visible part), with ``settings`` run after the notebook's settings cell."""
    from transformer_course.grading.nbgrader_cells import split_hidden_tests

    solution = _final_project_solution()
    cells = [_setup_cell(colab["course"] / "exercises" / "07-final-project" / "final_project.ipynb")] if setup else []
    for cell in solution["cells"]:
        if cell["cell_type"] == "code":
            cells.append({"id": cell["id"], "source": split_hidden_tests("".join(cell["source"]))[0]})
    environment = dict(colab, variables={**colab["variables"], **(variables or {})})
    return _run_cells(environment, cells, {"cell-027": settings}, directory)


def _last_code_cell() -> str:
    """The id of the final project's last code cell: a run that printed it ran the whole notebook."""
    return [cell["id"] for cell in _final_project_solution()["cells"] if cell["cell_type"] == "code"][-1]


def test_the_setup_cell_installs_the_package_from_the_tag(colab):
    finished = _run(
        [colab["python"], "-c", "import transformer_course; print(transformer_course.__version__)"],
        env=colab["variables"],
    )
    from transformer_course.grading.course import Course
    from transformer_course.grading.release import package_version

    assert finished.stdout.strip() == package_version(Course(REPOSITORY))
    read = "import importlib.metadata as m; print(m.distribution('transformer-course').read_text('direct_url.json'))"
    direct_url = _run([colab["python"], "-c", read], env=colab["variables"]).stdout
    assert json.loads(direct_url)["vcs_info"]["requested_revision"] == f"v{finished.stdout.strip()}"


def test_the_setup_cell_leaves_colabs_torch_and_numpy_as_they_were(colab):
    assert _installed(colab, ["torch", "numpy"]) == colab["before"]


def test_the_final_projects_numbers_path_trains_there(colab):
    settings = "SETTINGS.update(warmup_steps=50, max_steps=20, max_seconds=None, log_every=5, test_examples=50)"
    printed = _final_project(colab, settings, colab["scratch"] / "numbers")
    cells = [line["cell"] for line in printed if "cell" in line]
    assert cells[-1] == _last_code_cell() and {"test-train-and-evaluate", "cached-comparison"} <= set(cells)
    first_step = next(line["first_training_step"] for line in printed if "first_training_step" in line)
    colab["times"]["final project, numbers: from the setup cell to the first training step"] = first_step
    assert (colab["scratch"] / "numbers" / "runs" / "final-project-numbers.pt").is_file()


def test_the_final_projects_multi30k_path_trains_there_on_the_corpus_from_a_mirror(colab):
    if not (SHARED_MULTI30K / "train.de.gz").is_file():
        pytest.skip(f"the course's copy of Multi30k, served here as the mirror, is not at {SHARED_MULTI30K}")
    settings = (
        'TASK = "multi30k"; CHECKPOINT = "runs/final-project-multi30k.pt"\n'
        "SETTINGS = dict(MULTI30K_ON_A_CPU, d_model=32, num_heads=2, num_layers=1, d_ff=64, max_tokens=1024, "
        "warmup_steps=20, max_steps=10, max_seconds=None, log_every=2, test_examples=20)"
    )
    shutil.rmtree(Path(colab["variables"]["TRANSFORMER_COURSE_CACHE"]), ignore_errors=True)
    with serving(SHARED_MULTI30K) as mirror:
        printed = _final_project(
            colab, settings, colab["scratch"] / "multi30k", {"MULTI30K_BASE_URL": mirror}, setup=False
        )
    assert [line["cell"] for line in printed if "cell" in line][-1] == _last_code_cell()
    downloaded = Path(colab["variables"]["TRANSFORMER_COURSE_CACHE"]) / "multi30k"
    assert sorted(path.name for path in downloaded.iterdir()) == sorted(
        ["train.de.gz", "train.en.gz", "val.de.gz", "val.en.gz", "test_2016_flickr.de.gz", "test_2016_flickr.en.gz"]
    )
