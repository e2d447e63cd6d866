"""axe-core's WCAG 2.0 and 2.1 A and AA rules, run in a page a Selenium driver has open.

    from axe_check import axe_violations, colour_mode
    violations = axe_violations(driver, "http://127.0.0.1:8000/book/intro.html")   # or a Path to an HTML file
    with colour_mode(driver, "dark"):
        violations = axe_violations(driver)                                          # the page already open

axe-core is Deque's accessibility engine (MPL-2.0), from the npm registry: ``python tests/axe_check.py
install`` (``.ci/run`` runs it) fetches the version :data:`AXE_VERSION`, checks the tarball against the
registry's :data:`AXE_INTEGRITY` and keeps its ``axe.min.js`` in ``.venv/axe-core/``, so no Node.js is
needed; ``AXE_CORE_JS`` names another copy of ``axe.min.js``.
It is injected into the page and run there, so what it judges (colours, focus, names) is what the
browser drew. A violation is returned as a dict: the rule's ``id``, its ``impact``, ``help`` and
``nodes`` (each node's CSS selector and axe's summary of what is wrong with it).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import io
import os
import sys
import tarfile
import urllib.request
from pathlib import Path

AXE_VERSION = "4.14.1"
AXE_TARBALL = f"https://registry.npmjs.org/axe-core/-/axe-core-{AXE_VERSION}.tgz"
AXE_INTEGRITY = "sha512-FHfa+lmNjQZfJz1q8wKqIDwC6DExcHt/pkjNQb09a3NPjCKg2rhu5qb2S4r76ASyFNNtuFooJpZe37OgudVGtQ=="
AXE_CORE_JS = Path(__file__).resolve().parents[1] / ".venv" / "axe-core" / "axe.min.js"
WCAG_TAGS = ("wcag2a", "wcag2aa", "wcag21a", "wcag21aa")
COLOUR_MODES = ("light", "dark")
# The rules whose verdict depends on the colours alone: what a page in its other colour mode needs checked again.
COLOUR_RULES = ("color-contrast", "link-in-text-block")

_RUN_AXE = """
const done = arguments[arguments.length - 1];
axe.run(document, {runOnly: arguments[0], resultTypes: ["violations"]})
  .then(results => done(results.violations.map(rule => ({
    id: rule.id,
    impact: rule.impact,
    help: rule.help,
    nodes: rule.nodes.map(node => ({target: node.target.join(" "), summary: node.failureSummary})),
  }))))
  .catch(error => done({error: String(error)}));
"""


def axe_source() -> str:
    """The text of ``axe.min.js``, or an error that says how to install it."""
    path = Path(os.environ.get("AXE_CORE_JS", AXE_CORE_JS))
    if not path.is_file():
        raise FileNotFoundError(
            f"axe-core not found at {path}: install it with `python tests/axe_check.py install` (as .ci/run "
            f"does), or set AXE_CORE_JS to an axe.min.js"
        )
    return path.read_text(encoding="utf-8")


def axe_violations(
    driver, page: str | Path | None = None, tags: tuple[str, ...] = WCAG_TAGS, rules: tuple[str, ...] = ()
) -> list[dict]:
    """The violations of the WCAG rules (``tags``, or the named ``rules`` only) on ``page`` (a URL or an HTML
    file), or on the page open now."""
    if page is not None:
        driver.get(Path(page).resolve().as_uri() if isinstance(page, Path) else page)
    if not driver.execute_script("return typeof window.axe === 'object'"):
        driver.execute_script(axe_source())
    which = {"type": "rule", "values": list(rules)} if rules else {"type": "tag", "values": list(tags)}
    found = driver.execute_async_script(_RUN_AXE, which)
    if isinstance(found, dict):
        raise RuntimeError(f"axe-core failed on {driver.current_url}: {found['error']}")
    return found


@contextlib.contextmanager
def colour_mode(driver, mode: str):
    """The page open now in ``mode``: the theme's own colours for it (pydata-sphinx-theme's ``data-theme``)
    and the operating system's preference (``prefers-color-scheme``, which Chromium is told to emulate)."""
    if mode not in COLOUR_MODES:
        raise ValueError(f"unknown colour mode {mode!r}; there are {', '.join(COLOUR_MODES)}")
    preference = {"features": [{"name": "prefers-color-scheme", "value": mode}]}
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", preference)
    # The theme fades colours from one mode to the other: without the fade, axe sees the mode's own colours
    # at once instead of a blend half-way.
    before = driver.execute_script(
        "const still = document.createElement('style'); still.id = 'axe-check-still';"
        "still.textContent = '*, *::before, *::after { transition: none !important; animation: none !important; }';"
        "document.head.appendChild(still);"
        "const html = document.documentElement; const before = html.dataset.theme || '';"
        "html.dataset.theme = arguments[0]; return before;",
        mode,
    )
    try:
        yield
    finally:
        driver.execute_script(
            "document.documentElement.dataset.theme = arguments[0];"
            "document.getElementById('axe-check-still').remove();",
            before,
        )
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})


def summary(violations_by_page: dict[str, list[dict]]) -> str:
    """One line per page and rule: how many nodes, and the first node's selector and what is wrong with it."""
    lines = []
    for page, violations in violations_by_page.items():
        for rule in violations:
            first = rule["nodes"][0] if rule["nodes"] else {"target": "", "summary": ""}
            what = " ".join(str(first["summary"]).split())[:160]
            lines.append(f"{page}: {rule['id']} ({len(rule['nodes'])} nodes), e.g. {first['target']}: {what}")
    return "\n".join(lines)


def install(target: Path = AXE_CORE_JS) -> Path:
    """Fetch axe-core :data:`AXE_VERSION` from the npm registry, check it, keep its ``axe.min.js`` at ``target``."""
    if target.is_file():
        return target
    with urllib.request.urlopen(AXE_TARBALL, timeout=60) as response:
        tarball = response.read()
    algorithm, expected = AXE_INTEGRITY.split("-", 1)
    if base64.b64encode(hashlib.new(algorithm, tarball).digest()).decode() != expected:
        raise RuntimeError(f"{AXE_TARBALL} does not match its registry integrity {AXE_INTEGRITY}")
    with tarfile.open(fileobj=io.BytesIO(tarball)) as archive:
        script = archive.extractfile("package/axe.min.js").read()
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(script)
    return target


if __name__ == "__main__":
    if sys.argv[1:] != ["install"]:
        sys.exit("usage: python tests/axe_check.py install")
    print(f"axe-core {AXE_VERSION}: {install()}")
