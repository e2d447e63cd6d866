"""nbgrader's exchange in one language: a learner fetches the notebooks of the language they choose.

``transformer-course release`` writes each assignment's English notebooks at the top of its folder and
each translation in a folder named for its language::

    01-attention/attention.ipynb           English
    01-attention/zh_CN/attention.ipynb     简体中文

nbgrader's exchange hands a learner that folder whole, both languages. With these two steps in the
learner's nbgrader configuration (``~/.jupyter/nbgrader_config.py``, or ``/etc/jupyter/`` for a whole
JupyterHub), ``nbgrader fetch_assignment`` and Jupyter's Assignments tab bring one language's notebooks,
under the English notebooks' names, and ``nbgrader submit`` expects those and no translation::

    c.ExchangeFactory.fetch_assignment = "transformer_course.grading.exchange.FetchInOneLanguage"
    c.ExchangeFactory.submit = "transformer_course.grading.exchange.SubmitInOneLanguage"
    c.FetchInOneLanguage.language = "zh_CN"  # "en" (the default) for English

Grading needs nothing of this: the graded cells are the same in every language, and intake grades a
notebook whatever language its instructions are in.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from nbgrader.exchange.default.fetch_assignment import ExchangeFetchAssignment
from nbgrader.exchange.default.submit import ExchangeSubmit
from nbgrader.utils import find_all_notebooks
from traitlets import Unicode

ENGLISH = "en"


def translation_folders(assignment: Path) -> list[str]:
    """The language folders of a released assignment: its subfolders holding a notebook named like one at its top."""
    top = {path.name for path in assignment.glob("*.ipynb")}
    return sorted(
        folder.name
        for folder in assignment.iterdir()
        if folder.is_dir() and any(path.name in top for path in folder.glob("*.ipynb"))
    )


class FetchInOneLanguage(ExchangeFetchAssignment):
    """``nbgrader fetch_assignment`` that brings one language's notebooks, under the English notebooks' names."""

    language = Unicode(
        ENGLISH,
        help="The language of the notebooks to fetch: 'en', or a translation's folder name, such as 'zh_CN'.",
    ).tag(config=True)

    def do_copy(self, src: str, dest: str) -> None:
        released = Path(src)
        translations = translation_folders(released)
        if self.language != ENGLISH and self.language not in translations:
            choices = ", ".join([ENGLISH, *translations])
            self.fail(f"{released.name} has no notebooks in '{self.language}'; FetchInOneLanguage.language: {choices}")
        ignored = shutil.ignore_patterns(*self.coursedir.ignore)
        ignored_with_translations = shutil.ignore_patterns(*self.coursedir.ignore, *translations)
        with tempfile.TemporaryDirectory(prefix="fetch-") as staging:
            one_language = Path(staging) / released.name
            shutil.copytree(released, one_language, ignore=ignored_with_translations)
            if self.language != ENGLISH:
                shutil.copytree(released / self.language, one_language, ignore=ignored, dirs_exist_ok=True)
            # nbgrader's own copy from here: a learner's existing files are kept, missing ones replaced.
            super().do_copy(str(one_language), dest)


class SubmitInOneLanguage(ExchangeSubmit):
    """``nbgrader submit`` that expects the notebooks at the top of the assignment, in whichever language."""

    def check_filename_diff(self) -> None:
        released = Path(self.release_path)
        translations = {f"{language}/" for language in translation_folders(released)}
        every_released = set(find_all_notebooks(released))
        expected = {name for name in every_released if not name.startswith(tuple(translations))}
        submitted = set(find_all_notebooks(self.src_path))
        missing, extra = sorted(expected - submitted), sorted(submitted - every_released)
        if not (missing or extra):
            return
        message = f"expected {', '.join(sorted(expected))}; missing: {', '.join(missing) or 'none'}"
        message += f"; extra: {', '.join(extra) or 'none'}"
        if missing and self.strict:
            self.fail(f"Assignment {self.coursedir.assignment_id} not submitted: {message}")
        self.log.warning("Possible missing or extra notebooks in %s: %s", self.coursedir.assignment_id, message)
