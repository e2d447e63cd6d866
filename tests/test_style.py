"""The code follows the house style that pyproject.toml configures: ruff's lint rules and its format."""

import subprocess
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]


def _ruff(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ruff", *arguments], cwd=REPOSITORY, capture_output=True, text=True)


def test_ruff_finds_nothing_to_lint():
    result = _ruff("check", ".")
    assert result.returncode == 0, f"ruff check found problems:\n{result.stdout}{result.stderr}"


def test_ruff_would_reformat_nothing():
    result = _ruff("format", "--check", ".")
    assert result.returncode == 0, f"ruff format would change:\n{result.stdout}{result.stderr}"
