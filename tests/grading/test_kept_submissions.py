"""What was handed in is kept in nbgrader's ``submitted/``: a resubmission becomes the version there, which later
commands read, and every earlier version is kept beside it, byte for byte; the same file handed in again changes
nothing, and a class graded in place is not written to."""

from __future__ import annotations

from pathlib import Path

from transformer_course.grading.kept_submissions import EARLIER, keep_submitted
from transformer_course.grading.submission import Submission

ASSIGNMENT, NOTEBOOK = "01-attention", "attention.ipynb"


def _handed_in(folder: Path, content: bytes, timestamp: bytes | None = None) -> Submission:
    """A submission as intake takes it in from ``folder``: its files kept as handed in."""
    folder.mkdir(parents=True, exist_ok=True)
    kept = {NOTEBOOK: content, **({"timestamp.txt": timestamp} if timestamp else {})}
    for name, data in kept.items():
        (folder / name).write_bytes(data)
    return Submission("alice", ASSIGNMENT, folder=folder, kept=kept)


def test_a_resubmission_becomes_the_version_in_submitted(tmp_path):
    submitted = tmp_path / "submitted"
    keep_submitted(submitted, _handed_in(tmp_path / "first" / "alice", b"first", b"2026-11-20 12:00:00 UTC"))
    keep_submitted(submitted, _handed_in(tmp_path / "second" / "alice", b"second"))
    folder = submitted / "alice" / ASSIGNMENT
    assert sorted(path.name for path in folder.iterdir()) == [NOTEBOOK]
    assert (folder / NOTEBOOK).read_bytes() == b"second"


def test_every_earlier_version_is_kept_beside_the_latest_in_order(tmp_path):
    submitted = tmp_path / "submitted"
    for number, content in enumerate((b"first", b"second", b"third")):
        keep_submitted(submitted, _handed_in(tmp_path / str(number) / "alice", content, b"2026-11-20 12:00:00 UTC"))
    earlier = submitted / "alice" / EARLIER / ASSIGNMENT
    versions = [(earlier / str(number) / NOTEBOOK).read_bytes() for number in (1, 2)]
    assert versions == [b"first", b"second"], versions
    assert (earlier / "1" / "timestamp.txt").read_bytes() == b"2026-11-20 12:00:00 UTC"


def test_the_review_says_where_the_earlier_version_is(tmp_path):
    submitted = tmp_path / "submitted"
    keep_submitted(submitted, _handed_in(tmp_path / "first" / "alice", b"first"))
    second = _handed_in(tmp_path / "second" / "alice", b"second")
    keep_submitted(submitted, second)
    assert second.findings == [f"an earlier submission is kept in submitted/alice/{EARLIER}/{ASSIGNMENT}/1"]


def test_the_same_file_handed_in_again_changes_nothing(tmp_path):
    submitted = tmp_path / "submitted"
    keep_submitted(submitted, _handed_in(tmp_path / "first" / "alice", b"same"))
    again = _handed_in(tmp_path / "again" / "alice", b"same")
    keep_submitted(submitted, again)
    assert not (submitted / "alice" / EARLIER).exists() and again.findings == []


def test_a_submission_graded_in_place_is_not_written(tmp_path):
    submitted = tmp_path / "submitted"
    in_place = _handed_in(submitted / "alice" / ASSIGNMENT, b"collected")
    in_place.kept[NOTEBOOK] = b"rebuilt differently"
    keep_submitted(submitted, in_place)
    assert (submitted / "alice" / ASSIGNMENT / NOTEBOOK).read_bytes() == b"collected"
