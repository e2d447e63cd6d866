"""A record is written whole or not at all: an interrupted write leaves the previous file as it was, and nothing
beside it."""

from __future__ import annotations

import pytest

from transformer_course.atomic_files import write_atomically, write_text_atomically


def test_a_write_interrupted_half_way_leaves_the_previous_file_whole(tmp_path):
    path = write_text_atomically(tmp_path / "record.json", '{"alice": "graded"}')

    def half_then_killed(file):
        file.write(b'{"alice": "gra')
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_atomically(path, half_then_killed)
    assert path.read_text(encoding="utf-8") == '{"alice": "graded"}'
    assert sorted(item.name for item in tmp_path.iterdir()) == ["record.json"]


def test_a_record_is_written_into_a_folder_made_for_it(tmp_path):
    path = write_text_atomically(tmp_path / "grading_records" / "01-attention.json", "李雷\n")
    assert path.read_text(encoding="utf-8") == "李雷\n"
