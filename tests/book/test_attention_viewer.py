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
