"""The whole repository lints clean under ruff, with the rule set pyproject.toml states ([tool.ruff]), and is laid out
as ``ruff format`` lays it: product code, tests and benchmarks. Run it alone with ``pytest tests/test_lint.py``;
``ruff check --fix`` mends the most of what it finds, ``ruff format`` all of the layout."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parent.parent


def test_the_repository_lints_clean_under_ruff() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "ruff",
            "check",
            "--no-cache",
            "--output-format",
            "concise",
            "quatro_server",
            "quatro_tui",
            "shared",
            "tests",
            "benchmarks",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=100,
    )
    assert proc.returncode == 0, f"ruff found problems:\n{proc.stdout}{proc.stderr}"
    assert "All checks passed!" in proc.stdout, proc.stdout


def test_the_repository_is_laid_out_as_ruff_format_lays_it() -> None:
    """One layout, so that a diff shows what changed and not who typed it."""
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "ruff",
            "format",
            "--check",
            "--no-cache",
            "quatro_server",
            "quatro_tui",
            "shared",
            "tests",
            "benchmarks",
            "examples",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=100,
    )
    assert proc.returncode == 0, (
        f"ruff format would change these files (run `ruff format .`):\n{proc.stdout}{proc.stderr}"
    )


def test_the_lint_gate_finds_a_defect(tmp_path: Path) -> None:
    """The gate is no formality: an unused import and a name shadowed by a loop are found, with the file's rules."""
    bad = tmp_path / "bad.py"
    bad.write_text("import os\nfrom math import pi\n\n\ndef f(xs):\n    for pi in xs:\n        return pi\n")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "ruff",
            "check",
            "--no-cache",
            "--config",
            str(ROOT / "pyproject.toml"),
            "--output-format",
            "concise",
            str(bad),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=100,
    )
    assert proc.returncode == 1 and "F401" in proc.stdout and "F402" in proc.stdout, proc.stdout
