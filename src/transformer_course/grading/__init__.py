"""Grading tools built on nbgrader: release learner notebooks, autograde submissions, self-check."""
