"""Submission times from what the LMSs give: the course's CSV keyed by any roster key, Moodle's grading worksheet and
Canvas's API list read as they come, a time without a zone refused, and a key that names nobody said, never
silently dropped."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from transformer_course.grading.lateness import LatenessError
from transformer_course.grading.submission_times import read_submission_times

ROSTER = """student_id,name,email,lms_id
s001,Jane Doe,jane@uni.edu,48213
s002,李雷,lei@uni.edu,48214
"""
NOON_UTC = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def _times(tmp_path, text: str, roster, zone: str | None = None, name: str = "times.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return read_submission_times(path, roster, zone)


def test_a_times_file_keyed_by_lms_id_gives_the_students_time(tmp_path, roster):
    found = _times(tmp_path, "lms_id,time\n48213,2026-11-20T13:00:00+01:00\n", roster)
    assert found.times == {"s001": NOON_UTC}


def test_a_times_file_keyed_by_email_gives_the_students_time(tmp_path, roster):
    found = _times(tmp_path, "email,time\nLei@uni.edu,2026-11-20T12:00:00Z\n", roster)
    assert found.times == {"s002": NOON_UTC}


def test_a_student_column_may_hold_any_roster_key(tmp_path, roster):
    found = _times(tmp_path, "student,time\ns001,2026-11-20T12:00:00Z\n48214,2026-11-20T12:00:00Z\n", roster)
    assert found.times == {"s001": NOON_UTC, "s002": NOON_UTC}


def test_a_key_that_names_nobody_is_a_warning_not_silence(tmp_path, roster):
    found = _times(tmp_path, "lms_id,time\n99999,2026-11-20T12:00:00Z\n", roster)
    assert found.times == {} and "99999" in found.warnings[0], found


def test_a_time_without_a_zone_is_refused_naming_the_format(tmp_path, roster):
    with pytest.raises(LatenessError, match=r"line 2: 2026-11-20 12:00:00 has no time zone.*student_id"):
        _times(tmp_path, "student_id,time\ns001,2026-11-20 12:00:00\n", roster)


def test_a_time_without_a_zone_is_read_in_the_zone_given(tmp_path, roster):
    found = _times(tmp_path, "student_id,time\ns001,2026-11-20 13:00:00\n", roster, zone="Europe/Berlin")
    assert found.times == {"s001": NOON_UTC}


def test_nbgraders_own_form_with_its_zone_is_read(tmp_path, roster):
    found = _times(tmp_path, "student_id,time\ns001,2026-11-20 12:00:00.000000 UTC\n", roster)
    assert found.times == {"s001": NOON_UTC}


def test_a_file_of_no_known_form_is_one_error_naming_the_forms(tmp_path, roster):
    with pytest.raises(LatenessError, match=r"none of the forms read \(its columns: who, when\)"):
        _times(tmp_path, "who,when\ns001,noon\n", roster)


MOODLE_WORKSHEET = (
    "Identifier,Full name,Email address,Status,Grade,Maximum Grade,Grade can be changed,"
    "Last modified (submission),Last modified (grade),Feedback comments\n"
    'Participant 48213,Jane Doe,jane@uni.edu,Submitted for grading,,14.00,Yes,"Friday, 20 November 2026, 1:00 PM",-,\n'
    "Participant 48299,李雷,lei@uni.edu,No submission,,14.00,Yes,-,-,\n"
)


def test_moodles_grading_worksheet_is_read_as_it_comes(tmp_path, roster):
    found = _times(tmp_path, MOODLE_WORKSHEET, roster, zone="Europe/Berlin")
    assert found.times == {"s001": NOON_UTC}


def test_moodles_grading_worksheet_without_a_zone_is_refused(tmp_path, roster):
    with pytest.raises(LatenessError, match="--times-zone"):
        _times(tmp_path, MOODLE_WORKSHEET, roster)


def test_canvass_submissions_from_its_api_are_read_as_they_come(tmp_path, roster):
    submissions = [
        {"id": 1, "user_id": 48214, "submitted_at": "2026-11-20T12:00:00Z", "late": True},
        {"id": 2, "user_id": 48213, "submitted_at": None},
    ]
    found = _times(tmp_path, json.dumps(submissions), roster, name="submissions.json")
    assert found.times == {"s002": NOON_UTC}
