"""Nim, a game of the tests alone (``nim_game``), hosted by the product untouched: two clients play it over real TCP
through the lobby and the client core, a ``kill -9`` and a restart on the same data directory put both back in the
same position, and ``quatro-server sim --game nim`` plays it."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from quatro_shared import protocol as p

import nim_game
from helpers.netclient import TestClient
from nim_game import contract as n
from quatro_server.server import Server
from quatro_server.tables.lobby import Lobby
from quatro_server.tools import simulators

TESTS = Path(__file__).parent


@pytest.fixture
def nim():
    with nim_game.registered():
        yield


async def take_turns(client: TestClient, rng: random.Random, moves: int | None = None) -> int:
    """Play this seat's turns with moves drawn from ``legal`` until the match is over (or ``moves`` were played);
    every one must be accepted. Returns the moves played."""
    played = 0
    with trio.fail_after(30):
        while moves is None or played < moves:
            view = client.view
            if isinstance(view, n.NimView) and view.phase is n.Phase.OVER:
                return played
            allowed = n.legal(view) if isinstance(view, n.NimView) else []
            if allowed:
                reply = await client.act(rng.choice(allowed))
                assert reply["kind"] == p.OK, (reply, view)
                played += 1
                continue
            await client.next_frame()
    return played


async def seat_two(port: int) -> tuple[TestClient, TestClient]:
    ann = await TestClient.connect(port, "ann")
    welcome = [f for f in ann.frames if f.get("kind") == p.OK][0]
    assert "nim" in welcome["games"]
    assert (await ann.request(p.CREATE_TABLE, game="nim"))["kind"] == p.OK
    bob = await TestClient.connect(port, "bob")
    listed = (await bob.request(p.LIST_TABLES))["tables"]
    assert [(t["game"], t["players"]) for t in listed] == [("nim", 2)]
    assert (await bob.request(p.JOIN, table=ann.table))["kind"] == p.OK
    assert (await ann.request(p.START))["kind"] == p.OK
    return ann, bob


async def test_two_clients_play_nim_over_tcp_through_the_lobby_and_the_client_core(nim, nursery):
    lobby = Lobby(seed=5)
    server = Server(lobby)
    listeners = await nursery.start(server.serve, "127.0.0.1", 0)
    port = listeners[0].socket.getsockname()[1]
    ann, bob = await seat_two(port)
    # A move out of turn is refused in the table's words; a move of another game is refused by the lobby.
    await ann.wait_view(lambda v: v.phase is n.Phase.PLAYING)
    idle = ann if ann.view.turn != ann.seat else bob
    refused = await idle.act(n.Take(1))
    assert (refused["kind"], refused["reason"], refused["message"]) == (
        p.REFUSED,
        "not_your_turn",
        "it is not your turn",
    )
    other = await idle.request("place", square=0)
    assert other["kind"] == p.REFUSED and "this table plays Nim" in other["message"]
    rng = random.Random(5)
    async with trio.open_nursery() as both:
        both.start_soon(take_turns, ann, rng)
        both.start_soon(take_turns, bob, rng)
    for client in (ann, bob):
        view = client.view
        assert view.phase is n.Phase.OVER and sum(view.scores) == n.GAMES and view.winners
        assert client.core.drift == 0 and client.core.resyncing is None
    assert ann.view.scores == bob.view.scores
    for client in (ann, bob):
        await client.aclose()


async def test_a_watcher_follows_a_nim_match_with_nothing_written_for_it(nim, nursery):
    """Watching comes with the game interface: Nim's own modules know nothing of watchers, yet a watcher of a Nim
    table follows its match from no seat to the same end as its players."""
    lobby = Lobby(seed=9)
    server = Server(lobby)
    listeners = await nursery.start(server.serve, "127.0.0.1", 0)
    port = listeners[0].socket.getsockname()[1]
    ann = await TestClient.connect(port, "ann")
    assert (await ann.request(p.CREATE_TABLE, game="nim"))["kind"] == p.OK
    wes = await TestClient.connect(port, "wes")
    assert (await wes.request(p.WATCH, table=ann.table))["watchers"] == 1
    bob = await TestClient.connect(port, "bob")
    assert (await bob.request(p.JOIN, table=ann.table))["kind"] == p.OK
    assert (await ann.request(p.START))["kind"] == p.OK
    rng = random.Random(6)
    async with trio.open_nursery() as both:
        both.start_soon(take_turns, ann, rng)
        both.start_soon(take_turns, bob, rng)
    await wes.wait_view(lambda v: v.phase is n.Phase.OVER)
    assert isinstance(wes.view, n.NimView) and wes.view.seat == -1 and n.legal(wes.view) == []
    assert (wes.view.scores, wes.view.winners) == (ann.view.scores, ann.view.winners)
    assert wes.core.drift == 0
    assert (await wes.request("nim_take", count=1))["reason"] == p.WATCHING


async def start_nim_server(*args: str) -> tuple[trio.Process, int]:
    """``quatro-server`` in a process of its own that hosts Nim (``nim_game.serve``), on a free loopback port."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")]))}
    proc = await trio.lowlevel.open_process(
        [sys.executable, "-m", "nim_game.serve", "--host", "127.0.0.1", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    out = b""
    with trio.fail_after(20):
        while b"quatro join 127.0.0.1:" not in out:
            chunk = await proc.stdout.receive_some(4096)
            assert chunk, f"server exited early: {out!r}"
            out += chunk
    line = next(line for line in out.decode().splitlines() if "quatro join" in line)
    return proc, int(line.rsplit(":", 1)[1])


async def test_a_nim_match_survives_kill_9_both_players_back_in_the_same_position(nim, tmp_path):
    data = tmp_path / "data"
    proc, port = await start_nim_server("--data-dir", str(data), "--seed", "7")
    try:
        ann, bob = await seat_two(port)
        rng = random.Random(7)
        async with trio.open_nursery() as both:  # a few moves each: the first game is won, the match goes on
            both.start_soon(take_turns, ann, rng, 4)
            both.start_soon(take_turns, bob, rng, 4)
        await ann.drain(0.2)
        await bob.drain(0.2)
        before = {c.name: c.view for c in (ann, bob)}
        places = {c.name: (c.table, c.seat, c.secret) for c in (ann, bob)}
        assert before["ann"].phase is n.Phase.PLAYING and sum(before["ann"].scores) >= 1
    finally:
        proc.send_signal(signal.SIGKILL)
        await proc.wait()
    assert proc.returncode == -signal.SIGKILL
    proc, port = await start_nim_server("--data-dir", str(data), "--seed", "8")
    try:
        back = {}
        for name, (table, seat, secret) in places.items():
            client = await TestClient.connect(port, name)
            reply = await client.request(p.REJOIN, table=table, secret=secret)
            assert reply["kind"] == p.OK and reply["seat"] == seat, reply
            await client.wait_view(lambda v: isinstance(v, n.NimView))
            back[name] = client
        await back["ann"].drain(0.2)
        for name, client in back.items():
            assert client.view == before[name], name  # the same heap, turn, game and scores, both connected
        async with trio.open_nursery() as both:  # and the match plays on to its end
            for client in back.values():
                both.start_soon(take_turns, client, rng)
        assert back["ann"].view.phase is n.Phase.OVER and sum(back["ann"].view.scores) == n.GAMES
    finally:
        proc.kill()
        await proc.wait()


def test_the_simulator_plays_nim_through_its_one_code_path(nim, capsys):
    assert (
        simulators.main(["--game", "nim", "--matches", "40", "--seed", "3", "--teams", "perfect,random", "--json"]) == 0
    )
    result = json.loads(capsys.readouterr().out)
    perfect, random_bot = result["seats"]
    assert result["game"] == "nim" and result["matches"] == 40 and result["unfinished_matches"] == 0
    assert perfect["points"] + random_bot["points"] == 40 * n.GAMES
    assert perfect["wins"] > random_bot["wins"]  # it leaves a multiple of four whenever it can
    assert simulators.main(["--game", "nim", "--teams", "random,clever"]) == 2
    assert "unknown Nim bot level 'clever'" in capsys.readouterr().err
