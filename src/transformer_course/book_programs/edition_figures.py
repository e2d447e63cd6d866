"""Figures whose labels are words, in each edition's language, from the one execution of the English build.

    from transformer_course.book_programs.edition_figures import show_in_every_language
    show_in_every_language(draw_figure_1, {"attention"})      # in a page's cell, instead of draw + plt.show()

Only the English build executes the pages; the Chinese edition shows its outputs
(:mod:`.editions`). So a figure with words on it is drawn in every language by that one run:
:func:`show_in_every_language` calls a drawing function once per language (its ``language``
argument) and shows one output holding every picture, each under its own MIME type:

* ``image/png``: the English picture, which Jupyter, Colab and the English site show;
* ``image/vnd.transformer-course.zh-cn+png`` (:func:`mime_type`): the Chinese one, which no notebook
  front end knows, so they ignore it. :class:`EditionImages`, a myst-nb MIME renderer (registered in
  ``pyproject.toml``), renders it as an image, and only the Chinese configuration ranks it first
  (``nb_mime_priority_overrides`` in ``book/_config_zh_CN.yml``);
* ``text/plain`` and the output's metadata: each language's description of its own picture
  (:mod:`.figure_descriptions`), which :class:`EditionImages` writes into each edition's page.

The Chinese picture needs a font with Chinese glyphs (:data:`CHINESE_FONTS`; Debian's
``fonts-noto-cjk`` gives the first). Where none is installed, only the English picture is made,
and the Chinese edition shows it.

A table a cell draws as HTML, its headers words, is shown the same way:
``show_table_in_every_language(table_3, variants, steps=200, seeds=3)`` calls a function that returns
a table's HTML once per language and shows one output with the English table as ``text/html`` and
each other language's under :func:`html_type` (``text/vnd.transformer-course.zh-cn+html``), which
:class:`EditionImages` renders as HTML and only the Chinese configuration ranks first; its
``text/plain`` is the English table's text, for a reader or a format that shows no HTML.
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import html
import io
import re
from collections.abc import Callable

from .editions import LANGUAGES
from .figure_descriptions import METADATA_KEY, Description, descriptions

# Fonts with the glyphs of Simplified Chinese, most wanted first: Debian's and Ubuntu's fonts-noto-cjk,
# Adobe's name for the same design, then the usual ones of Linux, Windows and macOS.
CHINESE_FONTS = ("Noto Sans CJK SC", "Source Han Sans SC", "WenQuanYi Zen Hei", "Microsoft YaHei", "PingFang SC")
FONTS = {"zh_CN": CHINESE_FONTS}


def mime_type(language: str) -> str:
    """The MIME type of a picture in ``language`` (``"zh_CN"`` → ``image/vnd.transformer-course.zh-cn+png``)."""
    return f"image/vnd.transformer-course.{language.lower().replace('_', '-')}+png"


def html_type(language: str) -> str:
    """The MIME type of a table in ``language`` (``"zh_CN"`` → ``text/vnd.transformer-course.zh-cn+html``)."""
    return f"text/vnd.transformer-course.{language.lower().replace('_', '-')}+html"


def words(table: dict[str, dict[str, str]], language: str) -> dict[str, str]:
    """A figure's words in ``language``: ``table[language]``, with an error that names the languages it has."""
    if language not in table:
        raise ValueError(f"no words for language {language!r}; this figure has {', '.join(sorted(table))}")
    return table[language]


@functools.cache  # once per process: where no wanted font is installed, the search would run at every figure
def font_for(language: str) -> str | None:
    """The first installed font of :data:`FONTS` for ``language``, or None.

    matplotlib keeps its list of fonts in a cache made at its first import; fonts installed since
    (``apt-get install fonts-noto-cjk``) are added to it here when none of the wanted ones is known.
    """
    from matplotlib import font_manager

    def first_known() -> str | None:
        known = {font.name for font in font_manager.fontManager.ttflist}
        return next((name for name in FONTS.get(language, ()) if name in known), None)

    if first_known() is None:
        listed = {font.fname for font in font_manager.fontManager.ttflist}
        for path in sorted(set(font_manager.findSystemFonts()) - listed):
            try:
                font_manager.fontManager.addfont(path)
            except (OSError, RuntimeError, ValueError):  # a file FreeType cannot read: not a font to use
                continue
    return first_known()


def picture_in_every_language(draw: Callable, *arguments, **settings) -> PictureInEveryLanguage:
    """``draw(*arguments, **settings, language=...)`` as PNG and described, by language: English, then every
    edition's language whose font is installed. ``draw`` returns a matplotlib Figure, Axes or a tuple of Axes."""
    import matplotlib.pyplot as plt

    pictures, figures = {}, {}
    for language in ("en", *LANGUAGES):
        font = font_for(language) if language != "en" else None
        if language != "en" and font is None:
            continue
        fonts = {"font.family": [font, "DejaVu Sans"]} if font else {}
        with plt.rc_context(fonts):
            drawn = draw(*arguments, **settings, language=language)
            figure = _figure(drawn)
            # As Jupyter's inline backend shows a figure: cropped to what is drawn, at the figure's dpi.
            picture = io.BytesIO()
            figure.savefig(picture, format="png", bbox_inches="tight")
            pictures[language] = picture.getvalue()
            figures[language] = figure
    described = descriptions(figures)
    for figure in figures.values():
        plt.close(figure)
    return PictureInEveryLanguage(pictures, described)


def _figure(drawn):
    """The Figure a drawing function returned, or the one its Axes (or first Axes) are on."""
    if isinstance(drawn, tuple):
        drawn = drawn[0]
    return getattr(drawn, "figure", drawn)


