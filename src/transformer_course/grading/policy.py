"""What the grader needs to know about one assignment: ``solutions/<assignment>/grading.yml``.

    # What the learner writes in this assignment: the sandbox's course package leaves these out.
    learner_writes:
      - transformer_course.attention.scaled_dot_product_attention
    # Library functions that compute what the learner writes: switched off while the hidden tests
    # call the learner's code, and flagged for the instructor's review where an answer cell uses one.
    library_implementations:
      - torch.softmax
      - torch.nn.functional.scaled_dot_product_attention
    # The operators those implementations reach (PyTorch's dispatcher names; a trailing * matches any ending):
    # a hidden test's call into the learner's code fails when any of them runs, however it was reached
    # (torch._softmax, a default argument, a private helper), and the review names it.
    forbidden_operators:
      - aten::_softmax
      - aten::_scaled_dot_product_*
    # Optional: the grade_ids of the bonus cells. Their points are extra credit: grades.csv's max_score
    # leaves them out, and its bonus_score shows what of the score they gave.
    bonus:
      - test-cosine
    # Optional: when it is due (with its time zone), and what lateness costs (transformer_course.grading.lateness).
    due: 2026-11-20T23:59:00+01:00
    late_policy: {deduct: 0.1, per: day, cap: 0.5, zero_after_days: 7}
    # Optional: seconds a cell of this assignment may run, where its work needs more than the class's
    # limit (the final project's graded training). The longer of the two applies.
    cell_timeout: 600

Every other file in ``solutions/<assignment>/`` besides the notebook is a data file of the
assignment: the sandbox shows it beside the submission's notebook.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path

import yaml

from .lateness import LatePolicy, parse_due
from .limits import GradingLimits

POLICY_FILE = "grading.yml"
# An operator as PyTorch's dispatcher names it (namespace::name), where a trailing * matches any ending.
OPERATOR_PATTERN = re.compile(r"[a-z_][a-z0-9_]*::[A-Za-z0-9_]+\*?")


@dataclass(frozen=True)
class GradingPolicy:
    learner_writes: list[str] = field(default_factory=list)
    library_implementations: list[str] = field(default_factory=list)
    bonus: list[str] = field(default_factory=list)
    forbidden_operators: list[str] = field(default_factory=list)
    cell_timeout: int | None = None
    due: datetime | None = None  # in UTC (transformer_course.grading.lateness)
    late_policy: LatePolicy = field(default_factory=LatePolicy)

    @classmethod
    def from_file(cls, path: Path) -> GradingPolicy:
        """Read ``path``; a missing file is an empty policy.

        Raises:
            ValueError: the file holds other keys, lists that are not of dotted names (grade_ids for ``bonus``,
                operators for ``forbidden_operators``), a cell_timeout that is not a positive number of seconds, or a
                due date or late policy that cannot be used.
        """
        if not path.is_file():
            return cls()
        with path.open(encoding="utf-8") as file:  # a YAML error then names the file and the line
            values = yaml.safe_load(file) or {}
        known = {"learner_writes", "library_implementations", "forbidden_operators", "bonus", "cell_timeout"}
        known |= {"due", "late_policy"}
        if not isinstance(values, dict) or set(values) - known:
            raise ValueError(f"{path}: expected only the keys {', '.join(sorted(known))}")
        if values.get("due") is not None:
            values["due"] = parse_due(values["due"], str(path))
        values["late_policy"] = LatePolicy.from_setting(values.get("late_policy"), str(path))
        seconds = values.get("cell_timeout")
        if seconds is not None and (type(seconds) is not int or seconds <= 0):
            raise ValueError(f"{path}: cell_timeout must be a positive whole number of seconds, got {seconds!r}")
        for key, names in values.items():
            if key in ("cell_timeout", "due", "late_policy"):
                continue
            if key == "forbidden_operators":
                if not isinstance(names, list) or not all(
                    isinstance(name, str) and OPERATOR_PATTERN.fullmatch(name) for name in names
                ):
                    raise ValueError(f"{path}: {key} must be a list of operators such as aten::_softmax")
                continue
            # grade_ids may hold hyphens ("test-cosine"); Python's dotted names may not
            kind, pattern = ("grade_ids", r"[A-Za-z0-9_-]+") if key == "bonus" else ("dotted names", r"[\w.]+")
            if not isinstance(names, list) or not all(
                isinstance(name, str) and re.fullmatch(pattern, name) for name in names
            ):
                raise ValueError(f"{path}: {key} must be a list of {kind}")
        return cls(**values)

    def applied_to(self, limits: GradingLimits) -> GradingLimits:
        """The class's ``limits`` for a submission of this assignment: its ``cell_timeout`` where that is longer."""
        if self.cell_timeout is not None and self.cell_timeout > limits.cell_timeout:
            return replace(limits, cell_timeout=self.cell_timeout)
        return limits
