"""What every game's rules engine is to the server: a rules table (``RulesTable``), the ``Outcome`` of an action, and
a seat's bot (``SeatBot``).

A game's engine (each game's own module, registered in ``quatro_server.games``) is a
pure state machine with two doors, each given the current time ``now``: ``act(seat, action, now)`` returns an
``Outcome``, ``advance(now)`` the events that fell due; ``next_deadline()`` says when ``advance`` is next needed. The
room (``quatro_server.tables.room``), the journal and the simulator drive any game through this interface alone; what
the events and refusals are is the game's own (``quatro_server.games`` reads them). This module imports nothing of the
server: engines, bots, the journal and the tables all stand on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from quatro_shared.game import GameAction

#: Covariant: an outcome of a game's own events and refusals is an ``Outcome[object, object]`` to the platform.
EventT = TypeVar("EventT", covariant=True)
RefusalT = TypeVar("RefusalT", covariant=True)


@dataclass(frozen=True, slots=True)
class Outcome(Generic[EventT, RefusalT]):
    """The result of an action: the events that happened (time-driven ones first), and the refusal if it was refused
    (a refused action changes nothing)."""

    events: list[EventT]
    refusal: RefusalT | None = None

    @property
    def ok(self) -> bool:
        return self.refusal is None


class Refusal(Protocol):
    """Why a game's engine refused an action, as the platform reads it: every game's refusal has its reason (a
    word of the protocol: ``quatro_shared.protocol.GAME_ACTION_REASONS`` and the game's own)."""

    @property
    def reason(self) -> str: ...


@runtime_checkable
class RulesTable(Protocol):
    """A game's rules table, as the room, the journal and the simulator drive it: its start, its two doors, its next
    deadline, its clock and its scores. It never reads a clock and never raises on a bad action."""

    #: The table's time: the latest ``now`` it was given (time never runs backwards).
    now: float

    @property
    def players(self) -> int: ...

    @property
    def scores(self) -> Sequence[int]:
        """The match's scores, one per side (a team, a player), as the lobby list shows them."""

    @property
    def winners(self) -> Sequence[int]:
        """The sides that won the match: none until it is over."""

    def start(self, now: float) -> Sequence[object]:
        """Start the match (every seat is filled): its first events."""

    # ``action`` is of the table's own game (its contract's action classes): the platform hands a table only the actions
    # its game's codec read, a type it knows at run time alone (as every implementation narrows it to).
    def act(self, seat: int, action: Any, now: float) -> Outcome[object, Refusal]:
        """``seat`` does ``action`` at ``now``: time runs to ``now`` first, then the action is applied or refused."""

    def advance(self, now: float) -> Sequence[object]:
        """Time passes: the events due by ``now``, in the order they fell."""

    def next_deadline(self) -> float | None:
        """When the table next needs ``advance`` (None: nothing is due until someone acts)."""

    def rebase(self, delta: float) -> None:
        """Shift every deadline ``delta`` seconds: the table moves onto another clock with the time it had left."""


@runtime_checkable
class SeatBot(Protocol):
    """A seat's bot, of any game: it is told what its seat is told and decides from its seat's view alone (H2), at its
    own pace. The room (and a network bot, ``quatro_server.bots.netbot``) plays its actions in order, up to the first
    refusal."""

    @property
    def level(self) -> str: ...

    def think_time(self) -> float:
        """Seconds until it looks at the table again."""

    def observe(self, events: list[Any]) -> None:
        """The events its seat was shown, in order, before its next decision."""

    def decide(self, view: Any, now: float) -> Sequence[GameAction]:
        """The actions to take now, from the seat's view."""


def is_outside_bot(level: str) -> bool:
    """Whether ``level`` names a bot class from outside the project (``module:Class``) rather than a level: a game
    whose bots may be one's own (``quatro_server.bots.games.BotGame.outside_bots``) loads it."""
    return ":" in level
