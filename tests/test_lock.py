"""The lock: constraints.txt pins every dependency of the game and of its test tools, and every command that installs
the project for a person or for CI (the README's two quickstart commands, its testing section, .ci/run, the wheel's
install in tests/test_wheel.py) goes through it. Without it a fresh machine resolves whatever was released that
morning, and the suite fails on someone else's change (redis 8.2's typed client once failed the type check)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent


def locked() -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name, sep, version = line.partition("==")
        assert sep, f"constraints.txt pins exactly (name==version): {line!r}"
        pins[canonicalize_name(name)] = version
    return pins


def declared() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return [Requirement(r) for r in [*project["dependencies"], *project["optional-dependencies"]["test"]]]


def test_the_lock_pins_every_declared_dependency_within_its_range() -> None:
    pins = locked()
    for requirement in declared():
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{requirement.name} is in pyproject.toml but not pinned in constraints.txt"
        assert requirement.specifier.contains(pins[name], prereleases=True), (
            f"constraints.txt pins {requirement.name}=={pins[name]}, outside pyproject.toml's {requirement}"
        )


def test_the_lock_does_not_pin_the_project_itself() -> None:
    assert "quatro" not in locked(), "constraints.txt must not pin the project (pip freeze --exclude-editable)"


def test_every_install_command_goes_through_the_lock() -> None:
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    installs = [line for line in readme.splitlines() if re.search(r"\bpip install -e\b", line)]
    assert len(installs) >= 3, "the README's quickstart (two commands) and its testing section install the project"
    for line in installs:
        assert "-c constraints.txt" in line, f"a README install command skips the lock: {line.strip()}"
    assert 'pip install -e ".[test]" -c constraints.txt' in ci, ".ci/run must install through the lock"
    assert "--latest" in readme and "--latest" in ci, "the README names the look-ahead run, .ci/run --latest"
    assert '"-c", ROOT / "constraints.txt"' in (ROOT / "tests" / "test_wheel.py").read_text()
