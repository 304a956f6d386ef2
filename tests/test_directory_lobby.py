"""The lobby with a directory, in one process against a real redis-server: the lobby's own tables and the others'
in one list, global ids, ``moved`` for a table held elsewhere, and a clear refusal when the directory is down."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import trio

from quatro_shared import protocol as p
from quatro_shared.wire import request_from_wire, to_wire

from helpers.lobby_peer import RecordingPeer as LobbyPeer
from quatro_server.directory import DirectoryError
from quatro_server.directory.redis_directory import RedisDirectory
from quatro_server.tables.lobby import Lobby


def ask(lobby: Lobby, peer: LobbyPeer, kind: str, **fields: object) -> dict:
    request = request_from_wire({"kind": kind, "id": 1, **fields})
    return to_wire(lobby.handle(peer, request, trio.current_time(), greeted=kind != p.HELLO))


def lobby_on(url: str, address: str, ttl: float = 1.0) -> tuple[Lobby, RedisDirectory]:
    lobby = Lobby()
    directory = RedisDirectory(url, ttl=ttl, local=lobby.local_listing, on_others_changed=lobby.push_listing)
    directory.address = address
    lobby.directory = directory
    return lobby, directory


async def test_two_lobbies_list_each_others_tables_and_move_a_join_to_the_table_s_server(redis_url):
    one, d1 = lobby_on(redis_url, "10.0.0.1:7001")
    two, d2 = lobby_on(redis_url, "10.0.0.2:7002")
    async with trio.open_nursery() as nursery:
        for lobby, directory in ((one, d1), (two, d2)):
            await directory.connect(lobby.highest_id())
            await nursery.start(directory.run)
        ann, bob = LobbyPeer("ann"), LobbyPeer("bob")
        for lobby, peer in ((one, ann), (two, bob)):
            assert ask(lobby, peer, p.HELLO, version=p.PROTOCOL_VERSION, name=peer.name)["kind"] == p.OK
        created = ask(one, ann, p.CREATE_TABLE, game="quarto")
        with trio.fail_after(3):
            while created["table"] not in [t.table for t in two.listing()]:
                await trio.sleep(0.01)
        assert any(
            isinstance(sent, dict)
            and sent.get("kind") == p.LOBBY
            and created["table"] in [t["table"] for t in sent["tables"]]
            for sent in bob.sent
        )  # pushed
        for kind in (p.JOIN, p.WATCH):
            assert ask(two, bob, kind, table=created["table"]) == {
                "kind": p.MOVED,
                "id": 1,
                "table": created["table"],
                "host": "10.0.0.1",
                "port": 7001,
            }
        assert ask(two, bob, p.REJOIN, table=created["table"], secret="x")["kind"] == p.MOVED
        assert ask(two, bob, p.JOIN, table=created["table"] + 1000)["reason"] == p.NO_SUCH_TABLE  # no one has it
        other = ask(two, bob, p.CREATE_TABLE, game="quarto")
        assert other["table"] != created["table"]  # one counter for every server
        nursery.cancel_scope.cancel()


async def test_a_table_cannot_be_created_while_the_directory_does_not_answer_and_the_refusal_says_so():
    lobby, directory = lobby_on("redis://127.0.0.1:1/0", "10.0.0.1:7001")  # nobody serves Redis there
    ann = LobbyPeer("ann")
    ask(lobby, ann, p.HELLO, version=p.PROTOCOL_VERSION, name="ann")
    refused = ask(lobby, ann, p.CREATE_TABLE, game="quarto")
    assert refused["kind"] == p.REFUSED and refused["reason"] == p.SERVER_FULL, refused
    assert "directory" in refused["message"]
    again = ask(lobby, ann, p.CREATE_TABLE, game="quarto")  # at once, without waiting on Redis again
    assert again["reason"] == p.SERVER_FULL
    assert not lobby.rooms


async def test_a_server_stopped_cleanly_leaves_the_other_lobbies_at_once_not_after_the_ttl(redis_url):
    one, d1 = lobby_on(redis_url, "10.0.0.1:7001")
    two, d2 = lobby_on(redis_url, "10.0.0.2:7002")
    d1.ttl = d2.ttl = 30.0  # the sweep would take half a minute: the stop itself must tell
    async with trio.open_nursery() as nursery:
        await d2.connect()
        await nursery.start(d2.run)
        async with trio.open_nursery() as first:
            await d1.connect()
            await first.start(d1.run)
            ann = LobbyPeer("ann")
            ask(one, ann, p.HELLO, version=p.PROTOCOL_VERSION, name="ann")
            created = ask(one, ann, p.CREATE_TABLE, game="quarto")
            with trio.fail_after(3):
                while created["table"] not in [t.table for t in two.listing()]:
                    await trio.sleep(0.01)
            first.cancel_scope.cancel()  # the server stops (SIGTERM cancels its nursery the same way)
        with trio.fail_after(2):
            while created["table"] in [t.table for t in two.listing()]:
                await trio.sleep(0.01)
        nursery.cancel_scope.cancel()


@asynccontextmanager
async def unix_redis(folder: Path) -> AsyncIterator[tuple[subprocess.Popen[bytes], Path]]:
    """A redis-server of this test's own on a Unix socket in ``folder``, nothing saved: its process and socket."""
    binary = shutil.which("redis-server")
    assert binary is not None, "redis-server is needed (.ci/run installs it)"
    path = folder / "redis.sock"
    proc = subprocess.Popen(
        [binary, "--port", "0", "--unixsocket", str(path), "--save", "", "--appendonly", "no", "--dir", str(folder)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        with trio.fail_after(10):
            while not path.exists():
                await trio.sleep(0.02)
        yield proc, path
    finally:
        os.kill(proc.pid, signal.SIGCONT)  # a test may have stopped it
        proc.terminate()
        proc.wait(5)


async def test_the_directory_reaches_redis_over_a_unix_socket(tmp_path):
    """``unix:///PATH?db=N``: a Redis of the same machine (the one ``--workers`` starts for its workers)."""
    async with unix_redis(tmp_path) as (_, path):
        lobby, directory = lobby_on(f"unix://{path}?db=2", "10.0.0.1:7001")
        await directory.connect(41)  # a journal whose highest id was 41
        assert directory.new_id() == 42
        assert int(directory.redis.get("quatro:ids") or 0) >= 42


async def test_a_join_of_a_table_created_elsewhere_a_moment_ago_is_moved_not_refused(redis_url, nursery):
    """The other server's message may not have come yet: a table this server was not told of is looked up in the
    directory before a join, a rejoin or a watch of it is refused."""
    from helpers.netclient import TestClient
    from quatro_server.server import Server

    one, d1 = lobby_on(redis_url, "10.0.0.1:7001")
    await d1.connect()
    await nursery.start(d1.run)
    ann = LobbyPeer("ann")
    ask(one, ann, p.HELLO, version=p.PROTOCOL_VERSION, name="ann")
    table = ask(one, ann, p.CREATE_TABLE, game="quarto")["table"]
    with trio.fail_after(3):
        while not d1.redis.exists(f"quatro:table:{table}"):
            await trio.sleep(0.01)
    two, d2 = lobby_on(redis_url, "127.0.0.1:7002")
    await d2.connect()  # connected, but listening to no message: it was told of no table
    server = Server(two)
    port = (await nursery.start(server.serve, "127.0.0.1", 0))[0].socket.getsockname()[1]
    bob = await TestClient.connect(port, "bob")
    for request_id, kind in enumerate((p.JOIN, p.WATCH, p.REJOIN), start=100):
        fields = {"secret": "s"} if kind == p.REJOIN else {}
        await bob.send({"kind": kind, "id": request_id, "table": table, **fields})
        with trio.fail_after(3):
            while (frame := await bob.next_frame()) is not None and frame.get("id") != request_id:
                pass
        assert frame == {"kind": p.MOVED, "id": request_id, "table": table, "host": "10.0.0.1", "port": 7001}, frame
    await bob.send({"kind": p.JOIN, "id": 200, "table": table + 1000})
    with trio.fail_after(3):
        while (frame := await bob.next_frame()) is not None and frame.get("id") != 200:
            pass
    assert frame["kind"] == p.REFUSED and frame["reason"] == p.NO_SUCH_TABLE  # nobody holds that one
    nursery.cancel_scope.cancel()


async def test_a_server_whose_redis_hangs_still_stops_at_once(tmp_path):
    from quatro_server.directory.redis_directory import LEAVE_WAIT

    async with unix_redis(tmp_path) as (proc, path):
        lobby, directory = lobby_on(f"unix://{path}?db=0", "10.0.0.1:7001", ttl=15.0)  # Redis's own timeout: 15 s
        async with trio.open_nursery() as nursery:
            await directory.connect()
            await nursery.start(directory.run)
            ann = LobbyPeer("ann")
            ask(lobby, ann, p.HELLO, version=p.PROTOCOL_VERSION, name="ann")
            ask(lobby, ann, p.CREATE_TABLE, game="quarto")
            await trio.sleep(0.1)
            proc.send_signal(signal.SIGSTOP)  # Redis hangs: it takes connections and never answers
            stopping = trio.current_time()
            nursery.cancel_scope.cancel()
        assert trio.current_time() - stopping < LEAVE_WAIT + 1.0


async def test_a_join_that_comes_before_the_tables_record_is_written_waits_for_it_and_is_moved(redis_url, nursery):
    """A server writes its tables' records a moment after they change, off its loop; a player told the table's id
    at once (a friend, a script) may ask another server before the record is there. That server reads the directory
    again while the id is one that was given out, and moves the join; an id never given out is refused at once."""
    from helpers.netclient import TestClient
    from quatro_server.server import Server

    one, d1 = lobby_on(redis_url, "10.0.0.1:7001")
    await d1.connect()  # not running yet: it writes no record until it does
    ann = LobbyPeer("ann")
    ask(one, ann, p.HELLO, version=p.PROTOCOL_VERSION, name="ann")
    table = ask(one, ann, p.CREATE_TABLE, game="quarto")["table"]
    assert not d1.redis.exists(f"quatro:table:{table}")
    two, d2 = lobby_on(redis_url, "127.0.0.1:7002")
    await d2.connect()
    server = Server(two)
    port = (await nursery.start(server.serve, "127.0.0.1", 0))[0].socket.getsockname()[1]
    bob = await TestClient.connect(port, "bob")
    await bob.send({"kind": p.JOIN, "id": 100, "table": table})
    await trio.sleep(0.2)
    await nursery.start(d1.run)  # the record is written now, after the join came
    with trio.fail_after(3):
        while (frame := await bob.next_frame()) is not None and frame.get("id") != 100:
            pass
    assert frame == {"kind": p.MOVED, "id": 100, "table": table, "host": "10.0.0.1", "port": 7001}, frame
    started = trio.current_time()
    await bob.send({"kind": p.JOIN, "id": 200, "table": table + 1000})
    with trio.fail_after(3):
        while (frame := await bob.next_frame()) is not None and frame.get("id") != 200:
            pass
    assert frame["kind"] == p.REFUSED and frame["reason"] == p.NO_SUCH_TABLE
    assert trio.current_time() - started < 0.5  # never given out: no waiting
    nursery.cancel_scope.cancel()


async def test_servers_started_together_give_the_first_tables_low_ids_not_a_block_apart(redis_url):
    """A fresh ``--workers 2`` server's first table was "Table 17": each worker took 16 ids at its start. The first
    block is one id and the blocks grow from there, so the first tables of servers started together are 1, 2, 3…,
    and every id stays unique however many are taken."""
    one, d1 = lobby_on(redis_url, "10.0.0.1:7001")
    two, d2 = lobby_on(redis_url, "10.0.0.2:7002")
    await d1.connect()
    await d2.connect()
    firsts = {d1.new_id(), d2.new_id()}
    assert firsts == {1, 2}
    given = set(firsts)
    async with trio.open_nursery() as nursery:
        d1._nursery = d2._nursery = nursery  # where their refills run (``run`` sets it)
        for _ in range(60):
            for directory in (d1, d2):
                with trio.fail_after(5):
                    while True:
                        try:
                            table = directory.new_id()
                            break
                        except DirectoryError:  # a burst faster than the refills: a moment later
                            await trio.sleep(0.001)
                assert table not in given
                given.add(table)
            await trio.sleep(0)
        nursery.cancel_scope.cancel()
    assert max(given) < 200, "the blocks stop growing at ID_BLOCK"


async def test_a_stalled_redis_never_holds_the_loop_a_create_is_refused_at_once_and_play_goes_on(tmp_path):
    """Redis stopped (SIGSTOP) with the ids at hand used up: ``create_table`` once asked Redis on the event loop and
    froze the whole server for its 15 s socket timeout. Now it is refused at once ("try again in a moment"), one log
    line for the spell, the loop never waits; once Redis answers again the ids come back and tables are made."""
    async with unix_redis(tmp_path) as (proc, path):
        lobby, directory = lobby_on(f"unix://{path}?db=3", "10.0.0.1:7001", ttl=6.0)
        ann = LobbyPeer("ann")
        ask(lobby, ann, p.HELLO, version=p.PROTOCOL_VERSION, name="ann")
        async with trio.open_nursery() as nursery:
            await directory.connect()
            await nursery.start(directory.run)
            with trio.fail_after(5):
                while len(directory._ids) < 2:  # the refill that follows the join
                    await trio.sleep(0.01)
            os.kill(proc.pid, signal.SIGSTOP)
            made, refused, slowest = 0, None, 0.0
            for _ in range(40):  # more tables than the ids at hand
                started = time.perf_counter()
                reply = ask(lobby, LobbyPeer(f"p{made}"), p.CREATE_TABLE, game="quarto")
                slowest = max(slowest, time.perf_counter() - started)
                if reply["kind"] == p.OK:
                    made += 1
                else:
                    refused = reply
                await trio.sleep(0.01)
            assert made >= 1 and refused is not None and "try again in a moment" in refused["message"], refused
            assert slowest < 0.05, slowest  # never a round trip to the stopped Redis on the loop
            os.kill(proc.pid, signal.SIGCONT)
            with trio.fail_after(20):  # the refill's thread gets its answer, or the next one does
                while ask(lobby, LobbyPeer("late"), p.CREATE_TABLE, game="quarto")["kind"] != p.OK:
                    await trio.sleep(0.1)
            nursery.cancel_scope.cancel()


async def test_a_redis_restarted_empty_never_gives_an_id_again_that_a_live_server_holds(redis_url):
    """Redis restarted with nothing saved (as the private one is) once made a server hand out table 1 again while its
    own table 1 played on, and two servers reuse ids 1 to 11 (the journal then lost writes to its UNIQUE ids). Each
    server knows its own highest id and raises the counter past it at every block it takes and every heartbeat."""
    import redis as redis_module

    one, d1 = lobby_on(redis_url, "10.0.0.1:7001", ttl=0.6)
    two, d2 = lobby_on(redis_url, "10.0.0.2:7002", ttl=0.6)
    ann = LobbyPeer("ann")
    ask(one, ann, p.HELLO, version=p.PROTOCOL_VERSION, name="ann")
    async with trio.open_nursery() as nursery:
        await d1.connect(one.highest_id())
        await nursery.start(d1.run)

        async def create(lobby: Lobby, name: str) -> int:
            peer = LobbyPeer(name)
            ask(lobby, peer, p.HELLO, version=p.PROTOCOL_VERSION, name=name)
            with trio.fail_after(5):
                while (reply := ask(lobby, peer, p.CREATE_TABLE, game="quarto"))["kind"] != p.OK:
                    await trio.sleep(0.01)
            return int(reply["table"])

        held = [await create(one, f"a{i}") for i in range(3)]
        client = redis_module.Redis.from_url(redis_url)
        client.flushall()  # the restart, with nothing saved
        client.close()
        assert all(table > max(held) for table in [await create(one, f"b{i}") for i in range(12)])  # past its pool
        held = list(one.rooms)
        await trio.sleep(0.5)  # a heartbeat of the live server
        await d2.connect(two.highest_id())  # a server that never held a table starts on the empty Redis
        await nursery.start(d2.run)
        assert await create(two, "cid") > max(held)
        nursery.cancel_scope.cancel()
