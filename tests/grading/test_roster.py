"""A roster is refused when it is read, not after grading: an extension that is not a number of days a deadline can
move by (nan, infinity, 1e9, a negative) is one error naming the line."""

from __future__ import annotations

import pytest

from transformer_course.grading.roster import MAX_EXTENSION_DAYS, RosterError, read_roster


@pytest.mark.parametrize("extension", ["nan", "NaN", "inf", "-inf", "1e9", "-1", str(MAX_EXTENSION_DAYS + 1)])
def test_an_extension_a_deadline_cannot_move_by_is_refused_naming_the_line(tmp_path, extension):
    path = tmp_path / "roster.csv"
    path.write_text(f"student_id,extension\ns001,2\ns002,{extension}\n", encoding="utf-8")
    with pytest.raises(RosterError, match=rf"line 3: extension {extension!r} is not"):
        read_roster(path)


def test_an_extension_of_days_and_hours_is_read(tmp_path):
    path = tmp_path / "roster.csv"
    path.write_text("student_id,extension\ns001,1.5\ns002,\n", encoding="utf-8")
    assert {student: row.extension_days for student, row in read_roster(path).items()} == {"s001": 1.5, "s002": 0.0}
