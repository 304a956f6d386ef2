"""Quatro as the server hosts it (``quatro_server.game.Game``): its seats, views, batches, bots and records."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TYPE_CHECKING

from quatro_shared import messages as m
from quatro_shared import protocol as p
from quatro_shared.games.quatro import actions as a
from quatro_shared.games.quatro import events as e
from quatro_shared.games.quatro import seating, wording
from quatro_shared.games.quatro.cards import PLAYER_COUNTS
from quatro_shared.games.quatro.views import TABLE_PHASE, Phase, SeatView
from quatro_shared.levels import DEFAULT_LEVEL, LEVELS
from quatro_shared.tables import TablePhase

from quatro_server.game import Commentary, Game, RoomState, UpdateBatch
from quatro_server.games.quatro import engine
from quatro_server.games.quatro.bots import Bot, make_bot
from quatro_server.games.quatro.journal import QuatroCodec
from quatro_server.games.quatro.updates import Batch
from quatro_server.records.match import MatchRecord, places_by_score

if TYPE_CHECKING:
    pass

#: What a Quatro record counts per seat, beside matches and wins.
QUATRO_TALLIES = ("calls_right", "calls_wrong", "counters_right", "counters_wrong")


class QuatroGame(Game[engine.Table, SeatView, engine.Emit, a.Action, a.Refusal]):
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

    def view(self, table: engine.Table, seat: int, now: float) -> SeatView:
        return engine.view(table, seat, now)

    def batch(self, table_id: int, table: engine.Table, emits: Sequence[engine.Emit], now: float) -> UpdateBatch:
        return Batch(table_id, table, emits, now)

    def observed(self, emits: Sequence[engine.Emit], seen: tuple[int, ...]) -> list[object]:
        return [emits[k].event for k in seen]

    def seating_changed(self, emits: Sequence[engine.Emit]) -> bool:
        return any(emit.event.kind in ("seat_connected", "seat_disconnected", "host_changed") for emit in emits)

    def routine(self, emits: Sequence[engine.Emit]) -> bool:
        # A swap moves no deadline; a pulse only pushes its channel's next one later (and comes from the timer's
        # own tick, which re-arms).
        return engine.routine(emits)

    def over(self, table: engine.Table) -> bool:
        return table.phase is Phase.OVER

    def lobby_phase(self, table: engine.Table) -> TablePhase:
        return TABLE_PHASE[table.phase]

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

    def commentary(self, names: Sequence[str | None]) -> Commentary[engine.Table, engine.Emit]:
        """After each round's reveal: who held four, whose pulses were the real sign and whose were decoys."""
        from quatro_server.games.quatro.commentary import QuatroCommentary

        return QuatroCommentary(names)

    record_kinds = frozenset({e.RoundEnded.kind})
    # A feed's worth of what a seat sees, from several times as many events (the hidden ones are most of a deal).
    recent_kept = 4 * p.MAX_RECENT_EVENTS

    def team_of(self, seat: int, players: int) -> int:
        return seating.team_of(seat, players)

    def team_count(self, players: int) -> int:
        return seating.team_count(players)

    def recent(self, history: Sequence[engine.Emit], seat: int, team: int) -> tuple[object, ...]:
        seen = [emit.event for emit in history if emit.visible_to(seat, team)]  # the one gate of H1, as in updates
        return tuple(seen[-p.MAX_RECENT_EVENTS :])

    def record(self, table: engine.Table, events: Sequence[object]) -> MatchRecord:
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


QUATRO = QuatroGame()
