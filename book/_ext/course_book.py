"""The course book's own Sphinx extension (registered in ``_config.yml`` under ``sphinx.local_extensions``).

It does ten things:

1. **MathJax 4 from the site itself, speaking.** Sphinx loads MathJax from a CDN by default, so a
   reader offline (or a build checked on a closed network) sees raw ``$$`` instead of equations.
   ``transformer_course.book_programs.mathjax`` fetches MathJax 4 and its font from the npm registry
   once (checked), and after an HTML build copies them into the site as ``_static/mathjax/``;
   ``mathjax_path`` points at the copy and ``window.MathJax`` at its fonts. MathJax 4's accessibility
   extensions are on: every equation is spoken by a screen reader and explored by keyboard.

2. **Colab buttons only where Colab can open the page.** sphinx-book-theme gives every notebook
   page a "Colab" launch button that opens the page's source file from the repository. The
   chapters are MyST Markdown notebooks (``.md``), which Colab cannot open, so their button
   would lead to an error page; it is removed. The exercise notebooks (``.ipynb``) keep theirs;
   in the Chinese edition it opens the Chinese learner notebook that ``transformer-course release``
   writes beside the English one (``exercises/<assignment>/zh_CN/``).

3. **Each inline script once.** Sphinx 7.4 links an inline script registered after the builder
   started (sphinx-thebe's ``const THEBE_JS_URL = ...``) twice, once under the name ``None`` and
   once under ``''``; the second ``const`` declaration is a JavaScript error on every page. The
   duplicate is dropped.

4. **A link to the page's twin in the other edition, and to the edition's PDF.** The Chinese edition
   is built from the same source into ``zh_CN/`` under the English site
   (``transformer_course.book_programs.editions``); every page of either starts with a link to the
   same page in the other language, and names it in its head (``<link rel="alternate" hreflang=...>``),
   then with a link to the whole edition as PDF, which ``make pdf`` writes into the site's ``pdf/``
   (``transformer_course.book_programs.pdf_editions``; its name is the edition's LaTeX target).

5. **A bibliography screen readers can list.** docutils writes citations as a ``role="list"`` of
   ``role="doc-biblioentry"`` items, a role DPUB-ARIA 1.1 deprecated, so the list has no items a
   reader can count (axe-core: ``aria-deprecated-role``, ``aria-required-children``). Each citation is
   a ``listitem`` of that list instead.

6. **English marked as English in another edition.** Code, its outputs, the bibliography and the
   speech MathJax makes of an equation are English on every page; in the Chinese edition they carry
   ``lang="en"`` (WCAG 3.1.2, language of parts), so a screen reader reads them with an English voice
   instead of spelling them.

7. **Folded code named by what it shows.** myst-nb names the toggle of a folded cell "Toggle hidden
   content" (in English, in every edition) while it shows "Show code cell source" or "显示代码":
   a speech user who says what they see names nothing (WCAG 2.5.3, label in name). The toggle is
   named by its visible prompt instead.

8. **The theme's components, where they fall short of WCAG 2.1 AA.** ``book/_templates/`` holds
   the course's versions of a few (each says why); they are put first in the HTML builders' template
   path. Not through ``templates_path``: the gettext builder would extract their theme strings
   ("Search", "Color mode") into a catalog of the course's own.

9. **A name for the toggle of a chapter's sections.** The theme's navigation opens the pages under a
   chapter (chapter 8's last section) with a ``<summary>`` that holds only an icon, which a screen
   reader announces as nothing (axe-core: ``summary-name``; WCAG 4.1.2). Each gets the chapter's
   title and what it opens as its name, in the edition's language.

10. **Math that LaTeX reads as MathJax does.** MathJax takes an operator as a subscript without braces
    (``h_\\max``); TeX stops there ("Missing { inserted"). In the PDF editions' LaTeX such a subscript
    or superscript gets its braces (``h_{\\max}``); the HTML keeps the page's TeX as it is.
"""

from __future__ import annotations

import re
from html import escape
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.writers.html5 import HTML5Translator

from transformer_course.book_programs import mathjax


def use_local_mathjax(app: Sphinx, config: Config) -> None:
    """Point Sphinx at the site's own MathJax 4 (a relative ``mathjax_path`` is relative to ``_static``) and
    MathJax at the site's own fonts; fetch both now, so that a build without them stops before it starts."""
    for package in (mathjax.MATHJAX, mathjax.FONT):
        mathjax.fetch(package)
    config.mathjax_path = f"{mathjax.TARGET}/{mathjax.ENTRY}"
    config.mathjax3_config = {**(config.mathjax3_config or {}), **mathjax.CONFIG}


