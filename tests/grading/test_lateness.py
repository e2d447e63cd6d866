"""Deadlines and late work at their edges: a second before and after the due date, an extension, the cap, zero after
a limit, hours started, and due dates and policies that cannot be used; and every form of nbgrader's submission time
read as the same moment."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from transformer_course.grading.lateness import LatenessError, LatePolicy, late_by, parse_due, parse_submission_time

DUE = datetime(2026, 11, 20, 22, 59, tzinfo=UTC)  # 23:59 in UTC+1
TEN_PERCENT_A_DAY = LatePolicy(deduct=0.1, per="day", cap=0.5, zero_after_days=7)


def _penalty(policy: LatePolicy, after: timedelta, extension_days: float = 0.0) -> float:
    return policy.penalty(14.0, 14.0, late_by(DUE + after, DUE, extension_days))


def test_a_second_before_the_due_date_costs_nothing():
    assert _penalty(TEN_PERCENT_A_DAY, timedelta(seconds=-1)) == 0.0


def test_exactly_on_the_due_date_costs_nothing():
    assert _penalty(TEN_PERCENT_A_DAY, timedelta(0)) == 0.0


def test_a_second_after_the_due_date_costs_a_whole_day_started():
    assert _penalty(TEN_PERCENT_A_DAY, timedelta(seconds=1)) == pytest.approx(1.4)


def test_a_day_and_a_second_late_is_two_days_started():
    assert _penalty(TEN_PERCENT_A_DAY, timedelta(days=1, seconds=1)) == pytest.approx(2.8)


def test_an_extension_moves_the_due_date():
    assert _penalty(TEN_PERCENT_A_DAY, timedelta(days=2), extension_days=2) == 0.0
    assert _penalty(TEN_PERCENT_A_DAY, timedelta(days=2, seconds=1), extension_days=2) == pytest.approx(1.4)


def test_the_cap_is_the_most_ever_deducted():
    assert _penalty(TEN_PERCENT_A_DAY, timedelta(days=6, hours=1)) == pytest.approx(7.0)


def test_later_than_the_limit_the_score_is_zero():
    assert _penalty(TEN_PERCENT_A_DAY, timedelta(days=7)) == pytest.approx(7.0)
    assert _penalty(TEN_PERCENT_A_DAY, timedelta(days=7, seconds=1)) == 14.0


def test_per_hour_counts_hours_started():
    assert _penalty(LatePolicy(deduct=0.01, per="hour"), timedelta(hours=2, seconds=1)) == pytest.approx(0.42)


def test_no_policy_charges_nothing_however_late():
    assert _penalty(LatePolicy.from_setting("none", "grading.yml"), timedelta(days=30)) == 0.0


def test_a_penalty_never_takes_more_than_the_score():
    assert LatePolicy(deduct=0.5).penalty(2.0, 14.0, timedelta(days=1)) == 2.0


def test_an_unknown_submission_time_is_not_late():
    assert late_by(None, DUE) is None


def test_a_due_date_without_a_time_zone_is_refused():
    with pytest.raises(LatenessError, match="no time zone"):
        parse_due("2026-11-20T23:59:00", "grading.yml")


@pytest.mark.parametrize(
    "setting", [{"deduct": 0.1, "per": "week"}, {"deduct": -1}, {"cap": 2}, {"penalty": 0.1}, "ten percent"]
)
def test_a_late_policy_that_cannot_be_used_is_one_error(setting):
    with pytest.raises(LatenessError):
        LatePolicy.from_setting(setting, "grading.yml")


@pytest.mark.parametrize(
    "text",
    [
        "2026-11-20 12:00:00.000000 UTC",  # nbgrader submit's own format
        "2026-11-20 12:00:00.000000",  # without the zone: UTC
        "2026-11-20T12:00:00Z",
        "2026-11-20 13:00:00.000000 +0100",  # nbgrader with a numeric zone
        "2026-11-20 13:00:00+01:00",
        "2026-11-20 07:00:00.000000 America/New_York",  # Exchange.timezone set to a named zone
    ],
)
def test_every_form_of_nbgraders_timestamp_is_read_as_the_same_moment(text):
    assert parse_submission_time(text) == datetime(2026, 11, 20, 12, 0, tzinfo=UTC), text


@pytest.mark.parametrize("text", ["yesterday", "2026-11-20 12:00:00 Mars/Olympus", "$(date)", "2026-13-45 12:00"])
def test_a_timestamp_that_is_no_time_is_refused(text):
    with pytest.raises(ValueError):
        parse_submission_time(text)
