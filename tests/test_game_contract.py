"""A game is a descriptor: a game the product has never heard of, registered by a test, is read off the wire and
followed by the client core through its contract alone (``quatro_shared.game``, ``quatro_shared.games``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest

from quatro_shared import games
from quatro_shared.client import ClientCore, ResyncNeeded, Updated
from quatro_shared.framing import encode
from quatro_shared.game import GameContract
from quatro_shared.wire import WireError, codec, push_from_wire, request_from_wire, to_wire

from nim_game.contract import CONTRACT as NIM
from nim_game.contract import NimUpdate, NimView, Phase, Take, Taken


def heap_of(heap: int, turn: int = 0) -> NimView:
    return NimView(0, Phase.PLAYING, heap, turn, 1, 3, (0, 0), (), (True, True))


@pytest.fixture
def nim() -> Iterator[GameContract[Take, Taken, NimView, NimUpdate]]:
    """Nim's contract alone (``nim_game.contract``): the shared side, with no server behind it."""
    games.register(NIM)
    try:
        yield NIM
    finally:
        games.unregister(NIM.name)


def test_a_registered_game_is_listed_and_its_actions_become_requests(nim):
    assert games.names()[-1] == "nim" and games.contract("nim") is nim
    assert "nim_take" in games.request_kinds()
    request = request_from_wire({**to_wire(Take(2)), "id": 4})
    assert request.body == Take(2) and request.kind == "nim_take"
    bad = request_from_wire({"kind": "nim_take", "count": "two", "id": 5})
    assert bad.body is None and isinstance(bad.invalid, WireError) and bad.invalid.field == "count"
    assert codec(nim).action({"kind": "nim_take", "count": 1}) == Take(1)
    with pytest.raises(WireError):
        codec(nim).action({"kind": "give", "piece": 1})  # another game's action is not this game's


def test_a_registered_games_update_is_read_and_followed_by_the_client_core(nim):
    core = ClientCore("ann")
    first = NimUpdate(1, 1, True, (), heap_of(7))
    wire = to_wire(first)
    assert wire["game"] == "nim" and push_from_wire(wire) == first
    assert push_from_wire({**wire, "events": [{"kind": "nim_fireworks"}]}) == first  # an unknown event is skipped
    (got,) = core.receive_data(encode(wire), 0.0)
    assert isinstance(got, Updated) and got.game == "nim" and got.view == heap_of(7) and core.contract is nim
    core.place = object()  # seated: gaps count
    later = NimUpdate(1, 2, False, (Taken(0, 2, 5),))
    (moved,) = core.receive_data(encode(to_wire(later)), 1.0)
    assert isinstance(moved, Updated) and moved.events == (Taken(0, 2, 5),) and moved.view == heap_of(5, turn=1)
    gap = NimUpdate(1, 4, False, (Taken(1, 1, 4),))
    (lost,) = core.receive_data(encode(to_wire(gap)), 2.0)
    assert isinstance(lost, ResyncNeeded) and lost.why == "update 4 came where 3 was due"
    core = ClientCore("bob")
    broken = NimUpdate(1, 1, True, (), None)
    (refused,) = core.receive_data(encode(to_wire(broken)), 3.0)
    assert isinstance(refused, ResyncNeeded) and refused.why == "a snapshot without its view"


def test_a_game_is_registered_once_and_never_over_anothers_kinds(nim):
    with pytest.raises(ValueError, match="registered already"):
        games.register(nim)
    clash = dataclasses.replace(nim, name="nim2")
    with pytest.raises(ValueError, match="action kinds"):
        games.register(clash)


def test_an_update_of_a_game_this_side_does_not_know_is_refused_with_its_name():
    with pytest.raises(WireError) as refused:
        push_from_wire({"kind": "update", "game": "nim", "table": 1, "seq": 1, "snapshot": True, "events": []})
    assert refused.value.field == "game" and "'nim'" in refused.value.message
