"""The lobby's list over real TCP: as fresh as the tables it lists (protocol section 6, ``list_tables``).

Every change a table summary shows (a name, the phase, the scores, the seats, the watchers) is in the very next
``list_tables`` reply, and in a ``lobby`` push to the connections in the lobby; ``idle_s`` counts to the moment the
list is sent. A list built a moment earlier is never handed out in their place, and a list asked again builds only
the lines of the tables that changed since.
"""

from __future__ import annotations

from itertools import count
from typing import Any

import pytest
import trio
import trio.testing

from quatro_shared import messages as m
from quatro_shared import protocol as p
from quatro_shared.framing import encode
from quatro_shared.games.quarto import contract as q
from quatro_shared.games.quatro.views import Phase
from quatro_shared.wire import to_wire

from helpers.lobby_peer import RecordingPeer
from helpers.netclient import TestClient
from quatro_server.tables.lobby import Lobby
from quatro_server.tables.room import Room


@pytest.fixture
def clock() -> trio.testing.MockClock:
    """The test's (and its server's) clock: it runs as real time does, and a test moves it on by hand (``jump``)
    instead of sleeping through a second of ``idle_s``."""
    return trio.testing.MockClock(rate=1.0)


async def _row(client: TestClient, table: int) -> dict[str, Any]:
    """The table's summary in a ``list_tables`` reply asked now."""
    reply = await client.request(p.LIST_TABLES)
    assert reply["kind"] == p.OK, reply
    rows = [row for row in reply["tables"] if row["table"] == table]
    assert len(rows) == 1, reply
    return rows[0]


async def _pushed(client: TestClient, table: int, fits, timeout: float = 2.0) -> dict[str, Any]:
    """The table's summary in the first ``lobby`` push (from now on, or already received) whose summary ``fits``."""
    with trio.fail_after(timeout):
        while True:
            frame = await client.next_frame(timeout)
            assert frame is not None, "the connection closed"
            if frame["kind"] != p.LOBBY:
                continue
            rows = [row for row in frame["tables"] if row["table"] == table]
            if rows and fits(rows[0]):
                return rows[0]


async def test_a_rename_at_a_table_shows_at_once_with_its_idle_count_back_to_zero(server, clock):
    ann = await TestClient.connect(server.port, "ann")
    assert (await ann.request(p.CREATE_TABLE, players=4))["kind"] == p.OK
    eve = await TestClient.connect(server.port, "eve")  # in the lobby
    clock.jump(1.5)  # the table quiet for a second and more: its idle count shows it
    before = await _row(eve, ann.table)
    assert before["names"][0] == "ann" and before["idle_s"] >= 1, before

    assert (await ann.request(p.RENAME, name="annie"))["kind"] == p.OK
    after = await _row(eve, ann.table)
    assert after["names"][0] == "annie" and after["idle_s"] == 0, after
    pushed = await _pushed(eve, ann.table, lambda row: row["names"][0] == "annie")
    assert pushed["idle_s"] == 0, pushed


async def test_the_start_shows_at_once_as_playing_and_the_round_stays_playing(server):
    ann = await TestClient.connect(server.port, "ann")
    assert (await ann.request(p.CREATE_TABLE, players=4, timing="steady"))["kind"] == p.OK
    for _ in range(3):
        assert (await ann.request(p.ADD_BOT, level="easy"))["kind"] == p.OK
    eve = await TestClient.connect(server.port, "eve")
    assert (await _row(eve, ann.table))["phase"] == "lobby"
    assert (await ann.request(p.START))["kind"] == p.OK
    await ann.wait_view(lambda v: v.phase is Phase.SIGNING)
    await _pushed(eve, ann.table, lambda row: row["phase"] == "playing")  # the sign phase is play, in the lobby

    assert (await ann.request("ready"))["kind"] == p.OK  # the bots are always ready (R7): the round opens now
    await ann.wait_view(lambda v: v.phase is Phase.ROUND)
    assert (await _row(eve, ann.table))["phase"] == "playing"


