"""The client's connection against a real server process (patient timing, ``tui_helpers``): hello, replies by id, pushes as messages, reconnection."""

from __future__ import annotations

import asyncio

import pytest

from shared import protocol as p
from shared.events import HandDealt
from shared.views import Phase

from quatro_tui.connection import (
    Connection,
    ConnectionLost,
    LinkBack,
    LinkDropped,
    SeatLost,
    ServerSeating,
    ServerUpdate,
)
from tui_helpers import Player, quatro_server, run, until  # noqa: F401 - quatro_server is a fixture

pytestmark = pytest.mark.timeout(60)


def test_hello_then_requests_are_answered_by_id_and_pushes_arrive_as_messages(quatro_server):
    async def body():
        got = []
        conn = Connection("127.0.0.1", quatro_server, "ann", got.append)
        hello = await conn.open()
        assert hello["kind"] == p.OK and hello["version"] == p.PROTOCOL_VERSION
        reader = asyncio.create_task(conn.run())
        # Two requests in flight at once: each reply finds its own future.
        created, listing = await asyncio.gather(conn.request(p.CREATE_TABLE, players=4), conn.request(p.PING))
        assert created["kind"] == p.OK and listing["kind"] == p.OK
        assert conn.seat is not None and conn.seat.seat == 0 and conn.seat.secret == created["secret"]
        seating = await until(lambda: [m for m in got if isinstance(m, ServerSeating)], what="a seating push")
        assert seating[-1].seating["seats"][0]["name"] == "ann"
        refused = await conn.request(p.START)
        assert refused["kind"] == p.REFUSED and refused["reason"] == p.SEATS_EMPTY
        await conn.close()
        with pytest.raises(ConnectionLost):
            await conn.request(p.PING)
        reader.cancel()

    run(body)


def test_updates_carry_rebuilt_events_and_views(quatro_server):
    async def body():
        ann = await Player(quatro_server, "ann").start()
        await ann.act(p.CREATE_TABLE, players=4)
        for _ in range(3):
            await ann.act(p.ADD_BOT, level="random")
        await ann.act(p.START)
        await ann.wait_phase(Phase.SIGNING)
        await ann.act("ready")  # the round opens when everyone is: no waiting for the sign window to close
        view = await ann.wait_view(lambda v: v.phase is Phase.ROUND and len(v.hand) == 4, "the round")
        assert view.seat == 0 and len(view.center) == 4
        assert any(isinstance(e, HandDealt) for e in ann.events)
        updates = [m for m in ann.messages if isinstance(m, ServerUpdate)]
        assert all(u.received_at > 0 for u in updates)
        await ann.close()

    run(body)


def test_r19_a_dropped_link_reconnects_with_the_secret_and_gets_the_seat_back(quatro_server):
    async def body():
        ann = await Player(quatro_server, "ann").start()
        bob = await Player(quatro_server, "bob").start()
        created = await ann.act(p.CREATE_TABLE, players=4)
        await bob.act(p.JOIN, table=created["table"])
        for _ in range(2):
            await ann.act(p.ADD_BOT, level="normal")
        await ann.act(p.START)
        for player in (ann, bob):
            await player.wait_phase(Phase.SIGNING)
            await player.act("ready")
        hand = (await bob.wait_view(lambda v: v.phase is Phase.ROUND and len(v.hand) == 4)).hand
        before = len(bob.messages)
        bob.conn.abort()  # as a network failure would
        await until(lambda: any(isinstance(m, LinkDropped) for m in bob.messages[before:]), what="the drop")
        await ann.wait_view(lambda v: not v.seats[1].connected or v.phase is not Phase.ROUND)
        await until(lambda: any(isinstance(m, LinkBack) for m in bob.messages[before:]), what="the reconnection")
        snapshot = await until(
            lambda: [m for m in bob.messages[before:] if isinstance(m, ServerUpdate) and m.snapshot], what="a snapshot"
        )
        assert snapshot[0].view.seat == 1
        if snapshot[0].view.phase is Phase.ROUND and snapshot[0].view.round == 1:
            assert snapshot[0].view.hand  # the same seat, with its cards (R19)
        assert hand  # the round had dealt before the drop
        await ann.wait_view(lambda v: v.seats[1].connected)
        assert (await bob.request(p.PING))["kind"] == p.OK
        await ann.close()
        await bob.close()

    run(body)


def test_a_seat_taken_over_elsewhere_is_not_fought_for(quatro_server):
    async def body():
        ann = await Player(quatro_server, "ann").start()
        await ann.act(p.CREATE_TABLE, players=4)
        twin = await Player(quatro_server, "ann").start()
        await twin.act(p.REJOIN, table=ann.conn.seat.table, secret=ann.conn.seat.secret)
        await until(lambda: ann._task.done(), what="the replaced connection to stop")
        assert not any(isinstance(m, LinkDropped) for m in ann.messages)
        await ann.close()
        await twin.close()

    run(body)


def test_an_unrecoverable_seat_stops_the_retries(quatro_server):
    async def body():
        ann = await Player(quatro_server, "ann").start()
        await ann.act(p.CREATE_TABLE, players=4)
        ann.conn.seat.secret = "not-the-secret"  # as if the server had forgotten the table
        ann.conn.abort()
        lost = await until(lambda: [m for m in ann.messages if isinstance(m, SeatLost)], what="the seat to be lost")
        assert "secret" in lost[0].why
        await ann.close()

    run(body)


def test_an_unreachable_server_is_an_error_not_a_hang():
    async def body():
        conn = Connection("127.0.0.1", 1, "ann", lambda m: None)
        with pytest.raises(OSError):
            await conn.open()

    run(body)


def test_an_event_of_a_newer_server_is_skipped_not_the_update():
    from shared.wire import to_wire
    from snapshot_games import round_game

    got = []
    conn = Connection("127.0.0.1", 1, "ann", got.append)
    view = round_game(4).view
    frame = {"kind": "update", "table": 1, "seq": 3, "snapshot": False, "view": to_wire(view),
             "events": [{"kind": "meteor_strike", "seat": 2}, {"kind": "channel_taken", "seat": 1}]}

    async def body():
        conn._dispatch(frame)

    run(body)
    (update,) = got
    assert isinstance(update, ServerUpdate) and update.view == view
    assert [e.kind for e in update.events] == ["channel_taken"]
