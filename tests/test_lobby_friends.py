"""The lobby for friends: playing again with the same seats, choosing a seat, the host's keys, chat."""

from __future__ import annotations

import asyncio
from itertools import count
from typing import Any

import pytest

from quatro_shared import messages as m
from quatro_shared import protocol as p
from quatro_shared import wire
from quatro_shared.games.quatro.views import Phase

from helpers.lobby_peer import RecordingPeer as Peer
from helpers.tui import Player, quatro_server, run, until  # noqa: F401 - quatro_server is a fixture
from quatro_server.tables import lobby
from quatro_server.timing import Timing


def test_rematch_plays_again_with_the_same_seats_host_only_once_over():
    room_lobby = lobby.Lobby(timing_profiles={"short": Timing(target_score=1)}, seed=3)
    ann, bob = Peer("ann"), Peer("bob")
    ids = count(1)

    def ask(peer: Peer, kind: str, now: float, **fields: Any) -> dict[str, Any]:
        return wire.to_wire(
            room_lobby.handle(peer, wire.request_from_wire({"kind": kind, "id": next(ids), **fields}), now)
        )

    assert ask(ann, p.CREATE_TABLE, 0.0, players=4)["kind"] == p.OK
    assert ask(bob, p.JOIN, 0.0, table=1)["kind"] == p.OK
    ask(ann, p.ADD_BOT, 0.0)
    ask(ann, p.ADD_BOT, 0.0)
    seats_before = [(s.name, s.bot is not None) for s in room_lobby.rooms[1].seats]
    assert ask(ann, p.REMATCH, 0.5)["reason"] == p.NOT_OVER  # not even started
    assert ask(ann, p.START, 1.0)["kind"] == p.OK
    assert ask(ann, p.REMATCH, 1.1)["reason"] == p.NOT_OVER  # the match is on
    ask(ann, "pick_sign", 1.2, sign="fox")
    ask(ann, "ready", 1.3)
    ask(bob, "ready", 1.3)
    room = room_lobby.rooms[1]
    assert room.table is not None and room.table.phase is Phase.ROUND
    assert ask(ann, "call", 1.5)["kind"] == p.OK  # right or wrong, some team scores its one point (R13)
    assert room.table.phase is Phase.OVER
    assert ask(bob, p.REMATCH, 2.0)["reason"] == p.NOT_HOST
    assert ask(ann, p.REMATCH, 2.0)["kind"] == p.OK
    assert room.table.phase is Phase.SIGNING and room.table.scores == [0, 0]
    assert [(s.name, s.bot is not None) for s in room.seats] == seats_before
    (first,) = [
        msg
        for msg in bob.sent[-3:]
        if msg["kind"] == "update" and any(ev["kind"] == "match_started" for ev in msg["events"])
    ]
    assert first["snapshot"] and first["view"]["scores"] == [
        0,
        0,
    ]  # a new match starts from a snapshot, nothing carried over


def test_rematch_before_any_match_is_refused_not_over():
    room_lobby = lobby.Lobby(seed=3)
    ann, eve = Peer("ann"), Peer("eve")

    def ask(peer: Peer, kind: str) -> dict[str, Any]:
        return wire.to_wire(room_lobby.handle(peer, wire.request_from_wire({"kind": kind, "id": 1}), 0.0))

    assert ask(eve, p.REMATCH)["reason"] == p.NOT_SEATED
    request = wire.request_from_wire({"kind": p.CREATE_TABLE, "id": 2, "players": 4})
    assert wire.to_wire(room_lobby.handle(ann, request, 0.0))["kind"] == p.OK
    assert ask(ann, p.REMATCH)["reason"] == p.NOT_OVER


# --- over real TCP -------------------------------------------------------------------------------------------------


def test_a_player_moves_to_a_free_seat_to_sit_with_a_friend(quatro_server):
    async def body():
        ann = await Player(quatro_server, "ann").start()
        bob = await Player(quatro_server, "bob").start()
        try:
            table = (await ann.act(p.CREATE_TABLE, players=4))["table"]
            assert (await bob.act(p.JOIN, table=table))["seat"] == 1
            moved = await bob.act(p.MOVE, seat=2)  # across the table from ann: her partner (R1)
            assert moved["seat"] == 2
            await until(
                lambda: (
                    ann.seating is not None and ann.seating.seats[2].name == "bob" and not ann.seating.seats[1].taken
                ),
                what="bob in seat 3 on ann's side",
            )
            taken = await bob.request(p.MOVE, seat=0)
            assert taken["kind"] == p.REFUSED and taken["reason"] == p.SEAT_TAKEN
            tables = await ann.request(p.LIST_TABLES)
            (summary,) = [t for t in tables["tables"] if t["table"] == table]
            assert summary["names"] == ["ann", "", "bob", ""] and summary["bot_seats"] == [] and summary["idle_s"] == 0
            await ann.act(p.ADD_BOT)
            await ann.act(p.ADD_BOT)
            await ann.act(p.START)
            late = await bob.request(p.MOVE, seat=1)
            assert late["kind"] == p.REFUSED and late["reason"] == p.MATCH_STARTED
        finally:
            await ann.close()
            await bob.close()

    run(body)


