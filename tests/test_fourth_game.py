"""A fourth game installed from outside: a package of its own (Nim's modules under a new name) and one entry point in
the ``quatro.games`` group, nothing else. A real ``quatro-server`` started with it on the module path hosts it
through the lobby, a watcher, its journal and a replay, and ``quatro-server sim`` plays it: the path
``docs/adding-a-game.md`` describes. A package that does not load is said, and the server serves its own games."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from quatro_shared import protocol as p

import nim_game
from helpers.netclient import TestClient
from nim_game import contract as n
from test_third_game import seat_two, take_turns

pytestmark = pytest.mark.timeout(120)

TESTS = Path(__file__).parent
PACKAGE = "fourth_nim"


def install(site: Path, entry: str = f"{PACKAGE}:register") -> Path:
    """The game's package in ``site`` as pip would leave it: its modules (Nim's, renamed) and its ``dist-info`` with
    the one entry point."""
    folder = site / PACKAGE
    folder.mkdir(parents=True)
    for module in ("__init__.py", "contract.py", "server.py"):
        text = re.sub(r"\bnim_game(?=[.\s])", PACKAGE, (TESTS / "nim_game" / module).read_text())  # its imports
        (folder / module).write_text(text)
    info = site / f"{PACKAGE}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {PACKAGE.replace('_', '-')}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[quatro.games]\nnim = {entry}\n")
    return site


def env_with(site: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))}


async def start_server(site: Path, *args: str) -> tuple[trio.Process, int, trio.abc.ReceiveStream]:
    """``python -m quatro_server`` (the product's own entry, no wrapper) with ``site`` on the module path."""
    proc = await trio.lowlevel.open_process(
        [sys.executable, "-m", "quatro_server", "--host", "127.0.0.1", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env_with(site),
    )
    out = b""
    with trio.fail_after(30):
        while b"quatro join 127.0.0.1:" not in out:
            chunk = await proc.stdout.receive_some(4096)
            assert chunk, f"server exited early: {out!r}"
            out += chunk
    line = next(line for line in out.decode().splitlines() if "quatro join" in line)
    return proc, int(line.rsplit(":", 1)[1]), proc.stderr


@pytest.fixture
def client_knows_nim():
    """The test's clients read Nim's frames as a client with the game would: its contract, in this process only."""
    with nim_game.registered():
        yield


async def test_a_fourth_game_from_its_own_package_plays_through_the_lobby_a_watcher_and_a_replay(
    tmp_path, client_knows_nim
):
    site = install(tmp_path / "site")
    proc, port, _ = await start_server(site, "--data-dir", str(tmp_path / "data"), "--seed", "4")
    try:
        ann, bob = await seat_two(port)  # the lobby offers it, lists its table, seats and starts it
        wes = await TestClient.connect(port, "wes")
        assert (await wes.request(p.WATCH, table=ann.table))["watchers"] == 1
        rng = random.Random(4)
        async with trio.open_nursery() as both:
            both.start_soon(take_turns, ann, rng)
            both.start_soon(take_turns, bob, rng)
        await wes.wait_view(lambda v: v.phase is n.Phase.OVER)
        assert (wes.view.scores, wes.view.winners) == (ann.view.scores, ann.view.winners)
        assert sum(ann.view.scores) == n.GAMES
        await ann.drain(0.3)
        # The journal kept it; its replay for ann's seat ends where ann's match ended.
        with trio.fail_after(10):
            while True:
                past = await wes.request(p.PAST_MATCHES)
                if any(match["table"] == ann.table for match in past["matches"]):
                    break
                await trio.sleep(0.1)
        (match,) = [match for match in past["matches"] if match["table"] == ann.table]
        assert match["game"] == "nim" and match["scores"] == list(ann.view.scores)
        replay = await wes.request(p.REPLAY, table=ann.table, seat=ann.seat)
        assert replay["kind"] == p.OK and replay["game"] == "nim", replay
        assert replay["total"] == len(replay["frames"]) > 1
        assert replay["frames"] == [frame for frame in ann.frames if frame.get("kind") == "update"]  # what ann was sent
    finally:
        proc.kill()
        await proc.wait()


def test_the_simulator_plays_the_fourth_game_from_its_package(tmp_path):
    site = install(tmp_path / "site")
    done = subprocess.run(
        [sys.executable, "-m", "quatro_server", "sim", "--game", "nim", "--matches", "20", "--seed", "3"]
        + ["--teams", "perfect,random", "--json"],
        capture_output=True,
        text=True,
        env=env_with(site),
        timeout=90,
        check=True,
    )
    result = json.loads(done.stdout)
    assert result["game"] == "nim" and result["matches"] == 20 and result["unfinished_matches"] == 0


async def test_a_game_that_does_not_load_is_said_and_the_server_serves_its_own(tmp_path):
    site = install(tmp_path / "site", entry=f"{PACKAGE}.gone:register")
    proc, port, stderr = await start_server(site)
    try:
        ann = await TestClient.connect(port, "ann")
        welcome = next(f for f in ann.frames if f.get("kind") == p.OK)
        assert "nim" not in welcome["games"] and "quatro" in welcome["games"]
        assert (await ann.request(p.CREATE_TABLE, players=4))["kind"] == p.OK
    finally:
        proc.kill()
        await proc.wait()
    said = (await stderr.receive_some(65536)).decode()
    assert "the game 'nim' (fourth_nim.gone:register, from fourth-nim) did not load and is left out" in said
    assert "Update or uninstall fourth-nim" in said
