"""The attention viewer draws offline and answers a hover, in a real browser with every request blocked."""

from __future__ import annotations

import pytest
import torch

from transformer_course.book_programs.attention_viewer import CROSS, DECODER_SELF, ENCODER_SELF, AttentionViewer

pytestmark = pytest.mark.book  # reads a page in headless Chromium

SOURCE, TARGET = ["twelve", "thousand", "<eos>"], ["<bos>", "一", "万"]


def _viewer() -> AttentionViewer:
    torch.manual_seed(0)
    weights = {
        ENCODER_SELF: torch.softmax(torch.randn(2, 4, 3, 3), dim=-1),
        DECODER_SELF: torch.softmax(torch.randn(2, 4, 3, 3), dim=-1),
        CROSS: torch.zeros(2, 4, 3, 3),
    }
    weights[CROSS][..., 1] = 1.0  # every query attends to "thousand" alone
    return AttentionViewer(SOURCE, TARGET, weights, title="a test sentence")


def test_the_viewer_draws_and_highlights_what_a_hovered_query_attends_to_with_the_network_blocked(browser, tmp_path):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    page = _viewer().save(tmp_path / "viewer.html")
    browser.execute_cdp_cmd("Network.enable", {})
    browser.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["http://*", "https://*", "ws://*", "wss://*"]})
    try:
        browser.get(page.as_uri())
        browser.find_element(By.XPATH, "//button[text()='cross-attention']").click()
        lines = browser.find_elements(By.CSS_SELECTOR, "svg.attention-viewer-graph line")
        assert len(lines) == len(TARGET) * len(SOURCE), f"{len(lines)} lines drawn"
        queries = browser.find_elements(By.CSS_SELECTOR, "text.attention-viewer-query")
        assert [query.text for query in queries] == TARGET
        ActionChains(browser).move_to_element(queries[2]).perform()
        shown = [line for line in lines if line.value_of_css_property("display") != "none"]
        assert {line.get_attribute("data-query") for line in shown} == {"2"}, "hovering keeps the query's lines only"
        boxes = browser.find_elements(By.CSS_SELECTOR, "rect.attention-viewer-key-box")
        assert [float(box.get_attribute("fill-opacity")) for box in boxes] == [0.0, 1.0, 0.0]
        browser.save_screenshot(str(tmp_path / "viewer.png"))
        errors = [entry["message"] for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
        assert not errors, errors
    finally:
        browser.execute_cdp_cmd("Network.setBlockedURLs", {"urls": []})


def test_every_layer_head_and_query_is_reached_by_the_keyboard_alone(browser, tmp_path):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    browser.get(_viewer().save(tmp_path / "viewer.html").as_uri())
    reached = []
    for _ in range(3 + 2 + 5 + len(TARGET) + 1):  # three attentions, two layers, mean and four heads, the queries
        ActionChains(browser).send_keys(Keys.TAB).perform()
        reached.append(browser.execute_script(
            "const e = document.activeElement; return e.getAttribute('data-focus-key') || e.getAttribute('aria-label');"
        ))  # fmt: skip
    assert reached[:10] == ["kind-0", "kind-1", "kind-2", "layer-0", "layer-1", "head-mean", "head-0", "head-1",
                            "head-2", "head-3"], reached  # fmt: skip
    assert reached[10:13] == [f"query {i + 1} of 3: {token}" for i, token in enumerate(SOURCE)], reached


def test_a_button_pressed_by_the_keyboard_keeps_the_focus_and_announces_what_is_shown(browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    browser.get(_viewer().save(tmp_path / "viewer.html").as_uri())
    browser.find_element(By.XPATH, "//button[text()='cross-attention']").send_keys(Keys.ENTER)
    focused = browser.execute_script("return document.activeElement.getAttribute('data-focus-key')")
    assert focused == "kind-2", "after pressing a button the focus must stay on it, not fall back to the page"
    pressed = browser.find_element(By.XPATH, "//button[text()='cross-attention']").get_attribute("aria-pressed")
    assert pressed == "true"
    status = browser.find_element(By.CSS_SELECTOR, "[role=status][aria-live=polite]").text
    assert status == "cross-attention, layer 1, mean of the 4 heads. Strongest: “<bos>” to “thousand”, 1.00.", status


def test_a_focused_query_shows_its_lines_and_says_what_it_attends_to(browser, tmp_path):
    from selenium.webdriver.common.by import By

    browser.get(_viewer().save(tmp_path / "viewer.html").as_uri())
    browser.find_element(By.XPATH, "//button[text()='cross-attention']").click()
    browser.execute_script("document.querySelectorAll('text.attention-viewer-query')[1].focus()")
    lines = browser.find_elements(By.CSS_SELECTOR, "svg.attention-viewer-graph line")
    shown = {line.get_attribute("data-query") for line in lines if line.value_of_css_property("display") != "none"}
    assert shown == {"1"}, "focusing a query keeps its lines only, as hovering does"
    status = browser.find_element(By.CSS_SELECTOR, "[role=status]").text
    assert status.startswith("“一” attends most to “thousand” 1.00"), status


def test_the_viewer_offers_the_weights_it_draws_as_a_table(browser, tmp_path):
    from selenium.webdriver.common.by import By

    viewer = _viewer()
    browser.get(viewer.save(tmp_path / "viewer.html").as_uri())
    browser.find_element(By.XPATH, "//button[text()='decoder self-attention']").click()
    browser.find_element(By.XPATH, "//button[text()='2' and ancestor::*[@aria-label='head']]").click()
    browser.find_element(By.TAG_NAME, "summary").click()
    cells = browser.execute_script(
        "return Array.from(document.querySelectorAll('table tbody tr'))"
        ".map(row => Array.from(row.cells).map(cell => cell.textContent))"
    )
    weights = viewer.data["kinds"][1]["weights"][0][1]  # decoder self-attention, layer 1, head 2
    assert cells == [[query, *(f"{w:.2f}" for w in row)] for query, row in zip(TARGET, weights)]


def test_axe_finds_no_wcag_violation_in_the_viewer(browser, tmp_path):
    from axe_check import axe_violations, colour_mode, summary

    browser.get(_viewer().save(tmp_path / "viewer.html").as_uri())
    found = {}
    for mode in ("light", "dark"):
        with colour_mode(browser, mode):
            found[mode] = axe_violations(browser)
    assert not any(found.values()), summary(found)
