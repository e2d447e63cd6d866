"""A command that needs an extra names the install line that works for how the package was installed: an editable
clone, the repository's git tag, a wheel, or a folder; never a registry name the course does not have."""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path

from transformer_course import installation
from transformer_course.installation import install_command

TAG_URL = "https://github.com/transformer-course/attention-is-all-you-need"


class Installed:
    """An installed distribution as importlib.metadata gives it: its version and pip's record of where it came from."""

    def __init__(self, direct_url: dict | None, version: str = "1.1.0"):
        self.version = version
        self.direct_url = direct_url

    def read_text(self, name: str) -> str | None:
        return json.dumps(self.direct_url) if name == "direct_url.json" and self.direct_url is not None else None


def installed_as(monkeypatch, direct_url: dict | None) -> None:
    monkeypatch.setattr(installation.metadata, "distribution", lambda name: Installed(direct_url))


def test_an_editable_clone_is_given_pip_install_e_of_that_clone(monkeypatch):
    installed_as(monkeypatch, {"url": "file:///home/ada/attention-course", "dir_info": {"editable": True}})
    assert install_command("grading") == 'pip install -e "/home/ada/attention-course[grading]"'


def test_a_clone_imported_ahead_of_the_editable_install_of_another_is_given_its_own_line(monkeypatch, tmp_path):
    """Another clone put first on PYTHONPATH runs its own package: the line installs that clone, not the one pip has."""
    other = tmp_path / "the-installed-clone"
    other.mkdir()
    (other / "pyproject.toml").write_text("[project]\nname = 'transformer-course'\n", encoding="utf-8")
    installed_as(monkeypatch, {"url": other.as_uri(), "dir_info": {"editable": True}})
    imported_from = Path(installation.__file__).resolve().parents[2]
    assert install_command("grading") == f'pip install -e "{imported_from}[grading]"'


def test_an_install_from_the_git_tag_is_given_the_same_tag_with_the_extra(monkeypatch):
    vcs_info = {"vcs": "git", "requested_revision": "v1.1.0", "commit_id": "0123abc"}
    installed_as(monkeypatch, {"url": TAG_URL, "vcs_info": vcs_info})
    assert install_command("grading") == f'pip install "transformer-course[grading] @ git+{TAG_URL}@v1.1.0"'


def test_a_wheel_is_given_the_same_wheel_with_the_extra(monkeypatch):
    wheel = "file:///home/ada/Downloads/transformer_course-1.1.0-py3-none-any.whl"
    installed_as(monkeypatch, {"url": wheel, "archive_info": {"hashes": {"sha256": "00"}}})
    assert install_command("grading") == f'pip install "transformer-course[grading] @ {wheel}"'


def test_a_folder_installed_without_e_is_given_that_folder(monkeypatch):
    installed_as(monkeypatch, {"url": "file:///srv/course", "dir_info": {}})
    assert install_command("grading") == 'pip install "/srv/course[grading]"'


def test_an_install_from_a_package_index_is_given_its_name_at_its_version(monkeypatch):
    installed_as(monkeypatch, None)
    assert install_command("grading") == 'pip install "transformer-course[grading]==1.1.0"'


def test_a_source_tree_pip_never_installed_is_given_an_editable_install_of_it(monkeypatch):
    def not_installed(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(installation.metadata, "distribution", not_installed)
    command = install_command("grading")
    assert command.startswith('pip install -e "') and command.endswith('[grading]"'), command


def test_the_course_environment_an_editable_install_is_given_the_line_of_the_clone_it_runs_from():
    """requirements.txt installs the package editable from its clone (``-e .``), as a learner's clone does: the
    line names the clone the imported package comes from (which need not be the folder these tests are in)."""
    command = install_command("grading")
    folder = command.removeprefix('pip install -e "').removesuffix('[grading]"')
    imported_from = Path(installation.__file__).resolve().parents[2]
    assert command == f'pip install -e "{folder}[grading]"' and Path(folder).resolve() == imported_from, command
