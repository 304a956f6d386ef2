"""The lobby for friends, through a real ``Lobby``: the host plays the match again with the same seats."""

from __future__ import annotations

from itertools import count
from typing import Any

from quatro_shared import protocol as p
from quatro_shared import wire
from quatro_shared.views import Phase

from quatro_server import lobby
from quatro_server.timing import Timing


class Peer:
    """A connection as the lobby sees it, keeping what it is sent."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.room = None
        self.seat = None
        self.sent: list[dict[str, Any]] = []

    def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)

    def close(self, reason: str) -> None:
        pass


def test_rematch_plays_again_with_the_same_seats_host_only_once_over():
    room_lobby = lobby.Lobby(timing_profiles={"short": Timing(target_score=1)}, seed=3)
    ann, bob = Peer("ann"), Peer("bob")
    ids = count(1)

    def ask(peer: Peer, kind: str, now: float, **fields: Any) -> dict[str, Any]:
        return wire.to_wire(room_lobby.handle(peer, wire.request_from_wire({"kind": kind, "id": next(ids), **fields}), now))

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
    assert any(msg["kind"] == "update" and any(ev["kind"] == "match_started" for ev in msg["events"])
               for msg in bob.sent[-3:])


def test_rematch_before_any_match_is_refused_not_over():
    room_lobby = lobby.Lobby(seed=3)
    ann, eve = Peer("ann"), Peer("eve")

    def ask(peer: Peer, kind: str) -> dict[str, Any]:
        return wire.to_wire(room_lobby.handle(peer, wire.request_from_wire({"kind": kind, "id": 1}), 0.0))

    assert ask(eve, p.REMATCH)["reason"] == p.NOT_SEATED
    request = wire.request_from_wire({"kind": p.CREATE_TABLE, "id": 2, "players": 4})
    assert wire.to_wire(room_lobby.handle(ann, request, 0.0))["kind"] == p.OK
    assert ask(ann, p.REMATCH)["reason"] == p.NOT_OVER
