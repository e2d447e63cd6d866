"""The book builds cleanly, and reads correctly in a real browser.

The build runs ``jupyter-book build . -W -n --keep-going``: every Sphinx warning is an error, so a
broken cross-reference, a missing figure, an unknown citation or a failing code cell fails it.
Chapters are executed through the execution cache (``_build/.jupyter_cache``), so a build after
``make book`` only re-executes the chapters whose code changed.

The Chinese edition is then built from the same source and the English build's execution cache
(``transformer_course.book_programs.editions``, warnings as errors too) into ``_build/html/zh_CN/``.

The built site is then served on 127.0.0.1 and every page of the table of contents, in both
editions, is opened in headless Chromium (driven by Selenium through Debian's ``chromedriver``). Each page is loaded
once; the tests below check what was seen there. Screenshots of a few pages are saved to
``_build/screenshots/`` for a person to look at.

Chromium is needed: ``apt-get install chromium chromium-driver``. Without it the browser tests
fail, unless ``BOOK_BROWSER_TEST=skip`` is set, which skips them and says why.
"""

from __future__ import annotations

import functools
import html
import http.server
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml
from axe_check import COLOUR_MODES, COLOUR_RULES, axe_violations, colour_mode
from axe_check import summary as axe_summary

from transformer_course.book_programs.editions import toc_pages
from transformer_course.book_programs.figure_descriptions import METADATA_KEY
from transformer_course.book_programs.pdf_editions import SITE_FOLDER, pdf_name

# Building both editions, then opening every page of both in a browser (each waits for MathJax to typeset and
# speak its equations, then runs axe-core twice) takes longer than one slow-layer test is given.
pytestmark = [pytest.mark.book, pytest.mark.timeout(3600)]

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]
BUILD_DIR = REPOSITORY_ROOT / "_build"
HTML_DIR = BUILD_DIR / "html"
SCREENSHOT_DIR = BUILD_DIR / "screenshots"
PAGE_TIMEOUT_S = 60
COLAB = "https://colab.research.google.com"


def expected_colab_url(page: str) -> str:
    """The Colab link of an exercise page: the notebook in the repository named in _config.yml."""
    config = yaml.safe_load((REPOSITORY_ROOT / "_config.yml").read_text())
    repository = config["repository"]
    org, repo = urlsplit(repository["url"]).path.strip("/").split("/")[:2]
    return f"{COLAB}/github/{org}/{repo}/blob/{repository['branch']}/{page}.ipynb"


PAGES = toc_pages(REPOSITORY_ROOT)
CHINESE = "zh_CN"  # the Chinese edition's folder under the English site
CHINESE_HTML_DIR = HTML_DIR / CHINESE
EXERCISE_PAGES = [page for page in PAGES if page.startswith("exercises/")]
CHAPTER_PAGES = [page for page in PAGES if page.startswith("book/")]


# --------------------------------------------------------------------------------------------
# The build
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def book_build() -> subprocess.CompletedProcess:
    """Build the book once per test session, as `make book` does: the pages executed two at a time into the
    execution cache (nothing to do where it is fresh), then the build, warnings as errors."""
    jupyter_book = Path(sys.executable).with_name("jupyter-book")
    environment = dict(os.environ)
    # The chapters import the package from this checkout, installed or not.
    environment["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(REPOSITORY_ROOT / "src"), environment.get("PYTHONPATH")])
    )
    subprocess.run(
        [sys.executable, "-m", "transformer_course.book_programs.editions", "execute"],
        cwd=REPOSITORY_ROOT,
        env=environment,
        check=True,
    )
    return subprocess.run(
        [str(jupyter_book), "build", ".", "-W", "-n", "--keep-going"],
        cwd=REPOSITORY_ROOT,
        env=environment,
        capture_output=True,
        text=True,
    )


@pytest.fixture(scope="session")
def chinese_build(book_build) -> subprocess.CompletedProcess:
    """Build the Chinese edition after the English one, warnings as errors, from its execution cache."""
    if book_build.returncode != 0:
        pytest.fail(f"the English book did not build:\n{build_problems(book_build)}")
    return subprocess.run(
        [sys.executable, "-m", "transformer_course.book_programs.editions", "build", "--strict"],
        cwd=REPOSITORY_ROOT,
        capture_output=True,
        text=True,
    )


def build_problems(build: subprocess.CompletedProcess) -> str:
    """The warning and error lines of a build log (or its tail when there are none)."""
    log = build.stdout + build.stderr
    lines = [line for line in log.splitlines() if ("WARNING" in line or "ERROR" in line) and "IPKernelApp" not in line]
    return "\n".join(lines) or log[-5000:]


