"""The games a server hosts, behind one interface, and the registry of them (``GAMES``).

A game is what the lobby and its rooms need to know to host it, and nothing more:

- its **name** on the wire (``create_table``'s ``game``, the lobby list's ``game``) and the **seats** a table of it
  has (``seats``);
- its **rules engine**: ``new_table`` builds a pure table, a ``quatro_server.rules.RulesTable`` (``start``, ``act``
  returning the one ``rules.Outcome``, ``advance``, ``next_deadline``, ``rebase``), as ``quatro_server.engine.Table``
  and ``quatro_server.quarto.QuartoTable`` are; the lobby reads its phase only through ``over``, ``lobby_phase`` and
  ``chat_open``, and the durations it adds to the timing profile are declared in its own module
  (``quatro_server.timing.declare``);
- the seat's **view** (``view``) and **which events reach which seat**, as the update frames of a batch (``batch``:
  Quatro's deltas built once per audience, ``quatro_server.updates``; Quarto's full view in every update);
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
game for the rest. What each phase of a game accepts is that game's own table, in its contract
(``quatro_shared.legal.ACCEPTS``, ``quatro_shared.quarto.ACCEPTS``), read by its engine.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from quatro_shared import actions as a
from quatro_shared import events as e
from quatro_shared import messages as m
from quatro_shared import protocol as p
from quatro_shared import quarto as q
from quatro_shared import seating, wording
from quatro_shared.cards import PLAYER_COUNTS
from quatro_shared.framing import encode
from quatro_shared.levels import DEFAULT_LEVEL, LEVELS
from quatro_shared.views import Phase
from quatro_shared.wire import to_wire

from quatro_server import engine
from quatro_server import quarto as quarto_engine
from quatro_server.bots import Bot, make_bot
from quatro_server.journal import Codec, Opening
from quatro_server.quarto_journal import QuartoCodec
from quatro_server.quatro_journal import QuatroCodec
from quatro_server.records.match import MatchRecord, places_by_score
from quatro_server.rules import RulesTable
from quatro_server.rules import SeatBot as SeatBot  # the simulator names the bots of a seat by it
from quatro_server.timing import Timing
from quatro_server.updates import Batch

if TYPE_CHECKING:
    from quatro_server.quarto_bots import QuartoBot


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


class Commentary(Protocol):
    """What a replay says beside a seat's frames, read from the whole record (``quatro_server.seat_replay``)."""

    def note(self, table: Any, emits: Sequence[Any]) -> list[str] | None:
        """After a batch (``table`` as it left it, ``emits`` every event of it, hidden ones too): lines to show from
        here on, ``[]`` to clear what shows, None to leave it."""


class UpdateBatch(Protocol):
    """One batch of a table's events about to be told to its seats (``quatro_server.updates.Batch`` for Quatro).
    Its watchers are seat ``NO_SEAT`` of team ``NO_SEAT`` (``quatro_shared.views``): ``seen_by`` gives them the public
    events alone, and ``update`` a frame with nothing of a seat's own (protocol section 18)."""

    def seen_by(self, seat: int, team: int) -> tuple[int, ...]: ...

    def update(self, seat: int, seq: int, seen: tuple[int, ...], snapshot: bool) -> bytes: ...

    def public_deltas(self) -> Callable[[int, int], bytes] | None:
        """For a batch every seat sees whole, ``delta(seat, seq)``: the seat's ``update(seat, seq, seen, False)``
        built from the parts shared by all (None when the game has no such shortcut or the batch is not public)."""


