"""Watching a table (protocol section 18), over real TCP: a watcher follows a whole match of each game from no seat,
sees the public table only, is counted and bounded like any connection, is asked a password table's password, is
sent back to the lobby when the host closes the table to watchers, and takes a free seat between matches."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pytest
import trio

from quatro_shared import protocol as p
from quatro_shared.client import WatchStopped
from quatro_shared.games.quarto import contract as q
from quatro_shared.games.quatro.views import Phase, SeatView
from quatro_shared.tables import NO_SEAT

from helpers.netclient import TestClient
from quatro_server.games.quarto import bots as quarto_bots
from quatro_server.server import Server, ServerConfig
from quatro_server.tables.lobby import Lobby
from quatro_server.tables.room import WATCH_COUNT_INTERVAL
from quatro_server.timing import FAST

#: A Quatro match of two points, its phases short: a watcher sees it whole in a few seconds.
MATCH = replace(FAST, target_score=2, round_length=3.0, break_length=0.5, sign_window=1.0)
#: Events a watcher is never sent: a seat's hand, a team's sign, a seat's chosen emoji.
PRIVATE_EVENTS = {"hand_dealt", "sign_chosen", "emoji_chosen"}


async def serve(nursery: trio.Nursery, config: ServerConfig | None = None) -> int:
    lobby = Lobby(timing_profiles={"match": MATCH, "fast": FAST}, seed=random.randrange(2**32))
    lobby.default_timing = "match"
    server = Server(lobby, config) if config is not None else Server(lobby)
    listeners = await nursery.start(server.serve, "127.0.0.1", 0)
    return int(listeners[0].socket.getsockname()[1])


async def quatro_table(port: int, name: str = "ann", **fields: Any) -> TestClient:
    """A human at seat 0 of a 4-seat table, three bots beside her; not started."""
    host = await TestClient.connect(port, name)
    assert (await host.request(p.CREATE_TABLE, players=4, **fields))["kind"] == p.OK
    for _ in range(3):
        assert (await host.request(p.ADD_BOT, level="normal"))["kind"] == p.OK
    return host


async def call_every_round(host: TestClient) -> SeatView:
    """The host calls as each round opens (right or wrong, a team scores) until the match is over."""
    with trio.fail_after(60):
        while True:
            view = await host.wait_view(lambda v: v.phase in (Phase.ROUND, Phase.OVER))
            if view.phase is Phase.OVER:
                return view
            await host.request("call")
            await host.wait_view(lambda v: v.phase is not Phase.ROUND)


def watcher_updates(client: TestClient) -> list[dict[str, Any]]:
    return [f for f in client.frames if f["kind"] == p.UPDATE]


async def follow_to_the_end(watcher: TestClient, over: Any) -> Any:
    with trio.fail_after(60):
        while watcher.view is None or not over(watcher.view):
            frame = await watcher.next_frame(timeout=30)
            assert frame is not None
    return watcher.view


async def test_a_watcher_follows_a_whole_quatro_match_and_sees_only_the_public_table(nursery):
    port = await serve(nursery)
    ann = await quatro_table(port)
    wes = await TestClient.connect(port, "wes")
    listed = (await wes.request(p.LIST_TABLES))["tables"]
    assert [(t["watchers"], t["watching"]) for t in listed] == [(0, True)]
    reply = await wes.request(p.WATCH, table=ann.table)
    assert (reply["kind"], reply["table"], reply["watchers"]) == (p.OK, ann.table, 1)
    assert wes.seating is not None and wes.seating["watchers"] == 1
    assert wes.core.watching == ann.table and wes.core.place is None
    assert (await ann.request(p.START))["kind"] == p.OK
    final = await call_every_round(ann)
    end = await follow_to_the_end(wes, lambda v: v.phase is Phase.OVER)
    assert isinstance(end, SeatView)
    # The whole match, as the table saw it: every round's reveal, the same scores and winners as the seat's.
    assert (end.seat, end.team, end.partner, end.hand, end.sign) == (NO_SEAT, NO_SEAT, NO_SEAT, (), None)
    assert (end.scores, end.winners) == (final.scores, final.winners)
    assert end.summary == final.summary and end.summary is not None
    updates = watcher_updates(wes)
    assert updates[0]["snapshot"] and all(not u["snapshot"] for u in updates[1:])
    assert [u["seq"] for u in updates] == list(range(updates[0]["seq"], updates[0]["seq"] + len(updates)))
    kinds = [ev["kind"] for u in updates for ev in u["events"]]
    assert "round_ended" in kinds and "match_over" in kinds and "dealt" in kinds
    assert not PRIVATE_EVENTS & set(kinds)
    assert all("own" not in u for u in updates)
    assert wes.core.drift == 0
    # Its state built from events is the server's public view: a snapshot asked now agrees with it.
    assert (await wes.request(p.RESYNC))["kind"] == p.OK
    assert wes.core.drift == 0


async def test_a_watcher_arriving_mid_match_gets_a_public_snapshot_and_then_the_same_frames_as_every_watcher(nursery):
    port = await serve(nursery)
    ann = await quatro_table(port)
    assert (await ann.request(p.START))["kind"] == p.OK
    await ann.wait_view(lambda v: v.phase is Phase.ROUND)
    first, second = await TestClient.connect(port, "wes"), await TestClient.connect(port, "wen")
    assert (await first.request(p.WATCH, table=ann.table))["kind"] == p.OK
    assert (await second.request(p.WATCH, table=ann.table))["watchers"] == 2
    for watcher in (first, second):
        snapshot = watcher_updates(watcher)[0]
        assert snapshot["snapshot"] and snapshot["view"]["seat"] == NO_SEAT and snapshot["view"]["hand"] == []
        assert snapshot["view"]["center"] == list(ann.view.center)
    await call_every_round(ann)
    await follow_to_the_end(first, lambda v: v.phase is Phase.OVER)
    await follow_to_the_end(second, lambda v: v.phase is Phase.OVER)
    # After their snapshots, both were sent the very same frames.
    a, b = watcher_updates(first)[1:], watcher_updates(second)[1:]
    assert a and a == b


async def test_a_watcher_follows_a_whole_quarto_match(nursery, monkeypatch):
    # The bot moves at once rather than at a person's pace (about a second a look): what the watcher sees is the same.
    monkeypatch.setattr(quarto_bots, "THINK_TIME", (0.0, 0.02))
    port = await serve(nursery)
    cy = await TestClient.connect(port, "cy")
    assert (await cy.request(p.CREATE_TABLE, game=q.NAME))["kind"] == p.OK
    assert (await cy.request(p.ADD_BOT, level="normal"))["kind"] == p.OK
    wes = await TestClient.connect(port, "wes")
    assert (await wes.request(p.WATCH, table=cy.table))["kind"] == p.OK
    assert (await cy.request(p.START))["kind"] == p.OK
    last = await cy.play_quarto()
    end = await follow_to_the_end(wes, lambda v: v.phase is q.Phase.OVER)
    assert isinstance(end, q.QuartoView) and end.seat == NO_SEAT
    assert (end.board, end.scores, end.winners, end.moves) == (last.board, last.scores, last.winners, last.moves)
    assert q.legal(end) == []  # a watcher has no move


async def test_leave_returns_a_watcher_to_the_lobby_and_the_count_follows(nursery):
    port = await serve(nursery)
    ann = await quatro_table(port)
    wes = await TestClient.connect(port, "wes")
    assert (await wes.request(p.WATCH, table=ann.table))["kind"] == p.OK
    await ann.drain(0.2)
    assert ann.seating is not None and ann.seating["watchers"] == 1
    refused = await wes.request(p.CHAT, text="psst")
    assert (refused["kind"], refused["reason"]) == (p.REFUSED, p.WATCHING)
    assert (await wes.request(p.START))["reason"] == p.WATCHING
    assert (await wes.request(p.LEAVE))["kind"] == p.OK
    assert wes.core.watching is None
    await ann.drain(WATCH_COUNT_INTERVAL + 0.3)  # a change of the watchers alone is told at most once a second
    assert ann.seating["watchers"] == 0
    # In the lobby again: told of the list, and free to create a table.
    assert (await wes.request(p.LIST_TABLES))["tables"][0]["watchers"] == 0
    assert (await wes.request(p.CREATE_TABLE, players=4))["kind"] == p.OK


async def test_a_password_table_asks_its_watchers_for_the_password(nursery):
    port = await serve(nursery)
    ann = await quatro_table(port, password="s3cret")
    wes = await TestClient.connect(port, "wes")
    missing = await wes.request(p.WATCH, table=ann.table)
    assert (missing["kind"], missing["reason"]) == (p.REFUSED, p.BAD_PASSWORD)
    wrong = await wes.request(p.WATCH, table=ann.table, password="guess")
    assert wrong["reason"] in (p.BAD_PASSWORD, p.RATE_LIMITED)
    assert wes.core.watching is None
    with trio.fail_after(10):
        while True:
            reply = await wes.request(p.WATCH, table=ann.table, password="s3cret")
            if reply["kind"] == p.OK:
                break
            assert reply["reason"] == p.RATE_LIMITED
            await trio.sleep(reply["wait_ms"] / 1000)
    assert wes.core.watching == ann.table


async def test_the_host_closes_the_table_to_watchers_and_they_are_told_why(nursery):
    port = await serve(nursery)
    ann = await quatro_table(port)
    bob = await TestClient.connect(port, "bob")
    wes = await TestClient.connect(port, "wes")
    assert (await wes.request(p.WATCH, table=ann.table))["kind"] == p.OK
    assert (await wes.request(p.WATCHERS, open=False))["reason"] == p.WATCHING  # a watcher is no host
    assert (await ann.request(p.START))["kind"] == p.OK
    await wes.wait_view(lambda v: v.phase is not Phase.LOBBY)
    assert (await ann.request(p.WATCHERS, open=False))["kind"] == p.OK
    with trio.fail_after(5):
        while not any(f["kind"] == p.WATCH_ENDED for f in wes.frames):
            await wes.next_frame()
    ended = [f for f in wes.frames if f["kind"] == p.WATCH_ENDED][0]
    assert (ended["table"], ended["reason"]) == (ann.table, p.CLOSED_TO_WATCHERS)
    assert wes.core.watching is None and wes.core.view is None
    closed = await bob.request(p.WATCH, table=ann.table)
    assert (closed["kind"], closed["reason"]) == (p.REFUSED, p.NOT_WATCHABLE)
    listed = (await bob.request(p.LIST_TABLES))["tables"]
    assert [(t["watchers"], t["watching"]) for t in listed] == [(0, False)]
    # The ended watcher is in the lobby: it is told of the list again.
    assert (await ann.request(p.WATCHERS, open=True))["kind"] == p.OK
    with trio.fail_after(5):
        while not [f for f in wes.frames if f["kind"] == p.LOBBY and f["tables"][0]["watching"]]:
            await wes.next_frame()
    assert (await bob.request(p.WATCH, table=ann.table))["kind"] == p.OK


async def test_a_watcher_takes_a_free_seat_between_matches_but_not_in_one(nursery):
    port = await serve(nursery)
    ann = await TestClient.connect(port, "ann")
    assert (await ann.request(p.CREATE_TABLE, players=4))["kind"] == p.OK
    for _ in range(2):
        assert (await ann.request(p.ADD_BOT))["kind"] == p.OK
    wes = await TestClient.connect(port, "wes")
    assert (await wes.request(p.WATCH, table=ann.table))["kind"] == p.OK
    seated = await wes.request(p.JOIN, table=ann.table)
    assert seated["kind"] == p.OK and seated["seat"] == 3
    assert wes.core.watching is None and wes.core.place is not None
    await ann.drain(0.2)
    assert ann.seating["watchers"] == 0 and ann.seating["seats"][3]["name"] == "wes"
    # A match under way keeps its seats: a watcher of it cannot join.
    assert (await wes.request(p.LEAVE))["kind"] == p.OK
    assert (await ann.request(p.ADD_BOT))["kind"] == p.OK
    assert (await ann.request(p.START))["kind"] == p.OK
    assert (await wes.request(p.WATCH, table=ann.table))["kind"] == p.OK
    assert (await wes.request(p.JOIN, table=ann.table))["reason"] == p.MATCH_STARTED
    assert wes.core.watching == ann.table


async def test_a_closing_table_sends_its_watchers_back_to_the_lobby(nursery):
    port = await serve(nursery)
    ann = await TestClient.connect(port, "ann")
    assert (await ann.request(p.CREATE_TABLE, players=4))["kind"] == p.OK
    wes = await TestClient.connect(port, "wes")
    assert (await wes.request(p.WATCH, table=ann.table))["kind"] == p.OK
    assert (await ann.request(p.LEAVE))["kind"] == p.OK  # the last human leaves a waiting table: it closes
    with trio.fail_after(5):
        while not any(f["kind"] == p.WATCH_ENDED for f in wes.frames):
            await wes.next_frame()
    assert [f["reason"] for f in wes.frames if f["kind"] == p.WATCH_ENDED] == [p.TABLE_CLOSED]
    assert wes.core.watching is None


async def test_a_watcher_counts_in_its_addresss_share_of_connections(nursery):
    port = await serve(nursery, ServerConfig(max_connections_per_address=2))
    ann = await quatro_table(port)
    wes = await TestClient.connect(port, "wes")
    assert (await wes.request(p.WATCH, table=ann.table))["kind"] == p.OK
    third = await TestClient.connect(port, "zed", hello=False)
    frame = await third.next_frame()
    assert frame is not None and frame["code"] == p.TOO_MANY_CONNECTIONS


async def test_watch_ended_is_told_by_the_client_core(nursery):
    port = await serve(nursery)
    ann = await quatro_table(port)
    wes = await TestClient.connect(port, "wes")
    assert (await wes.request(p.WATCH, table=ann.table))["kind"] == p.OK
    stopped: list[WatchStopped] = []
    original = wes._track

    def track(event: Any) -> None:
        if isinstance(event, WatchStopped):
            stopped.append(event)
        original(event)

    wes._track = track  # type: ignore[method-assign]
    assert (await ann.request(p.WATCHERS, open=False))["kind"] == p.OK
    with trio.fail_after(5):
        while not stopped:
            await wes.next_frame()
    assert stopped[0].ended.reason == p.CLOSED_TO_WATCHERS


def test_a_crowd_of_watchers_arriving_at_once_costs_the_table_one_count_a_second():
    """Each watcher gets the ``table`` push as it comes; the seats and the other watchers are told the count at most
    once per ``WATCH_COUNT_INTERVAL``, and the last count is always told."""
    from quatro_shared.wire import request_from_wire
    from quatro_shared.wire import to_wire as wire

    from helpers.lobby_peer import RecordingPeer

    lobby = Lobby(seed=3)
    ann = RecordingPeer("ann")

    def ask(peer: RecordingPeer, now: float, **fields: Any) -> dict[str, Any]:
        return wire(lobby.handle(peer, request_from_wire({"id": 1, **fields}), now))

    assert ask(ann, 0.0, kind=p.CREATE_TABLE, players=4)["kind"] == p.OK
    room = lobby.rooms[1]
    crowd = [RecordingPeer(f"w{i}") for i in range(50)]
    ann.sent.clear()
    for i, watcher in enumerate(crowd):
        assert ask(watcher, 0.5 + i * 0.001, kind=p.WATCH, table=1)["watchers"] == i + 1
    tables = [f for f in ann.sent if f["kind"] == p.TABLE]
    assert [f["watchers"] for f in tables] == [1]  # the first at once; the rest wait for the interval
    assert room.next_wake() == pytest.approx(0.5 + WATCH_COUNT_INTERVAL)
    room.tick(0.5 + WATCH_COUNT_INTERVAL)
    tables = [f for f in ann.sent if f["kind"] == p.TABLE]
    assert [f["watchers"] for f in tables] == [1, 50]
    # The first watcher was told each arrival's count no more often: its own push, then the two counts.
    assert [f["watchers"] for f in crowd[0].sent if f["kind"] == p.TABLE] == [1, 1, 50]
    assert all(sum(f["kind"] == p.TABLE for f in w.sent) <= 2 for w in crowd[1:])


def test_a_watcher_that_does_not_read_is_dropped_as_any_connection_over_its_outbound_bound():
    """A watcher's frames go into its own bounded outbox, as a seat's do: one that is never emptied is closed
    ``slow_reader`` once the table's frames pass the bound, and the table plays on for everyone else."""
    import trio.testing

    from quatro_server.server import Connection

    class NoStream:
        async def aclose(self) -> None:
            return None

    async def main() -> None:
        lobby = Lobby(timing_profiles={"fast": FAST}, seed=4)
        lobby.default_timing = "fast"
        server = Server(lobby)
        ids = iter(range(1, 10_000))

        def ask(conn: Connection, **fields: Any) -> None:
            server._answer(conn, {**fields, "id": next(ids)})

        host = Connection(NoStream(), "host", None)  # type: ignore[arg-type]
        lurker = Connection(NoStream(), "lurker", None, max_outbound_bytes=4096)  # type: ignore[arg-type]
        ask(host, kind="hello", version=p.PROTOCOL_VERSION, name="ann")
        ask(lurker, kind="hello", version=p.PROTOCOL_VERSION, name="wes")
        ask(host, kind="create_table", players=4)
        room = host.room
        assert room is not None
        for _ in range(3):
            ask(host, kind="add_bot")
        ask(lurker, kind="watch", table=room.id)
        assert lurker in room.watchers
        ask(host, kind="start")
        now = 0.0
        while lurker.closed_reason is None and now < 120:
            now += 0.1
            clock.jump(0.1)
            server._tick(room, trio.current_time())
            host.take()
            host.outbox.size = 0  # the host reads everything
        assert lurker.closed_reason == "slow_reader"
        assert host.closed_reason is None and room.table is not None

    clock = trio.testing.MockClock()
    trio.run(main, clock=clock)
