"""The Chinese edition's catalogs: what a translation must keep of the English it translates.

The book has one source, in English. Sphinx's gettext builder extracts its prose, paragraph by
paragraph, into one catalog per page (``book/locale/zh_CN/LC_MESSAGES/<page>.po``); a translator
fills each entry's ``msgstr``, and the Chinese build puts the translations in place of the English.
Everything that is not prose must come through a translation unchanged, or the Chinese edition
would show another number, formula or link than the English one:

* glued numbers (``{glue:text}`page.md::key:.2f```) and every other role but three, whole:
  citations, equation references, ``{eq}``, ``{numref}``;
* ``{term}``, ``{doc}`` and ``{ref}`` roles keep their target and may translate their text
  (``{term}`注意力 <attention>```, ``{ref}`第 8 章 <training-cost>```);
* inline math (``$…$``), inline code and the address of every link.

:func:`placeholders` lists these parts of a message, so that a test can require a translation to
hold the same ones as its source (:func:`lost_placeholders`).

A number reads the same in both editions; a glued phrase of words does not. A page glues such a
phrase in each language with :func:`glue_phrase` (``key`` in English, ``key_zh_CN`` in Chinese), and
the Chinese catalog writes ``{glue:text}`page.md::key_zh_CN``` where the English has ``…::key``:
the one change to a glued role that a translation may make.
"""

from __future__ import annotations

import re
from collections import Counter

ROLE = re.compile(r"\{(?P<name>[\w:+-]+)\}`(?P<content>[^`]*)`")
RETARGETABLE = {"term", "doc", "ref"}  # roles whose text may be translated: `text <target>`
EXPLICIT_TARGET = re.compile(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>$", re.DOTALL)
DISPLAY_MATH = re.compile(r"\$\$.+?\$\$", re.DOTALL)
INLINE_MATH = re.compile(r"(?<![\\$])\$(?!\$)(?:\\.|[^$\\])+?\$")
INLINE_CODE = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)
LINK_ADDRESS = re.compile(r"\]\((?P<address>[^)\s]+)\)")
TRANSLATED_PHRASE = re.compile(r"(::\w+?)_zh_CN\b")  # a glued phrase's Chinese twin (see glue_phrase)


def glue_phrase(key: str, **phrases: str) -> None:
    """Glue a phrase of words in every edition's language: ``glue_phrase("side", en="above", zh_CN="高于")``."""
    from myst_nb import glue

    glue(key, phrases.pop("en"), display=False)
    for language, phrase in phrases.items():
        glue(f"{key}_{language}", phrase, display=False)


def _role_placeholder(name: str, content: str) -> str:
    if name.startswith("glue"):
        content = TRANSLATED_PHRASE.sub(r"\1", content)
    if name in RETARGETABLE:
        explicit = EXPLICIT_TARGET.match(content)
        target = explicit.group("target") if explicit else content
        return f"{{{name}}}→{target.strip()}"
    return f"{{{name}}}`{content}`"


def placeholders(message: str) -> Counter:
    """The parts of ``message`` that a translation keeps as they are, counted (see the module docstring)."""
    found: Counter = Counter()
    for match in ROLE.finditer(message):
        found[_role_placeholder(match.group("name"), match.group("content"))] += 1
    rest = ROLE.sub(" ", message)
    for match in DISPLAY_MATH.finditer(rest):
        found[match.group(0)] += 1
    rest = DISPLAY_MATH.sub(" ", rest)
    for match in INLINE_MATH.finditer(rest):
        found[match.group(0)] += 1
    rest = INLINE_MATH.sub(" ", rest)
    for match in INLINE_CODE.finditer(rest):
        found[match.group(0)] += 1
    for match in LINK_ADDRESS.finditer(rest):
        found[f"({match.group('address')})"] += 1
    return found


def lost_placeholders(source: str, translation: str) -> tuple[list[str], list[str]]:
    """What ``translation`` lost of ``source``'s placeholders, and what it has that the source has not."""
    expected, got = placeholders(source), placeholders(translation)
    return sorted((expected - got).elements()), sorted((got - expected).elements())
