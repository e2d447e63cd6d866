"""A similarity report: which learners' code is alike, for the instructor to read — it never changes a score.

    transformer-course similarity 01-attention submissions/ --out similarity.html

Each submission is taken in as ``autograde`` takes it (:func:`transformer_course.grading.intake.take_in`:
the same ids, files and refusals), and only the learner's own code is compared: the answer cells and the
cells they added, less every cell left as the release gave it, with the released notebook's code given
as boilerplate besides, so that what the release gave every learner is subtracted. copydetect compares
them: it tokenises the code (names of variables and functions become one token, so renaming hides
nothing), fingerprints it by winnowing (so moving functions around hides nothing), and ignores matches
shorter than its noise threshold; a pair is reported when it shares at least :data:`MIN_SHARED_TOKENS`
tokens — two learners writing the same short function from the same instructions are not a copy on
their own.

The HTML report ranks the pairs and shows their shared lines side by side; each learner's closest pairs
at or above the threshold (at most :data:`PAIRS_IN_A_REVIEW`) go into their ``review`` in the run record,
so that ``grades.csv`` (``transformer-course grades``) shows them beside the score, which stays as it was. They
stay there, whatever ``autograde`` does meanwhile, until the next ``similarity`` run replaces them.
"""

from __future__ import annotations

import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

from .course import Course
from .intake import Given, student_folders, take_in
from .nbgrader_cells import read_json_notebook, source_text
from .release import setup_cell
from .run_record import keep_similarity

# The share of a learner's fingerprints found in another's from which a pair is reported (copydetect's display
# threshold), and the shortest match that counts (in tokens; copydetect's noise and guarantee thresholds).
THRESHOLD = 0.5
NOISE_TOKENS, GUARANTEE_TOKENS = 25, 30
# The least code two learners must share to be reported, in tokens: one short function written from the same
# instructions (``return scores / math.sqrt(d_k)`` and its given signature) is about 25; a copied notebook hundreds.
MIN_SHARED_TOKENS = 100
# The most alike learners a learner's review names (the HTML report has every pair).
PAIRS_IN_A_REVIEW = 3


@dataclass(frozen=True)
class Pair:
    first: str
    second: str
    first_share: float  # of the first learner's code, the share found in the second's
    second_share: float
    shared_tokens: int


def similarity_report(
    course: Course, assignment: str, submissions: Path, out: Path, threshold: float = THRESHOLD
) -> list[Pair]:
    """Compare the class's code, write the HTML report to ``out`` and the pairs at or above ``threshold`` into the
    learners' reviews; return those pairs, most alike first."""
    from copydetect import CopyDetector

    released = {path.name: read_json_notebook(path) for path in course.released_notebooks(assignment)}
    sources = {path.name: read_json_notebook(path) for path in course.source_notebooks(assignment)}
    given = Given(released, sources, setup_cell(course).source, [])
    with tempfile.TemporaryDirectory(prefix="similarity-") as scratch:
        code, boilerplate = Path(scratch) / "code", Path(scratch) / "boilerplate"
        code.mkdir()
        boilerplate.mkdir()
        given_code = set()
        for name, notebook in released.items():
            (boilerplate / f"{name}.py").write_text(_code(notebook), encoding="utf-8")
            given_code |= {source_text(cell).strip() for cell in notebook.get("cells", [])}
        for student_id in student_folders(submissions):
            submission = take_in(submissions, student_id, assignment, given)
            written = [source for label, source in submission.learner_cells if source.strip() not in given_code]
            if submission.status is None and written:  # taken in: intake refused nothing
                (code / f"{student_id}.py").write_text("\n\n".join(written), encoding="utf-8")
        detector = CopyDetector(
            test_dirs=[str(code)],
            boilerplate_dirs=[str(boilerplate)],
            extensions=["py"],
            noise_t=NOISE_TOKENS,
            guarantee_t=GUARANTEE_TOKENS,
            display_t=threshold,
            autoopen=False,
            silent=True,
            out_file=str(out),
        )
        detector.run()
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        with warnings.catch_warnings():  # copydetect reads its page template through a deprecated importlib call
            warnings.simplefilter("ignore", DeprecationWarning)
            detector.generate_html_report()
        pairs = [
            Pair(Path(first).stem, Path(second).stem, round(float(share_1), 3), round(float(share_2), 3), int(tokens))
            for share_1, share_2, first, second, _, _, tokens in detector.get_copied_code_list()
        ]
    pairs = [_ordered(pair) for pair in pairs if pair.shared_tokens >= MIN_SHARED_TOKENS]
    pairs = sorted(set(pairs), key=lambda pair: -max(pair.first_share, pair.second_share))
    findings: dict[str, list[str]] = {}
    for pair in pairs:  # most alike first: each learner's review names their closest few
        for student, other, share in [
            (pair.first, pair.second, pair.first_share),
            (pair.second, pair.first, pair.second_share),
        ]:
            if len(findings.setdefault(student, [])) < PAIRS_IN_A_REVIEW:
                findings[student].append(f"{share:.0%} of the code is like {other}'s (see {Path(out).name})")
    keep_similarity(course.root, assignment, findings)
    return pairs


def _ordered(pair: Pair) -> Pair:
    """The pair with its learners in alphabetical order (copydetect may list a pair both ways)."""
    if pair.first <= pair.second:
        return pair
    return Pair(pair.second, pair.first, pair.second_share, pair.first_share, pair.shared_tokens)


def _code(notebook: dict) -> str:
    return "\n\n".join(source_text(cell) for cell in notebook.get("cells", []) if cell.get("cell_type") == "code")
