"""The setup cell that release puts first in every exercise: on Colab it installs the package at the tag of
pyproject.toml's version, from the repository that _config.yml names, and nothing but those two settings."""

from __future__ import annotations

import re

import pytest
from grading_support import REPOSITORY, assignments, exercise_notebook

from transformer_course.grading.course import Course, copy_course
from transformer_course.grading.release import package_requirement, setup_cell

pytestmark = pytest.mark.needs_nbgrader


@pytest.mark.parametrize("assignment", assignments())
def test_every_committed_exercise_starts_with_the_setup_cell_release_writes(assignment):
    first = "".join(exercise_notebook(assignment)["cells"][0]["source"])
    assert first == setup_cell(Course(REPOSITORY)).source, (
        f"exercises/{assignment} has another setup cell: run `transformer-course release`"
    )


def test_the_package_is_installed_from_a_tag_never_a_branch():
    requirement = package_requirement(Course(REPOSITORY))
    assert re.fullmatch(r"transformer-course @ git\+https://\S+@v\d+\.\d+\.\d+", requirement), requirement


def test_the_two_settings_are_the_version_in_pyproject_and_the_repository_in_config(tmp_path):
    course = copy_course(REPOSITORY, tmp_path / "course")
    pyproject = course.root / "pyproject.toml"
    pyproject.write_text(re.sub(r'(?m)^version = ".*"$', 'version = "9.8.7"', pyproject.read_text()))
    config = course.root / "_config.yml"
    config.write_text(re.sub(r"(?m)^  url: .*$", "  url: file:///srv/course.git", config.read_text()))
    assert 'package = "transformer-course @ git+file:///srv/course.git@v9.8.7"' in setup_cell(course).source


def test_a_pyproject_without_a_version_is_refused_naming_it(tmp_path):
    course = copy_course(REPOSITORY, tmp_path / "course")
    pyproject = course.root / "pyproject.toml"
    pyproject.write_text(re.sub(r'(?m)^version = ".*"$', "", pyproject.read_text()))
    with pytest.raises(RuntimeError, match=r"pyproject.toml gives no \[project\] version"):
        setup_cell(course)


def test_readmes_colab_install_is_the_one_the_setup_cell_runs():
    readme = (REPOSITORY / "README.md").read_text(encoding="utf-8")
    assert f'pip install "{package_requirement(Course(REPOSITORY))}"' in readme


def _learners_section() -> str:
    readme = (REPOSITORY / "README.md").read_text(encoding="utf-8")
    return readme.split("\n## Learners: start here\n", 1)[-1].split("\n## ", 1)[0]


def _cpu_index() -> str:
    """PyTorch's index of CPU builds, as the Makefile names it for a grading machine."""
    return re.search(r"(?m)^TORCH_INDEX \?= (\S+)$", (REPOSITORY / "Makefile").read_text(encoding="utf-8")).group(1)


def test_readme_opens_with_the_learners_path_before_anything_for_instructors():
    readme = (REPOSITORY / "README.md").read_text(encoding="utf-8")
    assert re.findall(r"(?m)^## (.+)$", readme)[0] == "Learners: start here"


def test_readmes_learner_install_from_the_tag_is_the_setup_cells_with_check_and_pytorchs_cpu_build():
    requirement = package_requirement(Course(REPOSITORY)).replace(" @ ", "[grading] @ ", 1)
    assert f'pip install "{requirement}" --extra-index-url {_cpu_index()}' in _learners_section()


def test_readmes_learner_install_from_a_clone_gives_check_and_pytorchs_cpu_build():
    assert f'pip install -e ".[grading]" --extra-index-url {_cpu_index()}' in _learners_section()
