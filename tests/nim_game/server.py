"""Nim as the server hosts it: its rules table (N1–N3), a seat's view, its update frames, its bots, its journal
encoding, and the ``quatro_server.game.Game`` that lists them, written the way a game's own server module is.

The table is as pure as every game's: it never reads a clock, draws randomness only from the source it is given,
and has the two doors ``act`` and ``advance``. Nim has no deadline, so ``advance`` only moves the table's clock.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from quatro_shared import messages as m
from quatro_shared.framing import encode
from quatro_shared.tables import Connect, Disconnect
from quatro_shared.tables import TablePhase as LobbyPhase
from quatro_shared.wire import WireError, codec, to_wire

from nim_game import contract as n
from quatro_server.game import Game, RoomState
from quatro_server.journal import Notes, Opening, SavedTable, json_text
from quatro_server.timing import Timing

# --- the rules table -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why an action was refused: a stable reason and the words a player reads."""

    reason: str
    message: str


#: Every refusal of the table, in its words.
REFUSALS = {
    "bad_seat": Refusal("bad_seat", "there is no such seat"),
    "unknown_action": Refusal("unknown_action", "that is not a move of Nim"),
    "disconnected": Refusal("disconnected", "your seat is disconnected"),
    "not_started": Refusal("not_started", "the match has not started"),
    "match_over": Refusal("match_over", "the match is over"),
    "not_your_turn": Refusal("not_your_turn", "it is not your turn"),
    "bad_count": Refusal("bad_count", f"take 1 to {n.MOST} stones"),
    "too_many": Refusal("too_many", "the heap holds fewer stones than that"),
}


@dataclass(frozen=True, slots=True)
class Outcome:
    events: list[n.Event]
    refusal: Refusal | None = None

    @property
    def ok(self) -> bool:
        return self.refusal is None


class NimTable:
    """One Nim table: two seats, a match of ``games`` games (N3), the heap of the game under way."""

    players = n.SEATS

    def __init__(self, *, rng: random.Random, bots: frozenset[int] = frozenset(), games: int = n.GAMES) -> None:
        self.rng = rng
        self.games = games
        self.bots = bots
        self.connected = [True] * n.SEATS
        self.phase = n.Phase.LOBBY
        self.game = 0
        self.starter = 0
        self.heap = 0
        self.turn: int | None = None
        self.scores = [0] * n.SEATS
        self.winners: tuple[int, ...] = ()
        self.now = float("-inf")

    def start(self, now: float) -> list[n.Event]:
        self.now = max(self.now, now)
        if self.phase is not n.Phase.LOBBY:
            return []
        first = self.rng.randrange(n.SEATS)  # N3: the first starter by lot
        self.phase = n.Phase.PLAYING
        out: list[n.Event] = [n.MatchStarted(self.games, first)]
        self._begin(1, first, out)
        return out

    def act(self, seat: int, action: object, now: float) -> Outcome:
        out = self.advance(now)
        return Outcome(out, self._dispatch(seat, action, out))

    def advance(self, now: float) -> list[n.Event]:
        self.now = max(self.now, now)
        return []

    def next_deadline(self) -> float | None:
        return None

    def rebase(self, delta: float) -> None:
        self.now += delta

    def _dispatch(self, seat: int, action: object, out: list[n.Event]) -> Refusal | None:
        if not isinstance(seat, int) or not 0 <= seat < n.SEATS:
            return REFUSALS["bad_seat"]
        if isinstance(action, Connect | Disconnect):
            connect = isinstance(action, Connect)
            if self.connected[seat] != connect and seat not in self.bots:
                self.connected[seat] = connect
                out.append(n.SeatConnected(seat) if connect else n.SeatDisconnected(seat))
            return None
        if not isinstance(action, n.Take):
            return REFUSALS["unknown_action"]
        if not self.connected[seat]:
            return REFUSALS["disconnected"]
        if self.phase is n.Phase.LOBBY:
            return REFUSALS["not_started"]
        if self.phase is n.Phase.OVER:
            return REFUSALS["match_over"]
        if seat != self.turn:
            return REFUSALS["not_your_turn"]
        if isinstance(action.count, bool) or not 1 <= action.count <= n.MOST:
            return REFUSALS["bad_count"]
        if action.count > self.heap:
            return REFUSALS["too_many"]
        self.heap -= action.count
        out.append(n.Taken(seat, action.count, self.heap))
        if self.heap:
            self.turn = 1 - seat
            return None
        self.scores[seat] += 1  # N3: the last stone wins
        out.append(n.GameWon(self.game, seat, tuple(self.scores)))
        if self.game >= self.games:
            top = max(self.scores)
            self.phase, self.turn = n.Phase.OVER, None
            self.winners = tuple(i for i, score in enumerate(self.scores) if score == top)
            out.append(n.MatchOver(self.winners, tuple(self.scores)))
        else:
            self._begin(self.game + 1, 1 - self.starter, out)
        return None

    def _begin(self, game: int, starter: int, out: list[n.Event]) -> None:
        self.game, self.starter, self.heap, self.turn = game, starter, n.HEAP, starter
        out.append(n.GameStarted(game, starter, n.HEAP))