@dataclasses.dataclass(frozen=True)
class PictureInEveryLanguage:
    """PNG pictures by language and every edition's description (:func:`.figure_descriptions.descriptions`);
    displayed (IPython's ``_repr_mimebundle_``) as one output, each picture under its type."""

    pictures: dict[str, bytes]
    descriptions: dict[str, dict]

    def __repr__(self) -> str:  # the output's text/plain, what a notebook without pictures reads: not the bytes
        return self.descriptions["en"]["alt"]

    def _repr_mimebundle_(self, include=None, exclude=None) -> tuple[dict[str, str], dict]:
        bundle = {
            ("image/png" if language == "en" else mime_type(language)): base64.b64encode(png).decode("ascii")
            for language, png in self.pictures.items()
        }
        return {**bundle, "text/plain": repr(self)}, {METADATA_KEY: self.descriptions}


def show_in_every_language(draw: Callable, *arguments, **settings) -> None:
    """Draw a figure in every language (:func:`picture_in_every_language`) and show it as one output of the cell."""
    from IPython.display import display

    display(picture_in_every_language(draw, *arguments, **settings))


@dataclasses.dataclass(frozen=True)
class TableInEveryLanguage:
    """A table's HTML by language; displayed as one output, each language's table under its type."""

    tables: dict[str, str]

    def __repr__(self) -> str:  # the output's text/plain: the English table's cells, a row per line
        text = re.sub(r"</t[dh]>", " | ", self.tables["en"])
        text = re.sub(r"</tr>", "\n", text)
        lines = (html.unescape(re.sub(r"<[^>]+>", "", line)).strip(" |") for line in text.splitlines())
        return "\n".join(line for line in lines if line)

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict[str, str]:
        others = {html_type(language): table for language, table in self.tables.items() if language != "en"}
        return {"text/html": self.tables["en"], **others, "text/plain": repr(self)}


def table_in_every_language(make_table: Callable[..., str], *arguments, **settings) -> TableInEveryLanguage:
    """``make_table(*arguments, **settings, language=...)``, the HTML of a table, in English and every edition's
    language."""
    return TableInEveryLanguage(
        {language: make_table(*arguments, **settings, language=language) for language in ("en", *LANGUAGES)}
    )


def show_table_in_every_language(make_table: Callable[..., str], *arguments, **settings) -> None:
    """Make a table in every language (:func:`table_in_every_language`) and show it as one output of the cell."""
    from IPython.display import display

    display(table_in_every_language(make_table, *arguments, **settings))


class EditionImages:
    """myst-nb's renderer for the course's pictures and tables (a ``myst_nb.mime_renderers`` entry point).

    The pictures and tables of another language: by default their types rank nowhere, so the English site
    never shows them; an edition's configuration ranks its own above ``image/png`` and ``text/html``, and
    this renders each as the image or the HTML it is. Every picture a page shows gets the description of
    the page's language from the output's metadata (:mod:`.figure_descriptions`): the short one as the
    image's ``alt`` (written into the HTML by :func:`write_descriptions_as_alt`, which the book's
    extension connects), the rest (each panel's sentence, the numbers' tables) in a ``<details>``
    element below it. A picture without a description is a warning (an error in the book's strict build),
    and the image would be read out by its file name.
    """

    mime_priority_overrides = [
        ("*", edition_type(language), None) for language in LANGUAGES for edition_type in (mime_type, html_type)
    ]

    @staticmethod
    def handle_mime(renderer, data, inline: bool):
        if data.mime_type in {html_type(language) for language in LANGUAGES}:  # a table in an edition's language
            return None if inline else renderer.render_text_html(dataclasses.replace(data, mime_type="text/html"))
        if data.mime_type not in {"image/png", *(mime_type(language) for language in LANGUAGES)}:
            return None
        language = _page_language(renderer)
        described = data.output_metadata.get(METADATA_KEY, {}).get(language)
        if described is None:
            renderer.logger.warning(
                f"a figure without a description in {language!r} (cell {data.cell_index}): show figures with "
                f"plt.show() or show_in_every_language after importing transformer_course.book_programs",
                subtype="image",
                line=data.line,
            )
            return None if data.mime_type == "image/png" else renderer.render_image(_as_png(data))
        description = Description.from_json(described)
        image, *rest = renderer.render_image(_as_png(data))
        image[ALT] = description.alt  # the alt of the HTML only (write_descriptions_as_alt)
        if inline:
            return [image, *rest]
        from docutils import nodes

        return [image, *rest, nodes.raw("", description.long_html(language), format="html")]


# An image's description, kept under this attribute until the HTML is written: an image's ``alt`` is a message
# Sphinx would extract into the translation catalogs and mark untranslated, while this one is already in the
# page's language, computed at every build.
ALT = "transformer_course_alt"


def write_descriptions_as_alt(app, doctree, docname: str) -> None:
    """Sphinx's ``doctree-resolved``: in an HTML build, every described image gets its description as ``alt``."""
    if app.builder.format != "html":
        return
    for image in doctree.findall(lambda node: ALT in getattr(node, "attributes", {})):
        image["alt"] = image.attributes.pop(ALT)


def _as_png(data):
    return dataclasses.replace(data, mime_type="image/png")


def _page_language(renderer) -> str:
    """The language of the page being rendered (Sphinx's ``language``), ``"en"`` outside an edition."""
    environment = getattr(renderer.renderer, "sphinx_env", None)
    language = getattr(getattr(environment, "config", None), "language", None)
    return language if language in LANGUAGES else "en"
