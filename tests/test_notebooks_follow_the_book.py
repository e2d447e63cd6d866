"""The exercise notebooks say things the way the book does: a mask is drawn in the book's colours with the book's
key, and the symbols the notebooks share with the book are written as the book writes them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
import torch
from matplotlib.colors import to_hex

import transformer_course as tc
from transformer_course.book_programs import mechanisms
from transformer_course.book_programs.figure_descriptions import _word_ticks

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "solutions").glob("0[1-7]-*/*.ipynb"))
CHAPTERS = sorted((ROOT / "book").glob("*.md"))
# A picture of a mask: matplotlib's imshow of something whose name says it is one.
DRAWS_A_MASK = re.compile(r"imshow\([^)\n]*mask", re.IGNORECASE)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _mask_picture_cells() -> list[tuple[str, str]]:
    """(notebook, source) of every cell of the notebooks that draws a mask."""
    return [
        (path.parent.name, "".join(cell["source"]))
        for path in NOTEBOOKS
        for cell in _cells(path)
        if cell["cell_type"] == "code" and DRAWS_A_MASK.search("".join(cell["source"]))
    ]


def _colours_and_key(figure) -> tuple[set[tuple[str, str]], dict[float, str]]:
    """The colours every image of ``figure`` gives False and True, and the words of its colour bar's ticks."""
    colours = {(to_hex(image.to_rgba(0.0)), to_hex(image.to_rgba(1.0))) for ax in figure.axes for image in ax.images}
    keys = [_word_ticks(ax._colorbar) for ax in figure.axes if getattr(ax, "_colorbar", None) is not None]
    assert len(keys) == 1, f"a mask picture has one key, this one has {len(keys)}"
    return colours, keys[0]


def _books_colours_and_key() -> tuple[set[tuple[str, str]], dict[float, str]]:
    tokens = torch.tensor([[7, 3, 9, 0], [5, 0, 0, 0]])
    return _colours_and_key(mechanisms.draw_decoder_masks(tokens, pad_id=0))


def test_the_books_masks_are_dark_where_a_query_may_attend_and_say_so():
    colours, key = _books_colours_and_key()
    assert colours == {(to_hex(mechanisms.MASK_COLOURS[0]), to_hex(mechanisms.MASK_COLOURS[1]))}
    assert key == {0.0: "blocked", 1.0: "may attend"}


def test_some_notebook_draws_a_mask():
    assert _mask_picture_cells(), "no notebook draws a mask: the test below would hold nothing"


@pytest.mark.parametrize(("notebook", "source"), _mask_picture_cells(), ids=lambda value: value[:20])
def test_a_notebooks_mask_picture_has_the_books_colours_and_key(notebook, source, monkeypatch):
    monkeypatch.setattr(plt, "show", lambda *args, **kwargs: None)
    namespace = {"torch": torch, "causal_mask": tc.causal_mask, "padding_mask": tc.padding_mask,
                 "padding_and_causal_mask": tc.padding_and_causal_mask}  # fmt: skip
    exec(compile(source, notebook, "exec"), namespace)  # the learner's mask functions: the package's here
    drawn = [plt.figure(number) for number in plt.get_fignums()]
    assert len(drawn) == 1, f"{notebook}: the cell drew {len(drawn)} figures, expected one"
    assert _colours_and_key(drawn[0]) == _books_colours_and_key(), (
        f"{notebook}: the colours of False and True and the key differ from the book's mask pictures"
    )


def _code_cells(chapter: Path) -> list[str]:
    return re.findall(r"```\{code-cell\}[^\n]*\n(.*?)```", chapter.read_text(encoding="utf-8"), re.S)


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda path: path.name)
def test_a_chapter_draws_its_masks_with_the_books_mask_pictures(chapter):
    by_hand = [cell for cell in _code_cells(chapter) if DRAWS_A_MASK.search(cell)]
    assert not by_hand, f"{chapter.name} draws a mask itself; draw it with mechanisms.draw_mask: {by_hand[0][:200]}"


