"""Grading tools built on nbgrader: release learner notebooks, autograde submissions, self-check."""

import sys

# As inside/runner.py explains: jsonschema's slow IRI checker is kept out of every grading process.
sys.modules.setdefault("rfc3987_syntax", None)
