"""The book's editions: the English site and the Chinese one, from one source and one execution.

    python -m transformer_course.book_programs.editions execute    # before jupyter-book build . (make book)
    python -m transformer_course.book_programs.editions build      # after jupyter-book build . (make book)
    python -m transformer_course.book_programs.editions catalogs   # after an English change (make catalogs)

The English MyST pages are the only source. Sphinx's gettext builder extracts their prose, one
catalog per page, into ``book/locale/<language>/LC_MESSAGES/`` (``sphinx-intl update`` keeps what is
translated, marks what changed as fuzzy and adds what is new); code cells and their outputs never
enter a catalog. An edition's configuration is ``_config.yml`` with ``book/_config_<language>.yml``
laid over it (its language, where its catalogs are, its title). It is built with the English
build's execution cache, so it executes nothing: every output, figure and number on its pages is
the English build's. The site lands in ``_build/html/<language>/``, beside the English pages, and
each page links to its twin (``book/_ext/course_book.py``).

``execute`` fills the English build's execution cache before it starts: jupyter-book executes the
pages one at a time, and :func:`execute_pages` runs them :data:`EXECUTION_JOBS` at a time with the
same calls myst-nb makes (jupyter-cache's ``single_nb_execution`` in the page's folder, then the
outputs cached under the page), so that the build finds every page's outputs there. Pages that share
the book's numbers run (:data:`SHARED_RUN`: chapter 8 trains it, chapter 9 loads it) run one after
the other, in the book's order.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import yaml

LANGUAGES = ("zh_CN",)
BUILD = "_build"
EXECUTION_CACHE = f"{BUILD}/.jupyter_cache"  # the English build's (jupyter-book's default place)
LOCALE = "book/locale"
EXECUTION_JOBS = 2  # pages executed at once (each a kernel of its own)
SHARED_RUN = "book_numbers_run("  # pages that call it share one run directory: they run in order


def toc_pages(root: Path) -> list[str]:
    """Every document of ``_toc.yml``, in reading order (paths without suffix), a chapter's sections after
    it: the pages an edition has."""
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    return [toc["root"], *_files(chapter for part in toc.get("parts", []) for chapter in part["chapters"])]


def _files(entries) -> list[str]:
    """The files of ``entries`` of ``_toc.yml`` and of their ``sections``, depth first."""
    return [page for entry in entries for page in (entry["file"], *_files(entry.get("sections", [])))]


def edition_config(root: Path, language: str) -> dict:
    """``_config.yml`` with ``book/_config_<language>.yml`` laid over it, key by key."""
    overlay = yaml.safe_load((root / "book" / f"_config_{language}.yml").read_text(encoding="utf-8"))
    return config_elsewhere(root, overlay)


def config_elsewhere(root: Path, overlay: dict | None = None) -> dict:
    """``_config.yml`` (with ``overlay`` laid over it) for a build whose output is not ``_build/``.

    Such a build reads the English build's execution cache (jupyter-book would otherwise look for
    one beside its output), and its local extensions by absolute path (jupyter-book finds them
    relative to the configuration file, which is written elsewhere).
    """
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    merged = laid_over(config, overlay or {})
    merged.setdefault("execute", {})["cache"] = str((root / EXECUTION_CACHE).resolve())
    extensions = merged.get("sphinx", {}).get("local_extensions", {})
    for name, path in extensions.items():
        extensions[name] = str((root / path).resolve())
    return merged


def write_config(root: Path, name: str, config: dict) -> Path:
    """Write ``config`` as ``_build/_config_<name>.yml`` for ``jupyter-book build --config``."""
    path = root / BUILD / f"_config_{name}.yml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    return path


def laid_over(base: dict, overlay: dict) -> dict:
    """``overlay`` laid over ``base``, key by key (an edition's settings over ``_config.yml``)."""
    merged = dict(base)
    for key, value in overlay.items():
        both_tables = isinstance(value, dict) and isinstance(base.get(key), dict)
        merged[key] = laid_over(base[key], value) if both_tables else value
    return merged


def jupyter_book() -> str:
    """The ``jupyter-book`` of this interpreter's environment."""
    return str(Path(sys.executable).with_name("jupyter-book"))


def build_edition(root: Path, language: str, strict: bool = False) -> Path:
    """Build the ``language`` edition into ``_build/html/<language>/``; ``strict``: warnings are errors."""
    build = root / BUILD
    config = write_config(root, language, edition_config(root, language))
    toc = translated_toc(root, language)
    output = build / language
    command = [jupyter_book(), "build", str(root), "--config", str(config), "--toc", str(toc)]
    command += ["--path-output", str(output), *(["-W", "-n", "--keep-going"] if strict else [])]
    subprocess.run(command, check=True)
    site = build / "html" / language
    shutil.rmtree(site, ignore_errors=True)
    shutil.copytree(output / BUILD / "html", site)
    return site


def translated_toc(root: Path, language: str, name: str | None = None) -> Path:
    """``_toc.yml`` with its part captions translated, from the root page's catalog, where they are extracted.

    Sphinx translates a caption on the root page, but the navigation beside every page is built from
    the table of contents itself, so the edition gets one of its own (``_build/_toc_<name>.yml``, by default
    ``<language>``; each build of its own file, as builds may run at the same time).
    """
    from babel.messages.pofile import read_po

    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    with (root / LOCALE / language / "LC_MESSAGES" / f"{toc['root']}.po").open("rb") as handle:
        translations = {message.id: message.string for message in read_po(handle) if message.string}
    for part in toc.get("parts", []):
        part["caption"] = translations.get(part["caption"], part["caption"])
    path = root / BUILD / f"_toc_{name or language}.yml"
    path.write_text(yaml.safe_dump(toc, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def extract_messages(root: Path, templates: Path) -> Path:
    """The gettext templates (``.pot``) of every page, in ``templates`` (through the execution cache)."""
    config = write_config(root, "gettext", config_elsewhere(root))
    subprocess.run(
        [jupyter_book(), "build", str(root), "--config", str(config), "--builder", "custom",
         "--custom-builder", "gettext", "--path-output", str(templates)],
        check=True,
    )  # fmt: skip
    return templates / BUILD / "gettext"


def update_catalogs(root: Path, language: str, templates: Path, locale: Path | None = None) -> Path:
    """``sphinx-intl update``: the catalogs of ``language`` under ``locale`` follow the templates."""
    locale = locale or root / LOCALE
    sphinx_intl = str(Path(sys.executable).with_name("sphinx-intl"))
    subprocess.run(
        [sphinx_intl, "update", "--pot-dir", str(templates), "--locale-dir", str(locale), "--language", language],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return locale / language / "LC_MESSAGES"


def execute_pages(root: Path, jobs: int = EXECUTION_JOBS) -> list[str]:
    """Execute every page of the book whose outputs the execution cache lacks, ``jobs`` at a time, and cache
    them as myst-nb would; return the pages executed. A page that fails stops nothing here: the build
    executes it again and reports the error."""
    import jupytext
    from jupyter_cache import get_cache

    settings = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))["execute"]
    cache = get_cache(str(root / EXECUTION_CACHE))
    stale = []
    for page in toc_pages(root):
        path = root / f"{page}.md"
        notebook = jupytext.read(path) if path.is_file() else None  # the exercise notebooks are never executed
        if notebook is None or "kernelspec" not in notebook.metadata:  # a page of text only: myst-nb runs nothing
            continue
        try:
            cache.match_cache_notebook(notebook)
        except KeyError:
            stale.append(path)
    shared = [path for path in stale if SHARED_RUN in path.read_text(encoding="utf-8")]
    chains = [[path] for path in stale if path not in shared] + ([shared] if shared else [])
    chains.sort(key=lambda chain: -sum(path.stat().st_size for path in chain))  # the longest first, roughly
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        limits = settings["timeout"], settings["allow_errors"]
        futures = [pool.submit(_execute_chain, chain, *limits) for chain in chains]
        for future in as_completed(futures):
            for path, notebook, seconds, failure in future.result():
                if failure is None:
                    _cache_outputs(cache, path, notebook, seconds)
                print(f"{path.relative_to(root)}: " + (f"executed in {seconds:.0f} s" if failure is None else failure))
    return [str(path.relative_to(root)) for path in stale]


def _execute_chain(paths: list[Path], timeout: int, allow_errors: bool) -> list[tuple]:
    """Execute the pages ``paths`` one after the other, each in its own folder, as myst-nb's cache mode does."""
    import jupytext
    from jupyter_cache.executors.utils import single_nb_execution

    results = []
    for path in paths:
        notebook = jupytext.read(path)
        result = single_nb_execution(
            notebook, cwd=str(path.parent), timeout=timeout, allow_errors=allow_errors, meta_override=True
        )
        failure = None if result.err is None else f"failed: {type(result.err).__name__} (the build says more)"
        results.append((path, notebook, result.time, failure))
    return results


def _cache_outputs(cache, path: Path, notebook, seconds: float) -> None:
    """Cache an executed page under its path, with the record myst-nb keeps (``execution_seconds``)."""
    from jupyter_cache.base import CacheBundleIn

    record = cache.add_nb_to_project(str(path), read_data={"name": "jupytext", "type": "plugin"})
    bundle = CacheBundleIn(notebook, record.uri, data={"execution_seconds": seconds})
    cache.cache_notebook_bundle(bundle, check_validity=False, overwrite=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=("execute", "build", "catalogs"))
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="the repository (default: here)")
    parser.add_argument("--strict", action="store_true", help="build: every warning is an error")
    arguments = parser.parse_args(argv)
    root = arguments.root.resolve()
    if arguments.action == "execute":
        executed = execute_pages(root)
        print(f"pages executed: {len(executed)}; the others' outputs were in {EXECUTION_CACHE}")
        return 0
    for language in LANGUAGES:
        if arguments.action == "build":
            print(f"{language} edition: {build_edition(root, language, arguments.strict)}")
        else:
            templates = extract_messages(root, root / BUILD / "gettext-templates")
            print(f"{language} catalogs: {update_catalogs(root, language, templates)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