async def test_the_end_of_a_quarto_game_shows_at_once_as_between_games_with_its_score(server):
    ann = await TestClient.connect(server.port, "ann")
    assert (await ann.request(p.CREATE_TABLE, game="quarto"))["kind"] == p.OK
    bob = await TestClient.connect(server.port, "bob")
    assert (await bob.request(p.JOIN, table=ann.table))["kind"] == p.OK
    assert (await ann.request(p.START))["kind"] == p.OK
    for client in (ann, bob):
        await client.wait_view(lambda v: isinstance(v, q.QuartoView) and v.phase is q.Phase.PLAYING)
    view = ann.view
    assert isinstance(view, q.QuartoView)
    first, second = (ann, bob) if view.turn == 0 else (bob, ann)
    # Pieces 0 to 3 share two attributes: placed on a1..d1 they make a line (Q4), and the last one ends the game.
    assert (await first.request("give", piece=0))["kind"] == p.OK
    players = [second, first]
    for piece in (1, 2, 3):
        placer = players[(piece - 1) % 2]
        assert (await placer.request("place", square=piece - 1))["kind"] == p.OK
        assert (await placer.request("give", piece=piece))["kind"] == p.OK
    last = players[1]
    eve = await TestClient.connect(server.port, "eve")
    before = await _row(eve, ann.table)
    assert before["phase"] == "playing" and before["scores"] == [0, 0], before

    assert (await last.request("place", square=3))["kind"] == p.OK
    after = await _row(eve, ann.table)
    assert after["phase"] == "between" and sorted(after["scores"]) == [0, 1], after
    await _pushed(eve, ann.table, lambda row: row["phase"] == "between")


async def test_a_list_after_one_change_builds_that_one_summary_again_not_every_table_s(server, monkeypatch):
    hosts = []
    for i in range(6):
        host = await TestClient.connect(server.port, f"host{i}")
        assert (await host.request(p.CREATE_TABLE, players=4))["kind"] == p.OK
        hosts.append(host)
    eve = await TestClient.connect(server.port, "eve")
    assert len((await eve.request(p.LIST_TABLES))["tables"]) == 6
    built: list[int] = []
    summary = Room.summary

    def counted(room: Room, now: float | None = None):
        built.append(room.id)
        return summary(room, now)

    monkeypatch.setattr(Room, "summary", counted)
    assert (await eve.request(p.LIST_TABLES))["kind"] == p.OK
    assert built == []  # nothing changed: nothing is built again
    assert (await hosts[2].request(p.RENAME, name="renamed"))["kind"] == p.OK
    listed = await eve.request(p.LIST_TABLES)
    assert [row["names"][0] for row in listed["tables"]] == ["host0", "host1", "renamed", "host3", "host4", "host5"]
    assert built == [hosts[2].table]


async def test_the_list_tables_reply_holds_the_list_the_hello_reply_and_the_lobby_push_hold(server):
    ann = await TestClient.connect(server.port, "ann")
    assert (await ann.request(p.CREATE_TABLE, players=4, password="sesame"))["kind"] == p.OK
    assert (await ann.request(p.ADD_BOT, level="easy"))["kind"] == p.OK
    bob = await TestClient.connect(server.port, "bob")
    assert (await bob.request(p.CREATE_TABLE, game="quarto", rated=False))["kind"] == p.OK
    eve = await TestClient.connect(server.port, "eve")
    hello = eve.frames[0]
    assert hello["kind"] == p.OK and len(hello["tables"]) == 2, hello
    listed = await eve.request(p.LIST_TABLES)
    assert set(listed) == {"kind", "id", "tables"}, listed
    assert listed["tables"] == hello["tables"]
    assert (await ann.request(p.RENAME, name="annie"))["kind"] == p.OK
    pushed = await _pushed(eve, ann.table, lambda row: row["names"][0] == "annie")
    listed = await eve.request(p.LIST_TABLES)
    assert [row for row in listed["tables"] if row["table"] == ann.table] == [pushed]


async def test_a_draining_server_s_list_tables_reply_says_so_beside_the_list(server):
    ann = await TestClient.connect(server.port, "ann")
    assert (await ann.request(p.CREATE_TABLE, players=4))["kind"] == p.OK
    eve = await TestClient.connect(server.port, "eve")
    server.lobby.draining = True
    listed = await eve.request(p.LIST_TABLES)
    assert listed["draining"] is True and [row["table"] for row in listed["tables"]] == [ann.table], listed


def test_the_list_tables_frame_and_the_lobby_push_are_what_encoding_the_reply_and_the_push_would_give():
    lobby = Lobby(seed=5)
    ids = count(1)
    for i, game in enumerate(("quatro", "quarto", "quatro")):
        host = RecordingPeer(f"host{i}")
        body = m.CreateTable(players=4 if game == "quatro" else None, game=game, password="pw" if i == 2 else None)
        assert type(lobby.handle(host, m.Request(next(ids), p.CREATE_TABLE, body), 0.5)) is m.Ok
    eve = RecordingPeer("eve")
    lobby.watchers.add(eve)
    for draining in (False, True):
        lobby.draining = draining
        reply = lobby.handle(eve, m.Request(next(ids), p.LIST_TABLES, m.ListTables()), 3.0)
        assert type(reply) is m.Ok and len(reply.payload.tables) == 3
        assert lobby.tables_frame(reply) == encode(to_wire(reply))
        assert lobby.tables_frame(reply) == encode(to_wire(reply))  # the lines packed once, the same bytes again
        lobby.push_listing()
        assert eve.sent[-1] == to_wire(m.LobbyList(lobby.listing(), draining=draining))
