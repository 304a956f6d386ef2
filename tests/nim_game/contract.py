"""Nim as the contract knows it: its action, its events, a seat's view, its update, and the ``GameContract`` that
lists them (``quatro_shared.game``), written the way a game's own ``quatro_shared`` module is.

The rules (N1–N3), kept small so that a whole match is a few dozen moves:

- N1: a game starts with a heap of ``HEAP`` stones; the seats take turns, the starter first.
- N2: a turn takes 1, 2 or 3 stones, never more than the heap holds.
- N3: whoever takes the last stone wins the game. A match is ``GAMES`` games, the starter alternating from a first
  drawn by lot; the seats with the most games won win the match.

Nim hides nothing; its updates still carry events alone between snapshots, so a client builds its view from them
(``Follower``), as Quatro's does.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import StrEnum
from typing import ClassVar

from quatro_shared import protocol as p
from quatro_shared.game import FollowError, GameContract
from quatro_shared.messages import Push
from quatro_shared.tables import Connect, Disconnect

NAME = "nim"
SEATS = 2
#: Stones in the heap at the start of a game (N1), the most a turn takes (N2) and the games of a match (N3).
HEAP = 11
MOST = 3
GAMES = 3
LEVELS = ("random", "perfect")
DEFAULT_LEVEL = "random"


class Phase(StrEnum):
    LOBBY = "lobby"
    PLAYING = "playing"
    OVER = "over"


# --- actions -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Action:
    kind: ClassVar[str] = "nim_action"


@dataclass(frozen=True, slots=True)
class Take(Action):
    """Take ``count`` stones from the heap (N2)."""

    count: int
    kind: ClassVar[str] = "nim_take"


PLAYER_ACTIONS: tuple[type[Action], ...] = (Take,)

#: What each phase accepts from a player.
ACCEPTS: dict[Phase, frozenset[type[Action]]] = {
    Phase.LOBBY: frozenset(),
    Phase.PLAYING: frozenset({Take}),
    Phase.OVER: frozenset(),
}

# --- events --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Event:
    kind: ClassVar[str] = "nim_event"


@dataclass(frozen=True, slots=True)
class MatchStarted(Event):
    games: int
    first: int
    kind: ClassVar[str] = "nim_match_started"


@dataclass(frozen=True, slots=True)
class GameStarted(Event):
    game: int
    starter: int
    heap: int
    kind: ClassVar[str] = "nim_game_started"


@dataclass(frozen=True, slots=True)
class Taken(Event):
    seat: int
    count: int
    heap: int
    kind: ClassVar[str] = "nim_taken"


@dataclass(frozen=True, slots=True)
class GameWon(Event):
    game: int
    winner: int
    scores: tuple[int, ...]
    kind: ClassVar[str] = "nim_game_won"


@dataclass(frozen=True, slots=True)
class MatchOver(Event):
    winners: tuple[int, ...]
    scores: tuple[int, ...]
    kind: ClassVar[str] = "nim_match_over"


@dataclass(frozen=True, slots=True)
class SeatConnected(Event):
    seat: int
    kind: ClassVar[str] = "nim_seat_connected"


@dataclass(frozen=True, slots=True)
class SeatDisconnected(Event):
    seat: int
    kind: ClassVar[str] = "nim_seat_disconnected"


EVENTS: tuple[type[Event], ...] = (
    MatchStarted,
    GameStarted,
    Taken,
    GameWon,
    MatchOver,
    SeatConnected,
    SeatDisconnected,
)

# --- the view and the update ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NimView:
    """A seat's view: the whole table (Nim hides nothing)."""

    seat: int
    phase: Phase
    heap: int
    turn: int | None
    game: int
    games: int
    scores: tuple[int, ...]
    winners: tuple[int, ...]
    connected: tuple[bool, ...]


@dataclass(frozen=True, slots=True)
class NimUpdate(Push):
    """A Nim table's ``update``: the seat's events, and its whole view in a snapshot only."""

    table: int
    seq: int
    snapshot: bool
    events: tuple[Event, ...]
    view: NimView | None = None
    game: str = NAME
    kind: ClassVar[str] = p.UPDATE


def legal(view: NimView) -> list[Action]:
    """The moves of the seat of ``view`` now (N2): empty when it is not its turn."""
    if view.phase is not Phase.PLAYING or view.turn != view.seat or not view.connected[view.seat]:
        return []
    return [Take(n) for n in range(1, MOST + 1) if n <= view.heap]


def apply(view: NimView, events: tuple[Event, ...]) -> NimView:
    """The view after ``events``; raises ``FollowError`` for an event that does not fit it."""
    for event in events:
        match event:
            case MatchStarted(games=games, first=first):
                view = dataclasses.replace(view, phase=Phase.PLAYING, games=games, turn=first)
            case GameStarted(game=game, starter=starter, heap=heap):
                view = dataclasses.replace(view, game=game, turn=starter, heap=heap)
            case Taken(seat=seat, count=count, heap=heap):
                if view.turn != seat or view.heap - count != heap:
                    raise FollowError(f"seat {seat} took {count} from a heap of {view.heap} and left {heap}")
                view = dataclasses.replace(view, heap=heap, turn=1 - seat)
            case GameWon(scores=scores):
                view = dataclasses.replace(view, scores=scores, turn=None)
            case MatchOver(winners=winners, scores=scores):
                view = dataclasses.replace(view, phase=Phase.OVER, turn=None, winners=winners, scores=scores)
            case SeatConnected(seat=seat) | SeatDisconnected(seat=seat):
                connected = list(view.connected)
                connected[seat] = isinstance(event, SeatConnected)
                view = dataclasses.replace(view, connected=tuple(connected))
    return view


class Follower:
    """A seat across its updates: a snapshot's view, with the events of every later update applied."""

    __slots__ = ("view",)

    def __init__(self, update: NimUpdate) -> None:
        if update.view is None:
            raise FollowError("a snapshot without its view")
        self.view = update.view

    def advance(self, update: NimUpdate) -> NimView:
        self.view = apply(self.view, update.events)
        return self.view

    def agrees(self, snapshot: NimUpdate) -> bool:
        return snapshot.view is not None and apply(self.view, snapshot.events) == snapshot.view


CONTRACT: GameContract[Action, Event, NimView, NimUpdate] = GameContract(
    name=NAME,
    title="Nim",
    seats=(SEATS,),
    actions=PLAYER_ACTIONS,
    events=EVENTS,
    view=NimView,
    update=NimUpdate,
    accepts=ACCEPTS,
    legal=legal,
    levels=LEVELS,
    default_level=DEFAULT_LEVEL,
    follow=Follower,
    wire_names={"Phase": Phase, "NimView": NimView},
    view_parts=(NimView,),
    server_actions=(Connect, Disconnect),
)
