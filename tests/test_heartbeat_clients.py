"""Every client of the project keeps its heartbeat: a network bot waiting for players, and the terminal client's
connection sitting in the lobby, both send ``ping`` when they have sent nothing for HEARTBEAT_INTERVAL, so the
server never takes them for gone. The interval and the server's timeout are shortened for the test."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import trio

from quatro_shared import protocol as p
from quatro_shared.framing import FrameDecoder, encode

from helpers.netclient import TestClient
from quatro_server.bots.netbot import run_bot


async def test_a_network_bot_waiting_for_players_keeps_its_seat_alive(server, monkeypatch):
    monkeypatch.setattr(p, "HEARTBEAT_INTERVAL", 0.1)
    server.config = replace(server.config, heartbeat_timeout=0.5)
    async with trio.open_nursery() as nursery:
        result = await nursery.start(
            lambda task_status: run_bot("127.0.0.1", server.port, "random", players=4, task_status=task_status)
        )
        room = server.lobby.rooms[result.table]
        first = room.seats[result.seat].peer
        await trio.sleep(2.0)  # it waits for seats to fill, sending nothing but its heartbeat
        # The same connection still holds the seat: it was never closed as silent (and came back).
        assert room.seats[result.seat].peer is first and first.closed_reason is None, (
            "the waiting bot was taken for gone"
        )
        watcher = await TestClient.connect(server.port, "watcher")
        assert (await watcher.request(p.LIST_TABLES))["tables"][0]["taken"] == 1
        nursery.cancel_scope.cancel()


def test_the_terminal_clients_connection_pings_when_it_has_sent_nothing(monkeypatch):
    """Against a stub server that answers hello and records every request: pings come while the client is idle."""
    from quatro_tui.connection import Connection

    monkeypatch.setattr(p, "HEARTBEAT_INTERVAL", 0.1)
    received: list[dict] = []

    async def body() -> None:
        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            decoder = FrameDecoder()
            while data := await reader.read(65536):
                for frame in decoder.feed(data):
                    received.append(frame)
                    if frame["kind"] == p.HELLO:
                        writer.write(
                            encode(
                                {
                                    "kind": p.OK,
                                    "id": frame["id"],
                                    "version": p.PROTOCOL_VERSION,
                                    "server": "quatro",
                                    "profiles": [],
                                    "tables": [],
                                }
                            )
                        )

        stub = await asyncio.start_server(serve, "127.0.0.1", 0)
        port = stub.sockets[0].getsockname()[1]
        conn = Connection("127.0.0.1", port, "ann", lambda message: None)
        await conn.open()
        reader = asyncio.create_task(conn.run())
        await asyncio.sleep(0.75)
        await conn.close()
        reader.cancel()
        stub.close()

    asyncio.run(asyncio.wait_for(body(), 10))
    pings = [f for f in received if f["kind"] == p.PING]
    assert received[0]["kind"] == p.HELLO and 3 <= len(pings) <= 10, received
