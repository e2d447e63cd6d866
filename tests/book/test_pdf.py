"""The PDF editions: Jupyter Book's LaTeX route (XeLaTeX, xeCJK) from the HTML's execution, every character kept.

Both PDFs are built once per test session as ``make pdf`` builds them
(``transformer_course.book_programs.pdf_editions``): from the execution cache that the HTML editions
were built from, so nothing runs again. Their text is read back with poppler's ``pdftotext`` and
``pdfinfo``, their links, outline and catalog with pypdf. The Chinese PDF must hold its chapter titles
and sentences of every page's catalog: a font without Chinese glyphs would leave them out, and XeLaTeX
says so in its log ("Missing character").

Needs XeLaTeX and its Chinese support (README: the Debian packages) and poppler-utils.
"""

from __future__ import annotations

import base64
import hashlib
import re
import shutil
import subprocess
import unicodedata
from collections import Counter
from pathlib import Path

import pytest
import yaml
from babel.messages.pofile import read_po

from transformer_course import __version__
from transformer_course.book_programs import pdf_editions
from transformer_course.book_programs.edition_figures import html_type, mime_type
from transformer_course.book_programs.editions import EXECUTION_CACHE, LOCALE, toc_pages

pytestmark = pytest.mark.book

ROOT = Path(__file__).resolve().parents[2]
EDITIONS = ("en", "zh_CN")
PAGES = toc_pages(ROOT)
CHAPTER_PAGES = [page for page in PAGES if page.startswith("book/")]
SENTENCES_PER_PAGE = 3
# Catalog entries that are prose only: no role, math, markup or link, which the page prints otherwise.
_MARKUP = re.compile(r"[{}`$*\[\]<>\\|_#]")


@pytest.fixture(scope="session")
def pdfs() -> dict[str, Path]:
    """Both PDF editions, built as ``make pdf`` builds them."""
    missing = [tool for tool in ("xelatex", "latexmk", "pdftotext", "pdfinfo") if shutil.which(tool) is None]
    if missing:
        pytest.fail(f"{', '.join(missing)} not found: install the Debian packages README names for the PDF")
    try:
        return pdf_editions.build_pdfs(ROOT, EDITIONS)
    except RuntimeError as error:
        pytest.fail(str(error))


def pdf_text(pdf: Path, first: int | None = None, last: int | None = None, body: bool = False) -> str:
    """The text of ``pdf`` (pages ``first`` to ``last``); ``body``: without the running heads and feet, so that a
    sentence broken across two pages reads on (A4, the heads above 60 pt from the top, the feet below 780 pt)."""
    pages = [*(["-f", str(first)] if first else []), *(["-l", str(last)] if last else [])]
    crop = ["-x", "0", "-y", "60", "-W", "596", "-H", "720"] if body else []
    return subprocess.run(
        ["pdftotext", *pages, *crop, str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout


_QUOTES = str.maketrans("‘’“”", "''\"\"")  # Sphinx's smart quotes in the PDF, straight ones in a catalog


def comparable(text: str) -> str:
    """Text as a PDF's extraction and a catalog can both be compared: NFKC (ligatures, full-width forms), straight
    quotes, no spaces, line breaks or hyphens (where a line was broken, or where xeCJK joins Chinese and Latin)."""
    return re.sub(r"[\s\-\u00ad]", "", unicodedata.normalize("NFKC", text).translate(_QUOTES))


def catalog(page: str) -> list:
    """The translated entries of a page's catalog, in the page's order (the first is its title)."""
    with (ROOT / LOCALE / "zh_CN" / "LC_MESSAGES" / f"{page}.po").open("rb") as handle:
        return [message for message in read_po(handle) if message.id and message.string]


def page_title(page: str, language: str) -> str:
    """A page's title in ``language``: its catalog's first entry."""
    message = catalog(page)[0]
    return message.id if language == "en" else message.string


def titles(language: str) -> list[str]:
    """Every chapter's title and every part's caption, in ``language``."""
    chapters = [page_title(page, language) for page in PAGES[1:]]  # the root page's title is the book's, on page 1
    captions = {message.id: message.string for message in catalog(PAGES[0])}
    parts = [part["caption"] for part in yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))["parts"]]
    return chapters + (parts if language == "en" else [captions[caption] for caption in parts])


