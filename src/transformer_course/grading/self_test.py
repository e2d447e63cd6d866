"""The grader's self-test: can a sandbox with this run's limits start a kernel that imports the course?

``autograde`` runs it before the first submission, and ``transformer-course self-test`` runs it
alone, with the same limits (the same options). When it fails, the cause is found, not guessed: the
test runs again with the memory and process limits lifted, and then with one of them lifted at a time.
A limit whose lifting lets the kernel start is named, with its value and the option that raises it
(the CUDA build of PyTorch maps several times the memory of its CPU build at import: see README,
"Grading on a machine of your own"); otherwise the message says what else to check.

A limit the machine itself sets comes first: where this process may not have as much address space as
``--memory-limit-mb`` gives the sandbox (a hard ``ulimit -v``, as many clusters set), no sandbox can be given it,
and the message says so, with the largest value the option may take here.
"""

from __future__ import annotations

import resource
from dataclasses import replace
from pathlib import Path

import nbformat
from nbformat.v4 import new_notebook

from .execute import KERNEL_START_SECONDS, SELF_TEST_CODE, started
from .limits import GradingLimits
from .sandbox import SandboxSpec, runner_launch

# Values large enough that no honest import reaches them, for telling a limit that is too small from other causes.
LIFTED = {"memory_limit_mb": 64 * 1024, "max_processes": 4096}
OPTIONS = {"memory_limit_mb": "--memory-limit-mb", "max_processes": "--max-processes"}


def diagnosed_self_test(package_directory: Path, limits: GradingLimits, sandbox: bool, scratch: Path) -> str | None:
    """None when a sandbox with ``limits`` imports the course; otherwise one line saying what failed and what to do."""
    machine = machine_address_space_mb()
    if machine is not None and limits.memory_limit_mb > machine:
        return (
            f"this machine lets a process have at most {machine:,} MB of address space (a hard `ulimit -v`), less "
            f"than the sandbox's --memory-limit-mb {limits.memory_limit_mb}; nothing was graded. Give "
            f"--memory-limit-mb {machine} or less on this command, or ask for the limit to be raised"
        )
    problem = _one_try(package_directory, limits, sandbox, scratch / "as-set")
    if problem is None:
        return None
    lifted_limits = {**LIFTED, "memory_limit_mb": min(LIFTED["memory_limit_mb"], machine or LIFTED["memory_limit_mb"])}
    if _one_try(package_directory, replace(limits, **lifted_limits), sandbox, scratch / "lifted") is not None:
        if machine is not None:
            return f"{problem}; this machine's `ulimit -v` of {machine:,} MB may be too small for the course"
        return problem  # not a limit: the message says what else to check
    for name, lifted in lifted_limits.items():
        if _one_try(package_directory, replace(limits, **{name: lifted}), sandbox, scratch / name) is None:
            value = getattr(limits, name)
            return (
                f"the sandbox's limit {OPTIONS[name]} {value} is too small to import the course and PyTorch on this "
                f"machine; nothing was graded. Raise it (e.g. {OPTIONS[name]} {value * 2}) on this command"
            )
    names = " and ".join(f"{OPTIONS[name]} {getattr(limits, name)}" for name in LIFTED)
    return f"the sandbox's limits {names} are too small to import the course on this machine; raise them"


def machine_address_space_mb() -> int | None:
    """The address space this process may have at most (its hard ``RLIMIT_AS``), in MB; None where unlimited."""
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    return None if hard == resource.RLIM_INFINITY else hard // 2**20


def _one_try(package_directory: Path, limits: GradingLimits, sandbox: bool, scratch: Path) -> str | None:
    """Start one sandbox as a submission's would be started and import what a notebook imports.

    Returns None when that works, or one line saying what failed and how to fix it.
    """
    scratch.mkdir(parents=True, exist_ok=True)
    notebook = scratch / "self-test.ipynb"
    nbformat.write(new_notebook(), notebook)
    spec = SandboxSpec(package_directory, notebook, (), (), limits, sandbox)
    try:
        with started(runner_launch(spec, scratch), limits) as session:
            problem = session.start_problem()
            if problem is None:
                # Given the kernel's start-up time, not a cell's: the first imports are slow on a busy machine.
                reply = session.runner.execute(SELF_TEST_CODE, KERNEL_START_SECONDS, 2**12)
                errors = [output for output in reply.outputs if output.output_type == "error"]
                if reply.problem is None and not errors:
                    return None
                problem = f"{errors[0].ename}: {errors[0].evalue}"[:400] if errors else reply.problem
    except OSError as error:
        problem = f"{type(error).__name__}: {error}"
    where = "in bubblewrap's sandbox" if sandbox else "as a plain process"
    return (
        f"the grader cannot run a notebook {where} ({problem}); nothing was graded. "
        "Check that this Python environment has the course installed (pip install -e '.[grading]'), "
        + (
            "that user namespaces are enabled (sysctl kernel.unprivileged_userns_clone=1) and that the "
            "environment's files are readable by every user, or grade with --no-sandbox (trusted submissions only)"
            if sandbox
            else "and that a Jupyter kernel starts (python -m ipykernel_launcher)"
        )
    )