def view(table: NimTable, seat: int) -> n.NimView:
    return n.NimView(
        seat=seat,
        phase=table.phase,
        heap=table.heap,
        turn=table.turn,
        game=table.game,
        games=table.games,
        scores=tuple(table.scores),
        winners=table.winners,
        connected=tuple(table.connected),
    )


class NimBatch:
    """A batch of a Nim table's events: every seat sees all of them; a snapshot carries the seat's view too."""

    def __init__(self, table_id: int, table: NimTable, events: Sequence[n.Event]) -> None:
        self.table_id, self.table, self.events = table_id, table, tuple(events)

    def seen_by(self, seat: int, team: int) -> tuple[int, ...]:
        return tuple(range(len(self.events)))

    def public_deltas(self) -> Callable[[int, int], bytes] | None:
        return None

    def update(self, seat: int, seq: int, seen: tuple[int, ...], snapshot: bool) -> bytes:
        events = tuple(self.events[k] for k in seen)
        seat_view = view(self.table, seat) if snapshot else None
        return encode(to_wire(n.NimUpdate(self.table_id, seq, snapshot, events, seat_view)))


# --- bots ----------------------------------------------------------------------------------------


class RandomNimBot:
    """Any legal move, at random."""

    level = "random"

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def observe(self, events: list[Any]) -> None:
        pass

    def think_time(self) -> float:
        return self.rng.uniform(0.05, 0.2)

    def decide(self, seat_view: n.NimView, now: float) -> list[n.Action]:
        moves = n.legal(seat_view)
        return [self.rng.choice(moves)] if moves else []


class PerfectNimBot(RandomNimBot):
    """Leaves a multiple of ``MOST + 1`` whenever it can: it wins every game it can win."""

    level = "perfect"

    def decide(self, seat_view: n.NimView, now: float) -> list[n.Action]:
        moves = n.legal(seat_view)
        winning = [
            move for move in moves if isinstance(move, n.Take) and (seat_view.heap - move.count) % (n.MOST + 1) == 0
        ]
        return winning[:1] or super().decide(seat_view, now)


BOTS = {"random": RandomNimBot, "perfect": PerfectNimBot}

# --- the journal ---------------------------------------------------------------------------------


