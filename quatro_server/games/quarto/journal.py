"""How a Quarto match is written to the journal and read back: Quarto's ``Codec`` (``quatro_server.journal.codec``).

An action is its wire form as JSON, a batch of events the list of their wire forms (Quarto hides nothing: no seat
or team beside them). A match is at most a few hundred moves, so there are no checkpoints: a restore replays the
current match from its start. A game's end (``quarto_game_ended``) is a point won, committed before anyone hears of
it, as a Quatro round's end is. ``describe`` is the replay notation of docs/journal.md, in Q7 for pieces and squares.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Sequence
from datetime import datetime, timezone
from typing import Any

from quatro_shared.games.quarto import contract as q
from quatro_shared.tables import Connect, Disconnect
from quatro_shared.wire import WireError, codec, to_wire

from quatro_server.games.quarto.engine import QuartoTable
from quatro_server.journal.codec import Notes, Opening, json_text
from quatro_server.journal.saved import SavedTable
from quatro_server.timing import Timing

#: The events that change more than the play: a game's end scores, the match's end closes the table.
#: How Quarto's actions read back from the journal: the contract's own wire reading.
_WIRE = codec(q.CONTRACT)
_NOTABLE = frozenset({q.GameEnded, q.MatchOver})


def _routine(events: Sequence[q.Event]) -> bool:
    for event in events:
        if type(event) in _NOTABLE:
            return False
    return True


class QuartoCodec:
    """Quarto's matches in the journal."""

    checkpoints = None
    routine = staticmethod(_routine)

    def new_table(self, opening: Opening, timing: Timing, rng: random.Random) -> QuartoTable:
        return QuartoTable(timing=timing, rng=rng, bots=opening.bots)

    def encode_action(self, action: q.Action | Connect | Disconnect) -> str:
        return json_text(to_wire(action))

    def decode_action(self, text: str) -> q.Action | Connect | Disconnect:
        data = json.loads(text)
        kind = data.get("kind") if isinstance(data, dict) else None
        if kind == Connect.kind:
            return Connect()
        if kind == Disconnect.kind:
            return Disconnect()
        try:
            return _WIRE.action(data)
        except WireError as exc:
            raise ValueError(str(exc)) from exc

    def encode_events(self, emits: Sequence[q.Event]) -> str:
        return json_text([to_wire(event) for event in emits])

    def events(self, text: str) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = json.loads(text)
        return events

    def notes(self, emits: Sequence[q.Event]) -> Notes:
        scores: tuple[int, ...] | None = None
        game, over = 0, False
        for event in emits:
            if isinstance(event, q.GameEnded):
                scores, game = tuple(event.scores), event.game
            elif isinstance(event, q.MatchOver):
                over = True
        return Notes(scores, game, over)

    def over(self, table: QuartoTable) -> bool:
        return table.phase is q.Phase.OVER

    def header(self, saved: SavedTable) -> Iterator[str]:
        created = datetime.fromtimestamp(saved.created, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
        yield f"# Quarto table {saved.id}: {saved.players} players, timing {saved.timing_name}, opened {created}, {saved.status}"
        for s in saved.seats:
            what = f"bot {s.bot}" if s.bot else "human"
            yield f"# s{s.seat} {s.name or '(empty)'}: {what}"

    def describe(self, event: dict[str, Any]) -> tuple[str, str]:
        return describe(event)


def _lot(event: dict[str, Any]) -> str:
    return " (by lot: the move clock ran out)" if event.get("by_lot") else ""


def _scores(event: dict[str, Any]) -> str:
    return f"scores {'-'.join(str(score) for score in event['scores'])}, draws {event['draws']}"


def describe(event: dict[str, Any]) -> tuple[str, str]:
    """One Quarto event as ``(who, what)`` in the replay notation: pieces and squares in Q7."""
    kind = event["kind"]
    seat = event.get("seat")
    who = "--" if seat is None else f"s{seat}"
    match kind:
        case "quarto_match_started":
            return "--", f"match starts: {event['games']} games, s{event['first']} starts"
        case "quarto_game_started":
            return "--", f"game {event['game']}: s{event['starter']} gives first"
        case "piece_given":
            return who, f"gives {q.format_piece(event['piece'])}{_lot(event)} (turn {event['notation']})"
        case "piece_placed":
            return who, f"places {q.format_piece(event['piece'])} on {event['notation']}{_lot(event)}"
        case "quarto_game_ended":
            if event["winner"] is None:
                what = "a draw: the board is full"
            else:
                line = " ".join(q.format_square(square) for square in event["line"] or ())
                what = f"s{event['winner']} wins on {line} ({', '.join(event['shared'])})"
            return "--", f"game {event['game']} over: {what}; {_scores(event)}"
        case "quarto_player_ready":
            return who, "ready for the next game"
        case "quarto_match_over":
            winners = " and ".join(f"s{w}" for w in event["winners"])
            verdict = "drawn" if len(event["winners"]) > 1 else f"{winners} won"
            return "--", f"match over: {verdict}, {_scores(event)}"
        case "quarto_seat_connected":
            return who, "connected"
        case "quarto_seat_disconnected":
            return who, "disconnected"
    return who, kind
