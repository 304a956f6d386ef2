"""The clients across many servers: the terminal client's connection and the network bot follow ``moved`` through
the one client core and see nothing but the table; when the table's server dies the connection says it cannot reach
it, and the server's restart brings the seat back."""

from __future__ import annotations

import asyncio

import pytest
import trio

from quatro_shared import messages as m
from quatro_shared import protocol as p
from quatro_shared.client import MAX_MOVES, ClientCore
from quatro_shared.games.quarto import contract as q

from helpers.directory import TTL, Node
from helpers.tui import Player, run, until
from quatro_server.bots.netbot import run_bot
from quatro_tui.connection import LinkBack, LinkDropped, ServerLobby, ServerUpdate

pytestmark = pytest.mark.timeout(90)


def test_the_terminal_clients_join_is_moved_unseen_and_a_dead_servers_seat_comes_back_with_its_restart(
    redis_url, tmp_path
):
    one, two = Node(redis_url, tmp_path, "one"), Node(redis_url, tmp_path, "two")
    one.start(), two.start()

    async def body() -> None:
        ann = await Player(one.port, "ann").start()
        created = await ann.act("create_table", game=q.NAME)
        bob = await Player(two.port, "bob").start()
        await until(
            lambda: (
                any(
                    isinstance(x, ServerLobby) and any(t.table == created["table"] for t in x.tables)
                    for x in bob.messages
                )
                or any(t.table == created["table"] for t in bob.conn.hello.tables)
            ),
            what="the table in bob's lobby",
        )
        reply = await bob.conn.request(m.Join(created["table"]))
        assert isinstance(reply, m.Ok) and isinstance(reply.payload, m.Seated) and reply.payload.seat == 1, reply
        assert (bob.conn.host, bob.conn.port) == ("127.0.0.1", one.port)  # the table's server is bob's now
        assert not [x for x in bob.messages if isinstance(x, (LinkDropped, LinkBack))]  # nothing but the table
        await ann.act("start")
        await until(lambda: any(isinstance(x, ServerUpdate) for x in bob.messages), what="bob's first update")

        await asyncio.sleep(0.3)  # the journal has the match's start (it commits within milliseconds)
        # The table's server dies: bob's connection says it cannot reach it, and keeps trying.
        before = len(bob.messages)
        await asyncio.to_thread(one.kill)
        dropped = await until(
            lambda: [x for x in bob.messages[before:] if isinstance(x, LinkDropped) and x.attempt >= 2],
            timeout=15,
            what="bob told the server is gone",
        )
        assert f"127.0.0.1:{one.port}" in dropped[-1].why, dropped[-1].why
        # Its restart brings the table back from its journal, and bob's seat with it.
        await asyncio.to_thread(one.start)
        assert "1 table restored" in one.out
        assert "(quatro-server admin --data " in one.out and "admin --socket" not in one.out, (
            one.out
        )  # as the README says
        await until(
            lambda: any(isinstance(x, LinkBack) for x in bob.messages[before:]), timeout=15, what="bob back in his seat"
        )
        assert bob.conn.seat is not None and bob.conn.seat.table == created["table"]
        await ann.close()
        await bob.close()

    try:
        run(body, timeout=80)
    finally:
        one.kill()
        two.kill()


async def test_a_network_bot_is_moved_to_the_tables_server_and_plays_its_match(redis_url, tmp_path):
    one, two = Node(redis_url, tmp_path, "one"), Node(redis_url, tmp_path, "two")
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(trio.to_thread.run_sync, one.start)
            nursery.start_soon(trio.to_thread.run_sync, two.start)
        async with trio.open_nursery() as nursery:
            first = await nursery.start(
                lambda task_status: run_bot(
                    "127.0.0.1", one.port, "random", game=q.NAME, name="creator", rounds=1, task_status=task_status
                )
            )
            await trio.sleep(TTL / 2)  # the table reaches the other server's lobby
            second = await run_bot(
                "127.0.0.1", two.port, "random", game=q.NAME, table=first.table, name="mover", rounds=1
            )
        assert second.table == first.table and second.seat == 1
        assert second.rounds == 1 and second.reason == "left", second  # it played its game there, then left
    finally:
        one.kill()
        two.kill()


def test_the_core_keeps_a_moved_request_to_repeat_and_gives_up_after_max_moves():
    from quatro_shared.framing import encode

    core = ClientCore("ann")
    core.receive_data(
        encode(
            {
                "kind": "ok",
                "id": core.hello(0.0)[0],
                "version": p.PROTOCOL_VERSION,
                "server": "quatro",
                "profiles": ["fast"],
                "tables": [],
                "games": ["quatro"],
            }
        ),
        0.0,
    )
    request_id, _ = core.send(m.Join(7), 0.0)
    for hop in range(MAX_MOVES):
        [event] = core.receive_data(
            encode({"kind": "moved", "id": request_id, "table": 7, "host": "", "port": 7001 + hop}), 0.0
        )
        assert isinstance(event.reply, m.MovedTo)
        assert core.redirect is not None and core.redirect.address("10.0.0.2") == ("10.0.0.2", 7001 + hop)
        request_id, data = core.repeat(0.0)
        assert core.redirect is None and b"join" in data  # the same request, asked again
    [event] = core.receive_data(encode({"kind": "moved", "id": request_id, "table": 7, "host": "h", "port": 1}), 0.0)
    assert isinstance(event.reply, m.Refused) and event.reply.reason == "no_such_table"
    assert core.redirect is None