def test_book_builds_with_warnings_as_errors(book_build):
    assert book_build.returncode == 0, f"jupyter-book build -W -n failed:\n{build_problems(book_build)}"


def test_the_build_executes_no_page_that_editions_execute_has_run(book_build):
    # editions.execute_pages caches each page as myst-nb would: the build finds them all and runs no kernel.
    executed = re.findall(r"(\S+): Executing notebook", book_build.stdout + book_build.stderr)
    assert not executed, f"the build executed {executed} again: their cached outputs were not found"


def test_the_chinese_edition_builds_with_warnings_as_errors(chinese_build):
    assert chinese_build.returncode == 0, f"the Chinese edition failed:\n{build_problems(chinese_build)}"


def test_no_chinese_page_is_marked_untranslated(chinese_build):
    # translation_progress_classes (book/_config_zh_CN.yml) marks each paragraph with no translation.
    marked = {
        page: len(re.findall(r'class="[^"]*\buntranslated\b', (CHINESE_HTML_DIR / f"{page}.html").read_text()))
        for page in PAGES
    }
    marked = {page: count for page, count in marked.items() if count}
    assert not marked, f"paragraphs left in English (page: how many): {marked}"


def _glued_numbers(page_html: Path) -> Counter:
    """The numbers in the page's glued values (a glued phrase is in each edition's language; its numbers are not)."""
    pasted = re.findall(r'<span class="pasted-[\w-]+">(.*?)</span>', page_html.read_text(), re.DOTALL)
    return Counter(number for text in pasted for number in re.findall(r"\d+(?:[.,]\d+)*", text))


@pytest.mark.parametrize("page", CHAPTER_PAGES)
def test_the_chinese_page_shows_the_numbers_of_the_english_one(chinese_build, page):
    english, chinese = _glued_numbers(HTML_DIR / f"{page}.html"), _glued_numbers(CHINESE_HTML_DIR / f"{page}.html")
    assert english == chinese, f"{page}: only in English {english - chinese}, only in Chinese {chinese - english}"


def _output_images(page_html: Path) -> list[str]:
    """The file names of the cells' output images on a page, in order (myst-nb names each by its content)."""
    return re.findall(r'<img [^>]*src="[^"]*_images/([^"/]+)"', page_html.read_text())


@pytest.mark.parametrize("page", CHAPTER_PAGES)
def test_the_chinese_page_shows_the_chinese_picture_of_every_figure_drawn_in_both_languages(chinese_build, page):
    # book_programs.edition_figures: each such figure is one output, its Chinese picture the Chinese page's.
    drawn = (REPOSITORY_ROOT / f"{page}.md").read_text(encoding="utf-8").count("show_in_every_language(")
    english, chinese = _output_images(HTML_DIR / f"{page}.html"), _output_images(CHINESE_HTML_DIR / f"{page}.html")
    assert len(english) == len(chinese), f"{page}: {len(english)} images in English, {len(chinese)} in Chinese"
    differing = sum(ours != theirs for ours, theirs in zip(english, chinese))
    assert differing == drawn, f"{page}: {drawn} figures drawn in both languages, {differing} pictures differ"


@pytest.mark.parametrize("page", PAGES)
def test_each_page_links_to_its_twin_in_the_other_edition(chinese_build, page):
    for here, twin in ((HTML_DIR / f"{page}.html", CHINESE_HTML_DIR / f"{page}.html"),
                       (CHINESE_HTML_DIR / f"{page}.html", HTML_DIR / f"{page}.html")):  # fmt: skip
        links = re.findall(r'<a class="edition-link" href="([^"]+)"', here.read_text())
        assert links, f"{here.relative_to(HTML_DIR)}: no link to the other edition"
        assert (here.parent / links[0]).resolve() == twin.resolve(), f"{here}: links to {links[0]}, not to {twin}"


@pytest.mark.parametrize("page", PAGES)
def test_each_page_links_to_its_editions_pdf(chinese_build, page):
    # make pdf writes each edition's PDF into the site under this name (tests/book/test_pdf.py builds them).
    for folder, language in ((HTML_DIR, "en"), (CHINESE_HTML_DIR, CHINESE)):
        here = folder / f"{page}.html"
        links = re.findall(r'<a class="pdf-link" href="([^"]+)"', here.read_text(encoding="utf-8"))
        pdf = HTML_DIR / SITE_FOLDER / pdf_name(REPOSITORY_ROOT, language)
        assert links and (here.parent / links[0]).resolve() == pdf.resolve(), f"{here}: links {links}, not {pdf}"


