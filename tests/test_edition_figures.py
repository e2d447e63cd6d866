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
from seed_summaries import seeds_summary

import transformer_course as tc
from transformer_course.book_programs import diagrams, edition_figures, experiments, mechanisms, seed_tables
from transformer_course.book_programs.edition_figures import (
    EditionImages,
    html_type,
    mime_type,
    picture_in_every_language,
    table_in_every_language,
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


def _variants():
    """A small Table 3 record's variants, as ``transformer-course variations`` writes them: the base first."""

    def variant(row, parameters, setting, paper_perplexity, perplexities, exact_matches):
        runs = {
            str(seed): {"perplexity": p, "exact_match": e}
            for seed, (p, e) in enumerate(zip(perplexities, exact_matches))
        }
        spread = {
            metric: {"mean": sum(values) / 3, "min": min(values), "max": max(values)}
            for metric, values in (("perplexity", perplexities), ("exact_match", exact_matches))
        }
        return {
            "row": row,
            "parameters": parameters,
            "runs": runs,
            **spread,
            "paper": {"setting": setting, "perplexity": paper_perplexity, "bleu": 25.8},
        }

    return {
        "base": variant("base", 1200, "base", 4.92, [1.6, 1.7, 1.8], [12.0, 15.5, 19.0]),
        "N=1": variant("C", 700, "N=2", 6.11, [1.4, 1.45, 1.5], [14.0, 20.0, 26.0]),
        "learned positions": variant("E", 1500, "positional embedding", 4.92, [2.1, 2.3, 2.5], [0.0, 1.0, 2.0]),
    }


def _table2_records():
    """Small Table 2 records of both tasks, as ``transformer-course table2`` writes them."""

    def model(parameters, flops, steps, quality):
        runs = {str(seed): {"training_flops": flops * s, "test": quality} for seed, s in enumerate(steps)}
        spread = {
            "mean": sum(steps) / len(steps),
            "min": min(steps),
            "max": max(steps),
            "std": 1.0 if len(steps) > 1 else None,
        }
        metric = next(iter(quality))
        return {
            "parameters": parameters,
            "runs": runs,
            "steps": spread,
            "cpu_minutes": {"mean": 1.02},
            "update_flops": flops,
            "training_flops": {"mean": flops * spread["mean"]},
            "test": {metric: {"mean": quality[metric], "min": quality[metric], "max": quality[metric], "std": None}},
        }

    return {
        "numbers": {
            "settings": {"minutes": 1},
            "models": {
                "Transformer": model(2400, 2.0e9, [360, 380], {"exact_match": 74.0}),
                "GRU with attention": model(1200, 1.0e9, [500, 520], {"exact_match": 99.5}),
            },
        },
        "multi30k": {
            "settings": {"minutes": 20},
            "models": {
                "Transformer": model(24000, 5.6e10, [472], {"sacrebleu": 21.9}),
                "GRU with attention": model(27000, 3.8e10, [604], {"sacrebleu": 21.2}),
            },
        },
    }


TABLE2_METRICS = {"numbers": "exact_match", "multi30k": "sacrebleu"}
PAPER_ROWS = [
    {"model": "GNMT + RL", "bleu_en_de": 24.6, "bleu_en_fr": 39.92, "flops_en_de": 2.3e19, "flops_en_fr": 1.4e20},
    {"model": "Transformer (base)", "bleu_en_de": 27.3, "bleu_en_fr": 38.1, "flops_en_de": 3.3e18},
]

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
    "seed scores": lambda language: experiments.draw_seed_scores(_variants(), language=language),
    "quality against cost": lambda language: experiments.draw_quality_against_cost(
        _table2_records(), TABLE2_METRICS, PAPER_ROWS, language=language
    ),
}  # fmt: skip

# Every table with words, with arguments the book gives it.
TABLES = {
    "table 3": lambda language: experiments.table_3(_variants(), steps=200, seeds=3, language=language),
    "table 2 runs": lambda language: experiments.table_2_runs(_table2_records(), TABLE2_METRICS, language=language),
    "table 2 paper": lambda language: experiments.table_2_paper(PAPER_ROWS, language=language),
    "multi30k seeds": lambda language: seed_tables.seeds_table(seeds_summary(reached=False), language=language),
    "multi30k steps": lambda language: seed_tables.steps_table(seeds_summary(), language=language),
}


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


@pytest.mark.parametrize(
    "table",
    [diagrams.WORDS, mechanisms.WORDS, experiments.WORDS, seed_tables.WORDS],
    ids=["diagrams", "mechanisms", "experiments", "seed_tables"],
)
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


def _cells(table: str) -> list[str]:
    return re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", table)


@pytest.mark.parametrize("name", TABLES)
def test_the_chinese_table_holds_the_numbers_of_the_english_one_in_chinese(name):
    english, chinese = (_cells(TABLES[name](language)) for language in ("en", "zh_CN"))
    assert len(english) == len(chinese), f"{name}: the two tables have different cells"
    assert _numbers(tuple(chinese)) == _numbers(tuple(english)), f"{name}: the numbers differ between the languages"
    assert any(CJK.search(cell) for cell in chinese), f"{name}: no Chinese word in {chinese}"
    assert not any(CJK.search(cell) for cell in english), f"{name}: Chinese in the English table"


def test_the_small_table_3_puts_in_bold_only_the_means_of_variants_beyond_every_seed_of_the_base():
    table = experiments.table_3(_variants(), steps=200, seeds=3)
    assert "<b>1.450</b>" in table and "<b>2.300</b>" in table, "both variants lie beyond the base on perplexity"
    assert "<b>1.0</b>" in table, "learned positions' exact matches (0 to 2) lie below the base's (12 to 19)"
    assert table.count("<b>") == 3, "N=1's exact matches (14 to 26) overlap the base's, and the base is never bold"


def test_one_output_holds_each_languages_table_under_its_own_type_and_the_english_one_as_text():
    bundle = table_in_every_language(experiments.table_2_paper, PAPER_ROWS)._repr_mimebundle_()
    assert set(bundle) == {"text/html", html_type("zh_CN"), "text/plain"}
    assert "英德" in bundle[html_type("zh_CN")] and "英德" not in bundle["text/html"]
    assert bundle["text/plain"].splitlines()[:2] == [
        "model (paper) | BLEU EN-DE | BLEU EN-FR | FLOPs EN-DE | FLOPs EN-FR",
        "GNMT + RL | 24.6 | 39.92 | 2.3e+19 | 1.4e+20",
    ]


def test_the_renderer_shows_a_table_of_the_pages_language_as_the_builder_shows_html():
    class Renderer(_Renderer):
        def render_mime_type(self, data):  # myst-nb's: the plugins, then its own renderer of the type
            return [("rendered", data.mime_type, data.content)]

    shown = EditionImages.handle_mime(Renderer("zh_CN"), _MimeData(html_type("zh_CN"), "<table>表</table>"), False)
    assert shown == [("rendered", "text/html", "<table>表</table>")]
    assert EditionImages.handle_mime(Renderer("zh_CN"), _MimeData("text/html", "<table></table>"), False) is None


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
