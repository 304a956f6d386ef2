"""The lobby with a directory, in one process against a real redis-server: the lobby's own tables and the others'
in one list, global ids, ``moved`` for a table held elsewhere, and a clear refusal when the directory is down."""

from __future__ import annotations

import trio

from quatro_shared import messages as m
from quatro_shared import protocol as p
from quatro_shared.wire import request_from_wire, to_wire

from quatro_server.directory.redis_directory import RedisDirectory
from quatro_server.tables.lobby import Lobby

from helpers.lobby_peer import RecordingPeer as LobbyPeer


def ask(lobby: Lobby, peer: LobbyPeer, kind: str, **fields: object) -> dict:
    request = request_from_wire({"kind": kind, "id": 1, **fields})
    return to_wire(lobby.handle(peer, request, trio.current_time(), greeted=kind != p.HELLO))


def lobby_on(url: str, address: str) -> tuple[Lobby, RedisDirectory]:
    lobby = Lobby()
    directory = RedisDirectory(url, ttl=1.0, local=lobby.local_listing, on_others_changed=lobby.push_listing)
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
        assert any(isinstance(sent, dict) and sent.get("kind") == p.LOBBY
                   and created["table"] in [t["table"] for t in sent["tables"]] for sent in bob.sent)  # pushed
        for kind in (p.JOIN, p.WATCH):
            assert ask(two, bob, kind, table=created["table"]) == {
                "kind": p.MOVED, "id": 1, "table": created["table"], "host": "10.0.0.1", "port": 7001}
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