@pytest.mark.parametrize("page", EXERCISE_PAGES)
def test_the_chinese_exercise_page_opens_the_chinese_notebook_in_colab(chinese_build, page):
    folder, name = page.rsplit("/", 1)
    expected = expected_colab_url(f"{folder}/{CHINESE}/{name}")
    links = re.findall(rf'href="({re.escape(COLAB)}[^"]+)"', (CHINESE_HTML_DIR / f"{page}.html").read_text())
    assert expected in links, f"{page}: the Chinese page's Colab links are {links}, expected {expected}"


def test_the_chinese_search_index_holds_chinese_words(chinese_build):
    index = (CHINESE_HTML_DIR / "searchindex.js").read_text(encoding="utf-8")
    terms = json.loads(index[index.index("(") + 1 : index.rindex(")")])["terms"]
    assert "注意力" in terms, "the Chinese search index has no word 注意力: is jieba installed?"


def test_only_the_chinese_edition_ranks_the_chinese_pictures_first():
    from myst_nb.core.render import get_mime_priority

    from transformer_course.book_programs.edition_figures import mime_type

    overlay = yaml.safe_load((REPOSITORY_ROOT / "book" / "_config_zh_CN.yml").read_text(encoding="utf-8"))
    overrides = [tuple(item) for item in overlay["sphinx"]["config"]["nb_mime_priority_overrides"]]
    assert mime_type("zh_CN") not in get_mime_priority("html", []), "the English site would show Chinese pictures"
    chinese = get_mime_priority("html", overrides)
    assert chinese.index(mime_type("zh_CN")) < chinese.index("image/png"), "the Chinese site would show English ones"


def test_only_the_chinese_edition_ranks_the_chinese_tables_first():
    from myst_nb.core.render import get_mime_priority

    from transformer_course.book_programs.edition_figures import html_type

    overlay = yaml.safe_load((REPOSITORY_ROOT / "book" / "_config_zh_CN.yml").read_text(encoding="utf-8"))
    overrides = [tuple(item) for item in overlay["sphinx"]["config"]["nb_mime_priority_overrides"]]
    assert html_type("zh_CN") not in get_mime_priority("html", []), "the English site would show Chinese tables"
    chinese = get_mime_priority("html", overrides)
    assert chinese.index(html_type("zh_CN")) < chinese.index("text/html"), "the Chinese site would show English ones"


def test_build_writes_a_page_for_every_toc_entry(book_build):
    missing = [page for page in PAGES if not (HTML_DIR / f"{page}.html").is_file()]
    assert not missing, f"no HTML page for {missing}"


def test_solutions_are_not_part_of_the_site(book_build):
    assert not (HTML_DIR / "solutions").exists(), "solutions/ must never be published"


def test_exercise_notebooks_are_not_executed(book_build):
    # myst-nb writes every notebook it renders to _build/jupyter_execute; an executed one has
    # execution counts (the released notebooks have none: nbgrader clears them).
    executed = []
    for page in EXERCISE_PAGES:
        rendered = json.loads((BUILD_DIR / "jupyter_execute" / f"{page}.ipynb").read_text())
        if any(cell.get("execution_count") for cell in rendered["cells"] if cell["cell_type"] == "code"):
            executed.append(page)
    assert not executed, f"learners' notebooks executed at build time: {executed}"


