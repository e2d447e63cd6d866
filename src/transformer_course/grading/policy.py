"""What the grader needs to know about one assignment: ``solutions/<assignment>/grading.yml``.

    # What the learner writes in this assignment: the sandbox's course package leaves these out.
    learner_writes:
      - transformer_course.attention.scaled_dot_product_attention
    # Library functions that compute what the learner writes: switched off while the hidden tests
    # call the learner's code, and flagged for the instructor's review where an answer cell uses one.
    library_implementations:
      - torch.softmax
      - torch.nn.functional.scaled_dot_product_attention

Every other file in ``solutions/<assignment>/`` besides the notebook is a data file of the
assignment: the sandbox shows it beside the submission's notebook.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

POLICY_FILE = "grading.yml"


@dataclass(frozen=True)
class GradingPolicy:
    learner_writes: list[str] = field(default_factory=list)
    library_implementations: list[str] = field(default_factory=list)

    @classmethod
    def from_file(cls, path: Path) -> GradingPolicy:
        """Read ``path``; a missing file is an empty policy.

        Raises:
            ValueError: the file holds other keys, or values that are not lists of dotted names.
        """
        if not path.is_file():
            return cls()
        values = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        known = {"learner_writes", "library_implementations"}
        if not isinstance(values, dict) or set(values) - known:
            raise ValueError(f"{path}: expected only the keys {', '.join(sorted(known))}")
        for key, names in values.items():
            if not isinstance(names, list) or not all(
                isinstance(name, str) and name.replace("_", "").replace(".", "").isalnum() for name in names
            ):
                raise ValueError(f"{path}: {key} must be a list of dotted names")
        return cls(**values)
