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


def test_no_function_in_the_package_is_longer_than_sixty_lines():
    import ast

    too_long = []
    for path in sorted((REPOSITORY / "src").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > 60:
                    too_long.append(f"{path.relative_to(REPOSITORY)}:{node.lineno} {node.name} ({length} lines)")
    assert not too_long, "functions to split:\n" + "\n".join(too_long)