# --------------------------------------------------------------------------------------------
# The browser
# --------------------------------------------------------------------------------------------


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 (the base class's signature)
        pass


@pytest.fixture(scope="session")
def site_url(book_build, chinese_build):
    """Serve _build/html (the Chinese edition in zh_CN/) on 127.0.0.1 at a free port for the whole session."""
    if book_build.returncode != 0:
        pytest.fail(f"the book did not build, so it cannot be read:\n{build_problems(book_build)}")
    if chinese_build.returncode != 0:
        pytest.fail(f"the Chinese edition did not build:\n{build_problems(chinese_build)}")
    handler = functools.partial(_QuietHandler, directory=str(HTML_DIR))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@dataclass
class PageVisit:
    """What the browser saw on one page."""

    page: str
    title: str = ""
    console_errors: list[str] = field(default_factory=list)
    requested_urls: list[str] = field(default_factory=list)
    mathjax: str = ""  # "ok", "absent" (no equation on the page) or the error
    equations: int = 0  # elements holding TeX (span.math / div.math)
    untypeset: list[str] = field(default_factory=list)  # those MathJax left as raw TeX
    raw_double_dollars: bool = False  # "$$" left in the text outside code
    broken_images: list[str] = field(default_factory=list)
    colab_links: list[str] = field(default_factory=list)
    stray_tex: list[str] = field(default_factory=list)  # backslash commands left in the rendered text
    math_errors: list[str] = field(default_factory=list)  # what MathJax could not typeset
    scrolling_code: list[str] = field(default_factory=list)  # visible code blocks wider than their box
    missing_glyphs: bool = False  # Chinese characters drawn as the empty box of a missing font
    images: list[dict] = field(default_factory=list)  # every <img>: its src, alt and role
    skip_link: str = ""  # where the first link of the page ("skip to main content") leads, if that exists
    axe: dict[str, list[dict]] = field(default_factory=dict)  # colour mode -> axe-core's WCAG violations
    wider_than_320: list[str] = field(default_factory=list)  # prose that makes a 320-pixel-wide window scroll


# Runs in the page once MathJax (if any) has finished its first typesetting pass.
_INSPECT_PAGE = """
const equations = Array.from(document.querySelectorAll("span.math, div.math"));
const text = (document.querySelector("main") || document.body).cloneNode(true);
text.querySelectorAll("pre, code, script, style, mjx-container").forEach(node => node.remove());
return {
  title: document.title,
  equations: equations.length,
  untypeset: equations.filter(e => !e.querySelector("mjx-container")).map(e => e.textContent.slice(0, 80)),
  raw_double_dollars: text.textContent.includes("$$"),
  broken_images: Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src),
  colab_links: Array.from(document.querySelectorAll('a[href^="COLAB_PREFIX"]')).map(a => a.href),
  stray_tex: (text.textContent.match(/\\\\[A-Za-z]+/g) || []).slice(0, 10),
  math_errors: Array.from(document.querySelectorAll("mjx-merror")).map(e => e.textContent.slice(0, 80)),
  scrolling_code: Array.from(document.querySelectorAll("main div.highlight pre"))
    .filter(pre => pre.clientWidth > 0 && pre.scrollWidth > pre.clientWidth + 1)
    .map(pre => pre.textContent.split("\\n").reduce((a, b) => (b.length > a.length ? b : a), "").slice(0, 120)),
  images: Array.from(document.images).map(i => ({src: i.getAttribute("src"), alt: i.getAttribute("alt"),
                                                 role: i.getAttribute("role")})),
  skip_link: (() => {
    const link = document.querySelector(".skip-link a[href^='#'], a.skip-link[href^='#']");
    return link && document.getElementById(link.getAttribute("href").slice(1)) ? link.getAttribute("href") : "";
  })(),
  missing_glyphs: (() => {
    // A character without a font is drawn as the same box as a private-use code point.
    if (!/[\u4e00-\u9fff]/.test(text.textContent)) return false;
    const canvas = document.createElement("canvas");
    canvas.width = canvas.height = 64;
    const context = canvas.getContext("2d");
    context.font = "48px " + getComputedStyle(document.querySelector("main") || document.body).fontFamily;
    const drawn = character => {
      context.clearRect(0, 0, 64, 64);
      context.fillText(character, 4, 52);
      return context.getImageData(0, 0, 64, 64).data.join(",");
    };
    return drawn("\u6ce8") === drawn("\ue000");
  })(),
};
""".replace("COLAB_PREFIX", COLAB)

# MathJax's script is loaded asynchronously, so on a busy machine it may start after the page's load
# event: on a page with equations, wait up to 50 s for it to appear before calling it absent.
_WAIT_FOR_MATHJAX = """
const done = arguments[arguments.length - 1];
const started = Date.now();
(function wait() {
  if (window.MathJax && window.MathJax.startup && window.MathJax.startup.promise) {
    window.MathJax.startup.promise.then(() => done("ok"), error => done("MathJax failed: " + error));
  } else if (!document.querySelector("span.math, div.math") || Date.now() - started > 50000) {
    done("absent");
  } else {
    setTimeout(wait, 100);
  }
})();
"""


# At a reader's 320 CSS pixels (WCAG 1.4.10, reflow): the visible prose, links and inline code that stick out of
# the window. Code blocks, tables and equations may scroll inside their own boxes (content laid out in two
# dimensions); the prose around them must not. The sidebars are closed drawers at this width.
_WIDER_THAN_THE_WINDOW = """
const width = document.documentElement.clientWidth;
const prose = "main p, main li, main dd, main h1, main h2, main h3, main code.literal, header a, nav a";
return Array.from(document.querySelectorAll(prose))
  .filter(e => {
    const style = getComputedStyle(e);
    return style.visibility !== "hidden" && style.display !== "none" && e.getClientRects().length > 0;
  })
  .filter(e => e.getBoundingClientRect().right > width + 1)
  .filter(e => !e.closest("pre, table, .math, mjx-container, .highlight, .bd-sidebar-secondary, .bd-sidebar-primary"))
  .map(e => e.tagName.toLowerCase() + ": " + e.textContent.trim().slice(0, 60));
"""
READING_WIDTH, NARROW_WIDTH, HEIGHT = 1400, 320, 900


def _requested_urls(driver) -> list[str]:
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


def _visit(driver, site_url: str, page: str) -> PageVisit:
    driver.get_log("browser")  # drop what earlier pages left behind
    driver.get_log("performance")
    driver.get(f"{site_url}/{page}.html")
    visit = PageVisit(page=page)
    visit.mathjax = driver.execute_async_script(_WAIT_FOR_MATHJAX)
    if visit.mathjax == "absent" and driver.execute_script("return !!document.querySelector('span.math, div.math')"):
        # On a loaded machine the browser has been seen to give up on MathJax's large script once;
        # a page whose script never loads fails the same way on the second try.
        driver.refresh()
        visit.mathjax = driver.execute_async_script(_WAIT_FOR_MATHJAX)
    for name, value in driver.execute_script(_INSPECT_PAGE).items():
        setattr(visit, name, value)
    visit.console_errors = [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
    visit.requested_urls = _requested_urls(driver)
    # Every WCAG rule in the light theme; in the dark one, the rules that colours decide (the rest judge
    # the same document), which keeps the second pass short.
    visit.axe["light"] = axe_violations(driver)
    with colour_mode(driver, "dark"):
        visit.axe["dark"] = axe_violations(driver, rules=COLOUR_RULES)
    driver.set_window_size(NARROW_WIDTH, HEIGHT)
    try:
        visit.wider_than_320 = driver.execute_script(_WIDER_THAN_THE_WINDOW)
    finally:
        driver.set_window_size(READING_WIDTH, HEIGHT)
    return visit


def _screenshot(
    driver,
    site_url: str,
    page: str,
    name: str,
    scroll_to_first_figure: bool = False,
    scroll_to: str = "",
    figure: str = "main img, section img",
) -> None:
    """Save a screenshot of ``page``: its top, its first figure, or the first figure after the section
    whose id starts with ``scroll_to`` (a figure: what the CSS selector ``figure`` finds)."""
    driver.get(f"{site_url}/{page}.html")
    driver.execute_async_script(_WAIT_FOR_MATHJAX)
    if scroll_to_first_figure or scroll_to:
        found = driver.execute_script(
            "const section = arguments[0] ? document.querySelector(`section[id^='${arguments[0]}']`) : null;"
            "const image = (section || document).querySelector(arguments[1]);"
            "if (image) image.scrollIntoView({block: 'center'});"
            "return Boolean(image) && (!arguments[0] || Boolean(section));",
            scroll_to,
            figure,
        )
        assert found, f"{page}: no figure in a section whose id starts with {scroll_to!r}"
        time.sleep(0.5)
    SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(SCREENSHOT_DIR / name))


@pytest.fixture(scope="session")
def visits(browser, site_url) -> dict[str, PageVisit]:
    """Open every page of the table of contents once; save screenshots for a person to look at."""
    seen = {page: _visit(browser, site_url, page) for page in [*PAGES, *(f"{CHINESE}/{page}" for page in PAGES)]}
    _screenshot(browser, site_url, "book/01-attention", "01-attention.png", scroll_to_first_figure=False)
    _screenshot(
        browser, site_url, "book/03-positional-encoding", "03-positional-encoding.png", scroll_to_first_figure=True
    )
    # The paper's Figures 1 and 2 as the package draws them, chapter 9's Figure 1 with the decoding loop, and
    # every attention head of a trained model.
    _screenshot(browser, site_url, "book/intro", "intro-figure-1.png", scroll_to_first_figure=True)
    _screenshot(browser, site_url, "book/09-decoding", "09-figure-1.png", scroll_to_first_figure=True)
    _screenshot(browser, site_url, "book/09-decoding", "09-every-head.png", scroll_to="every-head")
    # Table 3 at small scale: every seed's score of every variant, against the base's spread.
    _screenshot(browser, site_url, "book/08-experiments", "08-table-3.png", scroll_to="table-3")
    # Table 2 at small scale: quality against training cost, the Transformer and the GRU, beside the paper's.
    _screenshot(browser, site_url, "book/08-experiments", "08-table-2.png", scroll_to="table-2")
    # The mechanisms, drawn from the package's own tensors and functions.
    for page, name, section in (
        ("book/01-attention", "01-qkv.png", "the-three-projections"),
        ("book/02-multi-head-attention", "02-head-split.png", "the-equations"),
        ("book/05-residuals-layernorm", "05-post-ln-pre-ln.png", "where-should-the-layernorm-go"),
        ("book/06-complexity", "06-path-lengths.png", "a-relay-race"),
        ("book/08-training", "08-batch-padding.png", "batches-of-similar-length"),
        ("book/09-decoding", "09-beam-tree.png", "decoding-greedy-and-beam-search"),
    ):
        _screenshot(browser, site_url, page, name, scroll_to=section)
    # The attention viewers: the numbers model's three attentions, the Multi30k model's cross-attention.
    for page, name, section in (
        ("book/09-decoding", "09-attention-viewer.png", "every-attention-to-explore"),
        ("book/07-encoder-decoder", "07-attention-viewer.png", "attention-that-can-be-looked-at"),
    ):
        _screenshot(browser, site_url, page, name, scroll_to=section, figure="svg.attention-viewer-graph")
    # Three pages of the Chinese edition: a chapter's opening, Figure 1, and a chapter's tables.
    _screenshot(browser, site_url, f"{CHINESE}/book/01-attention", "zh-01-attention.png")
    _screenshot(browser, site_url, f"{CHINESE}/book/intro", "zh-intro-figure-1.png", scroll_to_first_figure=True)
    _screenshot(browser, site_url, f"{CHINESE}/book/05-residuals-layernorm", "zh-05-post-ln-pre-ln.png",
                scroll_to="where-should-the-layernorm-go")  # fmt: skip
    return seen


@pytest.mark.parametrize("page", ["book/07-encoder-decoder", "book/09-decoding"])
def test_the_chapters_attention_viewer_draws_its_lines(browser, site_url, visits, page):
    browser.get(f"{site_url}/{page}.html")
    lines = browser.execute_script("return document.querySelectorAll('svg.attention-viewer-graph line').length")
    assert lines > 0, f"{page}: the attention viewer drew nothing"


def test_every_page_loads_without_console_errors(visits):
    errors = {page: visit.console_errors for page, visit in visits.items() if visit.console_errors}
    assert not errors, f"console errors: {json.dumps(errors, indent=1)}"


def test_mathjax_typesets_every_equation(visits):
    failed = {page: visit.mathjax for page, visit in visits.items() if visit.equations and visit.mathjax != "ok"}
    assert not failed, f"MathJax did not run: {failed}"
    untypeset = {page: visit.untypeset for page, visit in visits.items() if visit.untypeset}
    assert not untypeset, f"equations left as raw TeX: {untypeset}"
    assert sum(visits[page].equations for page in CHAPTER_PAGES) > 0, "no equation found in any chapter"


# MathJax 4 makes each equation's speech in a web worker after typesetting; wait until every equation has it.
_WAIT_FOR_SPEECH = """
const done = arguments[arguments.length - 1];
const started = Date.now();
(function wait() {
  const equations = Array.from(document.querySelectorAll("mjx-container"));
  const spoken = equations.filter(e => e.querySelector("mjx-speech[aria-label]"));
  if (spoken.length === equations.length || Date.now() - started > 50000) {
    done(equations.map(e => {
      const speech = e.querySelector("mjx-speech[aria-label]");
      const tex = (e.querySelector("mjx-math") || e).getAttribute("data-latex") || "";
      return {tex: tex, speech: speech ? speech.getAttribute("aria-label") : ""};
    }));
  } else {
    setTimeout(wait, 200);
  }
})();
"""


def _accessible_names(driver) -> set[str]:
    """The names Chromium gives assistive technology: its accessibility tree, as a screen reader reads it."""
    tree = driver.execute_cdp_cmd("Accessibility.getFullAXTree", {})
    return {str(node["name"]["value"]) for node in tree["nodes"] if not node.get("ignored") and node.get("name")}


@pytest.mark.parametrize("page", ["book/01-attention", f"{CHINESE}/book/01-attention"])
def test_every_equation_is_spoken_to_assistive_technology(browser, site_url, visits, page):
    browser.get(f"{site_url}/{page}.html")
    browser.execute_async_script(_WAIT_FOR_MATHJAX)
    equations = browser.execute_async_script(_WAIT_FOR_SPEECH)
    assert equations, f"{page}: no equation typeset"
    silent = [equation["tex"][:60] for equation in equations if not equation["speech"].strip()]
    assert not silent, f"{page}: {len(silent)} of {len(equations)} equations have no speech, e.g. {silent[:3]}"
    names = _accessible_names(browser)
    unheard = [equation["speech"][:60] for equation in equations if equation["speech"] not in names]
    assert not unheard, f"{page}: speech not in the accessibility tree, e.g. {unheard[:3]}"


def test_an_equation_is_explored_part_by_part_from_the_keyboard(browser, site_url, visits):
    from selenium.webdriver.common.keys import Keys

    browser.get(f"{site_url}/book/01-attention.html")
    browser.execute_async_script(_WAIT_FOR_MATHJAX)
    browser.execute_async_script(_WAIT_FOR_SPEECH)
    browser.execute_script("document.querySelector('div.math mjx-container').focus()")
    highlighted = "return Array.from(document.querySelectorAll('[data-sre-highlight-1]')).map(e => e.outerHTML)"
    focused = browser.execute_script("return !!document.activeElement.closest('mjx-container')")
    assert focused, "an equation takes no focus"
    browser.switch_to.active_element.send_keys(Keys.ARROW_DOWN)
    first_part = browser.execute_script(highlighted)
    assert first_part, "the arrow down key highlighted no part of the equation"
    browser.switch_to.active_element.send_keys(Keys.ARROW_RIGHT)
    second_part = browser.execute_script(highlighted)
    assert second_part and second_part != first_part, "the arrow right key did not move to the next part"


def test_no_page_shows_stray_tex_or_a_mathjax_error(visits):
    stray = {page: visit.stray_tex for page, visit in visits.items() if visit.stray_tex}
    assert not stray, f"backslash commands left in the rendered text: {stray}"
    errors = {page: visit.math_errors for page, visit in visits.items() if visit.math_errors}
    assert not errors, f"MathJax could not typeset: {errors}"


def test_chinese_pages_have_a_font_for_their_characters(visits):
    boxes = [page for page, visit in visits.items() if visit.missing_glyphs]
    assert not boxes, f"Chinese drawn as empty boxes (install fonts-noto-cjk) on {boxes}"


def test_no_code_needs_a_horizontal_scroll_bar_at_1400_pixels(visits):
    wide = {page: visit.scrolling_code for page, visit in visits.items() if visit.scrolling_code}
    assert not wide, f"code blocks wider than the page (their longest line): {json.dumps(wide, indent=1)}"


def test_no_raw_double_dollars_are_left_in_the_text(visits):
    pages = [page for page, visit in visits.items() if visit.raw_double_dollars]
    assert not pages, f"'$$' left unrendered on {pages}"


def test_every_image_loads(visits):
    broken = {page: visit.broken_images for page, visit in visits.items() if visit.broken_images}
    assert not broken, f"images with naturalWidth 0: {broken}"


def test_pages_fetch_nothing_from_the_internet(visits, site_url):
    # chrome:// and data: URLs are the browser's own; anything over the network must be the site.
    def outside(url: str) -> bool:
        return urlsplit(url).scheme in ("http", "https", "ws", "wss") and not url.startswith(f"{site_url}/")

    fetched = {page: sorted({url for url in visit.requested_urls if outside(url)}) for page, visit in visits.items()}
    fetched = {page: urls for page, urls in fetched.items() if urls}
    assert not fetched, f"pages fetched from outside the site: {json.dumps(fetched, indent=1)}"


@pytest.mark.parametrize("page", EXERCISE_PAGES)
def test_exercise_page_has_a_colab_button_for_its_notebook(visits, page):
    assert expected_colab_url(page) in visits[page].colab_links, (
        f"{page}: expected a Colab launch button to {expected_colab_url(page)}, found {visits[page].colab_links}"
    )


def test_chapter_pages_offer_no_colab_button_colab_cannot_open(visits):
    # Chapters are Markdown notebooks; Colab opens only .ipynb files from a repository.
    broken = {page: visits[page].colab_links for page in CHAPTER_PAGES if visits[page].colab_links}
    assert not broken, f"Colab buttons on Markdown pages: {broken}"


def test_search_finds_positional_encoding(browser, site_url, book_build):
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(f"{site_url}/search.html?q=positional+encoding")
    WebDriverWait(browser, PAGE_TIMEOUT_S).until(
        lambda driver: driver.execute_script("return document.querySelectorAll('#search-results li').length > 0")
    )
    links = browser.execute_script(
        "return Array.from(document.querySelectorAll('#search-results li a')).map(a => a.href)"
    )
    assert any("book/03-positional-encoding.html" in link for link in links), f"search results: {links}"


# --------------------------------------------------------------------------------------------
# Accessibility: WCAG 2.1 A and AA
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", COLOUR_MODES)
def test_axe_finds_no_wcag_violation_on_any_page(visits, mode):
    found = {page: visit.axe[mode] for page, visit in visits.items() if visit.axe[mode]}
    assert not found, f"axe-core's WCAG 2.0/2.1 A and AA violations in {mode} mode:\n{axe_summary(found)}"


# An alt that a screen reader would read out instead of a description: a path or file name, or a figure's repr.
_NOT_A_DESCRIPTION = re.compile(r"(^|/)[\w.-]+\.(png|jpe?g|svg|gif)$|^<Figure|_images/|^[0-9a-f]{64}", re.IGNORECASE)


def test_every_image_has_a_text_alternative_that_describes_it(visits):
    bad = {}
    for page, visit in visits.items():
        for image in visit.images:
            alt, decorative = (image["alt"] or "").strip(), image["role"] in ("presentation", "none")
            if (not alt and not decorative) or _NOT_A_DESCRIPTION.search(alt):
                bad.setdefault(page, []).append(f"{image['src']}: alt={image['alt']!r}")
    assert not bad, f"images without a description: {json.dumps(bad, indent=1, ensure_ascii=False)}"


def _figure_outputs(page: str) -> list[dict]:
    """The descriptions of every figure the executed page shows, in order (its outputs in the execution cache)."""
    import jupytext
    from jupyter_cache import get_cache

    notebook = jupytext.read(REPOSITORY_ROOT / f"{page}.md")
    if "kernelspec" not in notebook.metadata:  # a page of text only
        return []
    _, notebook = get_cache(str(BUILD_DIR / ".jupyter_cache")).merge_match_into_notebook(notebook)
    return [
        output.get("metadata", {}).get(METADATA_KEY, {})
        for cell in notebook.cells
        for output in cell.get("outputs", [])
        if "image/png" in output.get("data", {})
    ]


@pytest.mark.parametrize("page", CHAPTER_PAGES)
def test_every_figure_of_the_chapter_is_described_in_both_languages(book_build, page):
    figures = _figure_outputs(page)
    undescribed = [index for index, described in enumerate(figures) if set(described) != {"en", CHINESE}]
    assert not undescribed, f"{page}: figures {undescribed} of {len(figures)} have no description in both languages"
    empty = [index for index, described in enumerate(figures) if not all(d["alt"] for d in described.values())]
    assert not empty, f"{page}: figures {empty} have an empty description"


@pytest.mark.parametrize("page", CHAPTER_PAGES)
def test_each_edition_shows_every_figure_with_its_own_languages_description(chinese_build, page):
    figures = _figure_outputs(page)
    for language, folder in (("en", HTML_DIR), (CHINESE, CHINESE_HTML_DIR)):
        text = (folder / f"{page}.html").read_text(encoding="utf-8")
        alts = [html.unescape(alt) for alt in re.findall(r'<img alt="([^"]*)"[^>]*src="[^"]*_images/', text)]
        assert alts == [described[language]["alt"] for described in figures], f"{page} ({language})"
        assert text.count('<details class="figure-description">') == len(figures), f"{page} ({language})"


def test_every_page_starts_with_a_link_that_skips_to_its_content(visits):
    missing = [page for page, visit in visits.items() if not visit.skip_link]
    assert not missing, f"no working skip link on {missing}"


def test_pages_reflow_at_320_pixels_without_scrolling_sideways(visits):
    wide = {page: visit.wider_than_320 for page, visit in visits.items() if visit.wider_than_320}
    assert not wide, f"prose wider than a 320-pixel window: {json.dumps(wide, indent=1, ensure_ascii=False)}"


def test_the_chinese_edition_marks_code_and_outputs_as_english(chinese_build):
    text = (CHINESE_HTML_DIR / "book/01-attention.html").read_text(encoding="utf-8")
    blocks = re.findall(r'<div class="[^"]*\bhighlight-[^"]*"( lang="en")?', text)
    assert blocks and all(blocks), f'{blocks.count("")} of {len(blocks)} code blocks without lang="en"'
    # MathJax speaks every equation in English (its speech rules have no Chinese).
    equations = re.findall(r'<(?:span|div) class="math notranslate[^"]*"( lang="en")?', text)
    assert equations and all(equations), f'{equations.count("")} of {len(equations)} equations without lang="en"'
    english = (HTML_DIR / "book/01-attention.html").read_text(encoding="utf-8")
    assert 'lang="en"' not in english.split("<main", 1)[1].replace('hreflang="en"', ""), "the English page needs none"


def test_each_bibliography_entry_is_an_item_of_its_list(chinese_build):
    for folder in (HTML_DIR, CHINESE_HTML_DIR):
        text = (folder / "book/bibliography.html").read_text(encoding="utf-8")
        assert "doc-biblioentry" not in text, f"{folder}: a deprecated DPUB-ARIA role"
        assert text.count('role="listitem"') == text.count('<div class="citation"') > 0
