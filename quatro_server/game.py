"""What a game is to the server: one interface (``Game``) for everything the lobby and its rooms host.

Each game implements it in its own folder (``quatro_server/games/<game>/game.py``); the registry of the hosted
games is ``quatro_server.games``.

A game is what the lobby and its rooms need to know to host it, and nothing more:

- its **name** on the wire (``create_table``'s ``game``, the lobby list's ``game``) and the **seats** a table of it
  has (``seats``);
- its **rules engine**: ``new_table`` builds a pure table, a ``quatro_server.rules.RulesTable`` (``start``, ``act``
  returning the one ``rules.Outcome``, ``advance``, ``next_deadline``, ``rebase``), as each game's
  ``games/<game>/engine.py`` builds one; the lobby reads its phase only through ``over``, ``lobby_phase`` and
  ``chat_open``, and the durations it adds to the timing profile are declared in its own module
  (``quatro_server.timing.declare``);
- the seat's **view** (``view``) and **which events reach which seat**, as the update frames of a batch (``batch``:
  a game that hides cards builds its deltas once per audience, a game that hides nothing may send the whole view);
- its **actions** on the wire (``actions``: the request kinds a table of this game takes) and how a refusal reads;
- its **bots**: ``levels``, ``default_level`` and ``make_bot`` (each a ``quatro_server.rules.SeatBot``); which of
  them think long (``slow_bot``: the server makes their decisions in a worker thread, off its event loop) and what
  of a view a decision depends on (``decision_key``: a decision that comes back after the table moved on is
  dropped);
- its **record** of a finished match (``record``, from the events it names in ``record_kinds``): the sides, their
  places and each seat's tallies, for the players' records and ratings (``quatro_server.records``);
- its **journal encoding** (``journal``, a ``quatro_server.journal.Codec`` from the game's own module): how its
  actions, events and checkpoints are written to the journal and read back, and the one constructor of its rules
  table (``new_table``), for a live match and a restored one alike.

The room (``quatro_server.tables.room.Room``) holds seats, secrets and peers the same way for every game, and asks its
game for the rest. What each phase of a game accepts is that game's own table, in its contract, read by its
engine.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, Generic, Protocol, TypeAlias, TypeVar

from quatro_shared import messages as m
from quatro_shared.tables import TablePhase

from quatro_server.journal import Codec, Opening
from quatro_server.records.match import MatchRecord, places_by_score
from quatro_server.rules import RulesTable
from quatro_server.rules import SeatBot as SeatBot  # the simulator names the bots of a seat by it
from quatro_server.timing import Timing

#: The bot level of a lesson's other seats (``quatro learn``), the same for every game's lesson: the client asks for
#: it by this name (``quatro_tui.lessons.LESSON_LEVEL``).
LESSON_LEVEL = "lesson"
#: Seconds between a lesson bot's looks at the table: it answers the learner at once.
LESSON_LOOK = 0.1


#: A game's own types, as its engine and contract name them: its rules table, a seat's view, what its table emits (its
#: events, hidden ones too), a player's action, and why its engine refuses one.
TableT = TypeVar("TableT", bound=RulesTable)
ViewT = TypeVar("ViewT")
EmitT = TypeVar("EmitT")
ActionT = TypeVar("ActionT")
RefusalT = TypeVar("RefusalT")
TableT_contra = TypeVar("TableT_contra", contravariant=True)
EmitT_contra = TypeVar("EmitT_contra", contravariant=True)


class SeatState(Protocol):
    """What a game reads of one of its room's seats (``quatro_server.tables.room.Seat``)."""

    @property
    def bot(self) -> object: ...

    @property
    def peer(self) -> object: ...


class RoomState(Protocol):
    """What a game reads of its room (``quatro_server.tables.room.Room``): the lobby imports the games, not the reverse."""

    @property
    def host(self) -> int | None: ...

    @property
    def table(self) -> RulesTable | None: ...

    @property
    def seats(self) -> Sequence[SeatState]: ...


class Commentary(Protocol[TableT_contra, EmitT_contra]):
    """What a replay says beside a seat's frames, read from the whole record (``quatro_server.replay.seat``)."""

    def note(self, table: TableT_contra, emits: Sequence[EmitT_contra]) -> list[str] | None:
        """After a batch (``table`` as it left it, ``emits`` every event of it, hidden ones too): lines to show from
        here on, ``[]`` to clear what shows, None to leave it."""


class UpdateBatch(Protocol):
    """One batch of a table's events about to be told to its seats.
    Its watchers are seat ``NO_SEAT`` of team ``NO_SEAT`` (``quatro_shared.tables``): ``seen_by`` gives them the public
    events alone, and ``update`` a frame with nothing of a seat's own (protocol section 18)."""

    def seen_by(self, seat: int, team: int) -> tuple[int, ...]: ...

    def update(self, seat: int, seq: int, seen: tuple[int, ...], snapshot: bool) -> bytes: ...

    def public_deltas(self) -> Callable[[int, int], bytes] | None:
        """For a batch every seat sees whole, ``delta(seat, seq)``: the seat's ``update(seat, seq, seen, False)``
        built from the parts shared by all (None when the game has no such shortcut or the batch is not public)."""