class Game(ABC):
    """What a game is to the lobby. Subclasses fill in every method; the registry holds one instance each."""

    name: str = ""
    title: str = ""
    #: The action classes a table of this game takes (the wire's request kinds are their ``kind``s).
    actions: tuple[type, ...] = ()
    levels: tuple[str, ...] = ()
    default_level: str = ""
    #: How its matches are journalled (``quatro_server.journal``): its tables outlive the process.
    journal: ClassVar[Codec]
    #: ``create_table`` must give ``players`` (else it is an ``error`` ``bad_request``).
    players_required: bool = False

    @property
    def action_kinds(self) -> frozenset[str]:
        return frozenset(getattr(cls, "kind") for cls in self.actions)

    @abstractmethod
    def seats(self, players: int | None) -> int | str:
        """The seat count of a new table asked with ``players`` (None: not given), or why it is refused."""

    def new_table(self, opening: Opening, timing: Timing, rng: random.Random) -> RulesTable:
        """The rules engine of a match starting from ``opening`` (every seat filled), not started yet; its random
        source seeded from the opening's seed when it has one (a journalled match), else ``rng``."""
        return self.journal.new_table(opening, timing, opening.rng(rng))

    @abstractmethod
    def view(self, table: Any, seat: int, now: float) -> Any:
        """Seat ``seat``'s view (H1): what its bot decides from."""

    @abstractmethod
    def batch(self, table_id: int, table: Any, emits: Sequence[Any], now: float) -> UpdateBatch:
        """The update frames of one batch of the table's events, per seat: which events each seat sees (H1), and
        each seat's frame numbered by its ``seq``."""

    @abstractmethod
    def observed(self, emits: Sequence[Any], seen: tuple[int, ...]) -> list[Any]:
        """The events a bot at a seat that sees ``seen`` of the batch is told (H2: what a player there is told)."""

    @abstractmethod
    def seating_changed(self, emits: Sequence[Any]) -> bool:
        """Whether the batch changes the ``table`` push (a seat connected or gone, the host changed)."""

    @abstractmethod
    def over(self, table: Any) -> bool:
        """Whether the match is over (a rematch may start; the room's timer has nothing more to fire)."""

    @abstractmethod
    def lobby_phase(self, table: Any) -> Phase:
        """The table's phase in the lobby's words (``TableSummary.phase``, the ``table`` push)."""

    @abstractmethod
    def no_scores(self, players: int) -> tuple[int, ...]:
        """The scores the lobby list shows before the match."""

    @abstractmethod
    def host(self, room: RoomState) -> int | None:
        """Who hosts the room during its match (starts a rematch)."""

    @abstractmethod
    def chat_open(self, table: Any) -> bool:
        """Whether the table's chat is open now."""

    @abstractmethod
    def refused(self, request_id: int, action: Any, refusal: Any) -> m.Refused:
        """The ``refused`` reply to ``action``, refused by the engine with ``refusal``."""

    @abstractmethod
    def make_bot(self, level: str, rng: random.Random) -> SeatBot:
        """A bot of ``level`` (one of ``levels``); raises ``ValueError`` for another."""

    def routine(self, emits: Sequence[Any]) -> bool:
        """Whether the batch is routine play (a swap, a pulse) that neither changes the ``table`` push nor brings
        any deadline of the table forward: the room then skips both checks after telling it. No by default."""
        return False

    def slow_bot(self, bot: SeatBot, view: Any) -> bool:
        """Whether ``bot``'s decision on ``view`` may take long enough to hold up other tables (``Room.think``). No by
        default: such bots decide inline, in microseconds."""
        return False

    def decision_key(self, view: Any) -> Any:
        """What of a seat's view a bot's decision depends on: the decision is played only if the view still has the
        key it was made for (``Room.bot_decided``). By default the whole view."""
        return view

    def commentary(self, names: Sequence[str | None]) -> Commentary | None:
        """What a replay of a match says beside a seat's frames, the seats named ``names`` (None: nothing)."""
        return None

    #: The kinds of event a match's record is counted from (``record``): a room keeps these events of its match (and
    #: no others: nothing of routine play). None by default.
    record_kinds: frozenset[str] = frozenset()

    #: How many of its match's latest events a room keeps for a rejoiner's ``recent`` push (protocol 7): what a
    #: player coming back from another terminal reads in the feed. 0 (by default): none kept, no push.
    recent_kept: int = 0

    def recent(self, history: Sequence[Any], seat: int, team: int) -> tuple[Any, ...]:
        """Of the room's kept events ``history`` (oldest first, hidden ones too), the latest that ``seat`` of ``team``
        may see (H1), at most ``MAX_RECENT_EVENTS``: the ``recent`` push's."""
        return ()

    def record(self, table: Any, events: Sequence[Any]) -> MatchRecord:
        """The record of ``table``'s finished match, from ``events`` (those of its kinds in ``record_kinds``, in
        order): who played for which side, the sides' places, and each seat's tallies of the game's own. By default
        every seat is a side of its own, placed by the table's winners and then its scores, with no tallies."""
        scores = tuple(table.scores)
        return MatchRecord(tuple(range(len(scores))), places_by_score(tuple(table.winners), scores))


