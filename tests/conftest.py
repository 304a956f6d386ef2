"""Fixtures shared by the tests: a real server on 127.0.0.1 (fast timing, in the test's own nursery), tmux on a
private socket for the end-to-end terminal tests, and a real redis-server on a loopback port of its own for the
table directory's tests."""

from __future__ import annotations

import atexit
import os
import random
import shutil
import socket as _socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from quatro_shared.discovery import NO_ANNOUNCE_ENV

from quatro_server.server import Server
from quatro_server.tables.lobby import Lobby
from quatro_server.timing import FAST, PROFILES

# Servers the tests start never announce themselves on the LAN (multicast leaves the machine); the zeroconf
# tests ask for it with --announce, on loopback.
os.environ.setdefault(NO_ANNOUNCE_ENV, "1")
# A first quatro play offers the guided first match before the table; the tests that start quatro play in a terminal
# go straight to the table (the offer's own tests ask for it).
os.environ.setdefault("QUATRO_LEARN_OFFER", "0")
# Servers and clients the tests start keep their journals, host keys and settings in a folder of this run, never
# in the home of whoever runs the suite (a journal left there would be restored by the next test's server).
_HOME = Path(tempfile.mkdtemp(prefix="quatro-tests-"))
atexit.register(shutil.rmtree, _HOME, ignore_errors=True)  # gone with the run, as a test's tmp_path is
os.environ["XDG_DATA_HOME"] = str(_HOME / "data")
os.environ["XDG_CONFIG_HOME"] = str(_HOME / "config")

#: Fast timing with rounds short enough for a test to watch one end in a draw.
QUICK = replace(FAST, round_length=3.0, break_length=0.5, sign_window=1.0)
#: Fast pulses, but cooldowns and phases long enough that no test races them on a loaded machine.
STEADY = replace(FAST, swap_cooldown=5.0, sign_window=30.0, round_length=60.0, break_length=30.0)
#: Fast timing with a match of two points, for tests that play a match to its end.
SHORT_MATCH = replace(FAST, target_score=2, break_length=0.5)


@pytest.fixture
async def server(nursery):
    """A server listening on a free loopback port; ``server.port`` is where to connect."""
    lobby = Lobby(
        timing_profiles={**PROFILES, "quick": QUICK, "short": SHORT_MATCH, "steady": STEADY},
        seed=random.randrange(2**32),
    )
    lobby.default_timing = "fast"
    srv = Server(lobby)
    listeners = await nursery.start(srv.serve, "127.0.0.1", 0)
    srv.port = listeners[0].socket.getsockname()[1]
    yield srv


@pytest.fixture
def tmux() -> Iterator[Callable[..., str]]:
    """Run tmux commands on a private server (its own socket); the server is killed afterwards.

    Without tmux the test is skipped on a developer's machine, but fails in CI (``CI`` set), where a silently
    skipped end-to-end test would look like a passing one.
    """
    if shutil.which("tmux") is None:
        if os.environ.get("CI"):
            pytest.fail("tmux is not installed, and CI must run the end-to-end tests: install tmux (.ci/run does)")
        pytest.skip("tmux is not installed (.ci/run installs it)")
    socket = f"quatro-test-{os.getpid()}-{uuid.uuid4().hex[:8]}"

    def run(*args: str) -> str:
        return subprocess.run(["tmux", "-L", socket, *args], capture_output=True, text=True, check=False).stdout

    yield run
    # Only this socket's server: the user's own tmux sessions are never touched. tmux leaves the socket file.
    run("kill-server")
    (Path(os.environ.get("TMUX_TMPDIR") or "/tmp") / f"tmux-{os.getuid()}" / socket).unlink(missing_ok=True)


def _free_port() -> int:
    with _socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real redis-server (Debian's package) on a free loopback port, no persistence, for the whole run: its URL,
    ``redis://127.0.0.1:PORT``. Skipped on a developer's machine without it; in CI (``CI`` set) a missing
    redis-server fails (.ci/run installs it)."""
    binary = shutil.which("redis-server")
    if binary is None:
        if os.environ.get("CI"):
            pytest.fail(
                "redis-server is not installed, and CI must run the directory's tests: install redis-server "
                "(.ci/run does)"
            )
        pytest.skip("redis-server is not installed (.ci/run installs it)")
    port = _free_port()
    folder = tmp_path_factory.mktemp("redis")
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", str(folder)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                with _socket.create_connection(("127.0.0.1", port), timeout=1) as probe:
                    probe.sendall(b"PING\r\n")
                    if probe.recv(16).startswith(b"+PONG"):
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"redis-server did not start on port {port}")
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(5)


@pytest.fixture
def redis_url(redis_server: str) -> str:
    """The session's redis-server, emptied for this test: a directory URL (database 0), ``redis://127.0.0.1:PORT/0``."""
    import redis

    client = redis.Redis.from_url(redis_server)
    client.flushall()
    client.close()
    return f"{redis_server}/0"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--walk-steps",
        type=int,
        default=0,
        metavar="N",
        help="walk the client N steps in all (tests/test_client_walk.py) instead of the suite's few",
    )


#: The modules of the slow tier (``pytest -m slow``; ``pytest -m "not slow"`` is the everyday one, a few minutes):
#: those that drive whole processes end to end (tmux, the SSH door with OpenSSH, Chromium, the installed wheel,
#: several servers), play long matches or walk the client, and the benchmarks' and the soak's own runs. Measured
#: with ``pytest --durations=0`` (README, "Running the tests"): these hold about seven eighths of the suite's time.
#: The rules (R1-R20, H1-H3, Q1-Q7), the protocol and its document, the server over TCP, the engine, the bots' unit
#: tests, the journal, the types, the lint and the screens' snapshots stay in the fast tier. CI runs both.
SLOW_MODULES = frozenset(
    {
        "test_client_walk",
        "test_web_door",
        "test_soak",
        "test_learn_terminal",
        "test_replay_seat",
        "test_benchmarks",
        "test_crash",
        "test_ssh_door",
        "test_ssh_terminal",
        "test_tui_quarto_play",
        "test_opener",
        "test_hostile_input",
        "test_tui_quarto",
        "test_workers",
        "test_workers_clients",
        "test_tui_play",
        "test_wheel",
        "test_tui_replay",
        "test_quarto_bots",
        "test_tui_manners",
        "test_directory_clients",
        "test_tui_terminal",
        "test_watch_doors",
        "test_learn_app",
        # Real servers of their own (TLS, Redis, metrics, the admin socket, network bots) or a client's whole session
        # against one, waiting on their clocks: seconds each, nearly none of it CPU.
        "test_netbot",
        "test_tls",
        "test_tls_tui",
        "test_metrics",
        "test_directory",
        "test_directory_lobby",
        "test_directory_proofs",
        "test_discovery",
        "test_heartbeat_clients",
        "test_server_cli",
        "test_admin",
        "test_admin_tui",
        "test_records",
        "test_tui_connection",
        "test_tui_stopped_clocks",
        "test_tui_past_matches",
        "test_tui_watch",
        "test_tui_records",
        "test_lobby_friends",
        "test_tui_crash",
        "test_outbound",
        "test_watching",
        "test_bot_thinking",
    }
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.module is not None and item.module.__name__.rsplit(".", 1)[-1] in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)
    # A longer walk has no suite timeout: it runs as long as its steps take.
    if config.getoption("--walk-steps"):
        for item in items:
            if "test_client_walk" in item.nodeid:
                item.add_marker(pytest.mark.timeout(0))
