"""What the PDF editions print of outputs made for a browser, and the settings their builds add."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

nodes = pytest.importorskip("docutils.nodes", reason="needs docutils (the book extra brings it with Sphinx)")
pytest.importorskip("bs4", reason="needs Beautiful Soup (the book extra brings it with its theme)")

from transformer_course.book_programs import pdf_editions  # noqa: E402
from transformer_course.book_programs.pdf_outputs import INTERACTIVE, html_as_nodes  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _cells(table: nodes.table) -> list[list[tuple[str, int, int]]]:
    """Each row's cells as (text, morerows, morecols), header rows first."""
    return [
        [(entry.astext(), entry.get("morerows", 0), entry.get("morecols", 0)) for entry in row.findall(nodes.entry)]
        for row in table.findall(nodes.row)
    ]


def test_an_html_table_becomes_a_table_with_its_header_and_body():
    (table,) = html_as_nodes("<table><thead><tr><th>n</th><th>d</th></tr></thead><tbody><tr><td>100</td><td>512</td>"
                             "</tr><tr><td>8192</td><td>512</td></tr></tbody></table>")  # fmt: skip
    assert isinstance(table, nodes.table)
    assert len(list(table.findall(nodes.thead))) == 1 and len(list(table.findall(nodes.tbody))) == 1
    assert _cells(table) == [
        [("n", 0, 0), ("d", 0, 0)],
        [("100", 0, 0), ("512", 0, 0)],
        [("8192", 0, 0), ("512", 0, 0)],
    ]
    assert next(table.findall(nodes.tgroup))["cols"] == 2


def test_rows_of_header_cells_at_the_top_are_the_header_without_a_thead():
    (table,) = html_as_nodes(
        "<table><tr><th>decoding</th><th>BLEU</th></tr><tr><td>greedy</td><td>31.2</td></tr></table>"
    )
    (head,) = table.findall(nodes.thead)
    assert [entry.astext() for entry in head.findall(nodes.entry)] == ["decoding", "BLEU"]


def test_spanned_cells_keep_their_span_and_the_table_its_width():
    (table,) = html_as_nodes(
        "<table><thead><tr><th rowspan='2'>row</th><th colspan='2'>ours</th></tr><tr><th>ppl</th><th>acc</th></tr>"
        "</thead><tbody><tr><td>A</td><td colspan='2'>exact match 98.5 %</td></tr></tbody></table>"
    )
    assert next(table.findall(nodes.tgroup))["cols"] == 3
    assert _cells(table)[0] == [("row", 1, 0), ("ours", 0, 1)]
    assert _cells(table)[2] == [("A", 0, 0), ("exact match 98.5 %", 0, 1)]


def test_bold_and_code_in_a_cell_and_paragraphs_around_the_table_are_kept():
    paragraph, table = html_as_nodes("<p><b>n = 100</b>, d = 512</p><table><tr><th>x</th></tr><tr><td><b>1.5</b> "
                                     "(<code>k</code>)</td></tr></table>")  # fmt: skip
    assert isinstance(paragraph, nodes.paragraph) and paragraph.astext() == "n = 100, d = 512"
    assert isinstance(paragraph[0], nodes.strong)
    cell = list(table.findall(nodes.entry))[-1]
    assert [type(node) for node in cell[0]] == [nodes.strong, nodes.Text, nodes.literal, nodes.Text]


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_an_output_with_a_script_becomes_a_note_in_the_pages_language(language):
    (note,) = html_as_nodes('<div id="v"></div><script>draw("v")</script>', language)
    assert note.astext() == INTERACTIVE[language]


def test_the_pdf_build_numbers_the_chapters_of_numbered_parts_only(tmp_path):
    (tmp_path / "_toc.yml").write_text(
        "format: jb-book\nroot: intro\nparts:\n  - caption: A\n    numbered: true\n    chapters: [{file: a}]\n"
        "  - caption: B\n    chapters: [{file: b}]\n",
        encoding="utf-8",
    )
    assert r"\ifcase\value{coursepart}\or 2\or -1\else 2\fi" in pdf_editions.unnumbered_parts(tmp_path)


def test_the_title_page_names_the_version_the_commit_and_the_commits_date(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: intro\n", encoding="utf-8")
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "add", "_toc.yml"], check=True)
    dated = {**os.environ, "GIT_COMMITTER_DATE": "2026-01-02T03:04:05"}
    subprocess.run([*git, "commit", "-q", "-m", "t"], check=True, env=dated)
    head = subprocess.run([*git, "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True).stdout.strip()
    settings = pdf_editions.with_title_page(tmp_path, {}, "zh_CN")["sphinx"]["config"]
    assert settings["release"] == pdf_editions.__version__ and settings["today"] == "2026-01-02"
    assert f"\\setreleaseinfo{{，提交 {head}}}" in settings["latex_elements"]["preamble"]
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: changed\n", encoding="utf-8")
    assert pdf_editions.commit(tmp_path) == f"{head} + changes"


def test_a_copy_without_git_says_why_it_cannot_name_the_commit(tmp_path):
    with pytest.raises(RuntimeError, match="git cannot tell"):
        pdf_editions.commit(tmp_path)


def test_latex_reads_an_operator_as_a_subscript_with_braces():
    pytest.importorskip("mathjax", reason="the book's extension needs django-static-mathjax (the book extra)")
    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    try:
        from course_book import _BARE_OPERATOR_SCRIPT
    finally:
        sys.path.remove(str(ROOT / "book" / "_ext"))
    braced = _BARE_OPERATOR_SCRIPT.sub(r"\1{\2}", r"h_\max = \lfloor d/d_v \rfloor, x^\top, \max_i y_\maxwell, z_ \min")
    assert braced == r"h_{\max} = \lfloor d/d_v \rfloor, x^\top, \max_i y_\maxwell, z_{\min}"
