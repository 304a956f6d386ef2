"""``quatro-server replay FILE|ID``: print a journalled match move by move, in the notation of ``docs/journal.md``.

Every line is ``TIME WHO WHAT``: the match time (minutes and seconds since the start, the time a server was down
left out), ``s3`` for seat 3 or ``--`` for the table itself, and what happened. The replay shows everything,
hidden things included (hands, signs, emoji choices): it is for the operator and for history, never for a player
during a match.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from quatro_shared import seating

from quatro_server.journal import FILE_NAME, JournalError, SavedTable, default_data_dir, read_journal


def _cards(cards: list[str]) -> str:
    return " ".join(cards) if cards else "-"


def _scores(scores: list[int]) -> str:
    return "-".join(str(score) for score in scores)


def _clock(seconds: float) -> str:
    minutes, rest = divmod(max(seconds, 0.0), 60)
    return f"{int(minutes):02d}:{rest:06.3f}"


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


def format_match(saved: SavedTable) -> Iterator[str]:
    """The lines of one table's replay: a header, the seats, then every event in order."""
    created = datetime.fromtimestamp(saved.created, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    teams = seating.team_count(saved.players)
    yield (
        f"# Quatro table {saved.id}: {saved.players} players, {teams} teams, timing {saved.timing_name} "
        f"(first to {saved.timing.get('target_score')}), opened {created}, {saved.status}"
    )
    for s in saved.seats:
        what = f"bot {s.bot}" if s.bot else "human"
        yield f"# s{s.seat} {s.name or '(empty)'}: team {seating.team_of(s.seat, saved.players)}, {what}"
    origin: float | None = None
    for move in saved.moves:
        if origin is None:
            origin = move.at
        if move.kind == "checkpoint":
            continue  # the table's whole state, for restoring: nothing happened
        if move.kind == "rebase":
            origin += json.loads(move.input or "{}").get("delta", 0.0)
            yield f"{_clock(move.at - origin)} -- server restarted: the table resumes"
            continue
        for _team, _seat, event in json.loads(move.events):
            who, what = describe(event)
            yield f"{_clock(move.at - origin)} {who} {what}"
    if not saved.moves:
        yield "# the match never started"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", metavar="FILE|ID", help="a journal file, or the id of a table in --data-dir's journal")
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help=f"the server's data directory, for an ID (default: {default_data_dir()})",
    )
    parser.add_argument("--table", type=int, default=None, help="with a FILE: only this table (default: every table)")


def run(args: argparse.Namespace) -> int:
    path = Path(args.target)
    table_id = args.table
    if not path.is_file():
        if not args.target.isdigit():
            print(f"quatro-server replay: {args.target} is neither a journal file nor a table id", file=sys.stderr)
            return 2
        table_id = int(args.target)
        path = (args.data_dir or default_data_dir()) / FILE_NAME
    try:
        tables = read_journal(path)
    except JournalError as exc:
        print(f"quatro-server replay: {exc}", file=sys.stderr)
        return 2
    if table_id is not None:
        tables = [t for t in tables if t.id == table_id]
        if not tables:
            print(f"quatro-server replay: no table {table_id} in {path}", file=sys.stderr)
            return 1
    for i, table in enumerate(tables):
        if i:
            print()
        for line in format_match(table):
            print(line)
    return 0
