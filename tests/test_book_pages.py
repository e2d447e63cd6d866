"""The book's pages read in small pieces: no visible code cell over 30 lines, no paragraph with more than
five glued numbers (more belong in a table), and no visible cell storing numbers for the text (`glue`
belongs in a folded cell). Read from the MyST sources, without building the book."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

jupytext = pytest.importorskip("jupytext", reason="needs the book extra: pip install 'transformer-course[book]'")

BOOK = Path(__file__).resolve().parents[1] / "book"
PAGES = sorted(BOOK.glob("*.md"))
MAX_CELL_LINES = 30
MAX_GLUED_PER_PARAGRAPH = 5
FOLDED = {"hide-input", "remove-input", "remove-cell"}  # a reader sees these cells' code only by asking
GLUE = re.compile(r"\{glue(?::\w*)?\}`")
GLUE_CALL = re.compile(r"^\s*glue(?:_phrase|_count)?\(", re.MULTILINE)  # myst-nb's glue and the book's wrappers


def _cells(page: Path):
    return jupytext.read(page).cells


def visible_code_cells_longer_than(page: Path, limit: int) -> list[str]:
    """The first line of each visible code cell of ``page`` with more than ``limit`` lines, and its length."""
    long = []
    for cell in _cells(page):
        if cell.cell_type == "code" and not FOLDED & set(cell.metadata.get("tags", [])):
            lines = cell.source.splitlines()
            if len(lines) > limit:
                long.append(f"{page.name}: {lines[0]!r}… ({len(lines)} lines)")
    return long


def visible_code_cells_that_glue(page: Path) -> list[str]:
    """The first line of each visible code cell of ``page`` that calls ``glue``: bookkeeping, not the lesson."""
    return [
        f"{page.name}: {cell.source.splitlines()[0]!r}…"
        for cell in _cells(page)
        if cell.cell_type == "code"
        and not FOLDED & set(cell.metadata.get("tags", []))
        and GLUE_CALL.search(cell.source)
    ]


def paragraphs_with_more_glue_than(page: Path, limit: int) -> list[str]:
    """The start of each prose paragraph of ``page`` that glues more than ``limit`` numbers, and how many."""
    crowded = []
    for cell in _cells(page):
        if cell.cell_type != "markdown":
            continue
        for paragraph in re.split(r"\n\s*\n", cell.source):
            if paragraph.lstrip().startswith("|"):  # a table is where many numbers belong
                continue
            count = len(GLUE.findall(paragraph))
            if count > limit:
                crowded.append(f"{page.name}: {paragraph.strip()[:60]!r}… ({count} glued numbers)")
    return crowded


def test_the_book_has_pages_to_check():
    assert len(PAGES) >= 10, [page.name for page in PAGES]


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.stem)
def test_no_visible_code_cell_is_longer_than_thirty_lines(page):
    long = visible_code_cells_longer_than(page, MAX_CELL_LINES)
    assert not long, "split these cells, with a sentence between the parts:\n" + "\n".join(long)


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.stem)
def test_no_visible_code_cell_glues(page):
    visible = visible_code_cells_that_glue(page)
    assert not visible, "move these glue calls to a cell tagged hide-input:\n" + "\n".join(visible)


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.stem)
def test_no_paragraph_glues_more_than_five_numbers(page):
    crowded = paragraphs_with_more_glue_than(page, MAX_GLUED_PER_PARAGRAPH)
    assert not crowded, "put these numbers in a table or split the paragraph:\n" + "\n".join(crowded)


def test_the_checks_find_a_long_cell_a_crowded_paragraph_and_a_visible_glue(tmp_path):
    page = tmp_path / "page.md"
    code = "\n".join(f"x{i} = {i}" for i in range(MAX_CELL_LINES + 1))
    glued = " ".join(f"{{glue:text}}`n{i}`" for i in range(MAX_GLUED_PER_PARAGRAPH + 1))
    page.write_text(
        "---\njupytext:\n  text_representation:\n    extension: .md\n    format_name: myst\n"
        "kernelspec:\n  display_name: Python 3\n  language: python\n  name: python3\n---\n\n"
        f"Numbers: {glued}.\n\n```{{code-cell}} ipython3\n{code}\n```\n\n"
        '```{code-cell} ipython3\nglue("n", 1, display=False)\n```\n\n'
        '```{code-cell} ipython3\n:tags: [hide-input]\nglue("m", 2, display=False)\n```\n',
        encoding="utf-8",
    )
    assert len(visible_code_cells_longer_than(page, MAX_CELL_LINES)) == 1
    assert len(paragraphs_with_more_glue_than(page, MAX_GLUED_PER_PARAGRAPH)) == 1
    assert len(visible_code_cells_that_glue(page)) == 1


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.stem)
def test_every_glued_number_names_its_page_and_its_format(page):
    """A translated paragraph loses a glued number that does not name its page (myst-nb looks a bare key
    up in the translated document's own glue, which is empty), so the source names it: `page.md::key`.
    With a page, `{glue:text}` needs a format (`page.md::key:s`: it splits the format off at the last
    colon), and `{glue:md}` cannot name a page at all."""
    roles = re.findall(r"\{glue(?::(\w*))?\}`([^`]+)`", page.read_text(encoding="utf-8"))
    bare = [content for _, content in roles if "::" not in content]
    unformatted = [content for kind, content in roles if kind == "text" and ":" not in content.partition("::")[2]]
    markdown = [content for kind, content in roles if kind == "md"]
    assert not bare, f"write these as {{glue:text}}`{page.name}::key:s`: {bare[:5]}"
    assert not unformatted, f"give these a format, e.g. `::key:s`: {unformatted[:5]}"
    assert not markdown, f"glue text and use {{glue:text}}: {markdown[:5]}"
