"""The Quarto solver benchmark still runs: small positions, figures printed, no timing asserted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def bench(*args: str) -> subprocess.CompletedProcess[str]:
    """The benchmark as a person runs it, from the checkout's root."""
    return subprocess.run(
        [sys.executable, "benchmarks/quarto_solver.py", *args], cwd=ROOT, capture_output=True, text=True, timeout=60
    )


def test_quarto_solver_benchmark_runs():
    result = bench("--sizes", "5,6", "--positions", "2", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert [row["empty_squares"] for row in report["sizes"]] == [5, 6]
    for row in report["sizes"]:
        assert row["values_agree"]
        for mode in ("new", "plain"):
            assert len(row[mode]["nodes"]) == 2 and min(row[mode]["nodes"]) > 0 and len(row[mode]["values"]) == 2
        assert row["new"]["values"] == row["plain"]["values"]
        assert len(row["exact_turn"]["seconds"]) == 2


def test_quarto_solver_benchmark_prints_a_table():
    result = bench("--sizes", "4", "--positions", "1")
    assert result.returncode == 0, result.stderr
    assert "perfect's exact turn" in result.stdout and "faster than plain" in result.stdout


def test_quarto_self_play_runs_and_judges_its_games_at_the_horizon():
    result = bench("--selfplay", "1", "--seed", "1", "--json")
    report = json.loads(result.stdout)
    assert report["games"] == 1 and result.returncode == (1 if report["lost"] else 0)
    assert [row["empty_squares"] for row in report["sizes"]][:2] == [16, 15]
