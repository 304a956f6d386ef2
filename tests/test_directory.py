"""Many servers, one lobby: real server processes on loopback sharing a table directory on a real redis-server.

A table created on one server is pushed to every server's lobby; a join, a rejoin and a watch through another server
are answered ``moved`` and followed by the client core; a server killed with SIGKILL leaves every lobby within the
directory's time to live, and its restart brings its tables back from its journal under the same ids.
"""

from __future__ import annotations

import pytest
import trio

from quatro_shared import protocol as p
from quatro_shared.games.quarto import contract as q

from helpers.directory import TTL, Node
from helpers.netclient import TestClient


@pytest.fixture
async def nodes(redis_url, tmp_path):
    """Servers sharing the directory (``await nodes(3)``: three, started at once); every one is killed at the end."""
    started: list[Node] = []

    async def start(count: int) -> list[Node]:
        started.extend(Node(redis_url, tmp_path, f"server{i + 1}") for i in range(count))
        async with trio.open_nursery() as nursery:  # at once: a server takes a second or two to start
            for node in started:
                nursery.start_soon(trio.to_thread.run_sync, node.start)
        return started

    yield start
    for node in started:
        node.kill()


def tables(frame: dict) -> dict[int, dict]:
    return {t["table"]: t for t in frame["tables"]}


async def lobby_until(client: TestClient, predicate, timeout: float) -> dict[int, dict]:
    """Read ``lobby`` pushes (never asking for the list) until one satisfies ``predicate``; its tables."""
    with trio.fail_after(timeout):
        while True:
            frame = await client.next_frame(timeout)
            assert frame is not None, "the server closed the connection"
            if frame["kind"] == p.LOBBY and predicate(tables(frame)):
                return tables(frame)


async def listed(client: TestClient, table: int, timeout: float = 3) -> None:
    """Wait until ``client``'s lobby lists ``table``: in the welcome it was sent, or a push since."""
    welcome = client.core.welcome
    if welcome is not None and any(t.table == table for t in welcome.tables) and not client.pending:
        return
    await lobby_until(client, lambda ts: table in ts, timeout)


async def test_a_table_created_on_one_server_is_pushed_to_the_lobbies_of_the_others(nodes):
    one, two, three = await nodes(3)
    ann = await TestClient.connect(one.port, "ann")
    bob = await TestClient.connect(two.port, "bob")
    cy = await TestClient.connect(three.port, "cy")
    created = await ann.request(p.CREATE_TABLE, game=q.NAME)
    table = created["table"]
    for watcher in (bob, cy):
        listed = await lobby_until(watcher, lambda ts: table in ts, timeout=3)
        assert listed[table]["names"] == ["ann", ""] and listed[table]["game"] == q.NAME
    # Its changes too: a seat taken on its own server shows on the others'.
    await ann.request(p.ADD_BOT, level="random")
    await lobby_until(cy, lambda ts: ts.get(table, {}).get("taken") == 2, timeout=3)
    # Ids are the directory's: a table created on another server never takes one given already.
    other = await cy.request(p.CREATE_TABLE, game=q.NAME)
    assert other["table"] != table
    await lobby_until(bob, lambda ts: {table, other["table"]} <= set(ts), timeout=3)
    assert {table, other["table"]} <= set(tables(await bob.request(p.LIST_TABLES)))


async def test_a_join_through_another_server_is_moved_and_plays_the_match(nodes):
    one, two = await nodes(2)
    ann = await TestClient.connect(one.port, "ann")
    created = await ann.request(p.CREATE_TABLE, game=q.NAME)
    bob = await TestClient.connect(two.port, "bob")
    await listed(bob, created["table"])
    seated = await bob.request(p.JOIN, table=created["table"])
    assert seated["kind"] == p.OK and seated["table"] == created["table"] and seated["seat"] == 1, seated
    assert bob.moves == [("127.0.0.1", one.port)]  # one hand-over, to the server that holds the table
    assert (await ann.request(p.START))["kind"] == p.OK
    async with trio.open_nursery() as nursery:
        nursery.start_soon(ann.play_quarto)
        last = await bob.play_quarto()
    assert last.phase is q.Phase.OVER