def test_chat_in_the_waiting_room_and_the_lobby_never_during_a_round(quatro_server):
    from quatro_shared.client import ChatSaid  # noqa: F401 - the client event the pushes below become

    from quatro_tui.connection import ServerChat

    async def body():
        ann = await Player(quatro_server, "ann").start()
        bob = await Player(quatro_server, "bob").start()
        eve = await Player(quatro_server, "eve").start()
        try:
            table = (await ann.act(p.CREATE_TABLE, players=4))["table"]
            await bob.act(p.JOIN, table=table)
            await bob.act(p.CHAT, text="[b]hi[/b] partner")
            said = lambda player: [m.line for m in player.messages if isinstance(m, ServerChat)]  # noqa: E731
            await until(lambda: said(ann), what="bob's line at ann's")
            assert said(ann)[0].name == "bob" and said(ann)[0].text == "[b]hi[/b] partner" and said(ann)[0].seat == 1
            too_fast = await bob.request(p.CHAT, text="again")
            assert too_fast["kind"] == p.REFUSED and too_fast["reason"] == p.RATE_LIMITED and too_fast["wait_ms"] > 0
            await eve.act(p.CHAT, text="anyone?")  # eve is in the lobby: the table does not hear her
            await asyncio.sleep(0.2)
            assert all(line.name != "eve" for line in said(ann)) and not said(eve)[0].seat
            await ann.act(p.ADD_BOT)
            await ann.act(p.ADD_BOT)
            await ann.act(p.START)
            refused = await ann.request(p.CHAT, text="I hold four kings")
            assert refused["kind"] == p.REFUSED and refused["reason"] == p.CHAT_CLOSED
            assert "round" in refused["message"]
        finally:
            for player in (ann, bob, eve):
                await player.close()

    run(body)


@pytest.mark.parametrize("host", [True, False])
def test_only_the_host_sees_the_hosts_keys_in_the_waiting_room(quatro_server, host):
    from quatro_tui.app import Join, QuatroApp
    from quatro_tui.screens.room import RoomScreen

    async def body():
        other = await Player(quatro_server, "ann").start()
        app = QuatroApp(Join("127.0.0.1", quatro_server, "bob"))
        try:
            async with app.run_test(size=(80, 24)) as pilot:
                await until(
                    lambda: app.conn is not None and app.screen.__class__.__name__ == "LobbyScreen", what="lobby"
                )
                if host:
                    reply = await app.request(m.CreateTable(4))
                    app.game.my_seat = reply.payload.seat
                    await other.act(p.JOIN, table=reply.payload.table)
                else:
                    table = (await other.act(p.CREATE_TABLE, players=4))["table"]
                    reply = await app.request(m.Join(table))
                    app.game.my_seat = reply.payload.seat
                await until(lambda: isinstance(app.screen, RoomScreen) and app.game.seating is not None, what="room")
                await pilot.pause()
                footer = " ".join(str(key.render()) for key in app.screen.query("FooterKey"))
                assert ("add a bot" in footer) is host and ("start" in footer) is host
                assert "chat" in footer and "leave" in footer
                await pilot.press("b", "enter")  # the host's level question, answered with its default
                await pilot.pause(0.3)
                assert not any("only the host" in line for line in app.game.feed)
                bots = sum(s.bot is not None for s in app.game.seating.seats)
                assert bots == (1 if host else 0)
                await pilot.press("t")
                await pilot.press(*"hello", "enter")
                await until(lambda: any(line == "bob: hello" for line in app.game.feed), what="our own line")
                await pilot.press("ctrl+q")
        finally:
            await other.close()

    run(body)


def test_a_table_just_created_shows_as_active_in_the_pushed_lobby_list(quatro_server):
    """The list a watcher is pushed when a table is created says it is active now, not idle since the clock began."""
    from quatro_tui.connection import ServerLobby

    async def body():
        cy = await Player(quatro_server, "cy").start()
        ann = await Player(quatro_server, "ann").start()
        try:
            table = (await ann.act(p.CREATE_TABLE, players=4))["table"]

            def pushed() -> m.TableSummary | None:
                for message in reversed(cy.messages):
                    if isinstance(message, ServerLobby):
                        return next((t for t in message.tables if t.table == table), None)
                return None

            summary = await until(pushed, what="the new table in cy's pushed lobby list")
            assert summary.idle_s == 0
        finally:
            await ann.close()
            await cy.close()

    run(body)
