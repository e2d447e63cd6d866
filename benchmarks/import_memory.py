"""What importing the course costs a sandboxed kernel: memory and address space, per Python environment.

    PYTHONPATH=src python benchmarks/import_memory.py [PYTHON ...]

Each interpreter given (default: this one) imports what the grader's self-test imports (numpy, torch,
matplotlib and the course package) in a fresh process and reports its peak address space (``VmPeak``,
what ``prlimit --as`` limits) and its peak resident memory (``VmHWM``, what a cgroup's memory limit
counts), from ``/proc/self/status`` (Linux). The grader's default ``--memory-limit-mb`` is chosen against
these figures (``transformer_course/grading/limits.py``).
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

PROBE = """
import json, re
import numpy, torch, matplotlib, transformer_course
status = open("/proc/self/status").read()
peak = {key: int(re.search(key + r":\\s+(\\d+)", status).group(1)) // 1024 for key in ("VmPeak", "VmHWM")}
print(json.dumps({"torch": torch.__version__, "cuda": torch.version.cuda, **peak}))
"""


def measure(python: str) -> dict:
    source = str(Path(__file__).resolve().parents[1] / "src")
    environment = dict(os.environ, PYTHONPATH=source)
    output = subprocess.run([python, "-c", PROBE], capture_output=True, text=True, check=True, env=environment)
    return json.loads(output.stdout.strip().splitlines()[-1])


def main() -> None:
    interpreters = sys.argv[1:] or [sys.executable]
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}\n")
    print("| Python | torch | CUDA | address space (VmPeak) | resident (VmHWM) |")
    print("|---|---|---|---|---|")
    for python in interpreters:
        row = measure(python)
        print(f"| `{python}` | {row['torch']} | {row['cuda'] or '-'} | {row['VmPeak']:,} MB | {row['VmHWM']:,} MB |")


if __name__ == "__main__":
    main()
