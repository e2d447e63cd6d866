"""The grader's self-test: can a sandbox with this run's limits start a kernel that imports the course?

``autograde`` runs it before the first submission, and ``transformer-course check --sandbox`` runs it
alone, with the same limits (the same options). When it fails, the cause is found, not guessed: the
test runs again with the memory and process limits lifted, and then with one of them lifted at a time.
A limit whose lifting lets the kernel start is named, with its value and the option that raises it
(the CUDA build of PyTorch maps several times the memory of its CPU build at import: see README,
"Grading on a machine of your own"); otherwise the message says what else to check.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from .execute import self_test
from .limits import GradingLimits

# Values large enough that no honest import reaches them, for telling a limit that is too small from other causes.
LIFTED = {"memory_limit_mb": 64 * 1024, "max_processes": 4096}
OPTIONS = {"memory_limit_mb": "--memory-limit-mb", "max_processes": "--max-processes"}


def diagnosed_self_test(package_directory: Path, limits: GradingLimits, sandbox: bool, scratch: Path) -> str | None:
    """None when a sandbox with ``limits`` imports the course; otherwise one line saying what failed and what to do."""
    problem = self_test(package_directory, limits, sandbox, scratch / "as-set")
    if problem is None:
        return None
    if self_test(package_directory, replace(limits, **LIFTED), sandbox, scratch / "lifted") is not None:
        return problem  # not a limit: the message says what else to check
    for name, lifted in LIFTED.items():
        if self_test(package_directory, replace(limits, **{name: lifted}), sandbox, scratch / name) is None:
            value = getattr(limits, name)
            return (
                f"the sandbox's limit {OPTIONS[name]} {value} is too small to import the course and PyTorch on this "
                f"machine; nothing was graded. Raise it (e.g. {OPTIONS[name]} {value * 2}) on this command"
            )
    names = " and ".join(f"{OPTIONS[name]} {getattr(limits, name)}" for name in LIFTED)
    return f"the sandbox's limits {names} are too small to import the course on this machine; raise them"