class NimCodec:
    """Nim's matches in the journal: actions and events in their wire form; a match is replayed from its start."""

    checkpoints = None

    def new_table(self, opening: Opening, timing: Timing, rng: random.Random) -> NimTable:
        return NimTable(rng=rng, bots=opening.bots)

    def encode_action(self, action: Any) -> str:
        return json_text(to_wire(action))

    def decode_action(self, text: str) -> Any:
        data = json.loads(text)
        kind = data.get("kind") if isinstance(data, dict) else None
        if kind == Connect.kind:
            return Connect()
        if kind == Disconnect.kind:
            return Disconnect()
        try:
            return codec(n.CONTRACT).action(data)  # the contract's own reading (once it is registered)
        except WireError as exc:
            raise ValueError(str(exc)) from exc

    def encode_events(self, emits: Sequence[n.Event]) -> str:
        return json_text([to_wire(event) for event in emits])

    def events(self, text: str) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = json.loads(text)
        return events

    def routine(self, emits: Sequence[n.Event]) -> bool:
        return not any(isinstance(event, n.GameWon | n.MatchOver) for event in emits)

    def notes(self, emits: Sequence[n.Event]) -> Notes:
        scores: tuple[int, ...] | None = None
        game, over = 0, False
        for event in emits:
            if isinstance(event, n.GameWon):
                scores, game = event.scores, event.game
            elif isinstance(event, n.MatchOver):
                over = True
        return Notes(scores, game, over)

    def over(self, table: NimTable) -> bool:
        return table.phase is n.Phase.OVER

    def header(self, saved: SavedTable) -> Iterator[str]:
        created = datetime.fromtimestamp(saved.created, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
        yield f"# Nim table {saved.id}: {saved.players} players, opened {created}, {saved.status}"
        for s in saved.seats:
            yield f"# s{s.seat} {s.name or '(empty)'}: {'bot ' + s.bot if s.bot else 'human'}"

    def describe(self, event: dict[str, Any]) -> tuple[str, str]:
        seat = event.get("seat")
        who = "--" if seat is None else f"s{seat}"
        match event["kind"]:
            case "nim_taken":
                return who, f"takes {event['count']}, leaves {event['heap']}"
            case "nim_game_won":
                return "--", f"game {event['game']} to s{event['winner']}"
        return who, event["kind"]


# --- the game ------------------------------------------------------------------------------------

_LOBBY_PHASE = {n.Phase.LOBBY: LobbyPhase.LOBBY, n.Phase.PLAYING: LobbyPhase.PLAYING, n.Phase.OVER: LobbyPhase.OVER}


class NimGame(Game):
    """Nim (N1–N3): two seats, one heap, nothing hidden."""

    name = n.NAME
    title = "Nim"
    actions = n.PLAYER_ACTIONS
    levels = n.LEVELS
    default_level = n.DEFAULT_LEVEL
    journal = NimCodec()

    def seats(self, players: int | None) -> int | str:
        if players is not None and players != n.SEATS:
            return f"a Nim table has {n.SEATS} seats"
        return n.SEATS

    def view(self, table: NimTable, seat: int, now: float) -> n.NimView:
        return view(table, seat)

    def batch(self, table_id: int, table: NimTable, emits: Sequence[n.Event], now: float) -> NimBatch:
        return NimBatch(table_id, table, emits)

    def observed(self, emits: Sequence[n.Event], seen: tuple[int, ...]) -> list[Any]:
        return [emits[k] for k in seen]

    def seating_changed(self, emits: Sequence[n.Event]) -> bool:
        return any(isinstance(event, n.SeatConnected | n.SeatDisconnected) for event in emits)

    def over(self, table: NimTable) -> bool:
        return table.phase is n.Phase.OVER

    def lobby_phase(self, table: NimTable) -> LobbyPhase:
        return _LOBBY_PHASE[table.phase]

    def no_scores(self, players: int) -> tuple[int, ...]:
        return (0,) * n.SEATS

    def host(self, room: RoomState) -> int | None:
        return room.host

    def chat_open(self, table: NimTable) -> bool:
        return True

    def refused(self, request_id: int, action: Any, refusal: Refusal) -> m.Refused:
        return m.refused(request_id, refusal.reason, refusal.message)

    def make_bot(self, level: str, rng: random.Random) -> Any:
        if level not in BOTS:
            raise ValueError(f"unknown Nim bot level {level!r}")
        return BOTS[level](rng)


GAME = NimGame()
