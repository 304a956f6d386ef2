"""The real install: the wheel built from this tree, installed (not editable) into a fresh virtual environment.

An editable install maps the packages onto the source tree, so it hides a data file missing from the wheel or a
package installed under the wrong name. These tests build the wheel once, install it into a new venv (pip's
cache keeps the dependencies' download cheap) and run the game from there, from a folder outside the source
tree: the imports, the stylesheet, ``quatro-server sim``, ``quatro play`` (Quatro and Quarto) in tmux at 80x24, and the
browser door's page served by the installed server.

Select them alone with ``pytest -m wheel``. Without tmux the terminal test is skipped on a developer's machine,
but fails in CI (``CI`` set), like the other end-to-end test.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import uuid
import venv
import zipfile
from pathlib import Path

import pytest

from helpers.terminal import Tmux, on_the_table, quit_with_ctrl_q, wait_for

pytestmark = [pytest.mark.wheel, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parent.parent
#: What the build never needs from the tree (a copy keeps the build's own files out of the checkout).
NOT_BUILT = shutil.ignore_patterns(
    ".git", ".venv", "venv", ".ci", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", ".hypothesis", "tests"
)
#: Seconds for the installed client to show the table (a cold start compiles its bytecode first).
WAIT = 60.0


class Installed:
    """A fresh venv holding the wheel, and a folder outside the source tree to run it from."""

    def __init__(self, wheel: Path, env: Path, home: Path) -> None:
        self.wheel, self.env, self.home = wheel, env, home
        self.bin = env / "bin"
        self.python = self.bin / "python"

    def environ(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
        env["PATH"] = f"{self.bin}{os.pathsep}{env.get('PATH', '')}"
        env["XDG_CONFIG_HOME"] = str(self.home / "config")
        env["LANG"] = "C.UTF-8"
        return env

    def run(self, *args: str | Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(a) for a in args], cwd=self.home, env=self.environ(), capture_output=True, text=True, timeout=timeout
        )


def _check(proc: subprocess.CompletedProcess[str], what: str) -> None:
    assert proc.returncode == 0, f"{what} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    base = tmp_path_factory.mktemp("wheel")
    source, dist, home = base / "source", base / "dist", base / "home"
    shutil.copytree(ROOT, source, ignore=NOT_BUILT)
    home.mkdir()
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    _check(
        subprocess.run([*pip, "wheel", "--no-deps", "-q", "-w", dist, source], capture_output=True, text=True),
        "pip wheel",
    )
    (wheel,) = dist.glob("quatro-*.whl")
    env = base / "venv"
    venv.create(env, with_pip=False)  # the outer pip installs into it: faster than a pip of its own
    # The lock the README's commands use: the wheel's dependencies at the versions the suite passes with.
    _check(
        subprocess.run(
            [*pip, "--python", env / "bin" / "python", "install", "-q", "-c", ROOT / "constraints.txt", wheel],
            capture_output=True,
            text=True,
        ),
        "pip install of the wheel",
    )
    return Installed(wheel, env, home)


def test_the_wheel_ships_the_packages_under_their_own_names_and_the_stylesheet(installed: Installed) -> None:
    names = zipfile.ZipFile(installed.wheel).namelist()
    assert "quatro_tui/quatro.tcss" in names
    assert "quatro_shared/protocol.py" in names
    tops = {name.split("/")[0] for name in names if not name.split("/")[0].endswith((".dist-info", ".data"))}
    assert tops == {"quatro_shared", "quatro_server", "quatro_tui"}


def test_the_installed_package_imports_as_quatro_shared_never_shared(installed: Installed) -> None:
    assert installed.run(installed.python, "-c", "import shared").returncode != 0
    found = installed.run(
        installed.python,
        "-c",
        "import quatro_shared, quatro_server, quatro_tui, importlib.resources as r; "
        "print(quatro_shared.__file__); print(r.files('quatro_tui').joinpath('quatro.tcss').is_file())",
    )
    _check(found, "import quatro_shared")
    where, stylesheet = found.stdout.split()
    assert Path(where).is_relative_to(installed.env), f"imported from {where}, not from the fresh venv"
    assert stylesheet == "True"


def test_quatro_server_sim_runs_from_the_install(installed: Installed) -> None:
    proc = installed.run("quatro-server", "sim", "--players", "4", "--matches", "2", "--seed", "7", "--json")
    _check(proc, "quatro-server sim")
    assert '"matches": 2' in proc.stdout


def test_quatro_play_from_the_install_shows_the_table_at_80x24(installed: Installed, tmux: Tmux) -> None:
    session = f"quatro-wheel-{uuid.uuid4().hex[:8]}"
    env = installed.environ()
    command = " ".join(
        [
            "env",
            f"PATH={shlex.quote(env['PATH'])}",
            f"XDG_CONFIG_HOME={shlex.quote(env['XDG_CONFIG_HOME'])}",
            "LANG=C.UTF-8",
            "quatro",
            "play",
            "--timing",
            "fast",
            "--name",
            "wheel",
        ]
    )
    tmux("-u", "new-session", "-d", "-s", session, "-x", "80", "-y", "24", "-c", str(installed.home), command)
    try:
        # The fast profile opens the round by itself within seconds.
        text = wait_for(tmux, session, on_the_table, "the installed client to show the table", timeout=WAIT)
        assert "Traceback" not in text
        quit_with_ctrl_q(tmux, session)
    finally:
        tmux("kill-session", "-t", session)


def test_quarto_from_the_install_shows_the_board_at_80x24(installed: Installed, tmux: Tmux) -> None:
    session = f"quarto-wheel-{uuid.uuid4().hex[:8]}"
    env = installed.environ()
    command = " ".join(
        [
            "env",
            f"PATH={shlex.quote(env['PATH'])}",
            f"XDG_CONFIG_HOME={shlex.quote(env['XDG_CONFIG_HOME'])}",
            "LANG=C.UTF-8",
            "quatro",
            "play",
            "--game",
            "quarto",
            "--level",
            "normal",
            "--name",
            "wheel",
        ]
    )
    tmux("-u", "new-session", "-d", "-s", session, "-x", "80", "-y", "24", "-c", str(installed.home), command)
    try:
        text = wait_for(
            tmux,
            session,
            lambda text: "QUARTO" in text and "pool" in text and "d4" in text,
            "the installed client to show the Quarto board",
            timeout=WAIT,
        )
        assert "Traceback" not in text
        quit_with_ctrl_q(tmux, session)
    finally:
        tmux("kill-session", "-t", session)


def test_the_browser_door_serves_its_page_from_the_install(installed: Installed) -> None:
    """The page, its script and textual-serve's assets come with the wheel: the installed server serves them."""
    import re
    import urllib.request

    process = subprocess.Popen(
        [
            installed.env / "bin" / "quatro-server",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--web",
            "0",
            "--no-journal",
            "--no-announce",
            "--data-dir",
            installed.home / "data",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=installed.environ(),
    )
    try:
        out = ""
        assert process.stdout is not None
        while "http://" not in out:
            line = process.stdout.readline()
            assert line, (
                f"the installed server did not open its browser door: {out}{process.stderr.read() if process.stderr else ''}"
            )
            out += line
        url = re.search(r"(http://127\.0\.0\.1:\d+/)", out).group(1)  # type: ignore[union-attr]
        with urllib.request.urlopen(url, timeout=10) as page:
            html = page.read().decode()
        assert page.status == 200 and "<html" in html.lower()
        assets = re.findall(r'(?:src|href)="(/[^"]+\.(?:js|css))"', html)
        assert any(asset.startswith("/static/") for asset in assets) and any(
            asset.startswith("/page/") for asset in assets
        )
        for asset in assets:
            with urllib.request.urlopen(url.rstrip("/") + asset, timeout=10) as reply:
                assert reply.status == 200, asset
    finally:
        process.terminate()
        process.wait(10)
