"""The run record keeps what the gradebook cannot, between runs: one written before entries had versions is read, not
lost, and what the similarity report found outlives the next autograde."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from transformer_course.grading.run_record import keep_in_run_record, keep_similarity, read_records, records_path
from transformer_course.grading.status import Status
from transformer_course.grading.submission import Submission

ASSIGNMENT = "01-attention"


def test_a_record_of_one_review_text_written_before_versions_is_read_with_it(tmp_path):
    path = records_path(tmp_path, ASSIGNMENT)
    path.parent.mkdir(parents=True)
    old = {"alice": {"status": "graded", "message": "", "review": "cell softmax: uses the library's own softmax"}}
    path.write_text(json.dumps(old), encoding="utf-8")
    assert read_records(tmp_path, ASSIGNMENT)["alice"].findings == ["cell softmax: uses the library's own softmax"]


def test_similarity_findings_outlive_the_next_autograde(tmp_path):
    keep_similarity(tmp_path, ASSIGNMENT, {"alice": ["73% of the code is like bob's (see similarity.html)"]})
    keep_in_run_record(
        tmp_path, Submission("alice", ASSIGNMENT, Status.GRADED, findings=["cell x: meta-programming (exec)"])
    )
    assert read_records(tmp_path, ASSIGNMENT)["alice"].similarity == [
        "73% of the code is like bob's (see similarity.html)"
    ]


def test_the_next_similarity_run_replaces_the_last_ones_findings(tmp_path):
    keep_similarity(tmp_path, ASSIGNMENT, {"alice": ["73% of the code is like bob's"]})
    keep_similarity(tmp_path, ASSIGNMENT, {})
    assert read_records(tmp_path, ASSIGNMENT)["alice"].similarity == []


def test_a_record_reads_back_what_was_kept(tmp_path):
    submission = Submission("alice", ASSIGNMENT, status="timeout", message="cell 3 ran past 60 s", findings=["x"])
    submission.submitted_at = datetime(2026, 11, 20, 12, tzinfo=UTC)
    submission.due = datetime(2026, 11, 20, 11, tzinfo=UTC)
    submission.extension_days, submission.lms_files = 2.0, ["doejane_48213_90001_attention.ipynb"]
    keep_in_run_record(tmp_path, submission)
    kept = read_records(tmp_path, ASSIGNMENT)["alice"]
    assert (kept.status, kept.message, kept.findings) == ("timeout", "cell 3 ran past 60 s", ["x"])
    assert (kept.submitted_at, kept.due, kept.extension_days) == (submission.submitted_at, submission.due, 2.0)
    assert kept.lms_files == ["doejane_48213_90001_attention.ipynb"]


def test_a_due_date_given_once_is_kept_by_a_later_run_given_none(tmp_path):
    first = Submission("alice", ASSIGNMENT, Status.GRADED)
    first.due = datetime(2026, 11, 20, 11, tzinfo=UTC)
    keep_in_run_record(tmp_path, first)
    keep_in_run_record(tmp_path, Submission("alice", ASSIGNMENT, Status.GRADED, message="graded again"))
    assert read_records(tmp_path, ASSIGNMENT)["alice"].due == first.due
