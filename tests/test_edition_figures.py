"""Figures with words are drawn in each edition's language from one execution: the same figure, the same
numbers, each language's words, and one output that holds every picture under its own type."""

from __future__ import annotations

import base64
import dataclasses
import functools
import re
import string
import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
import torch

import transformer_course as tc
from transformer_course.book_programs import diagrams, edition_figures, mechanisms
from transformer_course.book_programs.edition_figures import (
    EditionImages,
    mime_type,
    picture_in_every_language,
)
from transformer_course.book_programs.figure_descriptions import METADATA_KEY

PNG = b"\x89PNG\r\n\x1a\n"
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _attention_and_x():
    torch.manual_seed(0)
    return tc.MultiHeadAttention(8, 2), torch.randn(1, 5, 8)


# Every drawing function with words, with arguments the book gives it.
DRAWINGS = {
    "figure 1": lambda language: diagrams.draw_figure_1({"decoding", "attention"}, language=language).figure,
    "figure 2": lambda language: diagrams.draw_figure_2({"masks", "multi-head"}, language=language)[0].figure,
    "qkv": lambda language: mechanisms.draw_qkv(*_attention_and_x(), language=language),
    "head split": lambda language: mechanisms.draw_head_split(*_attention_and_x(), language=language),
    "sublayer wiring": lambda language: mechanisms.draw_sublayer_wiring(language=language),
    "path lengths": lambda language: mechanisms.draw_path_lengths(8, 3, language=language),
    "batch padding": lambda language: mechanisms.draw_batch_padding(
        [[5, 6, 7], [8, 9], [5, 6, 7, 8, 9], [4], [4, 5, 6, 7]], max_tokens=10, language=language
    ),
    "decoder masks": lambda language: mechanisms.draw_decoder_masks(
        torch.tensor([[7, 3, 9, 0], [5, 8, 0, 0]]), pad_id=0, sentence=1, language=language
    ),
    "mask graphs": lambda language: mechanisms.draw_mask_graphs(
        {"encoder": torch.ones(4, 4, dtype=torch.bool), "causal": tc.causal_mask(4)},
        {"encoder": 4.0, "causal": 4.0},
        language=language,
    ),
    "beam tree": lambda language: mechanisms.draw_beam_tree(
        [{"origin": [0, 0], "token": [5, 6], "score": [-0.1, -2.3], "finished": [False, False],
          "was_finished": [False]},
         {"origin": [0, 1], "token": [2, 7], "score": [-0.4, -2.9], "finished": [True, False],
          "was_finished": [False, False]}],
        label=str, language=language,
    ),
}  # fmt: skip


@functools.cache
def _texts(name: str, language: str) -> tuple[str, ...]:
    """Every piece of text on a drawing: titles, labels, tick labels and texts, of the figure and its axes."""
    font = edition_figures.font_for(language) if language != "en" else None
    with plt.rc_context({"font.family": [font, "DejaVu Sans"]} if font else {}):
        figure = DRAWINGS[name](language)
    texts = tuple(text.get_text() for text in figure.findobj(matplotlib.text.Text) if text.get_text())
    plt.close(figure)
    return texts


def _numbers(texts: tuple[str, ...]) -> list[str]:
    return sorted(number for text in texts for number in re.findall(r"\d+(?:\.\d+)?%?", text))


@pytest.mark.parametrize("table", [diagrams.WORDS, mechanisms.WORDS], ids=["diagrams", "mechanisms"])
def test_every_language_has_every_word_with_the_same_blanks(table):
    def blanks(text: str) -> list[str]:
        # {plural} is English grammar ("1 layer", "4 layers"): a language without plurals leaves it out.
        fields = (field for _, field, _, _ in string.Formatter().parse(text) if field is not None)
        return sorted(field for field in fields if field != "plural")

    english = table["en"]
    for language, said in table.items():
        assert said.keys() == english.keys(), f"{language}: missing {english.keys() - said.keys()}"
        for key, text in said.items():
            assert blanks(text) == blanks(english[key]), f"{language} {key!r}: {text!r} fills other blanks"


@pytest.mark.parametrize("name", DRAWINGS)
def test_the_chinese_figure_shows_the_numbers_of_the_english_one(name):
    english, chinese = _texts(name, "en"), _texts(name, "zh_CN")
    assert _numbers(chinese) == _numbers(english), f"{name}: the numbers differ between the two languages"


@pytest.mark.parametrize("name", DRAWINGS)
def test_the_chinese_figure_speaks_chinese(name):
    chinese = _texts(name, "zh_CN")
    assert any(CJK.search(text) for text in chinese), f"{name}: no Chinese word in {chinese}"
    assert not any(CJK.search(text) for text in _texts(name, "en")), f"{name}: Chinese in English"


def test_an_unknown_language_is_named_with_the_ones_there_are():
    with pytest.raises(ValueError, match=r"'fr'.*en, zh_CN"):
        diagrams.draw_figure_1(language="fr")


@pytest.mark.filterwarnings("ignore:Glyph")  # DejaVu Sans stands in for a Chinese font: what it lacks is not asked
def test_one_output_holds_each_language_under_its_own_type(monkeypatch):
    monkeypatch.setattr(edition_figures, "font_for", lambda language: "DejaVu Sans")
    bundle, metadata = picture_in_every_language(diagrams.draw_figure_2, {"masks"})._repr_mimebundle_()
    assert set(bundle) == {"image/png", "image/vnd.transformer-course.zh-cn+png", "text/plain"}
    english, chinese = (base64.b64decode(bundle[key]) for key in ("image/png", mime_type("zh_CN")))
    assert english.startswith(PNG) and chinese.startswith(PNG)
    assert english != chinese, "the two pictures are the same: the language did not reach the drawing"
    assert not plt.get_fignums(), "a drawn figure was left open: the inline backend would show it again"