class Game(ABC, Generic[TableT, ViewT, EmitT, ActionT, RefusalT]):
    """What a game is to the lobby, typed by the game's own types (a table, a view, an emitted event, an action, a
    refusal: ``Game[engine.Table, SeatView, ...]``). Subclasses fill in every method; the registry holds one instance
    each, as ``AnyGame``."""

    name: str = ""
    title: str = ""
    #: The action classes a table of this game takes (the wire's request kinds are their ``kind``s).
    actions: tuple[type, ...] = ()
    levels: tuple[str, ...] = ()
    default_level: str = ""
    #: How its matches are journalled (``quatro_server.journal``): its tables outlive the process.
    #: Its actions there are the players' and the server's own (connect, disconnect), wider than ``ActionT``.
    journal: Codec[TableT, Any, EmitT]
    #: ``create_table`` must give ``players`` (else it is an ``error`` ``bad_request``).
    players_required: bool = False

    @property
    def action_kinds(self) -> frozenset[str]:
        return frozenset(getattr(cls, "kind") for cls in self.actions)

    @abstractmethod
    def seats(self, players: int | None) -> int | str:
        """The seat count of a new table asked with ``players`` (None: not given), or why it is refused."""

    def new_table(self, opening: Opening, timing: Timing, rng: random.Random) -> TableT:
        """The rules engine of a match starting from ``opening`` (every seat filled), not started yet; its random
        source seeded from the opening's seed when it has one (a journalled match), else ``rng``."""
        return self.journal.new_table(opening, timing, opening.rng(rng))

    @abstractmethod
    def view(self, table: TableT, seat: int, now: float) -> ViewT:
        """Seat ``seat``'s view (H1): what its bot decides from."""

    @abstractmethod
    def batch(self, table_id: int, table: TableT, emits: Sequence[EmitT], now: float) -> UpdateBatch:
        """The update frames of one batch of the table's events, per seat: which events each seat sees (H1), and
        each seat's frame numbered by its ``seq``."""

    @abstractmethod
    def observed(self, emits: Sequence[EmitT], seen: tuple[int, ...]) -> list[object]:
        """The events a bot at a seat that sees ``seen`` of the batch is told (H2: what a player there is told)."""

    @abstractmethod
    def seating_changed(self, emits: Sequence[EmitT]) -> bool:
        """Whether the batch changes the ``table`` push (a seat connected or gone, the host changed)."""

    @abstractmethod
    def over(self, table: TableT) -> bool:
        """Whether the match is over (a rematch may start; the room's timer has nothing more to fire)."""

    @abstractmethod
    def lobby_phase(self, table: TableT) -> TablePhase:
        """The table's phase in the lobby's words (``TableSummary.phase``, the ``table`` push)."""

    @abstractmethod
    def no_scores(self, players: int) -> tuple[int, ...]:
        """The scores the lobby list shows before the match."""

    @abstractmethod
    def host(self, room: RoomState) -> int | None:
        """Who hosts the room during its match (starts a rematch)."""

    @abstractmethod
    def chat_open(self, table: TableT) -> bool:
        """Whether the table's chat is open now."""

    @abstractmethod
    def refused(self, request_id: int, action: ActionT, refusal: RefusalT) -> m.Refused:
        """The ``refused`` reply to ``action``, refused by the engine with ``refusal``."""

    @abstractmethod
    def make_bot(self, level: str, rng: random.Random) -> SeatBot:
        """A bot of ``level`` (one of ``levels``); raises ``ValueError`` for another."""

    def routine(self, emits: Sequence[EmitT]) -> bool:
        """Whether the batch is routine play (a swap, a pulse) that neither changes the ``table`` push nor brings
        any deadline of the table forward: the room then skips both checks after telling it. No by default."""
        return False

    def slow_bot(self, bot: SeatBot, view: ViewT) -> bool:
        """Whether ``bot``'s decision on ``view`` may take long enough to hold up other tables (``Room.think``). No by
        default: such bots decide inline, in microseconds."""
        return False

    def decision_key(self, view: ViewT) -> object:
        """What of a seat's view a bot's decision depends on: the decision is played only if the view still has the
        key it was made for (``Room.bot_decided``). By default the whole view."""
        return view

    def commentary(self, names: Sequence[str | None]) -> Commentary[TableT, EmitT] | None:
        """What a replay of a match says beside a seat's frames, the seats named ``names`` (None: nothing)."""
        return None

    #: The kinds of event a match's record is counted from (``record``): a room keeps these events of its match (and
    #: no others: nothing of routine play). None by default.
    record_kinds: frozenset[str] = frozenset()

    #: How many of its match's latest events a room keeps for a rejoiner's ``recent`` push (protocol 7): what a
    #: player coming back from another terminal reads in the feed. 0 (by default): none kept, no push.
    recent_kept: int = 0

    def team_of(self, seat: int, players: int) -> int:
        """The team ``seat`` plays for at a table of ``players``: each seat its own side, unless the game seats
        teams (Quatro's partners across, R1)."""
        return seat

    def team_count(self, players: int) -> int:
        """How many teams a table of ``players`` seats (``team_of`` gives 0 to this, less one)."""
        return players

    def recent(self, history: Sequence[EmitT], seat: int, team: int) -> tuple[object, ...]:
        """Of the room's kept events ``history`` (oldest first, hidden ones too), the latest that ``seat`` of ``team``
        may see (H1), at most ``MAX_RECENT_EVENTS``: the ``recent`` push's."""
        return ()

    def record(self, table: TableT, events: Sequence[object]) -> MatchRecord:
        """The record of ``table``'s finished match, from ``events`` (those of its kinds in ``record_kinds``, in
        order): who played for which side, the sides' places, and each seat's tallies of the game's own. By default
        every seat is a side of its own, placed by the table's winners and then its scores, with no tallies."""
        scores = tuple(table.scores)
        return MatchRecord(tuple(range(len(scores))), places_by_score(tuple(table.winners), scores))


#: Any game, whatever its types: what the registry holds and the platform (the lobby, its rooms, the journal, replays,
#: the simulator) is handed. Each game's own methods are checked against its own types; the platform passes a game's
#: values (its table, its events) only back to that same game.
AnyGame: TypeAlias = "Game[Any, Any, Any, Any, Any]"