#: What a Quatro record counts per seat, beside matches and wins.
QUATRO_TALLIES = ("calls_right", "calls_wrong", "counters_right", "counters_wrong")


class QuatroGame(Game):
    """Quatro (R1–R20): 4, 6 or 8 seats in teams of two, hidden hands, signs and pulses."""

    name = p.QUATRO
    title = "Quatro"
    actions = a.PLAYER_ACTIONS
    levels = LEVELS
    default_level = DEFAULT_LEVEL
    journal = QuatroCodec()
    players_required = True

    def seats(self, players: int | None) -> int | str:
        if players not in PLAYER_COUNTS:
            return "a table has 4, 6 or 8 seats"
        assert players is not None
        return players

    def view(self, table: engine.Table, seat: int, now: float) -> Any:
        return engine.view(table, seat, now)

    def batch(self, table_id: int, table: engine.Table, emits: Sequence[engine.Emit], now: float) -> UpdateBatch:
        return Batch(table_id, table, emits, now)

    def observed(self, emits: Sequence[engine.Emit], seen: tuple[int, ...]) -> list[Any]:
        return [emits[k].event for k in seen]

    def seating_changed(self, emits: Sequence[engine.Emit]) -> bool:
        return any(emit.event.kind in ("seat_connected", "seat_disconnected", "host_changed") for emit in emits)

    def routine(self, emits: Sequence[engine.Emit]) -> bool:
        # A swap moves no deadline; a pulse only pushes its channel's next one later (and comes from the timer's
        # own tick, which re-arms).
        return engine.routine(emits)

    def over(self, table: engine.Table) -> bool:
        return table.phase is Phase.OVER

    def lobby_phase(self, table: engine.Table) -> Phase:
        return table.phase

    def no_scores(self, players: int) -> tuple[int, ...]:
        return (0,) * seating.team_count(players)

    def host(self, room: RoomState) -> int | None:
        table = room.table
        return table.host if isinstance(table, engine.Table) else room.host

    def chat_open(self, table: engine.Table) -> bool:
        return table.phase not in (Phase.SIGNING, Phase.ROUND)  # R11: the channel is the only one

    def refused(self, request_id: int, action: a.Action, refusal: a.Refusal) -> m.Refused:
        card = action.take if isinstance(action, a.Swap) else None
        message = wording.refusal(refusal.reason, refusal.wait, action=action.kind, card=card)
        return m.refused(request_id, refusal.reason, message, refusal.wait)

    def make_bot(self, level: str, rng: random.Random) -> Bot:
        return make_bot(level, rng)

    def commentary(self, names: Sequence[str | None]) -> Commentary:
        """After each round's reveal: who held four, whose pulses were the real sign and whose were decoys."""
        from quatro_server.quatro_commentary import QuatroCommentary

        return QuatroCommentary(names)

    record_kinds = frozenset({e.RoundEnded.kind})
    # A feed's worth of what a seat sees, from several times as many events (the hidden ones are most of a deal).
    recent_kept = 4 * p.MAX_RECENT_EVENTS

    def recent(self, history: Sequence[engine.Emit], seat: int, team: int) -> tuple[Any, ...]:
        seen = [emit.event for emit in history if emit.visible_to(seat, team)]  # the one gate of H1, as in updates
        return tuple(seen[-p.MAX_RECENT_EVENTS:])

    def record(self, table: engine.Table, events: Sequence[Any]) -> MatchRecord:
        """Teams are the sides, placed by the winners (R20: several may win together) and then the scores; each seat's
        calls and counters (R16) right and wrong, from the reveals (``round_ended``)."""
        counts = [dict.fromkeys(QUATRO_TALLIES, 0) for _ in range(table.players)]
        for event in events:
            if isinstance(event, e.RoundEnded) and event.by is not None and event.outcome in ("call", "counter"):
                counts[event.by][f"{event.outcome}s_{'right' if event.right else 'wrong'}"] += 1
        scores = tuple(table.scores)
        return MatchRecord(
            tuple(seating.team_of(seat, table.players) for seat in range(table.players)),
            places_by_score(tuple(table.winners), scores),
            tuple(counts),
        )


