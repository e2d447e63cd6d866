"""The run record keeps every finding: one written when findings were a single ``review`` text is read, not lost."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.needs_nbgrader  # report reads the gradebook through nbgrader


def test_findings_added_to_a_record_of_one_review_text_keep_that_text(tmp_path):
    from transformer_course.grading.report import add_findings, read_records, records_path

    path = records_path(tmp_path, "01-attention")
    path.parent.mkdir(parents=True)
    old = {"alice": {"status": "graded", "message": "", "review": "cell softmax: uses the library's own softmax"}}
    path.write_text(json.dumps(old), encoding="utf-8")
    add_findings(tmp_path, "01-attention", {"alice": ["alike to bob's code (61 %)"]})
    kept = read_records(tmp_path, "01-attention")["alice"]["findings"]
    assert kept == ["cell softmax: uses the library's own softmax", "alike to bob's code (61 %)"], kept
