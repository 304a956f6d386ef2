"""``quatro-server replay FILE|ID``: print a journalled match move by move, in the notation of ``docs/journal.md``.

Every line is ``TIME WHO WHAT``: the match time (minutes and seconds since the start, the time a server was down
left out), ``s3`` for seat 3 or ``--`` for the table itself, and what happened, in the words of the table's game
(its journal encoding, ``Game.journal``, from the game's own module). The replay shows
everything, hidden things included (hands, signs, emoji choices): it is for the operator and for history, never for a
player during a match.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import msgpack

from quatro_shared.messages import Ok
from quatro_shared.wire import to_wire

from quatro_server.games import journal_codec
from quatro_server.journal import FILE_NAME, JournalError, SavedTable, default_data_dir, read_journal
from quatro_server.replay.archive import chunk
from quatro_server.replay.seat import NotReplayable, seat_replay


def _clock(seconds: float) -> str:
    minutes, rest = divmod(max(seconds, 0.0), 60)
    return f"{int(minutes):02d}:{rest:06.3f}"


def format_match(saved: SavedTable) -> Iterator[str]:
    """The lines of one table's replay: a header, the seats, then every event in order, in its game's notation
    (the game's journal encoding, ``Codec.header`` and ``Codec.describe``)."""
    codec = journal_codec(saved.game)
    if codec is None:
        yield f"# table {saved.id}: a table of {saved.game!r}, a game this server does not know; {len(saved.moves)} moves"
        return
    yield from codec.header(saved)
    origin: float | None = None
    for move in saved.moves:
        if origin is None:
            origin = move.at
        if move.kind == "checkpoint":
            continue  # the table's whole state, for restoring: nothing happened
        if move.kind == "rebase":
            facts = json.loads(move.input or "{}")
            origin += facts.get("delta", 0.0)
            if facts.get("held"):
                continue  # a point waited for the disk: the table's time stood still, nothing happened
            lost = " from the journal's last commit (later moves were lost)" if facts.get("missed") else ""
            yield f"{_clock(move.at - origin)} -- server restarted: the table resumes{lost}"
            continue
        for event in codec.events(move.events):
            who, what = codec.describe(event)
            yield f"{_clock(move.at - origin)} {who} {what}"
    if not saved.moves:
        yield "# the match never started"


def _seat_wire(tables: list[SavedTable], table_id: int | None, seat: int, match: int | None, path: Path) -> int:
    """One seat's replay of one table's match, whole, as the msgpack map of a ``replay`` ok (``ReplayFrames``)."""
    if table_id is None:
        print("quatro-server replay: --seat needs a table: an ID, or a FILE with --table", file=sys.stderr)
        return 2
    try:
        replay = seat_replay(tables[0], seat, match)
    except NotReplayable as exc:
        print(f"quatro-server replay: {exc.message}", file=sys.stderr)
        return 1
    sys.stdout.buffer.write(
        msgpack.packb(to_wire(Ok(None, chunk(replay, 0, limit=sys.maxsize, count=sys.maxsize))), use_bin_type=True)
    )
    sys.stdout.buffer.flush()
    return 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "target", metavar="FILE|ID", help="a journal file, or the id of a table in --data-dir's journal"
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help=f"the server's data directory, for an ID (default: {default_data_dir()})",
    )
    parser.add_argument("--table", type=int, default=None, help="with a FILE: only this table (default: every table)")
    parser.add_argument(
        "--seat",
        type=int,
        default=None,
        help="the match as this seat saw it: the updates it was sent, as msgpack on standard output (the ok of the "
        "protocol's replay, whole); what quatro replay reads",
    )
    parser.add_argument(
        "--match",
        type=int,
        default=None,
        help="with --seat: the table's match, from 0 (default: its last that is over)",
    )


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
    if args.seat is not None:
        return _seat_wire(tables, table_id, args.seat, args.match, path)
    for i, table in enumerate(tables):
        if i:
            print()
        for line in format_match(table):
            print(line)
    return 0