#: A Quarto table's phases in the lobby's words: a game under way is a ``round``, the pause between games a ``break``.
_QUARTO_LOBBY_PHASE = {
    q.Phase.LOBBY: Phase.LOBBY,
    q.Phase.PLAYING: Phase.ROUND,
    q.Phase.BETWEEN: Phase.BREAK,
    q.Phase.OVER: Phase.OVER,
}


class QuartoBatch:
    """A batch of a Quarto table's events: every seat sees all of them (Quarto hides nothing), and every update
    carries the seat's full view beside them (``quatro_shared.quarto.QuartoUpdate``)."""

    __slots__ = ("table_id", "table", "events", "now", "_all")

    def __init__(self, table_id: int, table: quarto_engine.QuartoTable, events: Sequence[q.Event], now: float) -> None:
        self.table_id, self.table, self.events, self.now = table_id, table, tuple(events), now
        self._all = tuple(range(len(self.events)))

    def seen_by(self, seat: int, team: int) -> tuple[int, ...]:
        return self._all

    def public_deltas(self) -> Callable[[int, int], bytes] | None:
        return None  # every update carries the seat's view: nothing to share

    def update(self, seat: int, seq: int, seen: tuple[int, ...], snapshot: bool) -> bytes:
        events = tuple(self.events[k] for k in seen)
        view = quarto_engine.view(self.table, seat, self.now)
        return encode(to_wire(q.QuartoUpdate(self.table_id, seq, snapshot, events, view)))


class QuartoGame(Game):
    """Quarto (Q1–Q7): two seats, a 4x4 board, 16 pieces; nothing hidden."""

    name = q.NAME
    title = "Quarto"
    actions = q.PLAYER_ACTIONS
    levels = q.LEVELS
    default_level = q.DEFAULT_LEVEL
    journal = QuartoCodec()

    def seats(self, players: int | None) -> int | str:
        if players is not None and players != q.SEATS:
            return f"a Quarto table has {q.SEATS} seats"
        return q.SEATS

    def view(self, table: quarto_engine.QuartoTable, seat: int, now: float) -> Any:
        return quarto_engine.view(table, seat, now)

    def batch(self, table_id: int, table: quarto_engine.QuartoTable, emits: Sequence[q.Event], now: float) -> UpdateBatch:
        return QuartoBatch(table_id, table, emits, now)

    def observed(self, emits: Sequence[q.Event], seen: tuple[int, ...]) -> list[Any]:
        return [emits[k] for k in seen]

    def seating_changed(self, emits: Sequence[q.Event]) -> bool:
        return any(isinstance(event, q.SeatConnected | q.SeatDisconnected) for event in emits)

    def over(self, table: quarto_engine.QuartoTable) -> bool:
        return table.phase is q.Phase.OVER

    def lobby_phase(self, table: quarto_engine.QuartoTable) -> Phase:
        return _QUARTO_LOBBY_PHASE[table.phase]

    def no_scores(self, players: int) -> tuple[int, ...]:
        return (0,) * q.SEATS

    def host(self, room: RoomState) -> int | None:
        """The room's host while connected; when the host has gone, the other player (two seats: no order to keep)."""
        if room.host is not None and room.seats[room.host].peer is not None:
            return room.host
        present = [i for i, s in enumerate(room.seats) if s.bot is None and s.peer is not None]
        return present[0] if present else room.host

    def chat_open(self, table: quarto_engine.QuartoTable) -> bool:
        return True  # nothing is hidden: there is no signal to carry

    def refused(self, request_id: int, action: q.Action, refusal: q.Refusal) -> m.Refused:
        return m.refused(request_id, refusal.reason, refusal.message or q.MESSAGES[refusal.reason])

    def make_bot(self, level: str, rng: random.Random) -> QuartoBot:
        # Quarto's search and its tables (9 MB, 0.1 s to build) load with the first Quarto bot, not with every server.
        from quatro_server.quarto_bots import make_quarto_bot

        return make_quarto_bot(level, rng)

    def slow_bot(self, bot: SeatBot, view: q.QuartoView) -> bool:
        """``perfect`` on its own turn: it searches exactly to the end with 11 empty squares or fewer, within budgets
        before (``quatro_server.quarto_bots``; seconds of CPU a turn), too long to hold up every other table. Its other looks (the opponent's turn,
        between games) and the other levels take microseconds."""
        from quatro_server.quarto_bots import QuartoBot  # loaded already: the bot is one

        return isinstance(bot, QuartoBot) and bot.slow and view.phase is q.Phase.PLAYING and view.turn == view.seat

    def commentary(self, names: Sequence[str | None]) -> Commentary:
        """The exact solver's verdict on the position after each move, where it can judge within a small budget."""
        from quatro_server.quarto_commentary import QuartoCommentary  # the solver loads with the first replay

        return QuartoCommentary(names)

    def record(self, table: quarto_engine.QuartoTable, events: Sequence[Any]) -> MatchRecord:
        """Each seat a side, placed by the winners (both for a drawn match, Q6); each seat's games played, won and
        drawn, from the match's score."""
        scores = tuple(table.scores)
        played = sum(scores) + table.draws
        return MatchRecord(
            tuple(range(q.SEATS)),
            places_by_score(tuple(table.winners), scores),
            tuple({"games": played, "games_won": scores[seat], "games_drawn": table.draws} for seat in range(q.SEATS)),
        )

    def decision_key(self, view: q.QuartoView) -> Any:
        """The position and whose step it is; the clocks and the seats' connections change nothing a bot decides."""
        return (view.phase, view.game, view.turn, view.step, view.board, view.in_hand)


