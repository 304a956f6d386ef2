"""A game is a descriptor: a game the product has never heard of, registered by a test, is read off the wire and
followed by the client core through its contract alone (``quatro_shared.game``, ``quatro_shared.games``)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

import pytest

from quatro_shared import games
from quatro_shared import protocol as p
from quatro_shared.client import ClientCore, ResyncNeeded, Updated
from quatro_shared.framing import encode
from quatro_shared.game import FollowError, GameContract
from quatro_shared.messages import Push
from quatro_shared.wire import WireError, codec, push_from_wire, request_from_wire, to_wire

# --- a small game of Nim, as a game's own module would declare it -------------------------------------


@dataclass(frozen=True, slots=True)
class Action:
    kind: ClassVar[str] = "nim_action"


@dataclass(frozen=True, slots=True)
class Take(Action):
    count: int
    kind: ClassVar[str] = "nim_take"


@dataclass(frozen=True, slots=True)
class Event:
    kind: ClassVar[str] = "nim_event"


@dataclass(frozen=True, slots=True)
class Taken(Event):
    seat: int
    count: int
    kind: ClassVar[str] = "nim_taken"


@dataclass(frozen=True, slots=True)
class NimView:
    seat: int
    heap: int
    turn: int | None


@dataclass(frozen=True, slots=True)
class NimUpdate(Push):
    table: int
    seq: int
    snapshot: bool
    events: tuple[Event, ...]
    view: NimView
    game: str = "nim"
    kind: ClassVar[str] = p.UPDATE


class Follower:
    def __init__(self, update: NimUpdate) -> None:
        if update.view.heap < 0:
            raise FollowError("a heap below nothing")
        self.view = update.view

    def advance(self, update: NimUpdate) -> NimView:
        self.view = update.view
        return self.view

    def agrees(self, snapshot: NimUpdate) -> bool:
        return True


def legal(view: NimView) -> list[Take]:
    return [Take(n) for n in (1, 2, 3) if n <= view.heap] if view.turn == view.seat else []


NIM = GameContract(
    name="nim",
    title="Nim",
    seats=(2,),
    actions=(Take,),
    events=(Taken,),
    view=NimView,
    update=NimUpdate,
    accepts={"playing": frozenset({Take})},
    legal=legal,
    levels=("random",),
    default_level="random",
    follow=Follower,
    whole_views=True,
    wire_names={"NimView": NimView},
    view_parts=(NimView,),
    lenient=True,
)


@pytest.fixture
def nim() -> Iterator[GameContract[Take, Taken, NimView, NimUpdate]]:
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
    first = NimUpdate(1, 1, True, (), NimView(0, 7, 0))
    wire = to_wire(first)
    assert wire["game"] == "nim" and push_from_wire(wire) == first
    assert push_from_wire({**wire, "events": [{"kind": "nim_fireworks"}]}) == first  # an unknown event is skipped
    (got,) = core.receive_data(encode(wire), 0.0)
    assert isinstance(got, Updated) and got.game == "nim" and got.view == NimView(0, 7, 0) and core.contract is nim
    core.place = object()  # seated: gaps count
    later = NimUpdate(1, 3, False, (Taken(0, 2),), NimView(0, 5, 1))
    (gap,) = core.receive_data(encode(to_wire(later)), 1.0)
    assert isinstance(gap, Updated) and gap.events == (Taken(0, 2),) and core.drift == 1  # whole views: no resync
    broken = NimUpdate(1, 4, False, (), NimView(0, -1, 1))
    (lost,) = core.receive_data(encode(to_wire(broken)), 2.0)
    assert isinstance(lost, ResyncNeeded) and lost.why == "a heap below nothing"


def test_a_game_is_registered_once_and_never_over_anothers_kinds(nim):
    with pytest.raises(ValueError, match="registered already"):
        games.register(nim)
    clash = GameContract(**{**{f: getattr(nim, f) for f in nim.__dataclass_fields__}, "name": "nim2"})
    with pytest.raises(ValueError, match="action kinds"):
        games.register(clash)


def test_an_update_of_a_game_this_side_does_not_know_is_refused_with_its_name():
    with pytest.raises(WireError) as refused:
        push_from_wire({"kind": "update", "game": "nim", "table": 1, "seq": 1, "snapshot": True, "events": []})
    assert refused.value.field == "game" and "'nim'" in refused.value.message
