"""Deadlines and late work: when an assignment is due, how late a submission is, and what that costs.

In the assignment's ``grading.yml`` (or ``autograde --due``)::

    due: 2026-11-20T23:59:00+01:00      # with its time zone
    late_policy:
      deduct: 0.1                       # of the maximum, per day (or hour) started past the due date
      per: day                          # or hour
      cap: 0.5                          # the most that is ever deducted, as a share of the maximum
      zero_after_days: 7                # later than this, the score is 0

``late_policy: none`` (or no ``late_policy``) charges nothing: lateness is still shown. A learner's
due date moves by the ``extension`` days of their roster row. The submission time is nbgrader's
``timestamp.txt`` (which the learner's own ``nbgrader submit`` writes, in any of the forms
:func:`parse_submission_time` reads), or the LMS's time (``--times``,
:mod:`transformer_course.grading.submission_times`), which wins; where neither gives one, a file the LMS marked
late (Canvas's ``_LATE``) is said in ``review`` and charged nothing, since how late is not known. The penalty is in
``score`` and shown in ``grades.csv``'s ``penalty``, with ``submitted_at`` and ``late_by`` (hours), and on the
learner's page.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from dateutil import tz
from dateutil.parser import isoparse

UNITS = {"day": timedelta(days=1), "hour": timedelta(hours=1)}


class LatenessError(ValueError):
    """A due date, a late policy or a times file that cannot be used: the message says which and why."""


@dataclass(frozen=True)
class LatePolicy:
    deduct: float = 0.0
    per: str = "day"
    cap: float = 1.0
    zero_after_days: float | None = None

    @classmethod
    def from_setting(cls, value, where: str) -> LatePolicy:
        """The policy ``late_policy:`` gives (a mapping, ``none`` or nothing)."""
        if value in (None, "none"):
            return cls()
        if not isinstance(value, dict) or set(value) - {"deduct", "per", "cap", "zero_after_days"}:
            raise LatenessError(f"{where}: late_policy takes deduct, per, cap and zero_after_days, or none")
        policy = cls(**value)
        if policy.per not in UNITS:
            raise LatenessError(f"{where}: late_policy's per is day or hour, not {policy.per!r}")
        numbers = [policy.deduct, policy.cap] + ([] if policy.zero_after_days is None else [policy.zero_after_days])
        if not all(isinstance(number, (int, float)) and number >= 0 for number in numbers) or policy.cap > 1:
            raise LatenessError(f"{where}: deduct, cap and zero_after_days are numbers of at least 0, cap at most 1")
        return policy

    def penalty(self, score: float, maximum: float, late_by: timedelta) -> float:
        """Points deducted from ``score`` (out of ``maximum``) for a submission ``late_by`` past its due date."""
        if late_by <= timedelta(0):
            return 0.0
        if self.zero_after_days is not None and late_by > timedelta(days=self.zero_after_days):
            return score
        started = math.ceil(late_by / UNITS[self.per])
        return min(score, min(self.cap, self.deduct * started) * maximum)


def parse_due(value, where: str) -> datetime:
    """A due date with its time zone (YAML gives a datetime; an option gives text)."""
    if isinstance(value, datetime):
        moment = value
    else:
        try:
            moment = datetime.fromisoformat(str(value))
        except ValueError:
            raise LatenessError(f"{where}: due {value!r} is not a date and time (2026-11-20T23:59:00+01:00)") from None
    if moment.tzinfo is None:
        raise LatenessError(f"{where}: due {value} has no time zone: write it as 2026-11-20T23:59:00+01:00")
    return moment.astimezone(UTC)


def late_by(submitted_at: datetime | None, due: datetime | None, extension_days: float = 0.0) -> timedelta | None:
    """How long after its due date (moved by the extension) a submission came; None where either time is unknown."""
    if submitted_at is None or due is None:
        return None
    return submitted_at - (due + timedelta(days=extension_days))


def parse_submission_time(text: str) -> datetime:
    """A submission time as nbgrader writes it, in UTC (timezone-aware).

    Raises:
        ValueError: ``text`` is not a date and time, or names a time zone nobody knows.
    """
    text = text.strip()
    if not re.fullmatch(r"[0-9A-Za-z:. +\-/_]{1,64}", text):
        raise ValueError(f"not a time stamp: {text[:64]!r}")
    day, _, rest = text.partition(" ")
    time, _, zone_name = rest.partition(" ")
    zone = UTC
    if zone_name and re.fullmatch(r"[+-][0-9]{2}:?[0-9]{2}", zone_name):
        text = f"{day} {time}{zone_name}"
    elif zone_name:
        zone = tz.gettz(zone_name)
        if zone is None:
            raise ValueError(f"unknown time zone {zone_name!r}")
        text = f"{day} {time}"
    moment = isoparse(text)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=zone)
    return moment.astimezone(UTC)