def sample_sentences(page: str) -> list[str]:
    """A few Chinese sentences of the page's catalog: the first, a middle and the last entry that is prose only."""
    prose = [message.string for message in catalog(page)[1:] if not _MARKUP.search(message.string)]
    sentences = [re.split(r"(?<=[。：；！？])", text)[0] for text in prose]
    sentences = [sentence for sentence in sentences if len(sentence) >= 8]
    if len(sentences) <= SENTENCES_PER_PAGE:
        return sentences
    return [sentences[0], sentences[len(sentences) // 2], sentences[-1]]


# --------------------------------------------------------------------------------------------
# Where the PDFs are, and what built them
# --------------------------------------------------------------------------------------------


def test_make_pdf_writes_each_edition_under_build_pdf_and_into_the_site(pdfs):
    assert sorted(path.name for path in pdfs.values()) == [
        "attention-is-all-you-need-zh_CN.pdf",
        "attention-is-all-you-need.pdf",
    ]
    for language, pdf in pdfs.items():
        assert pdf.parent == ROOT / pdf_editions.PDF_DIR, f"{language}: {pdf}"
        in_the_site = ROOT / "_build" / "html" / pdf_editions.SITE_FOLDER / pdf.name  # what every HTML page links to
        assert in_the_site.read_bytes() == pdf.read_bytes(), f"{language}: the site's copy is not the PDF"


@pytest.mark.parametrize("language", EDITIONS)
def test_the_pdf_build_executes_no_page(pdfs, language):
    log = pdf_editions.build_log(ROOT, language).read_text(encoding="utf-8")
    executed = re.findall(r"(\S+): Executing notebook", log)
    assert not executed, f"{language}: the PDF build executed {executed}: their cached outputs were not found"
    assert str((ROOT / EXECUTION_CACHE).resolve()) in log, f"{language}: not built from the HTML's execution cache"


# --------------------------------------------------------------------------------------------
# Every character
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("language", EDITIONS)
def test_latex_reports_no_missing_character(pdfs, language):
    latex = pdf_editions.latex_dir(ROOT, language)
    source = (latex / pdfs[language].with_suffix(".tex").name).read_text(encoding="utf-8")
    assert "\\tracinglostchars=2" in source, "XeLaTeX would not log a character its fonts lack"
    log = (latex / pdfs[language].with_suffix(".log").name).read_text(encoding="utf-8", errors="replace")
    missing = sorted(set(re.findall(r"Missing character: There is no (.+?) in font", log)))
    assert not missing, f"{language}: characters without a glyph: {missing}"


@pytest.mark.parametrize("language", EDITIONS)
def test_the_pdf_holds_every_chapter_title_and_part(pdfs, language):
    text = comparable(pdf_text(pdfs[language]))
    absent = [title for title in titles(language) if comparable(title) not in text]
    assert not absent, f"{language}: titles not in the PDF's text: {absent}"


@pytest.mark.parametrize("page", PAGES)
def test_the_chinese_pdf_holds_sentences_of_every_pages_catalog(pdfs, chinese_pdf_text, page):
    sentences = sample_sentences(page)
    if page.startswith("book/") and page != PAGES[0]:
        assert sentences, f"{page}: no sentence of prose only in its catalog to look for"
    absent = [sentence for sentence in sentences if comparable(sentence) not in chinese_pdf_text]
    assert not absent, f"{page}: sentences not in the Chinese PDF: {absent}"


@pytest.fixture(scope="module")
def chinese_pdf_text(pdfs) -> str:
    return comparable(pdf_text(pdfs["zh_CN"], body=True))


# --------------------------------------------------------------------------------------------
# The title page and the document's metadata
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("language", EDITIONS)
def test_the_title_page_names_the_version_and_the_commit(pdfs, language):
    head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    title_page = pdf_text(pdfs[language], 1, 1)
    assert __version__ in title_page, f"{language}: no version {__version__} on the title page:\n{title_page}"
    assert head.stdout.strip() in title_page, f"{language}: no commit {head.stdout.strip()} on:\n{title_page}"


@pytest.mark.parametrize("language", EDITIONS)
def test_the_title_page_and_the_metadata_name_the_editions_own_authors(pdfs, language):
    authors = {edition: pdf_editions.edition_config(ROOT, edition)["author"] for edition in EDITIONS}
    other = next(edition for edition in EDITIONS if edition != language)
    assert authors[language] != authors[other], f"{language}: the same author line as the {other} edition"
    title_page = comparable(pdf_text(pdfs[language], 1, 1))
    assert comparable(authors[language]) in title_page, f"{language}: no {authors[language]!r} on the title page"
    assert comparable(authors[other]) not in title_page, f"{language}: the {other} author line on the title page"
    info = subprocess.run(["pdfinfo", str(pdfs[language])], capture_output=True, text=True, check=True).stdout
    assert re.search(rf"^Author:\s*{re.escape(authors[language])}$", info, re.MULTILINE), f"{language}: {info}"


@pytest.mark.parametrize("language", EDITIONS)
def test_the_title_breaks_its_lines_between_words(pdfs, language):
    import jieba  # the words of Chinese text, as the HTML edition's search finds them

    title = pdf_editions.edition_config(ROOT, language)["title"]
    lines = [comparable(line) for line in pdf_text(pdfs[language], 1, 1).splitlines()]
    broken = [
        word for word in jieba.lcut(title) if comparable(word) and not any(comparable(word) in line for line in lines)
    ]
    assert not broken, f"{language}: the title page breaks a line inside {broken}:\n" + "\n".join(lines)


@pytest.mark.parametrize("language", EDITIONS)
def test_the_pdf_names_its_title_and_language(pdfs, language):
    from pypdf import PdfReader

    config = pdf_editions.edition_config(ROOT, language)
    info = subprocess.run(["pdfinfo", str(pdfs[language])], capture_output=True, text=True, check=True).stdout
    title = re.search(r"^Title:\s*(.*)$", info, re.MULTILINE)
    assert title and title.group(1) == config["title"], f"{language}: pdfinfo says\n{info}"
    assert PdfReader(pdfs[language]).trailer["/Root"].get("/Lang") == language.replace("_", "-")


# --------------------------------------------------------------------------------------------
# Links: the contents, the outline, cross-references, citations
# --------------------------------------------------------------------------------------------


def internal_links(pdf: Path) -> list[tuple[int, str]]:
    """Every link to a place in the document: (its page, 1-based; the named destination it leads to)."""
    from pypdf import PdfReader

    links = []
    for number, page in enumerate(PdfReader(pdf).pages, start=1):
        for annotation in page.get("/Annots") or []:
            annotation = annotation.get_object()
            action = annotation.get("/A")
            if annotation.get("/Subtype") == "/Link" and action is not None and action.get("/S") == "/GoTo":
                links.append((number, str(action["/D"])))
            elif annotation.get("/Subtype") == "/Link" and "/Dest" in annotation:
                links.append((number, str(annotation["/Dest"])))
    return links


@pytest.fixture(scope="module")
def links(pdfs) -> dict[str, list[tuple[int, str]]]:
    return {language: internal_links(pdf) for language, pdf in pdfs.items()}


@pytest.mark.parametrize("language", EDITIONS)
def test_every_internal_link_leads_to_a_place_in_the_document(pdfs, links, language):
    from pypdf import PdfReader

    destinations = PdfReader(pdfs[language]).named_destinations
    broken = sorted({destination for _, destination in links[language] if destination not in destinations})
    assert not broken, f"{language}: links to nowhere: {broken[:20]}"


def _destination_page(reader, name: str) -> int:
    """The page (1-based) a named destination of the document is on."""
    return reader.get_destination_page_number(reader.named_destinations[name]) + 1


@pytest.mark.parametrize("language", EDITIONS)
def test_the_contents_link_to_every_chapter_and_to_section_8_13(pdfs, links, language):
    from pypdf import PdfReader

    reader = PdfReader(pdfs[language])
    contents = {number for number, label in enumerate(reader.page_labels, start=1) if re.fullmatch(r"[ivxl]+", label)}
    assert contents, f"{language}: no page numbered i, ii, ... (the contents)"
    linked = {destination for number, destination in links[language] if number in contents}
    chapters = {destination for destination in linked if re.match(r"chapter\*?\.", destination)}
    assert len(chapters) == len(PAGES) - 2, (
        f"{language}: the contents link to {len(chapters)} chapters"
    )  # 8.13: a section
    assert "section.8.13" in linked, f"{language}: the contents do not link to section 8.13"
    assert _destination_page(reader, "section.8.13") > _destination_page(reader, "section.8.12")


@pytest.mark.parametrize("language", EDITIONS)
def test_cross_references_citations_and_glossary_terms_are_links(pdfs, links, language):
    from pypdf import PdfReader

    reader = PdfReader(pdfs[language])
    start = _outline_pages(reader)
    glossary, bibliography = (
        start[comparable(page_title(page, language))] for page in ("book/glossary", "book/bibliography")
    )
    in_chapters = [(page, name) for page, name in links[language] if _destination_page(reader, "part.1") <= page]
    kinds = {
        "citation": [name for _, name in in_chapters if name.startswith("cite.")],
        "glossary term": [
            name for page, name in in_chapters
            if page < glossary and glossary <= _destination_page(reader, name) < bibliography
        ],
        "reference to a chapter, section or equation": [
            name for _, name in in_chapters if re.match(r"(chapter|section|subsection|equation)\.", name)
        ],
    }  # fmt: skip
    missing = [kind for kind, found in kinds.items() if not found]
    assert not missing, f"{language}: no link of kind {missing} in the chapters"


def _outline_pages(reader) -> dict[str, int]:
    """Every entry of the PDF's outline (its bookmarks), comparable, and the page it leads to."""

    def flatten(outline) -> list:
        return [entry for item in outline for entry in (flatten(item) if isinstance(item, list) else [item])]

    return {comparable(entry.title): reader.get_destination_page_number(entry) + 1 for entry in flatten(reader.outline)}


@pytest.mark.parametrize("language", EDITIONS)
def test_the_outline_lists_every_chapter(pdfs, language):
    from pypdf import PdfReader

    outline = _outline_pages(PdfReader(pdfs[language]))
    absent = [title for title in titles(language) if not any(comparable(title) in entry for entry in outline)]
    assert not absent, f"{language}: not in the PDF's outline: {absent}"


# --------------------------------------------------------------------------------------------
# The figures and the numbers: the HTML editions' own
# --------------------------------------------------------------------------------------------


def _drawn_in_both_languages(chinese_type: str) -> list[dict]:
    """The data (by MIME type) of every output in the execution cache that holds a Chinese version of its English
    picture or table under ``chinese_type``."""
    import jupytext
    from jupyter_cache import get_cache

    cache = get_cache(str(ROOT / EXECUTION_CACHE))
    found = []
    for page in CHAPTER_PAGES:
        notebook = jupytext.read(ROOT / f"{page}.md")
        if "kernelspec" not in notebook.metadata:
            continue
        _, notebook = cache.merge_match_into_notebook(notebook)
        for cell in notebook.cells:
            found += [output["data"] for output in cell.get("outputs", []) if chinese_type in output.get("data", {})]
    return found


def _bilingual_pictures() -> list[tuple[str, str]]:
    """Every figure drawn in both languages: the SHA-256 of its English and of its Chinese PNG, from the cache."""
    return [
        tuple(hashlib.sha256(base64.b64decode(data[kind])).hexdigest() for kind in ("image/png", mime_type("zh_CN")))
        for data in _drawn_in_both_languages(mime_type("zh_CN"))
    ]


def test_the_chinese_pdf_prints_the_chinese_picture_of_every_figure_drawn_in_both_languages(pdfs):
    # myst-nb names each picture by the SHA-256 of its PNG: the .tex files name the pictures they print.
    printed = {language: set(re.findall(r"\{([0-9a-f]{64})\}\.png", _tex(language))) for language in pdfs}
    pictures = _bilingual_pictures()
    assert pictures, "no figure drawn in both languages in the execution cache"
    for english, chinese in pictures:
        assert english in printed["en"] and english not in printed["zh_CN"], f"the English picture {english[:12]}"
        assert chinese in printed["zh_CN"] and chinese not in printed["en"], f"the Chinese picture {chinese[:12]}"


def _table_cells(html: str) -> list[str]:
    """The text of every cell of an HTML table, row by row."""
    from bs4 import BeautifulSoup

    return [cell.get_text() for cell in BeautifulSoup(html, "html.parser").find_all(["th", "td"])]


def _tables_texts(pdf: Path) -> list[str]:
    """The text of the sections that hold the tables drawn in both languages, comparable: section 8.13 (up to
    chapter 9's first page), and chapter 9 to the end (its section on the Multi30k model's seeds)."""
    from pypdf import PdfReader

    reader = PdfReader(pdf)
    section_8_13, chapter_9 = _destination_page(reader, "section.8.13"), _destination_page(reader, "chapter.9")
    return [comparable(pdf_text(pdf, section_8_13, chapter_9)), comparable(pdf_text(pdf, chapter_9))]


@pytest.mark.parametrize("language", EDITIONS)
def test_each_pdf_prints_every_table_drawn_in_both_languages_in_its_own_words_and_the_same_numbers(pdfs, language):
    both = _drawn_in_both_languages(html_type("zh_CN"))
    tables = [{"en": data["text/html"], "zh_CN": data[html_type("zh_CN")]} for data in both]
    assert len(tables) >= 3, f"only {len(tables)} tables drawn in both languages in the execution cache (8.13 has 3)"
    other = next(edition for edition in EDITIONS if edition != language)
    texts = _tables_texts(pdfs[language])
    for table in tables:
        own, others = _table_cells(table[language]), _table_cells(table[other])
        absent = min(([cell for cell in own if comparable(cell) not in text], text) for text in texts)
        text = absent[1]  # the section that prints the table
        assert not absent[0], f"{language}: cells of its table not printed: {absent[0]}"
        # Phrases of the other language's table only: a word such as base or parameters is the code's too.
        phrases = [theirs for mine, theirs in zip(own, others) if mine != theirs and " " in theirs.strip()]
        foreign = [phrase for phrase in phrases if comparable(phrase) in text]
        assert phrases and not foreign, f"{language}: phrases of the {other} table in section 8.13: {foreign}"


def _tex(language: str) -> str:
    name = pdf_editions.pdf_name(ROOT, language)
    return (pdf_editions.latex_dir(ROOT, language) / name).with_suffix(".tex").read_text(encoding="utf-8")


def _pasted_numbers(tex: str) -> Counter:
    """The numbers in the glued values a page pastes into its text (myst-nb's ``pasted-text``)."""
    pasted = re.findall(r"\\DUrole\{pasted-text\}\{((?:[^{}]|\{[^{}]*\})*)\}", tex)
    return Counter(number for text in pasted for number in re.findall(r"\d+(?:[.,]\d+)*", text))


def test_both_pdfs_print_the_same_glued_numbers_and_their_text_holds_them(pdfs):
    english, chinese = _pasted_numbers(_tex("en")), _pasted_numbers(_tex("zh_CN"))
    assert sum(english.values()) > 100, f"only {sum(english.values())} glued numbers found in the English .tex"
    assert english == chinese, f"only in English {english - chinese}, only in Chinese {chinese - english}"
    text = comparable(pdf_text(pdfs["en"]))
    absent = sorted(number for number in english if comparable(number) not in text)
    assert not absent, f"glued numbers not in the English PDF's text: {absent}"