# ----------------------------------------------------------------------------- notation

MATH = re.compile(r"\$\$(.+?)\$\$|\$([^$\n]+?)\$", re.S)
CODE = re.compile(r"```.*?```|`[^`\n]*`", re.S)  # code cells, blocks and spans: their $ are not math

# Each symbol the notebooks share with the book: a pattern that finds every way of writing it in math, and how a
# way of writing it reads once its particulars are left out (a head's number, a matrix's letter): its form.
NOTATION = {
    "a head's projections W_i^Q ... W_i^O": (
        r"W_\{?\(?[ijh0-9]\)?\}?\^\{?[QKVO]\}?|W_\{?[QKVO]\}?\^\{?\(?[ijh0-9]\)?\}?",
        [(r"[QKVO]", "X"), (r"[ijh0-9]", "i")],
    ),
    "the layer's projections W^Q ... W^O": (r"W\^\{?[QKVO]\}?(?!_)|W_\{?[QKVO]\}?(?![\^A-Za-z])", [(r"[QKVO]", "X")]),
    "the model's width d_model": (r"d_\{?(?:\\(?:text|mathrm)\{)?model\}?\}?", []),
    "the masked mass m(C)": (r"\\(?:text|mathrm)\{mass\}\(C\)|\bm\(C\)", []),
    "the source's and the target's lengths": (
        r"\bL_\{?[ed]\}?(?![A-Za-z])|[nL]_\{?\\text\{(?:src|tgt)\}\}?",
        [(r"src|tgt|(?<=_)[ed]", "·")],
    ),
    "the sum over the allowed keys": (
        r"\b[A-Za-z] = \\sum_\{[^{}\n]*(?:\\text\{allowed\}|\\mathcal\{A\})",
        [(r"=.*", "")],
    ),
    "the sum over the blocked keys": (
        r"\b[A-Za-z] = \\sum_\{[^{}\n]*(?:\\text\{blocked\}|\\mathcal\{B\})",
        [(r"=.*", "")],
    ),
}


def _math(text: str) -> str:
    """The math of Markdown ``text`` (its code left out)."""
    return "\n".join(a or b for a, b in MATH.findall(CODE.sub("", text)))


def _forms(symbol: str, math: str) -> set[str]:
    """The forms in which ``math`` writes ``symbol``, braces and spaces left out (``d_{\\text{model}}`` is
    ``d_\\text{model}``)."""
    pattern, particulars = NOTATION[symbol]
    forms = set()
    for found in re.findall(pattern, math):
        form = re.sub(r"[{}\s]", "", found)
        for particular, placeholder in particulars:
            form = re.sub(particular, placeholder, form)
        forms.add(form)
    return forms


BOOK_MATH = _math("\n".join(chapter.read_text(encoding="utf-8") for chapter in CHAPTERS))


@pytest.mark.parametrize("symbol", NOTATION)
def test_the_book_writes_each_shared_symbol_one_way(symbol):
    forms = _forms(symbol, BOOK_MATH)
    assert len(forms) == 1, f"the book writes {symbol} in the forms {sorted(forms)}: the notebooks need one to follow"


@pytest.mark.parametrize("notebook", NOTEBOOKS[:4], ids=lambda path: path.parent.name)
def test_a_notebook_writes_the_symbols_it_shares_with_the_book_as_the_book_does(notebook):
    math = _math("\n".join("".join(cell["source"]) for cell in _cells(notebook) if cell["cell_type"] == "markdown"))
    different = {symbol: sorted(_forms(symbol, math) - _forms(symbol, BOOK_MATH)) for symbol in NOTATION}
    different = {symbol: forms for symbol, forms in different.items() if forms}
    assert not different, f"{notebook.parent.name} writes these as the book does not: {different}"
