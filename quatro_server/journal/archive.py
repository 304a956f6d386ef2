"""Reading finished tables back, one at a time, for the replays a running server offers (``quatro_server.replay.archive``).

Like ``read_journal``, a read-only connection of its own, which never takes the server's lock: the writer thread
goes on committing beside it (SQLite's WAL mode lets readers see the last commit).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from quatro_server.journal.saved import SavedSeat, SavedTable
from quatro_server.journal.store import JournalError, _check, _connect, _load_tables


def _open(path: Path) -> sqlite3.Connection:
    if not path.is_file():
        raise JournalError(f"no journal at {path}")
    conn = _connect(path, read_only=True)
    try:
        _check(conn, path, create=False)
    except BaseException:
        conn.close()
        raise
    return conn


def read_table(path: Path, table_id: int) -> SavedTable | None:
    """Table ``table_id`` of the journal at ``path``, with all its seats and moves (None: no such table)."""
    conn = _open(path)
    try:
        tables = _load_tables(conn, f"id = {int(table_id)}")
    except (sqlite3.DatabaseError, ValueError) as exc:
        raise JournalError(f"{path} is damaged ({exc})") from exc
    finally:
        conn.close()
    return tables[0] if tables else None


def read_starts(path: Path) -> Iterator[tuple[SavedTable, list[tuple[int, float, float]]]]:
    """Every table that played a match, newest first, without its moves: beside it, per match, the number and time
    of its ``start`` move and the time of its last move. Read lazily: a caller that has enough stops early."""
    conn = _open(path)
    try:
        ids = [row[0] for row in conn.execute("SELECT id FROM tables WHERE status != 'lobby' ORDER BY id DESC")]
        for table_id in ids:
            tables = _load_tables_without_moves(conn, table_id)
            if not tables:
                continue
            starts = [
                (int(n), float(at), float(at))
                for n, at in conn.execute(
                    "SELECT n, at FROM moves WHERE table_id = ? AND kind = 'start' ORDER BY n", (table_id,)
                )
            ]
            if not starts:
                continue
            ends = []
            for i, (n, _at, _last) in enumerate(starts):
                upto = starts[i + 1][0] if i + 1 < len(starts) else None
                row = conn.execute(
                    "SELECT max(at) FROM moves WHERE table_id = ? AND n >= ? AND (? IS NULL OR n < ?)",
                    (table_id, n, upto, upto),
                ).fetchone()
                ends.append(float(row[0]))
            yield tables[0], [(n, at, end) for (n, at, _), end in zip(starts, ends, strict=True)]
    except (sqlite3.DatabaseError, ValueError) as exc:
        raise JournalError(f"{path} is damaged ({exc})") from exc
    finally:
        conn.close()


def _load_tables_without_moves(conn: sqlite3.Connection, table_id: int) -> list[SavedTable]:
    """The table's row and seats, none of its moves."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(tables)")}
    game = "game" if "game" in columns else "NULL"  # a journal of version 1, read as it is
    tables = [
        SavedTable(
            id=row[0],
            game=row[1],
            players=row[2],
            timing_name=row[3],
            timing=json.loads(row[4]),
            password=row[5],
            host=row[6],
            status=row[7],
            round=row[8],
            scores=json.loads(row[9]),
            created=row[10],
            ended=row[11],
        )
        for row in conn.execute(
            f"SELECT id, {game}, players, timing_name, timing, password, host, status, round, scores, created, ended "
            "FROM tables WHERE id = ?",
            (table_id,),
        )
    ]
    for table in tables:
        table.seats = [
            SavedSeat(*row)
            for row in conn.execute(
                "SELECT seat, name, bot, secret, ord FROM seats WHERE table_id = ? ORDER BY seat", (table.id,)
            )
        ]
    return tables
