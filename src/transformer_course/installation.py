"""How this copy of the package was installed, and the ``pip install`` that adds an extra to it the same way.

The course is not on a package registry: learners install it from a clone (editable), from the repository's
git tag, or from a wheel an instructor hands out. pip records which in the installed package's metadata
(``direct_url.json``, PEP 610), and :func:`install_command` reads it, so that a command that needs an extra
(``check`` needs ``grading``) names the line that works here rather than a registry name that does not exist.
"""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path
from urllib.parse import urlparse
from urllib.request import url2pathname

DISTRIBUTION = "transformer-course"


def install_command(extra: str) -> str:
    """The ``pip install`` that gives this installation of the package its ``extra``, installed from where it was."""
    try:
        distribution = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:  # imported from a source tree that pip never installed
        return f'pip install -e "{_source_tree()}[{extra}]"'
    record = distribution.read_text("direct_url.json")
    if record is None:  # from a package index, which holds this name and version
        return f'pip install "{DISTRIBUTION}[{extra}]=={distribution.version}"'
    direct = json.loads(record)
    url = direct.get("url", "")
    if "vcs_info" in direct:  # a git URL, at the tag (or commit) it was asked for
        vcs = direct["vcs_info"]
        revision = vcs.get("requested_revision") or vcs.get("commit_id")
        at = f"@{revision}" if revision else ""
        return f'pip install "{DISTRIBUTION}[{extra}] @ {vcs.get("vcs", "git")}+{url}{at}"'
    if "dir_info" in direct:  # a folder: a clone, editable or not
        editable = direct["dir_info"].get("editable", False)
        if editable and _another_clone(_path(url)):  # this copy is imported from elsewhere (PYTHONPATH)
            return f'pip install -e "{_source_tree()}[{extra}]"'
        return f'pip install {"-e " if editable else ""}"{_path(url)}[{extra}]"'
    return f'pip install "{DISTRIBUTION}[{extra}] @ {url}"'  # a wheel or an archive, local or downloaded


def _path(url: str) -> str:
    """The local path of a ``file://`` URL."""
    return url2pathname(urlparse(url).path) if url.startswith("file:") else url


def _another_clone(folder: str) -> bool:
    """Whether ``folder``, where pip installed the package editable, holds a clone other than the one this package is
    imported from (a second clone put first on ``PYTHONPATH``). A folder that holds no clone any more says nothing."""
    installed = Path(folder)
    return (installed / "pyproject.toml").exists() and installed.resolve() != Path(__file__).resolve().parents[2]


def _source_tree() -> str:
    """The folder that holds this package's ``pyproject.toml`` (``src/transformer_course/..``)."""
    root = Path(__file__).resolve().parents[2]
    return str(root) if (root / "pyproject.toml").exists() else "."
