"""The journal's writer: a process of its own that commits the server's batches of statements to SQLite.

    python -m quatro_server.journal_writer PATH NICENESS      (started by ``quatro_server.journal``, not by hand)

The server's event loop must not share its interpreter's lock with the work of writing (JSON-encoding every move,
binding it for SQLite, waiting for the disk): as a thread, that work took the lock from the loop about a hundred
times a second and cost it about 1.2 us of every delivered message (docs/performance.md). So the server hands over
plain values, once per gathering interval, on this process's standard input, and this process does the rest.

What crosses the pipe, each way, is a frame: four bytes of length (little-endian), then a ``marshal``led value (the
same interpreter at both ends; ``marshal`` is the fastest of the standard codecs for plain values, measured). The
server sends a list of items, each a tuple of statements committed together; a statement is ``(sql, params)``, and
a parameter that is a list or a dict is stored as its compact JSON (the events of a move, an action, a checkpoint),
encoded here. Each list is one transaction; the answer is ``None`` once it is committed and synced, or the reason it
could not be, after which this process stops: the server goes on in memory only and says so.

This process lives as long as its input does: when the server closes the pipe, or dies however it dies, the read
sees the end, and whatever was received whole has been committed. It ignores the terminal's and the service
manager's signals for that reason (a Ctrl-C reaches the whole process group): the server decides when it ends.
It imports nothing of the server but this module, so it starts in a few tens of milliseconds.
"""

from __future__ import annotations

import json
import marshal
import os
import signal
import sqlite3
import struct
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

#: The length of a frame, before its bytes.
HEADER = struct.Struct("<I")
#: Rows at most in one multi-row INSERT (SQLite allows 32,766 parameters a statement; a move has 7).
ROWS_PER_INSERT = 500

#: One SQL statement and its parameters.
Statement = tuple[str, tuple[Any, ...]]


def connect(path: Path | str, *, read_only: bool = False) -> sqlite3.Connection:
    if read_only:
        conn = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)
    else:
        conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA busy_timeout = 5000")
    return conn


def merged(statements: Iterator[Statement]) -> Iterator[Statement]:
    """The same statements, in the same order, with runs of one single-row ``INSERT ... VALUES (...)`` made into
    multi-row INSERTs: one statement (one step of SQLite) per run."""
    run_sql, rows = "", 0
    run_params: list[Any] = []
    for sql, params in statements:
        if sql == run_sql and rows < ROWS_PER_INSERT:
            run_params.extend(params)
            rows += 1
            continue
        if rows:
            yield _rows(run_sql, rows), tuple(run_params)
            rows = 0
        if sql.startswith("INSERT") and sql.endswith(")") and sql.count("VALUES (") == 1:
            run_sql, run_params, rows = sql, list(params), 1
        else:
            run_sql = ""
            yield sql, params
    if rows:
        yield _rows(run_sql, rows), tuple(run_params)


def _rows(sql: str, rows: int) -> str:
    """``sql`` (one ``VALUES (...)`` group, at its end) with its group repeated for ``rows`` rows."""
    if rows == 1:
        return sql
    group = sql[sql.index("VALUES (") + len("VALUES ") :]
    return sql + (", " + group) * (rows - 1)


def compact(value: Any) -> str:
    """A value as the journal stores it: JSON without spaces."""
    return json.dumps(value, separators=(",", ":"))


def commit(conn: sqlite3.Connection, items: list[tuple[Statement, ...]]) -> None:
    """Every statement of ``items`` in one transaction, lists and dicts stored as their JSON. Raises on failure,
    having rolled back."""
    try:
        conn.execute("BEGIN IMMEDIATE")
        for sql, params in merged(statement for item in items for statement in item):
            conn.execute(sql, [compact(p) if type(p) is list or type(p) is dict else p for p in params])
        conn.execute("COMMIT")
    except BaseException:
        try:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass
        raise


def write_frame(fd: int, value: Any) -> None:
    data = marshal.dumps(value)
    view = memoryview(HEADER.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]


def read_frame(fd: int) -> Any:
    """The next frame's value; raises ``EOFError`` at the end of the input (a frame cut short counts as none)."""
    size = HEADER.unpack(_read_exactly(fd, HEADER.size))[0]
    return marshal.loads(_read_exactly(fd, size))


def _read_exactly(fd: int, size: int) -> bytes:
    parts, left = [], size
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise EOFError
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def lower_priority(levels: int) -> None:
    """Run ``levels`` nice levels below the server (at most 19): background work must not preempt the event loop."""
    try:
        os.setpriority(os.PRIO_PROCESS, 0, min(19, os.getpriority(os.PRIO_PROCESS, 0) + levels))
    except OSError:
        pass  # not allowed here (a sandbox): the writer runs at the server's priority


def main(argv: list[str]) -> int:
    path, niceness = argv
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        signal.signal(getattr(signal, name), signal.SIG_IGN)  # the server says when: by closing the pipe
    lower_priority(int(niceness))
    # The frames go on their own descriptors; anything printed by mistake goes to the server's log, not the pipe.
    orders, answers = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    try:
        conn = connect(path)
        conn.execute("PRAGMA synchronous = FULL")  # a commit is on the disk, not only in the page cache
    except sqlite3.Error as exc:
        _answer(answers, f"cannot open {path}: {exc}")
        return 1
    try:
        while True:
            try:
                items = [marshal.loads(item) for item in read_frame(orders)]
            except EOFError:
                return 0  # the server closed the pipe, or is gone: everything received whole is committed
            try:
                commit(conn, items)
            except Exception as exc:  # a full disk, an I/O error: said to the server, which goes on in memory only
                _answer(answers, str(exc) or type(exc).__name__)
                return 1
            _answer(answers, None)
    finally:
        conn.close()


def _answer(fd: int, value: str | None) -> None:
    try:
        write_frame(fd, value)
    except OSError:
        pass  # the server is gone: the input's end comes next


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
