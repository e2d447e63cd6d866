"""The sandbox's cgroup: joined without a shell, whatever its path, and holding the CPU quota of the limit."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from transformer_course.grading.limits import GradingLimits
from transformer_course.grading.sandbox import Cgroup


def test_joining_a_cgroup_runs_no_shell_on_its_path(tmp_path):
    marker = tmp_path / "ran"
    directory = tmp_path / "grp-$(touch ran)"
    directory.mkdir()
    (directory / "cgroup.procs").write_text("")
    done = subprocess.run(
        Cgroup((directory,), 1).join_command() + [sys.executable, "-c", "print('joined')"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert done.stdout == "joined\n", done.stderr
    assert not marker.exists(), "the cgroup's path was run as a shell command"
    assert (directory / "cgroup.procs").read_text().strip().isdigit()


def test_a_sandbox_cgroup_holds_a_cpu_quota_of_the_limit(tmp_path):
    cgroup = Cgroup.create(f"transformer-course-test-{os.getpid()}", GradingLimits(cpus=1))
    if cgroup is None:
        pytest.skip("no cgroup can be created here (not root and no delegated cgroup v2): limits hold per process")
    try:
        quotas = [directory / name for directory in cgroup.directories for name in ("cpu.cfs_quota_us", "cpu.max")]
        values = [path.read_text().split()[0] for path in quotas if path.exists()]
        assert values == ["100000"], f"expected one quota of one core (100000 us per 100000 us), got {values}"
    finally:
        cgroup.remove()
