"""What a game is to the contract: one descriptor, ``GameContract``, that generic code reads instead of naming games.

A game's own modules declare its vocabulary (player actions, events, the seat's view and the update a seat is
sent) as frozen dataclasses, and one ``GameContract`` that lists them with the rest a peer needs: the table sizes,
what each state of the table accepts (its ``accepts`` table) and the moves a view allows (``legal``), the bot
levels, and how a client follows a seat from update to update (``follow``). The registry
(``quatro_shared.games``) holds one contract per game; the wire (``quatro_shared.wire``) reads a game's messages
through it, and the client core (``quatro_shared.client``) folds a seat's updates through it.

In the manner of OpenSpiel's registered game types: code that serves every game holds a contract, never a game's
name, so a game is added by its own modules and one line in the registry.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from quatro_shared.framing import Message


class GameAction(Protocol):
    """A player's action of any game: a frozen dataclass with a stable ``kind``, its fields on the wire."""

    kind: ClassVar[str]


class GameUpdate(Protocol):
    """What every game's ``update`` push carries beside its own fields (protocol section 11)."""

    @property
    def table(self) -> int: ...

    @property
    def seq(self) -> int: ...

    @property
    def snapshot(self) -> bool: ...

    @property
    def events(self) -> tuple[object, ...]: ...


#: A game's quick reader of one busy request (``GameContract.quick_requests``): the action from a decoded frame, or
#: None to leave the frame to the general walk.
QuickRequest = Callable[[Message], GameAction | None]


class FollowError(Exception):
    """An update a seat's state cannot take (a snapshot without its view, a delta that does not fit). The message
    says why; the client core then asks for a snapshot."""


ViewT = TypeVar("ViewT")
ViewT_co = TypeVar("ViewT_co", covariant=True)
ActionT = TypeVar("ActionT")
EventT = TypeVar("EventT")
UpdateT = TypeVar("UpdateT")
UpdateT_contra = TypeVar("UpdateT_contra", contravariant=True)


class Follower(Protocol[UpdateT_contra, ViewT_co]):
    """One seat's state across the updates of its game, started from a snapshot (``GameContract.follow``)."""

    @property
    def view(self) -> ViewT_co:
        """The seat's view as of the last update taken."""
        ...

    def advance(self, update: UpdateT_contra) -> ViewT_co:
        """Take the next update in order and return the view after it. Raises ``FollowError`` and keeps the state
        as it was when the update does not follow from it."""
        ...

    def agrees(self, snapshot: UpdateT_contra) -> bool:
        """Whether a snapshot that came in step holds the state this follower would have built from its events."""
        ...


@dataclass(frozen=True, slots=True)
class WireCheck:
    """A name of a game's own annotations (``GameContract.wire_names``) for a value kept as it came once ``test``
    accepts it: Quatro's cards and signs, strings to Python. ``expected`` is what an error says was wanted."""

    test: Callable[[object], bool]
    expected: str


@dataclass(frozen=True, eq=False)
class GameContract(Generic[ActionT, EventT, ViewT, UpdateT]):
    """One game as the contract knows it. Every class named here is a frozen dataclass of the game's own modules,
    whose annotations the wire reads (``wire_names`` says what the game's own names there stand for)."""

    #: The game's name on the wire (``create_table``'s ``game``, the ``table`` and ``lobby`` pushes).
    name: str
    #: The game's name as people read it.
    title: str
    #: The numbers of players a table of this game may have, the smallest first.
    seats: tuple[int, ...]
    #: The actions a player may send, each a request kind of its own.
    actions: tuple[type[ActionT], ...]
    #: The events its tables emit, as a seat may be told them.
    events: tuple[type[EventT], ...]
    #: A seat's view of a table, and the ``update`` push that carries its events (and the view, or what changed).
    view: type[ViewT]
    update: type[UpdateT]
    #: What each state of a table accepts from a player (a phase, or a phase and a step, to the action classes).
    accepts: Mapping[Any, frozenset[type[ActionT]]]
    #: The actions the seat of a view may take now, as far as the view tells (bots, clients, tests).
    legal: Callable[[ViewT], list[ActionT]]
    #: The levels of its bots, weakest first, and the level of a bot added with none named.
    levels: tuple[str, ...]
    default_level: str
    #: A follower of a seat started from a snapshot update; raises ``FollowError`` for one it cannot start from.
    follow: Callable[[UpdateT], Follower[UpdateT, ViewT]]
    #: True when every update carries the seat's whole view: each is then a new base, and a gap in ``seq`` only
    #: means events were missed (it is counted, never a reason to resynchronise).
    whole_views: bool = False
    #: What the names in the annotations of this game's classes stand for, beyond the shared ones
    #: (``quatro_shared.wire``): its enums, nested classes and checked values (``WireCheck``).
    wire_names: Mapping[str, object] = field(default_factory=dict)
    #: The classes nested in its view (each read as a map of its own), the view included.
    view_parts: tuple[type, ...] = ()
    #: A client reads this game's views and updates leniently: keys it does not know are skipped.
    lenient: bool = False
    #: The ``kind`` a view carries on the wire (a framed view), if any.
    view_kind: str | None = None
    #: Actions only the server issues for a seat: a peer sending one is refused as an unknown kind.
    server_actions: tuple[type, ...] = ()
    #: Readers of the game's busiest requests by kind, quicker than the general walk: each takes the whole frame
    #: (``id`` and ``kind`` included) and returns the action, or None to have it read the general way (which
    #: also words any error). Each must accept only what the general way would accept.
    quick_requests: Mapping[str, QuickRequest] = field(default_factory=dict)

    @property
    def action_kinds(self) -> frozenset[str]:
        return frozenset(getattr(cls, "kind") for cls in self.actions)

    @property
    def event_kinds(self) -> frozenset[str]:
        return frozenset(getattr(cls, "kind") for cls in self.events)

    def owns(self, cls: type) -> bool:
        """Whether ``cls`` is one of this game's own message classes."""
        return (
            cls in self.actions
            or cls in self.events
            or cls in self.server_actions
            or cls is self.view
            or cls is self.update
            or cls in self.view_parts
        )

    def __repr__(self) -> str:
        return f"GameContract({self.name!r})"
