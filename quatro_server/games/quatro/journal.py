"""How a Quatro match is written to the journal and read back: Quatro's ``Codec`` (``quatro_server.journal.codec``).

An action is its wire form as JSON; a batch of events is ``[team, seat, event]`` per event, who could see it beside
it (``Emit``); once a round, as its sign phase begins, a checkpoint holds the whole table (``Table.state``) and its
random source's state, so that a restore replays the current round only. A round's end (``round_ended``) is a point
won, committed before anyone hears of it (R20). ``describe`` is the replay notation of docs/journal.md.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Sequence
from datetime import datetime, timezone
from typing import Any

from quatro_shared.games.quatro import actions as a
from quatro_shared.games.quatro import events as e
from quatro_shared.games.quatro import seating
from quatro_shared.games.quatro.views import Phase
from quatro_shared.games.quatro.wire import action_from_wire
from quatro_shared.tables import Connect, Disconnect
from quatro_shared.wire import WireError, to_wire

from quatro_server.games.quatro import engine
from quatro_server.games.quatro.engine import ROUTINE_EVENTS, Emit, Table
from quatro_server.journal.codec import Notes, Opening, json_text
from quatro_server.journal.saved import SavedTable
from quatro_server.timing import Timing


class QuatroCheckpoints:
    """A Quatro table saved whole (``Table.state``) with its random source's state."""

    def save(self, table: Table) -> dict[str, Any]:
        return {"table": table.state(), "rng": table.rng.getstate()}

    def load(self, data: dict[str, Any], timing: Timing) -> Table:
        version, internal, gauss = data["rng"]
        rng = random.Random()
        rng.setstate((version, tuple(internal), gauss))
        return Table.from_state(data["table"], timing=timing, rng=rng)


class QuatroCodec:
    """Quatro's matches in the journal."""

    checkpoints = QuatroCheckpoints()
    #: Only swaps and pulses: the move is all there is to record (asked for every move: the engine's own test).
    routine = staticmethod(engine.routine)

    def new_table(self, opening: Opening, timing: Timing, rng: random.Random) -> Table:
        return Table(
            opening.players,
            timing=timing,
            rng=rng,
            bots=opening.bots,
            host=opening.host,
            seat_order=list(opening.order),
        )

    def encode_action(self, action: a.Action | Connect | Disconnect) -> str:
        return json_text(to_wire(action))

    def decode_action(self, text: str) -> a.Action | Connect | Disconnect:
        data = json.loads(text)
        kind = data.get("kind") if isinstance(data, dict) else None
        if kind == Connect.kind:
            return Connect()
        if kind == Disconnect.kind:
            return Disconnect()
        try:
            return action_from_wire(data)
        except WireError as exc:
            raise ValueError(str(exc)) from exc

    def encode_events(self, emits: Sequence[Emit]) -> str:
        return json_text([[emit.team, emit.seat, to_wire(emit.event)] for emit in emits])

    def events(self, text: str) -> list[dict[str, Any]]:
        return [event for _team, _seat, event in json.loads(text)]

    def notes(self, emits: Sequence[Emit]) -> Notes:
        scores: tuple[int, ...] | None = None
        round_, over, checkpoint = 0, False, False
        for emit in emits:
            event = emit.event
            if type(event) in ROUTINE_EVENTS:  # a swap or a pulse beside the notable events: nothing more to record
                continue
            if isinstance(event, e.SigningStarted):
                checkpoint = True  # once a round: restoring replays the current round's moves only
            elif isinstance(event, e.RoundEnded):
                scores, round_ = tuple(event.scores), event.round
            elif isinstance(event, e.MatchOver):
                over = True
        return Notes(scores, round_, over, checkpoint)

    def over(self, table: Table) -> bool:
        return table.phase is Phase.OVER

    def header(self, saved: SavedTable) -> Iterator[str]:
        created = datetime.fromtimestamp(saved.created, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
        teams = seating.team_count(saved.players)
        yield (
            f"# Quatro table {saved.id}: {saved.players} players, {teams} teams, timing {saved.timing_name} "
            f"(first to {saved.timing.get('target_score')}), opened {created}, {saved.status}"
        )
        for s in saved.seats:
            what = f"bot {s.bot}" if s.bot else "human"
            yield f"# s{s.seat} {s.name or '(empty)'}: team {seating.team_of(s.seat, saved.players)}, {what}"

    def describe(self, event: dict[str, Any]) -> tuple[str, str]:
        return describe(event)


def _cards(cards: list[str]) -> str:
    return " ".join(cards) if cards else "-"


def _scores(scores: list[int]) -> str:
    return "-".join(str(score) for score in scores)


def describe(event: dict[str, Any]) -> tuple[str, str]:
    """One event as ``(who, what)`` in the replay notation."""
    kind = event["kind"]
    seat = event.get("seat")
    who = "--" if seat is None else f"s{seat}"
    match kind:
        case "match_started":
            return "--", f"match starts: {event['players']} players, first to {event['target_score']}"
        case "signing_started":
            return "--", f"round {event['round']}: signing"
        case "sign_chosen":
            by = "by lot" if event["seat"] is None else "picked"
            return who, f"sign team {event['team']} {event['sign']} ({by})"
        case "player_ready":
            return who, "ready"
        case "round_opened":
            return "--", f"round {event['round']} opens"
        case "dealt":
            how = "reshuffle" if event["reshuffle"] else "deal"
            return "--", f"{how}: center {_cards(event['center'])} (deals redone: {event['redeals']})"
        case "hand_dealt":
            return who, f"hand {_cards(event['hand'])}"
        case "swapped":
            return who, f"swap {event['put_down']} for {event['taken']} at slot {event['slot']}"
        case "channel_taken":
            return who, "channel taken"
        case "channel_released":
            return who, "channel released"
        case "emoji_chosen":
            return who, f"emoji {event['sign'] or 'none'}"
        case "pulse":
            return who, f"pulse {event['sign']}"
        case "vote_started":
            voters = " ".join(f"s{v}" for v in event["voters"]) or "nobody"
            return who, f"asks for a reshuffle (voters: {voters})"
        case "vote_cast":
            return who, f"votes {'yes' if event['yes'] else 'no'}"
        case "vote_ended":
            return "--", f"vote {'passes' if event['passed'] else 'fails'} ({event['outcome']})"
        case "round_ended":
            by = "--" if event["by"] is None else f"s{event['by']}"
            if event["outcome"] == "draw":
                what = "draw: nobody scores"
            else:
                accused = f" team {event['accused']}" if event["outcome"] == "counter" else ""
                scorers = " ".join(f"team {t}" for t in event["scorers"])
                what = f"{event['outcome']}{accused}: {'right' if event['right'] else 'wrong'}, {scorers} scores"
            return by, f"{what}; scores {_scores(event['scores'])}"
        case "break_started":
            return "--", "break"
        case "match_over":
            winners = " and ".join(f"team {t}" for t in event["winners"])
            return "--", f"match over: {winners} won, scores {_scores(event['scores'])}"
        case "seat_connected":
            return who, "connected"
        case "seat_disconnected":
            return who, "disconnected"
        case "host_changed":
            return "--", f"host {'nobody' if seat is None else who}"
    return who, kind