QUATRO = QuatroGame()
QUARTO = QuartoGame()

#: Every game this server hosts, by name; the first is the default (``create_table`` without ``game``).
GAMES: dict[str, Game] = {game.name: game for game in (QUATRO, QUARTO)}
DEFAULT_GAME: Game = QUATRO


#: The request kinds that are game actions, of any game: the lobby routes each to the table's game.
ACTION_KINDS: frozenset[str] = frozenset().union(*(game.action_kinds for game in GAMES.values()))


def journal_codec(name: str | None) -> Codec | None:
    """The journal encoding of the game the journal names ``name``; None for a game this server does not host. A table
    of a journal of version 1 names none: that version hosted the default game alone."""
    game = DEFAULT_GAME if name is None else GAMES.get(name)
    return None if game is None else game.journal


def game_of(action: object) -> Game | None:
    """The game whose action ``action`` is."""
    known = _GAME_OF.get(type(action))
    if known is not None:
        return known
    for game in GAMES.values():
        if type(action) in game.actions:
            _GAME_OF[type(action)] = game  # asked for every action: the answer is remembered by type
            return game
    return None


_GAME_OF: dict[type, Game] = {}


def register_game(game: Game) -> None:
    """Host one more game (its contract registered in ``quatro_shared.games`` first): its name and its action kinds
    must be new. A lobby made after this routes the game's actions (a test registers a game of its own this way)."""
    global ACTION_KINDS
    if game.name in GAMES:
        raise ValueError(f"a game named {game.name!r} is hosted already")
    if game.action_kinds & ACTION_KINDS:
        raise ValueError(f"{game.name}: action kinds {sorted(game.action_kinds & ACTION_KINDS)} are taken")
    GAMES[game.name] = game
    ACTION_KINDS = ACTION_KINDS | game.action_kinds


def host_instead(game: Game) -> None:
    """Host ``game`` in place of the hosted game of the same name and actions (``quatro_server.lessons``: a game's
    scripted lesson). A lobby made after this creates its tables of that name with ``game``."""
    global DEFAULT_GAME
    hosted = GAMES.get(game.name)
    if hosted is None or hosted.action_kinds != game.action_kinds:
        raise ValueError(f"{game.name}: no hosted game of that name and actions to replace")
    GAMES[game.name] = game
    if DEFAULT_GAME is hosted:
        DEFAULT_GAME = game
    for cls in game.actions:
        _GAME_OF.pop(cls, None)


def unregister_game(name: str) -> None:
    """Stop hosting the game called ``name`` (a test's own, once the test is done). The default game stays."""
    global ACTION_KINDS
    if name == DEFAULT_GAME.name:
        raise ValueError("the default game stays hosted")
    game = GAMES.pop(name)
    ACTION_KINDS = frozenset().union(*(other.action_kinds for other in GAMES.values()))
    for cls in game.actions:
        _GAME_OF.pop(cls, None)