@pytest.mark.filterwarnings("ignore:Glyph")
def test_the_output_carries_each_languages_description_of_its_own_picture(monkeypatch):
    monkeypatch.setattr(edition_figures, "font_for", lambda language: "DejaVu Sans")
    bundle, metadata = picture_in_every_language(mechanisms.draw_sublayer_wiring)._repr_mimebundle_()
    described = metadata[METADATA_KEY]
    assert bundle["text/plain"] == described["en"]["alt"], "a notebook without pictures reads the English description"
    chinese_words = set(_texts("sublayer wiring", "zh_CN")) - {""}
    assert any(word in described["zh_CN"]["alt"] + " ".join(described["zh_CN"]["details"]) for word in chinese_words)
    assert not CJK.search(described["en"]["alt"]) and CJK.search(described["zh_CN"]["alt"])


def test_without_a_chinese_font_only_the_english_picture_is_made_and_described_in_chinese(monkeypatch):
    monkeypatch.setattr(edition_figures, "font_for", lambda language: None)
    picture = picture_in_every_language(mechanisms.draw_sublayer_wiring)
    assert set(picture.pictures) == {"en"}
    assert set(picture.descriptions) == {"en", "zh_CN"}, "the Chinese edition shows the English picture, described"


def test_the_chinese_pictures_miss_no_glyph():
    font = edition_figures.font_for("zh_CN")
    if font is None:
        pytest.skip(
            f"no Chinese font installed (any of {edition_figures.CHINESE_FONTS}): apt-get install fonts-noto-cjk"
        )
    with warnings.catch_warnings(record=True) as caught, plt.rc_context({"font.family": [font, "DejaVu Sans"]}):
        warnings.simplefilter("always")
        for draw in DRAWINGS.values():
            draw("zh_CN").canvas.draw()  # laying the text out is where matplotlib finds a glyph missing
    missing = [str(warning.message) for warning in caught if "missing from font" in str(warning.message)]
    assert not missing, f"glyphs drawn as empty boxes: {missing[:5]}"


@dataclasses.dataclass
class _MimeData:
    """The fields of myst-nb's MimeData that a renderer plugin reads (myst-nb itself is the book's to import)."""

    mime_type: str
    content: str
    output_metadata: dict = dataclasses.field(default_factory=dict)
    cell_index: int = 3
    line: int = 10


class _Image(dict):
    """A docutils image node as far as the renderer uses it: its attributes."""


class _Renderer:
    """Stands in for myst-nb's renderer in a page of ``language``: records images and warnings."""

    def __init__(self, language: str | None = None):
        config = type("Config", (), {"language": language})()
        self.renderer = type("Parser", (), {"sphinx_env": type("Environment", (), {"config": config})()})()
        self.warnings = []
        self.logger = type("Logger", (), {"warning": lambda _, message, **where: self.warnings.append(message)})()

    def render_image(self, data):
        return [_Image(uri=data.mime_type, content=data.content)]


DESCRIBED = {
    METADATA_KEY: {
        language: {"alt": alt, "details": [f"{alt} (more)"], "tables": []}
        for language, alt in (("en", "Heat map, 4 × 4"), ("zh_CN", "热力图，4 行 × 4 列"))
    }
}


@pytest.mark.parametrize("language, alt", [(None, "Heat map, 4 × 4"), ("zh_CN", "热力图，4 行 × 4 列")])
def test_the_renderer_writes_the_pages_language_description_as_the_images_alt(language, alt):
    renderer = _Renderer(language)
    for mime in ("image/png", mime_type("zh_CN")):
        image, long_description = EditionImages.handle_mime(renderer, _MimeData(mime, "iVBORw0KGgo=", DESCRIBED), False)
        assert (image["uri"], image[edition_figures.ALT]) == ("image/png", alt)
        assert f"<p>{alt} (more)</p>" in long_description.astext()
    assert not renderer.warnings


def test_the_renderer_warns_of_a_figure_without_a_description():
    renderer = _Renderer("zh_CN")
    assert EditionImages.handle_mime(renderer, _MimeData("image/png", "iVBORw0KGgo="), False) is None
    (image,) = EditionImages.handle_mime(renderer, _MimeData(mime_type("zh_CN"), "iVBORw0KGgo="), False)
    assert image["uri"] == "image/png", "the Chinese picture is still shown as the image it is"
    assert len(renderer.warnings) == 2 and "without a description in 'zh_CN' (cell 3)" in renderer.warnings[0]


def test_the_renderer_leaves_other_outputs_to_myst_nb():
    assert EditionImages.handle_mime(_Renderer(), _MimeData("text/html", "<p>x</p>", DESCRIBED), False) is None


def test_the_description_becomes_the_alt_in_html_only_never_a_message_to_translate():
    from docutils import nodes

    def written(builder_format: str) -> dict:
        document = nodes.section()
        document += nodes.image(uri="a.png", **{edition_figures.ALT: "Heat map, 4 × 4"})
        app = type("App", (), {"builder": type("Builder", (), {"format": builder_format})()})()
        edition_figures.write_descriptions_as_alt(app, document, "page")
        return document[0].attributes

    assert written("html")["alt"] == "Heat map, 4 × 4" and edition_figures.ALT not in written("html")
    assert "alt" not in written(""), "the gettext builder would extract the description into the catalogs"
