"""The book as PDF, one per edition, from the HTML editions' one execution.

    python -m transformer_course.book_programs.pdf_editions     # after make book (make pdf)

Each edition is built by Jupyter Book's own PDF route, ``jupyter-book build --builder pdflatex``:
Sphinx's LaTeX builder, then XeLaTeX through latexmk. The configuration is the HTML edition's
(``_config.yml``, with ``book/_config_<language>.yml`` laid over it for another language, its
translated table of contents and the English build's execution cache, as :mod:`.editions` builds the
HTML), so nothing is executed again: every output, figure and number is the English build's. Its LaTeX
settings (``latex:`` and ``latex_elements`` in those files) set the fonts: DejaVu for Latin, Greek and
symbols, Noto CJK through xeCJK for Chinese, in both editions, since the English pages quote Chinese
too. This program adds what changes with every build, the title page's version and commit
(:func:`with_title_page`), and copies each PDF to :data:`PDF_DIR` and into the HTML site's
:data:`SITE_FOLDER`, where every page of its edition links to it (``book/_ext/course_book.py``).

Outputs made for a browser (HTML tables, the attention viewer) are rendered for LaTeX by
:mod:`.pdf_outputs`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

from .. import __version__
from . import editions
from .edition_figures import mime_type
from .editions import BUILD, LANGUAGES, config_elsewhere, jupyter_book, translated_toc, write_config

PDF_DIR = f"{BUILD}/pdf"
SITE_FOLDER = "pdf"  # in the English site (_build/html/): the PDFs that every HTML page links to
# The commit after the version on the title page, by edition (the running heads name the version alone).
COMMIT = {"en": ", commit {commit}", "zh_CN": "，提交 {commit}"}
# XeLaTeX stops at the first error instead of asking at a terminal that CI does not have.
LATEX_OPTIONS = "-interaction=nonstopmode -halt-on-error"


def _git(root: Path, *arguments: str) -> str:
    try:
        run = subprocess.run(["git", *arguments], cwd=root, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError) as error:
        raise RuntimeError(f"the title page names the commit, and git cannot tell it in {root}: {error}") from error
    return run.stdout.strip()


def commit(root: Path) -> str:
    """The checked-out commit (12 hex digits), ``+ changes`` when the tracked files differ from it."""
    changed = _git(root, "status", "--porcelain", "--untracked-files=no")
    return _git(root, "rev-parse", "--short=12", "HEAD") + (" + changes" if changed else "")


def with_title_page(root: Path, config: dict, language: str) -> dict:
    """``config`` with its title page's version, commit and date (the commit's, so a build of it is the same), and
    the chapters of the table of contents' unnumbered parts unnumbered (:func:`unnumbered_parts`)."""
    settings = config.setdefault("sphinx", {}).setdefault("config", {})
    settings["release"] = __version__
    settings["today"] = _git(root, "show", "-s", "--format=%cs", "HEAD")
    elements = settings.setdefault("latex_elements", {})
    release_info = COMMIT[language].format(commit=commit(root))
    elements["preamble"] = (
        elements.get("preamble", "") + f"\\setreleaseinfo{{{release_info}}}\n" + unnumbered_parts(root)
    )
    return config


def unnumbered_parts(root: Path) -> str:
    """LaTeX that numbers the chapters of a part of ``_toc.yml`` only where the part says ``numbered: true``.

    The HTML numbers the chapters of those parts alone (1 to 9) and not the exercises, the glossary and the
    bibliography; LaTeX numbers every chapter. Each ``\\part`` sets how deep its chapters are numbered.
    """
    parts = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8")).get("parts", [])
    depths = "".join(f"\\or {2 if part.get('numbered') else -1}" for part in parts)
    return (
        "\\makeatletter\\newcounter{coursepart}\\let\\course@part\\part\n"
        "\\renewcommand{\\part}{\\stepcounter{coursepart}"
        f"\\setcounter{{secnumdepth}}{{\\ifcase\\value{{coursepart}}{depths}\\else 2\\fi}}\\course@part}}\n"
        "\\makeatother\n"
    )


# Where LaTeX ranks an edition's own pictures: before image/png (20), as its configuration ranks them for HTML.
PICTURE_PRIORITY = 15


