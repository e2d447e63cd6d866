"""An LMS's download read off the happy path: files credited to nobody they do not belong to, every member
considered, and whatever a learner handed in either graded or named in their own row, never a silent ``missing``.
These tests read downloads only; nothing is graded (tests/grading/test_lms.py has the happy path)."""

from __future__ import annotations

import json
import struct
import zipfile
from pathlib import Path

import pytest
from suite_layers import NBGRADER_MISSING

pytest.importorskip("nbformat", reason=NBGRADER_MISSING)  # the roster and the download are read as intake reads

from transformer_course.grading.intake import MAX_NOTEBOOK_BYTES
from transformer_course.grading.lms import unpack

NOTEBOOK = "attention.ipynb"
ROSTER = """student_id,name,email,lms_id
s001,Jane Doe,jane@uni.edu,48213
s002,Wang Fang,fang@uni.edu,
s003,Li Lei,lei@uni.edu,48215
"""


def _notebook(tag: str) -> bytes:
    return json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5, "tag": tag}).encode()


def _zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return path


def _tags(target: Path) -> dict[str, str]:
    return {path.parent.name: json.loads(path.read_text())["tag"] for path in sorted(target.glob(f"*/{NOTEBOOK}"))}


def test_a_file_whose_lms_id_is_on_no_row_is_not_credited_by_name_to_a_learner_with_another_lms_id(tmp_path, roster):
    download = _zip(tmp_path / "canvas.zip", {f"doejane_99999_70001_{NOTEBOOK}": _notebook("another jane doe")})
    unpacked = unpack(download, "canvas", roster, [NOTEBOOK], tmp_path / "out")
    assert _tags(tmp_path / "out") == {}, "a stranger's file was credited to s001"
    assert unpacked.unmatched and "99999" in unpacked.unmatched[0], unpacked.unmatched


def test_a_stranger_of_the_same_name_does_not_replace_the_learners_own_notebook(tmp_path, roster):
    download = tmp_path / "moodle"
    for folder, tag in {
        "Jane Doe_48213_assignsubmission_file_": "jane",
        "Jane Doe_99999_assignsubmission_file_": "x",
    }.items():
        (download / folder).mkdir(parents=True)
        (download / folder / NOTEBOOK).write_bytes(_notebook(tag))
    unpack(download, "moodle", roster, [NOTEBOOK], tmp_path / "out")
    assert _tags(tmp_path / "out") == {"s001": "jane"}


def test_a_learner_without_an_lms_id_is_still_matched_by_name(tmp_path, roster):
    download = _zip(tmp_path / "canvas.zip", {f"wangfang_50001_70002_{NOTEBOOK}": _notebook("fang")})
    unpack(download, "canvas", roster, [NOTEBOOK], tmp_path / "out")
    assert _tags(tmp_path / "out") == {"s002": "fang"}


def test_one_learners_ten_thousand_files_leave_the_rest_of_the_class_read(tmp_path, roster):
    members = {f"doejane_48213_{70000 + index}_scratch{index}.txt": b"x" for index in range(10_000)}
    members[f"lilei_48215_80001_{NOTEBOOK}"] = _notebook("lei")
    unpack(_zip(tmp_path / "canvas.zip", members), "canvas", roster, [NOTEBOOK], tmp_path / "out")
    assert _tags(tmp_path / "out") == {"s003": "lei"}


def test_a_download_in_which_nobody_matched_still_gives_a_folder_to_grade(tmp_path, roster):
    download = _zip(tmp_path / "canvas.zip", {f"mallory_77777_70003_{NOTEBOOK}": _notebook("nobody")})
    unpack(download, "canvas", roster, [NOTEBOOK], tmp_path / "out")
    assert (tmp_path / "out").is_dir()


def _corrupt_crc(path: Path, member: str) -> None:
    """Flip a byte of ``member``'s stored data, so that its CRC no longer matches."""
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo(member)
    data = bytearray(path.read_bytes())
    name_length, extra_length = struct.unpack("<HH", data[info.header_offset + 26 : info.header_offset + 30])
    data[info.header_offset + 30 + name_length + extra_length] ^= 0xFF
    path.write_bytes(bytes(data))


def test_a_member_with_a_bad_crc_is_that_learners_status_and_the_class_is_read(tmp_path, roster):
    damaged = f"doejane_48213_70004_{NOTEBOOK}"
    download = _zip(
        tmp_path / "canvas.zip", {damaged: _notebook("jane"), f"lilei_48215_70005_{NOTEBOOK}": _notebook("lei")}
    )
    _corrupt_crc(download, damaged)
    unpacked = unpack(download, "canvas", roster, [NOTEBOOK], tmp_path / "out")
    assert _tags(tmp_path / "out") == {"s003": "lei"}
    problem = unpacked.problems["s001"]
    assert (problem.status, damaged in problem.message) == ("invalid_notebook", True), problem


def test_a_member_that_lies_about_its_size_is_that_learners_status_and_the_class_is_read(tmp_path, roster):
    lying = f"doejane_48213_70006_{NOTEBOOK}"
    download = _zip(
        tmp_path / "canvas.zip", {lying: _notebook("jane"), f"lilei_48215_70007_{NOTEBOOK}": _notebook("lei")}
    )
    data = bytearray(download.read_bytes())
    central = data.find(b"PK\x01\x02")  # the central directory's first entry: the lying member's, written first
    data[central + 24 : central + 28] = struct.pack("<I", 3)  # its uncompressed size, said to be 3 bytes
    download.write_bytes(bytes(data))
    unpacked = unpack(download, "canvas", roster, [NOTEBOOK], tmp_path / "out")
    assert _tags(tmp_path / "out") == {"s003": "lei"}
    assert unpacked.problems["s001"].status == "invalid_notebook", unpacked.problems


def test_a_zipped_notebook_is_named_in_the_learners_row(tmp_path, roster):
    download = _zip(tmp_path / "canvas.zip", {"doejane_48213_70008_attention.zip": b"PK\x05\x06" + b"\0" * 18})
    unpacked = unpack(download, "canvas", roster, [NOTEBOOK], tmp_path / "out")
    problem = unpacked.problems["s001"]
    assert problem.status == "invalid_notebook" and "attention.zip" in problem.message, problem


def test_a_moodle_notebook_in_a_subfolder_is_taken(tmp_path, roster):
    folder = "Jane Doe_48213_assignsubmission_file_"
    download = _zip(tmp_path / "moodle.zip", {f"{folder}/week1/{NOTEBOOK}": _notebook("jane in a subfolder")})
    unpack(download, "moodle", roster, [NOTEBOOK], tmp_path / "out")
    assert _tags(tmp_path / "out") == {"s001": "jane in a subfolder"}


def test_a_notebook_over_the_size_limit_makes_the_learner_refused(tmp_path, roster):
    download = tmp_path / "canvas"
    download.mkdir()
    (download / f"doejane_48213_70009_{NOTEBOOK}").write_bytes(b" " * (MAX_NOTEBOOK_BYTES + 1))
    unpacked = unpack(download, "canvas", roster, [NOTEBOOK], tmp_path / "out")
    assert unpacked.problems["s001"].status == "refused", unpacked.problems


def test_the_file_graded_is_remembered_by_its_name_in_the_download(tmp_path, roster):
    download = _zip(tmp_path / "canvas.zip", {f"lilei_LATE_48215_70010_{NOTEBOOK}": _notebook("lei")})
    unpacked = unpack(download, "canvas", roster, [NOTEBOOK], tmp_path / "out")
    assert unpacked.students == {"s003": [f"lilei_LATE_48215_70010_{NOTEBOOK}"]}
