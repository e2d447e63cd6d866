"""The Chinese edition's catalogs are complete and keep what is not prose: every page of the book has
one, every entry is translated and none is fuzzy, and each translation holds exactly the glued
numbers, formulas, code, citations and link targets of its English source."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from transformer_course.book_programs.editions import LANGUAGES, LOCALE, toc_pages
from transformer_course.book_programs.translation import (
    DISPLAY_MATH,
    INLINE_CODE,
    INLINE_MATH,
    LINK_ADDRESS,
    ROLE,
    lost_placeholders,
    placeholders,
)

pofile = pytest.importorskip("babel.messages.pofile", reason="needs Babel (the book extra brings it with Sphinx)")

ROOT = Path(__file__).resolve().parents[1]


CATALOGS = [(language, page) for language in LANGUAGES for page in toc_pages(ROOT)]


def catalog_path(language: str, page: str) -> Path:
    return ROOT / LOCALE / language / "LC_MESSAGES" / f"{page}.po"


def messages(language: str, page: str) -> list:
    with catalog_path(language, page).open("rb") as handle:
        return [message for message in pofile.read_po(handle, abort_invalid=True) if message.id]


def _name(case) -> str:
    return f"{case[0]}:{case[1]}"


@pytest.mark.parametrize("case", CATALOGS, ids=_name)
def test_every_page_has_a_catalog(case):
    assert catalog_path(*case).is_file(), f"no catalog {catalog_path(*case).relative_to(ROOT)}: run `make catalogs`"


@pytest.mark.parametrize("case", CATALOGS, ids=_name)
def test_every_entry_is_translated_and_none_is_fuzzy(case):
    if not catalog_path(*case).is_file():
        pytest.fail(f"no catalog for {case}")
    todo = [message.id[:70] for message in messages(*case) if not message.string or message.fuzzy]
    assert not todo, f"{len(todo)} entries to translate (sphinx-intl marks changed ones fuzzy): {todo[:5]}"


@pytest.mark.parametrize("case", CATALOGS, ids=_name)
def test_every_translation_keeps_the_placeholders_of_its_source(case):
    if not catalog_path(*case).is_file():
        pytest.fail(f"no catalog for {case}")
    problems = []
    for message in messages(*case):
        if message.string:
            lost, extra = lost_placeholders(message.id, message.string)
            if lost or extra:
                problems.append(f"{message.id[:50]!r}: lost {lost}, added {extra}")
    assert not problems, "\n".join(problems[:10])


def test_a_changed_number_format_a_lost_formula_and_a_moved_link_are_caught():
    source = "The rate {glue:text}`08-training.md::peak:.4f` at $\\sqrt{d}$, see [the paper](https://arxiv.org)."
    rate, root, link = "{glue:text}`08-training.md::peak:.4f`", "$\\sqrt{d}$", "[论文](https://arxiv.org)"
    assert lost_placeholders(source, f"速率 {rate} 在 {root}，见{link}。") == ([], [])
    assert lost_placeholders(source, f"速率 {rate.replace('.4f', '.2f')} 在 {root}，见{link}。")[0]
    assert lost_placeholders(source, f"速率 {rate}，见{link}。")[0]
    assert lost_placeholders(source, f"速率 {rate} 在 {root}，见{link.replace('arxiv.org', 'example.org')}。")[0]


def test_a_term_may_be_retitled_but_not_retargeted():
    source = "That is **{term}`attention`** ({doc}`chapter 4 <04-masks>`)."
    assert lost_placeholders(source, "这就是 **{term}`注意力 <attention>`**（{doc}`第 4 章 <04-masks>`）。") == ([], [])
    assert lost_placeholders(source, "这就是 **{term}`注意力 <softmax>`**（{doc}`第 4 章 <04-masks>`）。")[0]
    assert placeholders("{cite:t}`vaswani2017attention`") == placeholders("（{cite:t}`vaswani2017attention`）")


def test_a_section_reference_may_be_retitled_but_not_retargeted():
    source = "Counted as {ref}`chapter 8 <training-cost>` counts it."
    assert lost_placeholders(source, "按 {ref}`第 8 章 <training-cost>` 的方式计数。") == ([], [])
    assert lost_placeholders(source, "按 {ref}`第 8 章 <training-package-code>` 的方式计数。")[0]


def _emphasis(text: str, markdown) -> list[str]:
    tokens = markdown.parseInline(text)
    return sorted(child.type for token in tokens for child in token.children or [] if child.type.endswith("_open"))


@pytest.mark.parametrize("case", CATALOGS, ids=_name)
def test_every_translation_keeps_the_bold_and_italics_of_its_source(case):
    """`**` between a Chinese character and a role (`的**{term}…`) is not emphasis to CommonMark: it shows."""
    markdown_it = pytest.importorskip("markdown_it", reason="needs myst-parser's markdown-it (the book extra)")
    dollarmath = pytest.importorskip("mdit_py_plugins.dollarmath", reason="needs mdit-py-plugins (the book extra)")
    markdown = markdown_it.MarkdownIt("commonmark").use(dollarmath.dollarmath_plugin)
    if not catalog_path(*case).is_file():
        pytest.fail(f"no catalog for {case}")
    lost = [
        message.string[:60]
        for message in messages(*case)
        if message.string and _emphasis(message.id, markdown) != _emphasis(message.string, markdown)
    ]
    assert not lost, f"bold or italics lost (put a space between the Chinese and the **): {lost[:5]}"


# The Chinese edition's terminology (book/locale/zh_CN/TERMS.md): one Chinese term for each English one.
TERMS = ROOT / LOCALE / "zh_CN" / "TERMS.md"
TERM_PAGES = [  # the chapters, intro included, and the exercise pages (the glossary pairs the two terms itself)
    page for page in toc_pages(ROOT) if Path(page).name not in {"glossary", "bibliography"}
]
NOT_PROSE = [ROLE, DISPLAY_MATH, INLINE_MATH, INLINE_CODE, LINK_ADDRESS]


def terminology() -> list[tuple[str, str, list[str], str]]:
    """(English, Chinese, avoided patterns, zh.d2l.ai's word) for each row of TERMS.md's table."""
    rows = []
    for line in TERMS.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) != 4 or cells[0] == "English" or set(cells[0]) <= set("-:"):
            continue
        english, chinese, avoided, d2l = cells
        rows.append((english, chinese, [pattern for pattern in avoided.split("、") if pattern], d2l))
    return rows


def english_prose(message: str) -> str:
    """The words of a source message, without its roles, math and code."""
    for pattern in NOT_PROSE:
        message = pattern.sub(" ", message)
    return message


def mentions(english: str, prose: str) -> bool:
    return re.search(rf"\b{re.escape(english)}(?:e?s)?\b", prose, re.IGNORECASE) is not None


def test_the_terminology_table_gives_each_english_term_one_chinese_term():
    rows = terminology()
    assert len(rows) > 20, f"TERMS.md's table was not read: {len(rows)} rows"
    english = [row[0].lower() for row in rows]
    assert len(english) == len(set(english)), f"an English term listed twice: {english}"
    clashes = [(row[1], pattern) for row in rows for pattern in row[2] if re.search(pattern, row[1])]
    assert not clashes, f"a Chinese term is also one of its avoided variants: {clashes}"


def test_an_entry_that_mentions_a_term_is_checked_for_its_chinese_term():
    assert mentions("batch", english_prose("Random batches of {glue:text}`p.md::batch_size:s` pairs"))
    assert not mentions("batch", english_prose("`batch_size` and BatchNorm"))
    assert mentions("cell", "the next cells")


@pytest.mark.parametrize("page", TERM_PAGES)
def test_every_translation_uses_the_terminology_tables_chinese_term(page):
    missing = []
    for message in messages("zh_CN", page):
        if not message.string or message.string == message.id:
            continue  # a formula or a name, the same in both editions
        prose = english_prose(message.id)
        missing += [
            f"{english} → {chinese}: {message.string[:50]!r}"
            for english, chinese, _, _ in terminology()
            if mentions(english, prose) and chinese not in message.string
        ]
    assert not missing, f"{len(missing)} translations without the table's term (TERMS.md): {missing[:5]}"


@pytest.mark.parametrize("page", TERM_PAGES)
def test_no_translation_uses_an_avoided_variant_of_a_term(page):
    found = [
        f"{pattern} (say {chinese}): {message.string[:50]!r}"
        for message in messages("zh_CN", page)
        for _, chinese, avoided, _ in terminology()
        for pattern in avoided
        if re.search(pattern, message.string)
    ]
    assert not found, f"{len(found)} translations use a variant TERMS.md avoids: {found[:5]}"


def test_the_chinese_glossary_names_zh_d2l_ais_word_where_it_differs():
    glossary = " ".join(message.string for message in messages("zh_CN", "book/glossary"))
    missing = [(chinese, d2l) for _, chinese, _, d2l in terminology() if d2l and d2l != chinese and d2l not in glossary]
    assert not missing, f"the glossary does not give zh.d2l.ai's word beside the course's: {missing}"
