"""A forged directory record cannot harvest secrets (issue 41, protocol 8): real servers sharing a real Redis.

Whoever can write to the directory can make a server answer ``moved`` with the address of a listener of their own.
Here the test is that forger: the table's server dies, and the forger tells the lobby's channel that it holds the
table now. A player who comes back through the other server with its seat secret (``rejoin``, the tests' client),
or who joins with the table's password (``join``, the terminal client's connection), is moved to the forger's
listener: it receives a ``hello`` and a ``prove``, never the secret, never the request; the player gets
``unproven_move``. With honest servers the same moves land as before: the table's server proves the secret, and the
request follows on the same link.
"""

from __future__ import annotations

import asyncio
import secrets
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import msgpack
import pytest
import redis
import trio

from quatro_shared import messages as m
from quatro_shared import protocol as p
from quatro_shared.client import Place
from quatro_shared.framing import FrameDecoder, ProtocolError, encode
from quatro_shared.games.quarto import contract as q

from helpers.directory import TTL, Node
from helpers.netclient import TestClient
from helpers.tui import Player, run, until

pytestmark = pytest.mark.timeout(90)

PASSWORD = "our-table-pw-41"


class Forger:
    """A listener of the forger's on 127.0.0.1, speaking just enough of the protocol to be followed: it answers
    ``hello`` as a server would, and ``prove`` with the best it can (a proof of nothing); it keeps every byte."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.port = int(self.sock.getsockname()[1])
        self.received = bytearray()
        self.frames: list[dict[str, Any]] = []
        self._stop = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _accept(self) -> None:
        self.sock.settimeout(0.1)
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        decoder = FrameDecoder()
        with conn:
            conn.settimeout(0.2)
            while not self._stop.is_set():
                try:
                    data = conn.recv(65536)
                except TimeoutError:
                    continue
                except OSError:
                    return
                if not data:
                    return
                self.received.extend(data)
                try:
                    frames = decoder.feed(data)
                except ProtocolError:
                    return
                for frame in frames:
                    self.frames.append(frame)
                    conn.sendall(encode(self._answer(frame)))

    @staticmethod
    def _answer(frame: dict[str, Any]) -> dict[str, Any]:
        request_id = frame.get("id")
        if frame.get("kind") == p.HELLO:
            welcome = {"version": p.PROTOCOL_VERSION, "server": "quatro", "profiles": ["fast"], "tables": []}
            return {"kind": p.OK, "id": request_id, **welcome, "games": ["quatro", "quarto"]}
        if frame.get("kind") == p.PROVE:
            return {"kind": p.OK, "id": request_id, "proofs": [secrets.token_hex(32)], "salt": "scrypt$16$1$1$00"}
        return {"kind": p.REFUSED, "id": request_id, "reason": "nope", "message": "thank you", "wait_ms": None}

    def close(self) -> None:
        self._stop.set()
        self.sock.close()


@contextmanager
def forging(url: str, forger: Forger, summary: dict[str, Any]) -> Iterator[None]:
    """The forger's record and its word on the lobby's channel, said again and again (as a live server's heartbeat
    is): ``summary``'s table is the forger's, as far as the servers are told."""
    client = redis.Redis.from_url(url)
    stop = threading.Event()
    told = msgpack.packb({"server": forger.address, "set": [summary], "gone": [], "whole": False})
    record = msgpack.packb({"server": forger.address, "summary": summary})

    def keep_telling() -> None:
        while not stop.is_set():
            client.set(f"quatro:table:{summary['table']}", record, px=round(TTL * 1000))
            client.publish("quatro:lobby", told)
            stop.wait(0.05)

    thread = threading.Thread(target=keep_telling, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        client.close()


async def summary_of(port: int, table: int) -> dict[str, Any]:
    """The table's line in a server's lobby, as the wire carries it (what a forger copies)."""
    client = await TestClient.connect(port, "looker")
    with trio.fail_after(10):
        while True:
            listed = await client.request(p.LIST_TABLES)
            found = [t for t in listed["tables"] if t["table"] == table]
            if found:
                await client.stream.aclose()
                return found[0]
            await trio.sleep(0.05)


async def moved_to(port: int, table: int, where: int) -> None:
    """Wait until the server at ``port`` answers a ``watch`` of ``table`` with ``moved`` to port ``where``."""
    probe = await TestClient.connect(port, "probe")
    with trio.fail_after(10):
        for request_id in range(500, 10**6):
            await probe.send({"kind": p.WATCH, "id": request_id, "table": table})
            while (frame := await probe.next_frame()) is not None and frame.get("id") != request_id:
                pass
            assert frame is not None
            if frame["kind"] == p.MOVED and frame["port"] == where:
                break
            await trio.sleep(0.05)
    await probe.stream.aclose()


def started(redis_url: str, tmp_path: Any) -> tuple[Node, Node]:
    one, two = Node(redis_url, tmp_path, "one"), Node(redis_url, tmp_path, "two")
    one.start(), two.start()
    return one, two


async def test_a_forged_record_gets_a_prove_and_never_the_rejoin_or_its_secret(redis_url, tmp_path):
    one, two = started(redis_url, tmp_path)
    forger = Forger()
    try:
        ann = await TestClient.connect(one.port, "ann")
        created = await ann.request(p.CREATE_TABLE, game=q.NAME)
        table, secret = created["table"], created["secret"]
        summary = await summary_of(two.port, table)
        one.kill()  # the table's server dies: its line is the forger's for the taking
        with forging(redis_url, forger, summary):
            await moved_to(two.port, table, forger.port)
            back = await TestClient.connect(two.port, "ann")
            back.core.place = Place(table, created["seat"], secret)
            reply = await back.request(p.REJOIN, table=table, secret=secret)
        assert secret.encode() not in bytes(forger.received), forger.frames  # the harvest of issue 41
        assert not any(secret in str(frame) for frame in forger.frames)
        kinds = [frame["kind"] for frame in forger.frames]
        assert kinds == [p.HELLO, p.PROVE], kinds  # no rejoin at all
        assert reply["kind"] == p.REFUSED and reply["reason"] == p.UNPROVEN_MOVE, reply
        assert "could not prove" in reply["message"] and f":{forger.port}" in reply["message"]
        assert back.moves == [("127.0.0.1", forger.port)]  # it did follow the moved, as far as a prove
        assert back.core.place == Place(table, created["seat"], secret)  # the player still has their seat's secret
    finally:
        forger.close()
        one.kill()
        two.kill()


def test_a_forged_record_never_gets_the_terminal_clients_join_password(redis_url, tmp_path):
    one, two = started(redis_url, tmp_path)
    forger = Forger()

    async def body() -> None:
        ann = await Player(one.port, "ann").start()
        created = await ann.act(p.CREATE_TABLE, game=q.NAME, password=PASSWORD)
        table = created["table"]
        bob = await Player(two.port, "bob").start()
        await until(lambda: any(t.table == table for t in bob.conn.hello.tables) or listed(bob, table), what="table")
        summary = await asyncio.to_thread(trio.run, summary_of, two.port, table)
        await asyncio.to_thread(one.kill)
        with forging(redis_url, forger, summary):
            await asyncio.to_thread(trio.run, moved_to, two.port, table, forger.port)
            reply = await bob.conn.request(m.Join(table, PASSWORD))
        assert PASSWORD.encode() not in bytes(forger.received), forger.frames  # the harvest of issue 41
        assert [frame["kind"] for frame in forger.frames] == [p.HELLO, p.PROVE], forger.frames
        assert isinstance(reply, m.Refused) and reply.reason == p.UNPROVEN_MOVE, reply
        # The connection left the forger for the server it came from, and goes on there.
        assert (bob.conn.host, bob.conn.port) == ("127.0.0.1", two.port) and bob.conn.connected
        listing = await bob.conn.request(m.ListTables())
        assert isinstance(listing, m.Ok)
        await bob.conn.close()

    try:
        run(body, timeout=80)
    finally:
        forger.close()
        one.kill()
        two.kill()


def listed(player: Player, table: int) -> bool:
    from quatro_tui.connection import ServerLobby

    return any(isinstance(x, ServerLobby) and any(t.table == table for t in x.tables) for x in player.messages)


async def test_honest_servers_prove_the_secret_and_a_moved_rejoin_and_password_join_land_as_before(redis_url, tmp_path):
    one, two = started(redis_url, tmp_path)
    try:
        ann = await TestClient.connect(one.port, "ann")
        created = await ann.request(p.CREATE_TABLE, game=q.NAME, password=PASSWORD)
        table = created["table"]
        await summary_of(two.port, table)  # the table is in the other server's lobby
        # A password join through the other server: moved, proved by the table's server, seated there.
        bob = await TestClient.connect(two.port, "bob")
        joined = await bob.request(p.JOIN, table=table, password=PASSWORD)
        assert joined["kind"] == p.OK and joined["seat"] == 1, joined
        assert bob.moves == [("127.0.0.1", one.port)]
        sent = [frame for frame in bob.frames if frame.get("kind") == p.OK and "proofs" in frame]
        assert len(sent) == 1 and sent[0]["salt"].startswith("scrypt$")
        # Ann comes back through the other server with her seat's secret (taking her seat over from her old link).
        back = await TestClient.connect(two.port, "ann")
        back.core.place = Place(table, created["seat"], created["secret"])
        rejoined = await back.request(p.REJOIN, table=table, secret=created["secret"], takeover=True)
        assert rejoined["kind"] == p.OK and rejoined["seat"] == created["seat"], rejoined
        assert back.moves == [("127.0.0.1", one.port)]
        # A join with no password needs no proof: a guest at a table without one.
        other = await TestClient.connect(one.port, "cy")
        open_table = (await other.request(p.CREATE_TABLE, game=q.NAME))["table"]
        await summary_of(two.port, open_table)
        dee = await TestClient.connect(two.port, "dee")
        assert (await dee.request(p.JOIN, table=open_table))["kind"] == p.OK
        assert not [frame for frame in dee.frames if "proofs" in frame]
    finally:
        one.kill()
        two.kill()
