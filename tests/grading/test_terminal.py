"""What a command prints of what learners control is escaped: no control or format character reaches the
instructor's terminal as it is, and one row stays one line."""

from __future__ import annotations

from transformer_course.grading.grade_row import GradeRow
from transformer_course.grading.terminal import print_rows, printable, say

HOSTILE = "\x1b]0;owned\x07\x1b[2J\ns311 99/14 graded\r\u202egnp.exe"


def test_a_hostile_message_is_printed_escaped_on_its_own_line(capsys):
    print_rows([GradeRow("s001", "01-attention", 1.0, 14.0, "graded", HOSTILE)])
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\r" not in out and "\u202e" not in out, repr(out)
    assert out.count("\n") == 1, repr(out)


def test_a_hostile_review_finding_is_printed_escaped(capsys):
    print_rows([GradeRow("s001", "01-attention", 1.0, 14.0, "graded", "", HOSTILE)])
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and "\x1b" not in lines[1], lines


def test_a_line_of_learners_words_is_one_line(capsys):
    say("not graded:", f"doejane{HOSTILE}_48213_1_attention.ipynb: nobody on the roster")
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "\x07" not in out, repr(out)


def test_escaping_keeps_a_chinese_name_as_it_is():
    assert printable("李雷 Wang Fang") == "李雷 Wang Fang"


def test_escaping_shows_a_control_character_as_python_writes_it():
    assert printable("a\x1b[2Jb\n") == "a\\x1b[2Jb\\n"
