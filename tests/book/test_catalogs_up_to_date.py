"""The translation catalogs follow the English pages: extracting the messages again and updating the
catalogs with them (what `make catalogs` does) changes nothing. A page whose prose changed without
`make catalogs` fails here; after it, the changed entries are fuzzy and fail the completeness test
until they are translated again."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from transformer_course.book_programs.editions import LANGUAGES, LOCALE, extract_messages, update_catalogs

pofile = pytest.importorskip("babel.messages.pofile", reason="needs Babel (the book extra brings it with Sphinx)")
pytestmark = pytest.mark.book  # extracts through the book's build (its execution cache)

ROOT = Path(__file__).resolve().parents[2]


def entries(catalogs: Path) -> dict[str, dict[str, tuple[str, bool]]]:
    """Every catalog under ``catalogs``: its entries as msgid -> (msgstr, fuzzy)."""
    found = {}
    for path in sorted(catalogs.rglob("*.po")):
        with path.open("rb") as handle:
            messages = pofile.read_po(handle)
        found[str(path.relative_to(catalogs))] = {m.id: (m.string, m.fuzzy) for m in messages if m.id}
    return found


@pytest.fixture(scope="module")
def templates(tmp_path_factory) -> Path:
    return extract_messages(ROOT, tmp_path_factory.mktemp("templates"))


@pytest.mark.parametrize("language", LANGUAGES)
def test_updating_the_catalogs_from_the_pages_changes_nothing(templates, tmp_path, language):
    committed = ROOT / LOCALE / language / "LC_MESSAGES"
    copy = tmp_path / "locale"
    shutil.copytree(ROOT / LOCALE, copy)
    updated = update_catalogs(ROOT, language, templates, locale=copy)
    before, after = entries(committed), entries(updated)
    assert sorted(after) == sorted(before), f"catalogs added or missing: {sorted(set(after) ^ set(before))}"
    changed = {
        name: sorted(set(after[name].items()) ^ set(before[name].items()))[:3]
        for name in after
        if after[name] != before[name]
    }
    assert not changed, f"run `make catalogs` and translate what it marks; catalogs behind their pages: {changed}"
