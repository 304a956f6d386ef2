"""Quarto as the server hosts it (``quatro_server.game.Game``): its seats, views, batches, bots and records."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from quatro_shared import messages as m
from quatro_shared.framing import encode
from quatro_shared.games.quarto import contract as q
from quatro_shared.tables import TablePhase
from quatro_shared.wire import to_wire

from quatro_server.game import Commentary, Game, RoomState, UpdateBatch
from quatro_server.games.quarto import engine as quarto_engine
from quatro_server.games.quarto.journal import QuartoCodec
from quatro_server.records.match import MatchRecord, places_by_score
from quatro_server.rules import SeatBot

if TYPE_CHECKING:
    from quatro_server.games.quarto.bots import QuartoBot

#: A Quarto table's phases in the lobby's words: a game under way is play, the pause between games is between.
_QUARTO_LOBBY_PHASE = {
    q.Phase.LOBBY: TablePhase.LOBBY,
    q.Phase.PLAYING: TablePhase.PLAYING,
    q.Phase.BETWEEN: TablePhase.BETWEEN,
    q.Phase.OVER: TablePhase.OVER,
}


class QuartoBatch:
    """A batch of a Quarto table's events: every seat sees all of them (Quarto hides nothing), and every update
    carries the seat's full view beside them (``quatro_shared.games.quarto.contract.QuartoUpdate``)."""

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


class QuartoGame(Game[quarto_engine.QuartoTable, q.QuartoView, q.Event, q.Action, q.Refusal]):
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

    def view(self, table: quarto_engine.QuartoTable, seat: int, now: float) -> q.QuartoView:
        return quarto_engine.view(table, seat, now)

    def batch(
        self, table_id: int, table: quarto_engine.QuartoTable, emits: Sequence[q.Event], now: float
    ) -> UpdateBatch:
        return QuartoBatch(table_id, table, emits, now)

    def observed(self, emits: Sequence[q.Event], seen: tuple[int, ...]) -> list[object]:
        return [emits[k] for k in seen]

    def seating_changed(self, emits: Sequence[q.Event]) -> bool:
        return any(isinstance(event, q.SeatConnected | q.SeatDisconnected) for event in emits)

    def over(self, table: quarto_engine.QuartoTable) -> bool:
        return table.phase is q.Phase.OVER

    def lobby_phase(self, table: quarto_engine.QuartoTable) -> TablePhase:
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
        from quatro_server.games.quarto.bots import make_quarto_bot

        return make_quarto_bot(level, rng)

    def slow_bot(self, bot: SeatBot, view: q.QuartoView) -> bool:
        """``perfect`` on its own turn: it searches exactly to the end with 11 empty squares or fewer, within budgets
        before (``quatro_server.games.quarto.bots``; seconds of CPU a turn), too long to hold up every other table. Its other looks (the opponent's turn,
        between games) and the other levels take microseconds."""
        from quatro_server.games.quarto.bots import QuartoBot  # loaded already: the bot is one

        return isinstance(bot, QuartoBot) and bot.slow and view.phase is q.Phase.PLAYING and view.turn == view.seat

    def commentary(self, names: Sequence[str | None]) -> Commentary[quarto_engine.QuartoTable, q.Event]:
        """The exact solver's verdict on the position after each move, where it can judge within a small budget."""
        from quatro_server.games.quarto.commentary import QuartoCommentary  # the solver loads with the first replay

        return QuartoCommentary(names)

    def record(self, table: quarto_engine.QuartoTable, events: Sequence[object]) -> MatchRecord:
        """Each seat a side, placed by the winners (both for a drawn match, Q6); each seat's games played, won and
        drawn, from the match's score."""
        scores = tuple(table.scores)
        played = sum(scores) + table.draws
        return MatchRecord(
            tuple(range(q.SEATS)),
            places_by_score(tuple(table.winners), scores),
            tuple({"games": played, "games_won": scores[seat], "games_drawn": table.draws} for seat in range(q.SEATS)),
        )

    def decision_key(self, view: q.QuartoView) -> object:
        """The position and whose step it is; the clocks and the seats' connections change nothing a bot decides."""
        return (view.phase, view.game, view.turn, view.step, view.board, view.in_hand)


QUARTO = QuartoGame()