async def test_a_seat_secret_and_a_watch_work_through_any_server_and_a_wrong_secret_goes_nowhere_but_is_refused_where_the_table_is(
    nodes,
):
    one, two, three = await nodes(3)
    ann = await TestClient.connect(one.port, "ann")
    created = await ann.request(p.CREATE_TABLE, game=q.NAME)
    bob = await TestClient.connect(two.port, "bob")
    await listed(bob, created["table"])
    seated = await bob.request(p.JOIN, table=created["table"])
    await bob.request(p.LEAVE)
    seated = await bob.request(p.JOIN, table=created["table"])  # from the table's server now: no hand-over
    assert bob.moves == [("127.0.0.1", one.port)]
    assert (await ann.request(p.START))["kind"] == p.OK
    back = await TestClient.connect(three.port, "bob")
    await listed(back, created["table"])
    wrong = await back.request(p.REJOIN, table=created["table"], secret="not-the-secret")
    # Protocol 8: no server can prove a wrong secret, so it never leaves the client (the table's server would say
    # bad_secret to a rejoin sent to it directly); the client answers it unproven_move.
    assert wrong["kind"] == p.REFUSED and wrong["reason"] == p.UNPROVEN_MOVE, wrong
    assert back.moves == [("127.0.0.1", one.port)]
    direct = await TestClient.connect(one.port, "bob")
    refused = await direct.request(p.REJOIN, table=created["table"], secret="not-the-secret")
    assert refused["kind"] == p.REFUSED and refused["reason"] == p.BAD_SECRET  # where the table is
    again = await TestClient.connect(three.port, "bob")
    await listed(again, created["table"])
    rejoined = await again.request(p.REJOIN, table=created["table"], secret=seated["secret"], takeover=True)
    assert rejoined["kind"] == p.OK and rejoined["seat"] == seated["seat"], rejoined
    assert again.moves == [("127.0.0.1", one.port)]
    snapshot = await again.wait_view(lambda view: True, timeout=5)  # the seat's view, from the table's server
    assert isinstance(snapshot, q.QuartoView)
    # A watcher through the third server watches it, and every lobby counts the watcher.
    wes = await TestClient.connect(three.port, "wes")
    watching = await wes.request(p.WATCH, table=created["table"])
    assert watching["kind"] == p.OK and watching["table"] == created["table"], watching
    assert wes.moves == [("127.0.0.1", one.port)]
    assert isinstance(await wes.wait_view(lambda view: True, timeout=5), q.QuartoView)
    cy = await TestClient.connect(two.port, "cy")
    if tables(await cy.request(p.LIST_TABLES))[created["table"]]["watchers"] != 1:
        await lobby_until(cy, lambda ts: ts.get(created["table"], {}).get("watchers") == 1, timeout=3)


async def test_a_server_killed_leaves_every_lobby_within_the_ttl_and_its_restart_brings_its_tables_back(nodes):
    one, two, three = await nodes(3)
    ann = await TestClient.connect(one.port, "ann")
    created = await ann.request(p.CREATE_TABLE, game=q.NAME)
    table = created["table"]
    await ann.request(p.ADD_BOT, level="random")
    assert (await ann.request(p.START))["kind"] == p.OK
    bob = await TestClient.connect(two.port, "bob")
    cy = await TestClient.connect(three.port, "cy")
    for watcher in (bob, cy):
        await listed(watcher, table)
    await trio.sleep(0.3)  # the journal has the match's start (it commits within milliseconds)
    one.kill()
    killed_at = trio.current_time()
    assert await ann.closed()  # the seated player's link is gone: no goodbye, the server died
    for watcher in (bob, cy):
        await lobby_until(watcher, lambda ts: table not in ts, timeout=TTL + 1.0)
    assert trio.current_time() - killed_at < TTL + 1.0
    # The restart: the table comes back from its journal, under the same id, in every lobby.
    await trio.to_thread.run_sync(one.start)
    assert "1 table restored" in one.out
    for watcher in (bob, cy):
        shown = await lobby_until(watcher, lambda ts: table in ts, timeout=3)
        assert shown[table]["names"][0] == "ann"
    back = await TestClient.connect(three.port, "ann")
    rejoined = await back.request(p.REJOIN, table=table, secret=created["secret"], takeover=True)
    assert rejoined["kind"] == p.OK and rejoined["seat"] == 0, rejoined
    assert back.moves == [("127.0.0.1", one.port)]
