"""A student id is what a path, a command line and a spreadsheet can all take, and nothing else."""

from __future__ import annotations

import pytest

from transformer_course.grading.student_ids import STUDENT_ID_HELP, is_student_id


@pytest.mark.parametrize("name", ["alice", "bob.smith", "s1234567", "a_b-c@uni.edu", "A" * 64, "7"])
def test_ordinary_ids_are_student_ids(name):
    assert is_student_id(name)


@pytest.mark.parametrize("name", ["", "-rf", ".hidden", "A" * 65, "a b", "李雷", "a/b", "a\nb", "=2+5"])
def test_names_a_path_command_line_or_spreadsheet_would_misread_are_not(name):
    assert not is_student_id(name)


def test_the_rule_is_said_in_words():
    assert "1 to 64 ASCII letters" in STUDENT_ID_HELP
