"""The wheel holds every package of the product: a package missing from pyproject.toml's list installs nothing, and
only the slow wheel tests (tests/test_wheel.py) would see it."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def product_packages() -> set[str]:
    """Every folder of the product with an ``__init__.py``, by its import name (``shared/`` installs as quatro_shared)."""
    found = set()
    for top, name in (("quatro_server", "quatro_server"), ("quatro_tui", "quatro_tui"), ("shared", "quatro_shared")):
        for init in (ROOT / top).rglob("__init__.py"):
            parts = init.parent.relative_to(ROOT / top).parts
            found.add(".".join((name, *parts)))
    return found


def test_every_package_of_the_product_is_in_the_wheel():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    listed = set(config["tool"]["setuptools"]["packages"])
    assert product_packages() - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"
    assert listed - product_packages() == set(), "pyproject.toml lists packages that do not exist"