def copy_mathjax(app: Sphinx, exception: Exception | None) -> None:
    """After an HTML build, copy MathJax and its font into ``_static/mathjax/`` of the site."""
    if exception is None and app.builder.format == "html":
        mathjax.copy_into(Path(app.outdir) / "_static")


def keep_colab_button_for_ipynb_only(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """Remove the Colab launch button from pages whose source is not an ``.ipynb`` file."""
    source = Path(app.env.doc2path(pagename))
    if source.suffix == ".ipynb":
        _open_the_editions_notebook(context, source, app.config.language)
        return
    kept = []
    for group in context.get("header_buttons", []):
        if group.get("label") == "launch-buttons":
            group["buttons"] = [button for button in group["buttons"] if button.get("text") != "Colab"]
            if not group["buttons"]:
                continue  # nothing left to launch: drop the rocket menu as well
        kept.append(group)
    context["header_buttons"] = kept


def _open_the_editions_notebook(context: dict[str, Any], source: Path, language: str | None) -> None:
    """In an edition with learner notebooks of its own (``<folder>/<language>/<name>``), Colab opens that one."""
    translated = source.parent / str(language) / source.name
    if not language or language == "en" or not translated.is_file():
        return
    for group in context.get("header_buttons", []):
        for button in group.get("buttons", []) if group.get("label") == "launch-buttons" else []:
            if button.get("text") == "Colab" and button.get("url", "").endswith("/" + source.name):
                button["url"] = button["url"][: -len(source.name)] + f"{language}/{source.name}"


def drop_duplicate_scripts(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """Keep the first of scripts that are equal up to a missing file name (``None`` vs ``''``)."""
    seen = set()
    unique = []
    for script in context.get("script_files", []):
        key = (getattr(script, "filename", script) or "", tuple(sorted(getattr(script, "attributes", {}).items())))
        if key not in seen:
            seen.add(key)
            unique.append(script)
    context["script_files"] = unique


# Each edition: its language, its folder under the English site, and the link text that leads to it.
EDITIONS = {"en": ("", "English"), "zh_CN": ("zh_CN/", "中文")}
# The link to an edition's PDF, in its language.
PDF_LINK = {"en": "The whole book as PDF", "zh_CN": "全书 PDF 版"}


def link_the_other_edition(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """Start the page with a link to its twin in the other edition and one to the edition's PDF (pages with a
    source only)."""
    if doctree is None:  # the index, search and other generated pages
        return
    language = app.config.language if app.config.language in EDITIONS else "en"
    here_to_site = "../" * pagename.count("/") + EDITIONS[language][0].count("/") * "../"
    links, heads = [], []
    for other, (folder, name) in EDITIONS.items():
        if other == language:
            continue
        href = f"{here_to_site}{folder}{pagename}.html"
        hreflang = other.replace("_", "-")
        links.append(f'<a class="edition-link" href="{href}" hreflang="{hreflang}" lang="{hreflang}">{name}</a>')
        heads.append(f'<link rel="alternate" hreflang="{hreflang}" href="{href}">')
    from transformer_course.book_programs.pdf_editions import SITE_FOLDER

    pdf = f"{here_to_site}{SITE_FOLDER}/{Path(app.config.latex_documents[0][1]).with_suffix('.pdf').name}"
    links.append(f'<a class="pdf-link" href="{pdf}" type="application/pdf">{PDF_LINK[language]}</a>')
    context["body"] = f'<p class="edition-switch">{" · ".join(links)}</p>\n' + context.get("body", "")
    context["metatags"] = context.get("metatags", "") + "\n".join(heads)


class CitationsAsListItems(HTML5Translator):
    """Sphinx's HTML writer, with each citation an item of the citation list (and English where the page is not)."""

    def visit_citation(self, node) -> None:
        if not isinstance(node.previous_sibling(), type(node)):
            self.body.append('<div role="list" class="citation-list">\n')
        language = {} if self.config.language in (None, "en") else {"lang": "en"}
        self.body.append(self.starttag(node, "div", classes=[node.tagname], role="listitem", **language))


# The opening tags of what is English on every page: code blocks and cells' outputs (their class names
# "highlight-..." and "output text_html"), inline code, and math, which MathJax speaks in English.
_ENGLISH_PARTS = re.compile(
    r'<(div|code|span) class="([^"]*(?:\bhighlight-|\boutput text_html|\bliteral\b|\bmath notranslate\b)[^"]*)"'
)


def mark_english_parts(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any) -> None:
    """In an edition other than English, give code, outputs, inline code and math ``lang="en"``: in the page and
    in its contents beside it (a heading's math)."""
    if app.config.language in (None, "en"):
        return
    for part in ("body", "toc"):
        if isinstance(context.get(part), str):
            context[part] = _ENGLISH_PARTS.sub(r'<\1 class="\2" lang="en"', context[part])


def visit_folded_cell(self: HTML5Translator, node: Any) -> None:
    """myst-nb's folded cell (``HideCodeCellNode``), its ``<summary>`` named by its visible prompt."""
    classes = " ".join(node["classes"])
    self.body.append(f'<details class="admonition hide {classes}">\n<summary>\n')
    self.body.append(f'<p class="collapsed admonition-title">{escape(node["prompt_show"])}</p>\n')
    self.body.append(f'<p class="expanded admonition-title">{escape(node["prompt_hide"])}</p>\n')
    self.body.append("</summary>\n")


def name_folded_cells_by_their_prompt(app: Sphinx) -> None:
    """After every extension's setup (myst-nb registers its own visitor there), use :func:`visit_folded_cell`."""
    from myst_nb.sphinx_ import HideCodeCellNode, depart_HideCellInput

    app.add_node(HideCodeCellNode, override=True, html=(visit_folded_cell, depart_HideCellInput))


# A subscript or superscript that is an operator's name without braces (see 10. above).
_BARE_OPERATOR_SCRIPT = re.compile(
    r"([_^])\s*(\\(?:arg|argmax|argmin|cos|deg|det|dim|exp|gcd|inf|ker|lim|liminf|limsup|ln|log|max|min|Pr|sin|sup|tan))"
    r"(?![A-Za-z])"
)


def brace_operator_scripts(app: Sphinx, doctree: Any, docname: str) -> None:
    """Sphinx's ``doctree-resolved``: in a LaTeX build, ``h_\\max`` becomes ``h_{\\max}`` in every equation."""
    if app.builder.format != "latex":
        return
    from docutils import nodes

    for math in doctree.findall(lambda node: isinstance(node, (nodes.math, nodes.math_block))):
        for text in list(math.findall(nodes.Text)):
            braced = _BARE_OPERATOR_SCRIPT.sub(r"\1{\2}", str(text))
            if braced != str(text):
                text.parent.replace(text, nodes.Text(braced))


# The name of the toggle that opens a chapter's sections in the navigation, by edition (see 9. above).
SECTIONS_TOGGLE = {"en": "{title}: sections", "zh_CN": "{title}：各节"}


def name_the_navigation_toggles(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """After the theme has added ``generate_toctree_html``: the same navigation, each icon-only toggle named."""
    generate = context.get("generate_toctree_html")
    if generate is None:
        return
    words = SECTIONS_TOGGLE.get(app.config.language, SECTIONS_TOGGLE["en"])

    def with_named_toggles(*arguments: Any, **settings: Any) -> Any:
        navigation = generate(*arguments, **settings)
        for summary in navigation.select("li.has-children > details > summary"):
            chapter = summary.find_parent("li").find("a", recursive=False)
            if chapter is not None and not summary.get_text(strip=True):
                summary["aria-label"] = words.format(title=chapter.get_text(strip=True))
        return navigation

    context["generate_toctree_html"] = with_named_toggles


TEMPLATES = Path(__file__).resolve().parent.parent / "_templates"


def use_the_course_templates(app: Sphinx) -> None:
    """Put ``book/_templates`` first in an HTML builder's template path (see 8. above)."""
    if app.builder.format != "html":
        return
    from sphinx.jinja2glue import SphinxFileSystemLoader

    app.builder.templates.pathchain.insert(0, str(TEMPLATES))
    app.builder.templates.loaders.insert(0, SphinxFileSystemLoader(str(TEMPLATES)))


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("builder-inited", use_the_course_templates)
    from transformer_course.book_programs.edition_figures import write_descriptions_as_alt

    # Each figure's description in the page's language (book_programs.figure_descriptions) as its img alt.
    app.connect("doctree-resolved", write_descriptions_as_alt)
    app.connect("builder-inited", name_folded_cells_by_their_prompt)
    app.connect("doctree-resolved", brace_operator_scripts)
    app.set_translator("html", CitationsAsListItems)  # pydata-sphinx-theme adds its own behaviour over it
    app.connect("html-page-context", mark_english_parts)
    app.connect("config-inited", use_local_mathjax)
    app.connect("build-finished", copy_mathjax)
    # sphinx-book-theme adds the launch buttons at priority 501; this runs right after it.
    app.connect("html-page-context", keep_colab_button_for_ipynb_only, priority=502)
    app.connect("html-page-context", drop_duplicate_scripts, priority=900)
    app.connect("html-page-context", link_the_other_edition)
    app.connect("html-page-context", name_the_navigation_toggles, priority=600)  # after the theme's (500)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
