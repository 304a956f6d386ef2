"""The Quarto solver benchmark still runs: small positions, figures printed, no timing asserted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_quarto_solver_benchmark_runs():
    result = subprocess.run(
        [sys.executable, "benchmarks/quarto_solver.py", "--sizes", "5,6", "--positions", "2", "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert [row["empty_squares"] for row in report["sizes"]] == [5, 6]
    for row in report["sizes"]:
        assert row["values_agree"]
        for mode in ("symmetric", "plain", "none"):
            assert row[mode]["nodes"] > 0 and len(row[mode]["values"]) == 2
        assert row["speedup_vs_plain"] > 0 and row["speedup_vs_none"] > 0


def test_quarto_solver_benchmark_prints_a_table():
    result = subprocess.run(
        [sys.executable, "benchmarks/quarto_solver.py", "--sizes", "4", "--positions", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert "symmetric table:" in result.stdout and "faster than no table" in result.stdout
