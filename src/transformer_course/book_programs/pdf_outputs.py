"""What the PDF editions print of outputs made for a browser: HTML tables as tables, interactive views as a note.

A cell that shows a table of numbers (``display(HTML("<table>...</table>"))``) has two outputs for a
reader: ``text/html``, which the HTML editions show, and ``text/plain``, which says only
``<IPython.core.display.HTML object>``. myst-nb's LaTeX builder knows no HTML, so the PDF would print
that line where the numbers are. :class:`PrintedHtml`, a myst-nb MIME renderer (registered in
``pyproject.toml``), ranks ``text/html`` above ``text/plain`` for LaTeX and renders it as docutils
nodes, which Sphinx's LaTeX writer typesets: each ``<table>`` a table (its header rows, its spanned
cells, bold and inline code kept), each ``<p>`` around it a paragraph. An output that holds a script (the
attention viewer, drawn by the browser) becomes a note, in the page's language, that it is interactive
in the HTML edition. In an HTML build it renders nothing, so myst-nb's own HTML output stays.
"""

from __future__ import annotations

from docutils import nodes

from .edition_figures import _page_language as page_language  # the edition whose page is being rendered

# The note in place of an output that only a browser can draw, by edition.
INTERACTIVE = {
    "en": "An interactive view, drawn by the browser: open this page in the HTML edition to explore it.",
    "zh_CN": "此处是由浏览器绘制的交互视图：请在本书的 HTML 版中打开本页查看。",
}
_INLINE = {"b": nodes.strong, "strong": nodes.strong, "i": nodes.emphasis, "em": nodes.emphasis, "code": nodes.literal}


class PrintedHtml:
    """myst-nb's renderer of ``text/html`` outputs for LaTeX (a ``myst_nb.mime_renderers`` entry point)."""

    # Above text/plain (60), below every picture and text/latex: only an output with nothing better is printed so.
    mime_priority_overrides = [("latex", "text/html", 55)]

    @staticmethod
    def handle_mime(renderer, data, inline: bool):
        if data.mime_type != "text/html" or inline or _builder_format(renderer) != "latex":
            return None
        return html_as_nodes(data.content, page_language(renderer))


def _builder_format(renderer) -> str | None:
    environment = getattr(renderer.renderer, "sphinx_env", None)
    builder = getattr(getattr(environment, "app", None), "builder", None)
    return getattr(builder, "format", None)


def html_as_nodes(html: str, language: str = "en") -> list[nodes.Element]:
    """The docutils nodes of an output's HTML: its tables and paragraphs in order, or the note of an interactive one."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    if soup.find("script") is not None:
        return [nodes.paragraph("", "", nodes.emphasis("", INTERACTIVE.get(language, INTERACTIVE["en"])))]
    printed = []
    for element in soup.find_all(["p", "table"]):
        if element.name == "table":
            printed.append(_table(element))
        elif element.find_parent("table") is None:
            printed.append(nodes.paragraph("", "", *_inline(element)))
    if not printed:  # no table nor paragraph: its text, as the HTML shows it
        printed.append(nodes.paragraph("", "", *_inline(soup)))
    return printed


def _table(table) -> nodes.table:
    """A docutils table of an HTML ``<table>``: rows of ``<th>`` only at its top are its header."""
    rows = table.find_all("tr")
    header_rows = 0
    for row in rows:
        if row.find("td") is not None:
            break
        header_rows += 1
    columns = sum(int(cell.get("colspan", 1)) for cell in rows[0].find_all(["th", "td"]))
    group = nodes.tgroup(cols=columns)
    group += [nodes.colspec(colwidth=1) for _ in range(columns)]
    for part, part_rows in ((nodes.thead(), rows[:header_rows]), (nodes.tbody(), rows[header_rows:])):
        for row in part_rows:
            printed_row = nodes.row()
            for cell in row.find_all(["th", "td"]):
                entry = nodes.entry()
                if int(cell.get("rowspan", 1)) > 1:
                    entry["morerows"] = int(cell["rowspan"]) - 1
                if int(cell.get("colspan", 1)) > 1:
                    entry["morecols"] = int(cell["colspan"]) - 1
                entry += nodes.paragraph("", "", *_inline(cell))
                printed_row += entry
            part += printed_row
        if part_rows:
            group += part
    return nodes.table("", group)


def _inline(element) -> list[nodes.Node]:
    """The text of ``element``, its bold, italic and code kept."""
    printed = []
    for child in element.children:
        if isinstance(child, str):
            printed.append(nodes.Text(str(child)))
        elif child.name in _INLINE:
            printed.append(_INLINE[child.name]("", child.get_text()))
        elif child.name == "br":
            printed.append(nodes.Text(" "))
        else:
            printed.extend(_inline(child))
    return printed
