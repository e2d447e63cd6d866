"""MathJax 4 for the book: fetched once from an npm registry, checked, and copied into a site (no network:
a registry on 127.0.0.1 serves a small package of the same layout)."""

from __future__ import annotations

import hashlib
import io
import tarfile

import pytest
from multi30k_mirror import serving, unreachable_url

from transformer_course.book_programs import mathjax


def npm_tarball(files: dict[str, str]) -> bytes:
    """A tarball as the npm registry serves one: every file under ``package/``."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, text in files.items():
            data = text.encode()
            member = tarfile.TarInfo(f"package/{name}")
            member.size = len(data)
            archive.addfile(member, io.BytesIO(data))
    return buffer.getvalue()


FILES = {
    "package.json": '{"name": "mathjax"}',
    "tex-mml-chtml.js": "window.MathJax = window.MathJax || {};",
    "sre/mathmaps/en.json": "{}",
    "tex-svg.js": "// a component the pages never load",
}


@pytest.fixture
def registry(tmp_path, monkeypatch):
    """A registry folder on 127.0.0.1 holding one package, ``mathjax-9.9.9.tgz``; the cache in ``tmp_path``."""
    folder = tmp_path / "registry" / "mathjax" / "-"
    folder.mkdir(parents=True)
    tarball = npm_tarball(FILES)
    (folder / "mathjax-9.9.9.tgz").write_bytes(tarball)
    monkeypatch.setenv("TRANSFORMER_COURSE_CACHE", str(tmp_path / "cache"))
    with serving(tmp_path / "registry") as url:
        monkeypatch.setattr(mathjax, "REGISTRY", url.rstrip("/"))
        yield mathjax.NpmPackage(
            "mathjax", "9.9.9", hashlib.sha512(tarball).hexdigest(), served=("tex-mml-chtml.js", "sre")
        )


def test_fetch_unpacks_the_package_into_the_cache(registry, tmp_path):
    folder = mathjax.fetch(registry)
    assert folder == tmp_path / "cache" / "npm" / "mathjax-9.9.9"
    assert (folder / "sre" / "mathmaps" / "en.json").read_text() == "{}"


def test_fetch_reads_the_cache_without_the_network(registry, monkeypatch):
    first = mathjax.fetch(registry)
    monkeypatch.setattr(mathjax, "REGISTRY", unreachable_url().rstrip("/"))
    assert mathjax.fetch(registry) == first


def test_a_tarball_with_other_bytes_is_refused_and_nothing_is_kept(registry, tmp_path):
    wrong = mathjax.NpmPackage("mathjax", "9.9.9", "0" * 128, served=registry.served)
    with pytest.raises(OSError, match="could not fetch mathjax 9.9.9 from http://127.0.0.1"):
        mathjax.fetch(wrong)
    assert not (tmp_path / "cache" / "npm" / "mathjax-9.9.9").exists()


def test_an_unreachable_registry_says_what_to_do(registry, monkeypatch):
    monkeypatch.setattr(mathjax, "REGISTRY", unreachable_url().rstrip("/"))
    with pytest.raises(OSError, match="build once with access to the npm registry"):
        mathjax.fetch(registry)


def test_copy_into_copies_only_what_the_pages_load(registry, monkeypatch, tmp_path):
    monkeypatch.setattr(mathjax, "MATHJAX", registry)
    monkeypatch.setattr(mathjax, "FONT", mathjax.NpmPackage("mathjax", "9.9.9", registry.sha512, served=("sre",)))
    entry = mathjax.copy_into(tmp_path / "site" / "_static")
    assert entry == tmp_path / "site" / "_static" / "mathjax" / "tex-mml-chtml.js" and entry.is_file()
    assert not (entry.parent / "tex-svg.js").exists(), "a component the pages never load was copied"
    assert (entry.parent / "fonts" / "mathjax" / "sre" / "mathmaps" / "en.json").is_file()


def test_the_pages_are_told_to_load_their_fonts_from_the_site():
    # MathJax 4 looks for its fonts on a CDN unless the loader's "fonts" path says otherwise.
    assert mathjax.CONFIG["loader"]["paths"]["fonts"] == f"[mathjax]/{mathjax.FONTS}"