def edition_config(root: Path, language: str) -> dict:
    """The ``language`` edition's configuration, as its HTML is built (``"en"``: ``_config.yml``), its pictures
    (:func:`.edition_figures.mime_type`) ranked first for LaTeX too."""
    if language == "en":
        return config_elsewhere(root)
    config = editions.edition_config(root, language)
    settings = config.setdefault("sphinx", {}).setdefault("config", {})
    overrides = settings.setdefault("nb_mime_priority_overrides", [])
    overrides.append(["latex", mime_type(language), PICTURE_PRIORITY])
    return config


def pdf_name(root: Path, language: str) -> str:
    """The PDF's file name: the edition's ``latex_documents`` target, ``.tex`` made ``.pdf``."""
    config = edition_config(root, language)
    return Path(config["latex"]["latex_documents"]["targetname"]).with_suffix(".pdf").name


def build_pdf(root: Path, language: str) -> Path:
    """Build the ``language`` edition's PDF (``"en"`` or one of :data:`.editions.LANGUAGES`) into :data:`PDF_DIR`.

    What Sphinx and latexmk say goes to :func:`build_log`; a build that fails raises an error with its
    warnings and LaTeX's errors."""
    config = with_title_page(root, edition_config(root, language), language)
    toc = root / "_toc.yml" if language == "en" else translated_toc(root, language, f"pdf_{language}")
    command = [jupyter_book(), "build", str(root), "--builder", "pdflatex"]
    command += ["--config", str(write_config(root, f"pdf_{language}", config)), "--toc", str(toc)]
    command += ["--path-output", str(root / BUILD / f"latex-{language}")]
    environment = {**os.environ, "LATEXOPTS": LATEX_OPTIONS, "LATEXMKOPTS": "-silent"}
    pdf = latex_dir(root, language) / pdf_name(root, language)
    log = build_log(root, language)
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w", encoding="utf-8") as written:
        built = subprocess.run(command, env=environment, stdout=written, stderr=subprocess.STDOUT)
    if built.returncode != 0 or not pdf.is_file():
        pdf.with_suffix(".fdb_latexmk").unlink(missing_ok=True)  # or the next run's latexmk would do nothing
        problems = [
            line for line in log.read_text(encoding="utf-8").splitlines() if "WARNING" in line or "ERROR" in line
        ]
        raise RuntimeError(f"the {language} PDF did not build ({log}):\n" + "\n".join(problems + [latex_errors(pdf)]))
    for folder in (root / PDF_DIR, root / BUILD / "html" / SITE_FOLDER):
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(pdf, folder / pdf.name)
    return root / PDF_DIR / pdf.name


def latex_dir(root: Path, language: str) -> Path:
    """Where Jupyter Book's LaTeX builder writes the ``language`` edition: its ``.tex``, its LaTeX log, its PDF."""
    return root / BUILD / f"latex-{language}" / BUILD / "latex"


def build_log(root: Path, language: str) -> Path:
    """What the ``language`` edition's last PDF build said (Sphinx's and latexmk's messages)."""
    return root / BUILD / f"latex-{language}" / "build.log"


def latex_errors(pdf: Path) -> str:
    """The error lines of the LaTeX log beside ``pdf`` (and a few lines after each), or say there is no log."""
    log = pdf.with_suffix(".log")
    if not log.is_file():
        return f"no LaTeX log at {log}: the LaTeX sources were not written (see the build's messages above)"
    lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    found = [index for index, line in enumerate(lines) if line.startswith("!")]
    return "\n".join(line for index in found for line in lines[index : index + 6]) or "\n".join(lines[-30:])


def build_pdfs(root: Path, languages: tuple[str, ...] = ("en", *LANGUAGES)) -> dict[str, Path]:
    """Build the editions' PDFs at the same time, one process each (XeLaTeX uses one core), and return them by
    language; the first failure is raised once every build has ended."""
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=len(languages)) as pool:
        for language in languages:
            print(f"{language} PDF: building (the messages go to {build_log(root, language)})", flush=True)
        builds = {language: pool.submit(build_pdf, root, language) for language in languages}
        for language, build in builds.items():
            if build.exception() is None:
                print(f"{language} PDF: {build.result()} after {time.monotonic() - started:.0f} s", flush=True)
    return {language: build.result() for language, build in builds.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="the repository (default: here)")
    parser.add_argument("--language", choices=("en", *LANGUAGES), action="append", help="default: every edition")
    arguments = parser.parse_args(argv)
    build_pdfs(arguments.root.resolve(), tuple(arguments.language or ("en", *LANGUAGES)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
