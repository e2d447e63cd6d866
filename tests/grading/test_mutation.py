"""The visible tests are strong enough that a slip in a model answer fails its own part's visible test: measured by
mutation testing (tests/mutation_testing.py), on a sample that changes every day.

Each day takes a different slice of every assignment's mutants (every k-th, from an offset that moves by one a
day), so that over a few weeks every mutant has been graded in CI; benchmarks/mutation.py grades them all at once
and prints the table of benchmarks/README.md. A sampled mutant passes when its verdict is what the review
(benchmarks/mutants.yml) says: killed by a visible test of its own part, unless the review judged it equivalent (it
must then survive) or caught by the hidden tests alone (they must then kill it).
"""

from __future__ import annotations

import datetime

import pytest
from suite_layers import NBGRADER_MISSING

pytest.importorskip("nbgrader", reason=NBGRADER_MISSING)
pytest.importorskip("mutmut", reason="needs mutmut, of the test extra: pip install -e '.[test]'")

from mutation_testing import (  # noqa: E402
    REVIEWED,
    TRAINING_PARTS,
    assignments,
    daily_sample,
    mutants,
    reviewed,
    run_mutants,
)

pytestmark = pytest.mark.needs_nbgrader  # the runner reads the course with the grading package

# Mutants graded per assignment and day: about two minutes on one core for all seven.
SAMPLE = 15


def test_every_reviewed_judgement_names_a_mutant_that_is_still_made():
    made = {mutant.key for assignment in assignments() for mutant in mutants(assignment)}
    stale = [key for key in reviewed() if key not in made]
    assert not stale, (
        f"{REVIEWED.name} judges mutants that the model answers no longer give (their code changed): review "
        f"these again or remove them: {stale}"
    )


def accepted_verdicts(judgement) -> set[str]:
    """What a mutant may get: killed by its own part's visible test, unless the review judged it equivalent (then it
    survives every test) or caught by the hidden tests alone (then they, or a visible test since, kill it)."""
    kind = judgement.kind if judgement is not None else None
    return {None: {"visible"}, "equivalent": {"survived"}, "hidden": {"hidden", "visible"}}[kind]


@pytest.mark.slow  # starts a process per mutant
@pytest.mark.parametrize("assignment", assignments())
def test_todays_sample_of_mutants_gets_the_reviewed_verdicts(assignment):
    today = datetime.date.today()
    candidates = [m for m in mutants(assignment) if m.part not in TRAINING_PARTS.get(assignment, ())]
    sample = daily_sample(candidates, SAMPLE, today)
    judgements = reviewed()
    wrong = []
    for run in run_mutants(assignment, sample):
        for mutant, verdict in run.verdicts.items():
            accepted = accepted_verdicts(judgements.get(mutant.key))
            if verdict.verdict not in accepted:
                expected = " or ".join(sorted(accepted))
                wrong.append(f"{mutant.describe()}: {verdict.verdict} ({verdict.message}), expected {expected}")
    assert not wrong, (
        f"{assignment}, the sample of {today} ({len(sample)} of {len(candidates)} mutants): "
        + "; ".join(wrong)
        + f". A visible test of the mutant's own part should kill it, unless {REVIEWED.name} judges it otherwise"
    )
