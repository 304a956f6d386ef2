"""The operator's close and remove go through the game interface alone: the same requests end a Quatro, a Quarto and
a Nim table (``nim_game``, a game of the tests), on a real server over TCP, the admin requests answered in process."""

from __future__ import annotations

import pytest
import trio

from quatro_shared import protocol as p

import nim_game
from helpers.netclient import TestClient
from quatro_server import games
from quatro_server.server import Server
from quatro_server.tables.lobby import Lobby
from quatro_server.workers import admin


@pytest.fixture
def nim():
    with nim_game.registered():
        yield


async def push(c: TestClient, kind: str) -> dict:
    with trio.fail_after(5):
        while True:
            frame = await c.next_frame()
            assert frame is not None, f"closed before a {kind}"
            if frame["kind"] == kind:
                return frame


@pytest.mark.parametrize("game", ["quatro", "quarto", "nim"])
async def test_remove_then_close_a_running_match_of_any_game(game, nim, nursery):
    lobby = Lobby(seed=3)
    server = Server(lobby)
    listeners = await nursery.start(server.serve, "127.0.0.1", 0)
    port = listeners[0].socket.getsockname()[1]
    ann = await TestClient.connect(port, "ann")
    size = 4 if games.GAMES[game].players_required else None
    created = await ann.request(p.CREATE_TABLE, game=game, **({} if size is None else {"players": size}))
    table = created["table"]
    bob = await TestClient.connect(port, "bob")
    assert (await bob.request(p.JOIN, table=table, seat=1))["kind"] == p.OK
    for _ in range(lobby.rooms[table].players - 2):
        assert (await ann.request(p.ADD_BOT))["kind"] == p.OK
    assert (await ann.request(p.START))["kind"] == p.OK
    assert server.running_matches() == 1
    await ann.drain(0.2)  # what the start brought: read, so that what follows is the operator's doing

    removed = admin.answer(server, admin.Remove(table, 1, "be nice"), trio.current_time())
    assert (removed["freed"], removed["told"]) == (False, True)  # in a match the seat stays, disconnected (R19)
    assert await push(bob, p.SEAT_ENDED) == {
        "kind": "seat_ended",
        "table": table,
        "reason": p.REMOVED_BY_OPERATOR,
        "message": "be nice",
    }
    seating = await push(ann, p.TABLE)
    while seating["seats"][1]["connected"]:
        seating = await push(ann, p.TABLE)
    assert seating["seats"][1]["taken"] is True and seating["seats"][1]["bot"] is None  # no bot takes over
    assert (await bob.request(p.REJOIN, table=table, secret=bob.secret))["reason"] == p.BAD_SECRET

    closed = admin.answer(server, admin.Close(table), trio.current_time())
    assert closed == {"kind": p.OK, "table": table, "told": 1}
    ended = await push(ann, p.SEAT_ENDED)
    assert (ended["reason"], ended["message"]) == (p.CLOSED_BY_OPERATOR, "the server's operator closed the table")
    assert table not in lobby.rooms and server.running_matches() == 0
    with pytest.raises(admin.AdminError) as gone:
        admin.answer(server, admin.Close(table), trio.current_time())
    assert gone.value.code == admin.NO_SUCH_TABLE
