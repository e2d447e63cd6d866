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
    # Optional: seconds a cell of this assignment may run, where its work needs more than the class's
    # limit (the final project's graded training). The longer of the two applies.
    cell_timeout: 600

Every other file in ``solutions/<assignment>/`` besides the notebook is a data file of the
assignment: the sandbox shows it beside the submission's notebook.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import yaml

from .limits import GradingLimits

POLICY_FILE = "grading.yml"
# An operator as PyTorch's dispatcher names it (namespace::name), where a trailing * matches any ending.
OPERATOR_PATTERN = re.compile(r"[a-z_][a-z0-9_]*::[A-Za-z0-9_]+\*?")


@dataclass(frozen=True)
class GradingPolicy:
    learner_writes: list[str] = field(default_factory=list)
    library_implementations: list[str] = field(default_factory=list)
    forbidden_operators: list[str] = field(default_factory=list)
    cell_timeout: int | None = None

    @classmethod
    def from_file(cls, path: Path) -> GradingPolicy:
        """Read ``path``; a missing file is an empty policy.

        Raises:
            ValueError: the file holds other keys, lists that are not of dotted names (of operators, for
                forbidden_operators), or a cell_timeout that is not a positive number of seconds.
        """
        if not path.is_file():
            return cls()
        values = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        known = {"learner_writes", "library_implementations", "forbidden_operators", "cell_timeout"}
        if not isinstance(values, dict) or set(values) - known:
            raise ValueError(f"{path}: expected only the keys {', '.join(sorted(known))}")
        seconds = values.get("cell_timeout")
        if seconds is not None and (type(seconds) is not int or seconds <= 0):
            raise ValueError(f"{path}: cell_timeout must be a positive whole number of seconds, got {seconds!r}")
        for key, names in values.items():
            if key == "cell_timeout":
                continue
            if key == "forbidden_operators":
                if not isinstance(names, list) or not all(
                    isinstance(name, str) and OPERATOR_PATTERN.fullmatch(name) for name in names
                ):
                    raise ValueError(f"{path}: {key} must be a list of operators such as aten::_softmax")
                continue
            if not isinstance(names, list) or not all(
                isinstance(name, str) and name.replace("_", "").replace(".", "").isalnum() for name in names
            ):
                raise ValueError(f"{path}: {key} must be a list of dotted names")
        return cls(**values)

    def applied_to(self, limits: GradingLimits) -> GradingLimits:
        """The class's ``limits`` for a submission of this assignment: its ``cell_timeout`` where that is longer."""
        if self.cell_timeout is not None and self.cell_timeout > limits.cell_timeout:
            return replace(limits, cell_timeout=self.cell_timeout)
        return limits
