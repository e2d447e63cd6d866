"""The Chinese edition's catalogs are complete and keep what is not prose: every page of the book has
one, every entry is translated and none is fuzzy, and each translation holds exactly the glued
numbers, formulas, code, citations and link targets of its English source."""

from __future__ import annotations

import json
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


# The Chinese edition's terminology (book/locale/zh_CN/TERMS.md): one Chinese term for each English one, in every
# catalog (the chapters, the intro, the glossary and the exercise pages) and every Chinese learner notebook.
TERMS = ROOT / LOCALE / "zh_CN" / "TERMS.md"
TERM_PAGES = toc_pages(ROOT)
GLOSSARY = "book/glossary"  # the one page that may name zh.d2l.ai's word beside the course's
CHINESE_NOTEBOOKS = sorted(ROOT.glob("exercises/*/zh_CN/*.ipynb"))
NOT_PROSE = [ROLE, DISPLAY_MATH, INLINE_MATH, INLINE_CODE, LINK_ADDRESS]
COUNT_UNITS = {"million"}  # after a number written out, Chinese writes the count in its own unit (6500 万)


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


def translated_prose(message: str) -> str:
    """A translation without its math, code and link addresses; its roles kept whole (a glued count's ` M)."""
    roles: list[str] = []

    def set_aside(match: re.Match) -> str:
        roles.append(match.group(0))
        return f"\0{len(roles) - 1}\0"

    protected = ROLE.sub(set_aside, message)
    for pattern in (DISPLAY_MATH, INLINE_MATH, INLINE_CODE, LINK_ADDRESS):
        protected = pattern.sub(" ", protected)
    return re.sub("\0(\\d+)\0", lambda match: roles[int(match.group(1))], protected)


def mentions(english: str, prose: str) -> bool:
    return re.search(rf"\b{re.escape(english)}(?:e?s)?\b", prose, re.IGNORECASE) is not None


def needs_term(english: str, prose: str) -> bool:
    """Whether ``prose`` mentions the term where its translation must use the table's Chinese term: a count's
    unit (million parameters) written after a number written out is the translation's to convert (6500 万)."""
    for match in re.finditer(rf"\b{re.escape(english)}(?:e?s)?\b", prose, re.IGNORECASE):
        if english.split()[0].lower() in COUNT_UNITS and re.search(r"\d\s*$", prose[: match.start()]):
            continue
        return True
    return False


def missing_terms(english: str, chinese: str) -> list[str]:
    """The table's Chinese terms that a translation of ``english`` lacks. A term inside a longer one of the table
    (batch in batch normalisation) is that term's to translate."""
    if not chinese or chinese == english:
        return []  # a formula or a name, the same in both editions
    prose = english_prose(english)
    rows = terminology()
    missing = []
    for term, word, _, _ in rows:
        own = prose
        for longer, _, _, _ in rows:
            if longer != term and mentions(term, longer):
                own = re.sub(rf"\b{re.escape(longer)}(?:e?s)?\b", " ", own, flags=re.IGNORECASE)
        if needs_term(term, own) and word not in chinese:
            missing.append(f"{term} → {word}: {chinese[:50]!r}")
    return missing


def avoided_variants(chinese: str, page: str = "", english: str = "") -> list[str]:
    """The avoided variants of TERMS.md that a translation's prose uses (the glossary may name zh.d2l.ai's word)."""
    if chinese == english:
        return []  # a formula or a name, the same in both editions
    prose = translated_prose(chinese)
    found = []
    for _, word, avoided, d2l in terminology():
        text = prose.replace(d2l, " ") if page == GLOSSARY and d2l else prose
        found += [f"{pattern} (say {word}): {chinese[:50]!r}" for pattern in avoided if re.search(pattern, text)]
    return found


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


def test_a_count_written_out_may_take_its_chinese_unit_and_a_glued_one_the_tables():
    glued = "The base has {glue:text}`05-residuals-layernorm.md::base_millions:.1f` million parameters."
    assert missing_terms(glued, "基础模型有 {glue:text}`05-residuals-layernorm.md::base_millions:.1f` 万个参数。")
    assert not missing_terms(glued, "基础模型有 {glue:text}`05-residuals-layernorm.md::base_millions:.1f` 百万个参数。")
    assert not missing_terms("Table 3 gives 65 million parameters.", "论文的表 3 给出的是 6500 万个参数。")
    assert avoided_variants("65 百万个参数"), "a written-out number before 百万 is the literal case the row avoids"
    assert avoided_variants("{glue:text}`p.md::millions:.1f` M 个参数"), "a glued count followed by M"


def test_a_term_inside_a_longer_one_is_the_longer_ones_to_translate():
    assert not missing_terms("Batch normalisation averages over the batch.", "批归一化在整个批量上求平均。")
    assert missing_terms("Batch normalisation averages over the batch.", "批归一化在整个批次上求平均。")


def test_code_and_math_are_not_held_to_the_prose_terms():
    assert not avoided_variants("把 `logits` 传给 `F.cross_entropy(logits, target)`，再对 logit 取 softmax。")
    assert avoided_variants("使其 logits 一开始就很小。")
    assert not avoided_variants("LSTM 层由 1,024 个单元组成"), "an LSTM's units are counted, not cells"
    assert avoided_variants("先运行设置单元。")


@pytest.mark.parametrize("page", TERM_PAGES)
def test_every_translation_uses_the_terminology_tables_chinese_term(page):
    missing = [problem for message in messages("zh_CN", page) for problem in missing_terms(message.id, message.string)]
    assert not missing, f"{len(missing)} translations without the table's term (TERMS.md): {missing[:5]}"


@pytest.mark.parametrize("page", TERM_PAGES)
def test_no_translation_uses_an_avoided_variant_of_a_term(page):
    found = [
        problem for message in messages("zh_CN", page) for problem in avoided_variants(message.string, page, message.id)
    ]
    assert not found, f"{len(found)} translations use a variant TERMS.md avoids: {found[:5]}"


def _markdown_cells(path: Path) -> list[str]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return ["".join(cell["source"]) if cell["cell_type"] == "markdown" else "" for cell in cells]


def test_every_exercise_has_a_chinese_learner_notebook():
    assert len(CHINESE_NOTEBOOKS) == len([page for page in TERM_PAGES if page.startswith("exercises/")])


@pytest.mark.parametrize("notebook", CHINESE_NOTEBOOKS, ids=lambda path: path.parent.parent.name)
def test_every_chinese_learner_notebook_keeps_to_the_terminology_table(notebook):
    """The Markdown cells of a Chinese notebook against its English one's, cell by cell (release keeps the cells)."""
    english, chinese = _markdown_cells(notebook.parent.parent / notebook.name), _markdown_cells(notebook)
    assert len(english) == len(chinese), f"{notebook.name}: the Chinese notebook has other cells than the English one"
    problems = [
        problem
        for source, translation in zip(english, chinese)
        for problem in missing_terms(source, translation) + avoided_variants(translation, english=source)
    ]
    assert not problems, f"{len(problems)} cells break TERMS.md: {problems[:5]}"


def test_the_chinese_glossary_names_zh_d2l_ais_word_where_it_differs():
    glossary = " ".join(message.string for message in messages("zh_CN", "book/glossary"))
    missing = [(chinese, d2l) for _, chinese, _, d2l in terminology() if d2l and d2l != chinese and d2l not in glossary]
    assert not missing, f"the glossary does not give zh.d2l.ai's word beside the course's: {missing}"
