"""MathJax 4, served by the book itself: equations that render offline and that a screen reader speaks.

The book's pages load MathJax from their own site, never from a CDN, so a reader offline (or a build
checked on a closed network) sees equations, not raw TeX. MathJax 4 comes from the npm registry as two
packages, the program and its default font (New Computer Modern), which `pooch
<https://www.fatiando.org/pooch>`_ fetches once into the course's cache folder (the one Multi30k's
files use: ``$TRANSFORMER_COURSE_CACHE``, else the user's cache folder), checked against the registry's
SHA-512 of each tarball and unpacked there. After an HTML build, :func:`copy_into` puts the files the
pages load into the site's ``_static/mathjax/``; the font goes to ``_static/mathjax/fonts/``, where
:data:`CONFIG` points MathJax's loader.

What MathJax 4 gives a reader who does not see the page: its combined component ``tex-mml-chtml.js``
carries the accessibility extensions, on by default. Each equation is enriched semantically and gets
speech (the Speech Rule Engine, running in a web worker from ``sre/``) and Braille: a screen reader
reads the equation as a whole (an image named by its speech, e.g. "the fraction with numerator Q K …"),
and the equation takes the keyboard focus (Tab) so that its parts can be explored with the arrow keys.

    python -m transformer_course.book_programs.mathjax      # fetch into the cache (the build does it too)
"""

from __future__ import annotations

import shutil
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pooch

from transformer_course.data.download import cache_directory

REGISTRY = "https://registry.npmjs.org"


@dataclass(frozen=True)
class NpmPackage:
    """One package of the npm registry, at a fixed version, with the SHA-512 the registry publishes for it."""

    name: str
    version: str
    sha512: str  # hex digest of the tarball (the registry's ``dist.integrity``, decoded from base64)
    served: tuple[str, ...]  # the files and folders of the package that the pages load

    @property
    def tarball_url(self) -> str:
        return f"{REGISTRY}/{self.name}/-/{self.name.rsplit('/', 1)[-1]}-{self.version}.tgz"

    @property
    def folder_name(self) -> str:
        return f"{self.name.rsplit('/', 1)[-1]}-{self.version}"


MATHJAX = NpmPackage(
    name="mathjax",
    version="4.1.3",
    sha512="04dffc3e4827ec6d69203609a9df6677e247b04fe3c9d4986f23999d27520345"
    "b38ae54ef2647175889616e9a4555972ffc53e866f43a482285aebf24af7abcf",
    # The combined component the pages load (TeX and MathML in, HTML out) and what it loads on demand: TeX
    # extensions, the menu, the accessibility extensions and the speech engine with its rules per language.
    served=("tex-mml-chtml.js", "a11y", "adaptors", "input", "output", "sre", "ui", "LICENSE"),
)
FONT = NpmPackage(
    name="@mathjax/mathjax-newcm-font",
    version="4.1.3",
    sha512="833001ddd1478a51d7d65e71db152a44bfb58c342ddc5cb36b50e410c557582e"
    "04f12bec19d9601336b8ec7622d968557207e4bdfe338141b3ba16eadcf8e57b",
    # The web fonts and their character ranges for HTML output (not SVG's); package.json names the licence.
    served=("chtml", "package.json"),
)
ENTRY = "tex-mml-chtml.js"
TARGET = "mathjax"  # under the site's _static/
FONTS = "fonts"  # under TARGET: the font package as ``fonts/mathjax-newcm-font``
# ``window.MathJax`` on every page: fonts from the site (MathJax's default looks for them on a CDN).
CONFIG = {"loader": {"paths": {"fonts": f"[mathjax]/{FONTS}"}}}


def fetch(package: NpmPackage, progress: bool = False) -> Path:
    """The unpacked ``package`` in the cache, fetching and checking its tarball the first time.

    Raises:
        OSError: the registry could not be reached (and the cache does not hold the package), or the
            tarball arrived with another SHA-512; the message names the URL and what to do.
    """
    folder = cache_directory() / "npm" / package.folder_name
    if (folder / "package.json").is_file():
        return folder
    try:
        tarball = pooch.retrieve(
            package.tarball_url,
            known_hash=f"sha512:{package.sha512}",
            fname=f"{package.folder_name}.tgz",
            path=folder.parent,
            progressbar=progress,
        )
    except Exception as error:  # requests' errors, or pooch's ValueError for a wrong hash
        raise OSError(
            f"could not fetch {package.name} {package.version} from {package.tarball_url} ({error}). The book "
            f"serves MathJax from its own site and needs it once in {folder.parent}: build once with access to "
            f"the npm registry, or set TRANSFORMER_COURSE_CACHE to a folder that holds it"
        ) from None
    # Unpacked beside its place, then renamed into it: an interrupted unpacking leaves no half package.
    with tempfile.TemporaryDirectory(dir=folder.parent) as scratch, tarfile.open(tarball) as archive:
        archive.extractall(scratch, filter="data")
        shutil.rmtree(folder, ignore_errors=True)
        (Path(scratch) / "package").rename(folder)  # npm tarballs hold one folder, ``package/``
    return folder


def copy_into(static: Path) -> Path:
    """Copy MathJax and its font into ``static/mathjax/`` (a site's ``_static``); returns the entry script."""
    target = static / TARGET
    for package, place in ((MATHJAX, target), (FONT, target / FONTS / FONT.name.rsplit("/", 1)[-1])):
        source = fetch(package)
        place.mkdir(parents=True, exist_ok=True)
        for name in package.served:
            if (source / name).is_dir():
                shutil.copytree(source / name, place / name, dirs_exist_ok=True)
            else:
                shutil.copy2(source / name, place / name)
    return target / ENTRY


if __name__ == "__main__":
    for npm_package in (MATHJAX, FONT):
        print(fetch(npm_package, progress=sys.stderr.isatty()))
