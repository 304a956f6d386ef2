"""The product code type-checks clean under mypy, at the strictness pyproject.toml states ([tool.mypy]).

shared/ installs as ``quatro_shared`` through setuptools' package-dir mapping, which mypy cannot see; the test
gives mypy a folder where ``quatro_shared`` is a link to shared/, so the code is checked under the names it is
imported by. Run it alone with ``pytest tests/test_types.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(300)

ROOT = Path(__file__).resolve().parent.parent


def test_the_product_code_type_checks_clean_under_strict_mypy(tmp_path: Path) -> None:
    names = tmp_path / "import-names"
    names.mkdir()
    (names / "quatro_shared").symlink_to(ROOT / "shared", target_is_directory=True)
    env = {**os.environ, "MYPYPATH": str(names)}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(tmp_path / "cache"),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=280,
    )
    report = (proc.stdout + proc.stderr).replace(str(names / "quatro_shared"), "shared")
    assert proc.returncode == 0 and "Success: no issues found" in report, f"mypy found problems:\n{report}"
    checked = int(report.rsplit(" in ", 1)[1].split()[0])
    assert checked >= 40, f"mypy checked only {checked} files: is it still pointed at the product code?\n{report}"
