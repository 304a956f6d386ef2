"""The journal's file and its writer: one SQLite file per server, and the thread that commits to it.

``DATA_DIR/journal.sqlite3`` (WAL mode, the standard library's ``sqlite3``) holds for each table its game, its
configuration (seats, timing values, the password's hash), its seats (names, bot levels, the digests of the seat
secrets), its host and scores, and its match as the inputs its rules table was given, with the events each produced
(``quatro_server.journal.recorder`` writes them, ``quatro_server.journal.restore`` reads them back).

Writes go to a queue that one writer thread commits in batches, off the event loop; the items are handed over as
they are and encoded (by the game's ``Codec``) on the writer's thread. ``flush`` waits for everything queued so far:
a won point is committed this way before anyone is told of it (R20). ``docs/journal.md`` says why, and what a crash
can cost.
"""

from __future__ import annotations

import errno
import fcntl
import json
import logging
import os
import queue
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Generic, TextIO, TypeVar, cast

from quatro_server.datadir import default_data_dir as default_data_dir  # the journal lives in the data directory
from quatro_server.journal.codec import AnyCodec, json_text
from quatro_server.journal.saved import SavedMove, SavedSeat, SavedTable
from quatro_server.timing import Timing

log = logging.getLogger("quatro.journal")

FILE_NAME = "journal.sqlite3"
LOCK_NAME = "journal.lock"
#: Present while the journal is behind: writes were told to the players but could not be committed (a full disk).
#: A server that finds it at start knows its tables come back as of the journal's last commit, and says so. An empty
#: file, made when the first write fails: it needs no space on the disk beyond its name.
BEHIND_NAME = "journal.behind"
#: Written in the SQLite header (``PRAGMA application_id``): a file without it is not a Quatro journal.
APPLICATION_ID = 0x51545231  # "QTR1"
FORMAT = "quatro-journal"
#: The layout below. A journal of another version is refused, never guessed at; one of version 1 (before tables
#: named their game) is brought to this version when a server opens it, and read as it is by ``replay``.
SCHEMA_VERSION = 2
#: Versions this server reads.
READABLE_VERSIONS = ("1", "2")
#: Days the journal of a finished (or abandoned) table is kept for ``replay``; older ones are deleted.
KEEP_FINISHED_DAYS = 30
#: Seconds a won point may wait for the disk before the server gives up waiting (and says so in its log).
FLUSH_TIMEOUT = 5.0
#: Seconds the writer lets moves gather after the first one arrives before it commits them (a ``flush`` ends the wait
#: at once). Each commit is a sync to the disk and each statement hands the interpreter's lock back and forth with
#: the event loop; gathering makes them ten a second instead of hundreds. What a crash can lose (never a point,
#: docs/journal.md): the last tenth of a second of moves. Measured at 50 busy tables, alternating: 50 ms cost the
#: loop about 0.5 µs more per delivered message than 100 ms (docs/performance.md, fourth round).
GATHER = 0.100
#: Seconds between the writer's tries while the disk refuses its writes: the first retry, doubling up to the last.
RETRY_FIRST = 0.1
RETRY_MOST = 2.0
#: The SQLite result codes (primary) of a disk that may recover: full, failing, read-only, busy. A write refused so
#: is kept and tried again; any other error is a statement that can never be written, dropped (and said).
TRANSIENT_CODES = frozenset(
    {
        sqlite3.SQLITE_FULL,
        sqlite3.SQLITE_IOERR,
        sqlite3.SQLITE_READONLY,
        sqlite3.SQLITE_BUSY,
        sqlite3.SQLITE_LOCKED,
        sqlite3.SQLITE_CANTOPEN,
        sqlite3.SQLITE_PROTOCOL,
    }
)
#: Items at most in one commit while the journal catches up on what the disk refused.
CATCH_UP_ITEMS = 2000
#: Rows at most in one multi-row INSERT (SQLite allows 32,766 parameters a statement; a move has 7). Each statement
#: is one piece of the writer's work between two looks at the loop (``IDLE_WAIT``): a hundred moves' rows are built,
#: encoded and stepped in about a third of a millisecond.
ROWS_PER_INSERT = 100
#: How many nice levels below the server the writer thread runs (Linux, where a thread has its own). The journal is
#: background work: at the server's own priority, its wake-ups preempted the event loop on the loop's core (a context
#: switch and a cold cache for every table's next request); measured with ``benchmarks/server_fanout.py``, the loop's
#: cost per message fell by about 0.6 us. A commit someone waits for (a round's end) still comes at once: the loop
#: sleeps meanwhile.
WRITER_NICENESS = 10
#: Seconds at most the writer waits, before each statement it runs, for the event loop to be idle (``loop_idle``).
#: Its Python (a statement's parameters, the events' JSON) needs the interpreter's lock, which the loop lets go of
#: at every socket write: run while the loop works, the writer took the lock at those writes and a pass of the loop
#: took twice as long (a trace at 500 tables: 7.3 ms, 4.4 of them the writer's). Run while the loop waits for
#: sockets, it costs the loop nothing. Bounded, so that a loop never idle still has its points committed.
IDLE_WAIT = 0.020
#: Tables in these states are restored on start; the others are kept for ``replay`` only.
LIVE = ("lobby", "playing")

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE tables (
    id INTEGER PRIMARY KEY,
    game TEXT,  -- the game's name in the registry; NULL for the tables of version 1, which hosted one game
    players INTEGER NOT NULL,
    timing_name TEXT NOT NULL,
    timing TEXT NOT NULL,
    password TEXT,
    host INTEGER,
    status TEXT NOT NULL CHECK (status IN ('lobby', 'playing', 'over', 'closed', 'refused')),
    round INTEGER NOT NULL DEFAULT 0,
    scores TEXT NOT NULL,
    created REAL NOT NULL,
    ended REAL
);
CREATE TABLE seats (
    table_id INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    name TEXT,
    bot TEXT,
    secret TEXT,
    ord INTEGER NOT NULL,
    PRIMARY KEY (table_id, seat)
);
CREATE TABLE moves (
    table_id INTEGER NOT NULL,
    n INTEGER NOT NULL,
    at REAL NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('start', 'act', 'advance', 'rebase', 'checkpoint')),
    seat INTEGER,
    input TEXT,
    events TEXT NOT NULL,
    PRIMARY KEY (table_id, n)
);
"""


#: The value a ``Later`` parameter encodes.
T = TypeVar("T")

#: One SQL statement and its parameters.
Statement = tuple[str, tuple[object, ...]]

INSERT_MOVE = "INSERT INTO moves (table_id, n, at, kind, seat, input, events) VALUES (?, ?, ?, ?, ?, ?, ?)"

#: A routine move as the event loop hands it over (nearly every move: a swap, a pulse): the ``moves`` row's values,
#: its input and events not yet encoded, and the game's codec, which encodes them on the writer's thread
#: (``_statements``). Built with no more than one tuple, since the loop builds one for every move of every table.
MoveRow = tuple[int, int, float, str, int | None, object, tuple[object, ...], AnyCodec]


def ended(table_id: int, status: str) -> Statement:
    """A live table's end: ``over``, ``closed`` or ``refused``, from now on (the retention counts from it)."""
    return (
        "UPDATE tables SET status = ?, ended = ? WHERE id = ? AND status IN ('lobby', 'playing')",
        (status, time.time(), table_id),
    )


class JournalError(Exception):
    """A journal that cannot be used: not a Quatro journal, another version, damaged, in use, or on a full disk."""


def disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` says the disk (or the file system's quota) is full."""
    if isinstance(exc, OSError):
        return exc.errno in (errno.ENOSPC, errno.EDQUOT)
    return isinstance(exc, sqlite3.Error) and (getattr(exc, "sqlite_errorcode", 0) & 0xFF) == sqlite3.SQLITE_FULL


def transient(exc: BaseException) -> bool:
    """Whether a write that raised ``exc`` may succeed later (the disk recovers), as opposed to never."""
    if isinstance(exc, OSError):
        return True
    return isinstance(exc, sqlite3.Error) and (getattr(exc, "sqlite_errorcode", 0) & 0xFF) in TRANSIENT_CODES


def _damaged(path: Path, exc: BaseException) -> JournalError:
    """The refusal of a journal that failed to open: a full disk said as such, not taken for damage."""
    if disk_full(exc):
        return JournalError(f"the disk holding {path} is full ({exc}); free some space and start again")
    return JournalError(f"{path} is damaged ({exc}); move it away or choose another --data-dir")


class Later(Generic[T]):
    """A statement parameter encoded by the writer thread, not on the event loop: events and actions are frozen
    dataclasses, and checkpoints fresh plain values, safe to hand over as they are."""

    __slots__ = ("encode", "value")

    def __init__(self, encode: Callable[[T], str], value: T) -> None:
        self.encode, self.value = encode, value


# --- the file -----------------------------------------------------------------------------------------


def _connect(path: Path, *, read_only: bool = False) -> sqlite3.Connection:
    if read_only:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)
    else:
        conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA busy_timeout = 5000")
    return conn


def _check(conn: sqlite3.Connection, path: Path, *, create: bool) -> None:
    """Refuse anything but an intact journal of this version; make a fresh one in an empty file."""
    try:
        application_id = conn.execute("PRAGMA application_id").fetchone()[0]
        objects = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        if disk_full(exc):
            raise _damaged(path, exc) from exc
        raise JournalError(
            f"{path} is not a Quatro journal ({exc}); move it away or choose another --data-dir"
        ) from exc
    if application_id == 0 and objects == 0 and create:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.executescript(  # one transaction: a journal is made whole or not at all
            f"BEGIN IMMEDIATE; {_SCHEMA}"
            f"INSERT INTO meta VALUES ('format', '{FORMAT}'), ('schema', '{SCHEMA_VERSION}');"
            f"PRAGMA application_id = {APPLICATION_ID}; COMMIT;"
        )
        return
    if application_id != APPLICATION_ID:
        raise JournalError(
            f"{path} is not a Quatro journal (an SQLite file of another application); "
            "move it away or choose another --data-dir"
        )
    try:
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        problems = [row[0] for row in conn.execute("PRAGMA quick_check").fetchall()]
    except sqlite3.DatabaseError as exc:
        raise _damaged(path, exc) from exc
    if meta.get("format") != FORMAT:
        raise JournalError(f"{path} is not a Quatro journal (format {meta.get('format')!r})")
    if meta.get("schema") not in READABLE_VERSIONS:
        raise JournalError(
            f"{path} is a Quatro journal of version {meta.get('schema')}; "
            f"this server reads versions {' and '.join(READABLE_VERSIONS)}"
        )
    if problems != ["ok"]:
        raise JournalError(f"{path} is damaged ({'; '.join(problems[:3])}); move it away or choose another --data-dir")
    if meta["schema"] == "1" and create:  # a writable open: the tables of version 1 are of the one game it hosted
        conn.executescript(
            "BEGIN IMMEDIATE; ALTER TABLE tables ADD COLUMN game TEXT;"
            f"UPDATE meta SET value = '{SCHEMA_VERSION}' WHERE key = 'schema'; COMMIT;"
        )


def _saved_table(row: tuple[Any, ...]) -> SavedTable:
    """One ``tables`` row. Timing or scores that do not read leave the table ``damage``d (it alone is refused)."""
    damage = None
    decoded: list[Any] = []
    for column, text in (("timing", row[4]), ("scores", row[9])):
        try:
            decoded.append(json.loads(text))
        except (TypeError, ValueError) as exc:
            damage = f"its {column} {'does' if column == 'timing' else 'do'} not read ({exc})"
            decoded.append({} if column == "timing" else [])
    timing, scores = decoded
    return SavedTable(
        id=row[0],
        game=row[1],
        players=row[2],
        timing_name=row[3],
        timing=timing,
        password=row[5],
        host=row[6],
        status=row[7],
        round=row[8],
        scores=scores,
        created=row[10],
        ended=row[11],
        damage=damage,
    )


def _load_tables(conn: sqlite3.Connection, where: str, *, current: bool = False) -> list[SavedTable]:
    """Tables, their seats and their moves (``current``: from the current match's last start or checkpoint on, what a
    restore needs), read in one transaction (one consistent state of the file)."""
    conn.execute("BEGIN")
    try:
        columns = {row[1] for row in conn.execute("PRAGMA table_info(tables)")}
        game = "game" if "game" in columns else "NULL"  # a journal of version 1, read as it is
        tables = [
            _saved_table(row)
            for row in conn.execute(
                f"SELECT id, {game}, players, timing_name, timing, password, host, status, round, scores, created, ended "
                f"FROM tables WHERE {where} ORDER BY id"
            )
        ]
        for table in tables:
            table.seats = [
                SavedSeat(*row)
                for row in conn.execute(
                    "SELECT seat, name, bot, secret, ord FROM seats WHERE table_id = ? ORDER BY seat", (table.id,)
                )
            ]
            first = 0
            if current:
                first = conn.execute(
                    "SELECT coalesce(max(n), 0) FROM moves WHERE table_id = ? AND kind IN ('start', 'checkpoint')",
                    (table.id,),
                ).fetchone()[0]
            table.moves = [
                SavedMove(*row)
                for row in conn.execute(
                    "SELECT n, at, kind, seat, input, events FROM moves WHERE table_id = ? AND n >= ? ORDER BY n",
                    (table.id, first),
                )
            ]
    finally:
        conn.execute("COMMIT")
    return tables


def read_journal(path: Path) -> list[SavedTable]:
    """Every table of the journal at ``path``, read-only (for ``replay``). Raises ``JournalError``."""
    if not path.is_file():
        raise JournalError(f"no journal at {path}")
    conn = _connect(path, read_only=True)
    try:
        _check(conn, path, create=False)
        tables = _load_tables(conn, "1")
    except (sqlite3.DatabaseError, ValueError) as exc:
        raise JournalError(f"{path} is damaged ({exc})") from exc
    finally:
        conn.close()
    for table in tables:
        if table.damage is not None:
            raise JournalError(f"{path} is damaged (table {table.id}: {table.damage})")
    return tables


def _merged(
    statements: Iterator[tuple[str, Sequence[object], bool]],
) -> Iterator[tuple[str, Sequence[object], bool]]:
    """The same statements, in the same order, with runs of one single-row ``INSERT ... VALUES (...)`` made into
    multi-row INSERTs: one statement (one step of SQLite, one hand-over of the interpreter's lock) per run. The flag
    beside each says whether a parameter of it is still to be encoded (``Later``)."""
    run_sql, rows, run_lazy = "", 0, False
    run_params: list[object] = []
    for sql, params, lazy in statements:
        if sql == run_sql and rows < ROWS_PER_INSERT:
            run_params.extend(params)
            rows += 1
            run_lazy = run_lazy or lazy
            continue
        if rows:
            yield _rows(run_sql, rows), run_params, run_lazy
            rows = 0
        if sql.startswith("INSERT") and sql.endswith(")") and sql.count("VALUES (") == 1:
            run_sql, run_params, rows, run_lazy = sql, list(params), 1, lazy
        else:
            run_sql = ""
            yield sql, params, lazy
    if rows:
        yield _rows(run_sql, rows), run_params, run_lazy


def _statements(items: list[tuple[Statement, ...] | MoveRow]) -> Iterator[tuple[str, Sequence[object], bool]]:
    """The statements of the queued items, in order, each with whether a parameter is still to be encoded: a
    routine move's row as its ``INSERT``, its action and events encoded here, on the writer's thread, by the game's
    codec (nothing left to encode); a statement's ``Later`` parameters are encoded as it is executed."""
    for item in items:
        if type(item[0]) is int:  # a MoveRow (its table id first); statements start with their SQL
            table_id, n, at, kind, seat, action, emits, codec = item
            encoded = None if action is None else codec.encode_action(action)  # None: time passing
            yield INSERT_MOVE, (table_id, n, at, kind, seat, encoded, codec.encode_events(emits)), False
        else:
            for sql, params in cast("tuple[Statement, ...]", item):
                yield sql, params, any(type(p) is Later for p in params)


def _rows(sql: str, rows: int) -> str:
    """``sql`` (one ``VALUES (...)`` group, at its end) with its group repeated for ``rows`` rows."""
    if rows == 1:
        return sql
    group = sql[sql.index("VALUES (") + len("VALUES ") :]
    return sql + (", " + group) * (rows - 1)


def _lower_this_thread(levels: int) -> None:
    """Run the calling thread ``levels`` nice levels below its process (Linux only: elsewhere the priority is the
    whole process's, and a thread id is no process id)."""
    if not sys.platform.startswith("linux"):
        return
    tid = threading.get_native_id()
    try:
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + levels))
    except OSError:
        pass  # not allowed here (a sandbox): the writer runs at the server's priority


class Journal:
    """One server's journal: the file, its lock, the tables to restore, and the writer thread."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.path = data_dir / FILE_NAME
        #: The tables that were live when the last server stopped, to restore (``restore``).
        self.saved: list[SavedTable] = []
        #: The highest table id the journal has ever held: new tables are numbered after it, so ids stay unique.
        self.last_id = 0
        #: Set while the disk refuses the writer's commits (why): what is queued is kept, and tried again until the
        #: disk takes it (``RETRY_FIRST`` .. ``RETRY_MOST`` apart); meanwhile no point is told (``committed``).
        self.failed: str | None = None
        #: When the server that last wrote this journal stopped, it had writes it could not commit (``BEHIND_NAME``):
        #: the tables restored are as of the journal's last commit, not as their players last saw them.
        self.missed = False
        #: What the writer commits, in order: statements to commit together, or a routine move's row.
        self._queue: queue.SimpleQueue[tuple[Statement, ...] | MoveRow | None] = queue.SimpleQueue()
        self._queued = 0
        self._committed = 0
        self._done = threading.Condition()
        self._urgent = threading.Event()  # a flush is waiting: commit what is queued without gathering more
        #: Set while the event loop waits for its sockets (``quatro_server.net.quiet.LoopWatch``): the writer runs its
        #: statements then (``IDLE_WAIT``). None: no loop to keep out of the way of (a tool, a test).
        self.loop_idle: threading.Event | None = None
        self._since = 0.0  # when the disk first refused the writes it still holds (monotonic)
        self._lost = False  # a commit that can never succeed was dropped: the journal stays marked behind
        self._marked = False  # BEHIND_NAME exists (this server made it, or found it at start)
        self._thread: threading.Thread | None = None
        self._clock: int | None = None  # the writer thread's CPU-time clock (``cpu_seconds``)
        self._lock: TextIO | None = None
        #: Told, on the writer's thread, how long each commit took (seconds) and how many items it held: the
        #: metrics' journal lag (``quatro_server.workers.metrics``). None: nobody asks.
        self.on_commit: Callable[[float, int], None] | None = None

    @classmethod
    def open(cls, data_dir: Path) -> Journal:
        """Lock ``data_dir``, check or create its journal, read the live tables, start the writer. Raises ``JournalError``."""
        journal = cls(data_dir)
        try:
            data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            lock = open(data_dir / LOCK_NAME, "a")  # noqa: SIM115 - held for the life of the server
        except OSError as exc:
            raise JournalError(f"cannot use the data directory {data_dir}: {exc.strerror or exc}") from exc
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            lock.close()
            raise JournalError(
                f"another quatro-server is using {data_dir}; give each server its own --data-dir"
            ) from None
        journal._lock = lock
        try:
            if not journal.path.exists():
                journal.path.touch(mode=0o600)  # hands and seeds are in there: for the operator's eyes only
            conn = _connect(journal.path)
            try:
                _check(conn, journal.path, create=True)
                conn.execute("PRAGMA journal_mode = WAL")
                journal.saved = _load_tables(conn, "status IN ('lobby', 'playing')", current=True)
                journal.last_id = conn.execute("SELECT coalesce(max(id), 0) FROM tables").fetchone()[0]
            finally:
                conn.close()
            journal.missed = journal._marked = (data_dir / BEHIND_NAME).exists()
        except OSError as exc:
            journal._unlock()
            if disk_full(exc):
                raise _damaged(journal.path, exc) from exc
            raise JournalError(f"cannot use {journal.path}: {exc.strerror or exc}") from exc
        except (sqlite3.DatabaseError, ValueError, TypeError) as exc:  # TypeError: a row of the wrong shape
            journal._unlock()
            raise _damaged(journal.path, exc) from exc
        except JournalError:
            journal._unlock()
            raise
        if journal.missed:
            log.error(
                "journal_missed_writes path=%s: the last server stopped with writes it could not commit (a full or "
                "failing disk); its tables are restored as of the journal's last commit",
                journal.path,
            )
        journal._thread = threading.Thread(target=journal._write_loop, name="quatro-journal", daemon=True)
        journal._thread.start()
        if hasattr(time, "pthread_getcpuclockid") and journal._thread.ident is not None:
            journal._clock = time.pthread_getcpuclockid(journal._thread.ident)
        journal.prune()
        return journal

    def cpu_seconds(self) -> float:
        """CPU seconds the writer thread has used (0 where the platform cannot tell): while it runs Python it holds
        the interpreter's lock, which the event loop then waits for (the loop's trace, ``quatro_server.net.quiet``)."""
        if self._clock is None:
            return 0.0
        try:
            return time.clock_gettime(self._clock)
        except OSError:  # the thread has ended
            self._clock = None
            return 0.0

    # --- writing ------------------------------------------------------------------------------------

    def write(self, *statements: Statement) -> None:
        """Queue statements to be committed together (never one without the others), with whatever else is queued,
        by the writer thread. A ``Later`` parameter is encoded there."""
        self._queued += 1
        self._queue.put(statements)

    def write_move(self, row: MoveRow) -> None:
        """Queue a routine move's row (``Recorder``), committed like ``write``'s statements."""
        self._queued += 1
        self._queue.put(row)

    def flush(self, timeout: float = FLUSH_TIMEOUT) -> bool:
        """Wait until everything queued so far is committed. False if the disk refuses writes (at once: the loop
        never waits on a disk known to be failing) or took too long; ``committed`` tells when it is, later."""
        if self.failed is not None:
            return False
        target = self._queued
        self._urgent.set()
        # The loop waits here for the writer: the writer must not wait for the loop (``IDLE_WAIT``).
        idle = self.loop_idle if self.loop_idle is not None and not self.loop_idle.is_set() else None
        if idle is not None:
            idle.set()
        try:
            with self._done:
                done = self._done.wait_for(lambda: self._committed >= target or self.failed is not None, timeout)
        finally:
            if idle is not None:
                idle.clear()  # the pass goes on
        return done and self._committed >= target

    def behind(self) -> int:
        """Items queued and not committed yet (read without a lock: a figure for the metrics, not a promise)."""
        return max(0, self._queued - self._committed)

    @property
    def queued(self) -> int:
        """How many items were queued so far: ``committed(queued)`` says whether all of them are on the disk."""
        return self._queued

    def committed(self, target: int) -> bool:
        """Whether the first ``target`` items queued are committed (a read of one counter: asked by held tables)."""
        return self._committed >= target

    def _write_loop(self) -> None:
        _lower_this_thread(WRITER_NICENESS)
        conn = _connect(self.path)
        conn.execute("PRAGMA synchronous = FULL")  # a commit is on the disk, not only in the page cache
        pending: list[tuple[Statement, ...] | MoveRow] = []  # refused by the disk: tried again first, in order
        retry = RETRY_FIRST
        stopping = False
        kept = 0  # items committed since the disk first refused (the catching up)
        try:
            while True:
                if pending:  # the disk refused a commit, or the journal is catching up: gather what comes meanwhile
                    try:
                        batch = [self._queue.get(timeout=retry)] if retry else []
                    except queue.Empty:
                        batch = []
                else:
                    batch = [self._queue.get()]
                    if batch[0] is not None and self._urgent.wait(GATHER):
                        self._urgent.clear()
                while True:
                    try:
                        batch.append(self._queue.get_nowait())
                    except queue.Empty:
                        break
                stopping = stopping or any(item is None for item in batch)
                items = pending + [item for item in batch if item is not None]
                pending = []
                if self.failed is not None and not stopping and len(items) > CATCH_UP_ITEMS:
                    # Catching up in order, a commit at a time: a disk with some room again takes what fits, and
                    # the tables whose points come first are released first.
                    items, pending = items[:CATCH_UP_ITEMS], items[CATCH_UP_ITEMS:]
                if items:
                    began = time.perf_counter()
                    error = self._commit(conn, items, self.loop_idle)
                    if self.on_commit is not None:
                        self.on_commit(time.perf_counter() - began, len(items))
                    if error is not None and transient(error) and not stopping:
                        pending, retry = items + pending, min(RETRY_MOST, max(RETRY_FIRST, retry * 2))
                        self._refused(error)
                        continue
                    if error is not None:
                        self._dropped(conn, items, error, alone=not transient(error))
                    elif self.failed is not None:
                        kept += len(items)
                        if not pending:
                            self._resumed(kept)
                            kept = 0
                    else:
                        self._caught_up()
                    retry = 0 if pending else RETRY_FIRST
                with self._done:
                    self._committed += len(items)
                    self._done.notify_all()
                if stopping and not pending:
                    return
        finally:
            conn.close()

    @staticmethod
    def _commit(
        conn: sqlite3.Connection, items: list[tuple[Statement, ...] | MoveRow], idle: threading.Event | None = None
    ) -> Exception | None:
        """Commit ``items`` in one transaction; the error if it failed (rolled back: nothing of them is written).
        Each statement waits for ``idle`` first (``IDLE_WAIT`` at most)."""
        try:
            conn.execute("BEGIN IMMEDIATE")
            statements = _merged(_statements(items))
            while True:
                if idle is not None:  # before the statement is even built: building it is Python too
                    idle.wait(IDLE_WAIT)
                statement = next(statements, None)
                if statement is None:
                    break
                sql, params, lazy = statement
                conn.execute(sql, [p.encode(p.value) if type(p) is Later else p for p in params] if lazy else params)
            conn.execute("COMMIT")
            return None
        except Exception as exc:  # a full disk, an I/O error: never let the writer die silently
            try:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            return exc

    def _refused(self, error: Exception) -> None:
        """The disk refused a commit that it may take later: say so once, and leave the mark of a journal behind."""
        if self.failed is not None:
            return
        self.failed = ("the disk is full: " if disk_full(error) else "") + (str(error) or type(error).__name__)
        self._since = time.monotonic()
        self._mark_behind()
        with self._done:
            self._done.notify_all()  # a flush waiting on this commit returns now: the disk will not take it soon
        log.error(
            "journal_failed path=%s error=%r: the journal keeps what it could not write and tries again; until "
            "the disk takes it, no table announces a point",
            self.path,
            self.failed,
        )

    def _resumed(self, items: int) -> None:
        """The disk took what it had refused: the journal is whole again."""
        log.warning(
            "journal_resumed path=%s after=%.1fs items=%d: every write kept meanwhile is committed",
            self.path,
            time.monotonic() - self._since,
            items,
        )
        self.failed = None
        self._caught_up()

    def _caught_up(self) -> None:
        """Nothing told is uncommitted: once the tables it found are restored, the mark of a journal behind goes."""
        if self._marked and not self._lost and not self.saved:
            self._marked = False
            try:
                (self.data_dir / BEHIND_NAME).unlink(missing_ok=True)
            except OSError:
                pass

    def _mark_behind(self) -> bool:
        """Leave the mark of a journal behind: an empty file, made even on a full disk (a name, no data)."""
        self._marked = True
        try:
            os.close(os.open(self.data_dir / BEHIND_NAME, os.O_CREAT | os.O_WRONLY, 0o600))
            return True
        except OSError as exc:
            log.error("journal_behind_unmarked path=%s error=%r", self.data_dir / BEHIND_NAME, exc.strerror or str(exc))
            return False

    def _dropped(
        self, conn: sqlite3.Connection, items: list[tuple[Statement, ...] | MoveRow], error: Exception, *, alone: bool
    ) -> None:
        """A commit that failed for good: a statement that can never be written (``alone``: each item is tried by
        itself, and only those that fail are lost), or a disk still refusing as the server stops (all are lost: a
        later move kept without an earlier one would leave its table a gap, and refused). The journal stays
        marked behind until the next start, which says so."""
        lost = [item for item in items if self._commit(conn, [item]) is not None] if alone and len(items) > 1 else items
        if not lost:
            return
        log.error(
            "journal_write_lost path=%s items=%d error=%r: the journal is behind", self.path, len(lost), str(error)
        )
        self._lost = True
        self._mark_behind()

    def prune(self) -> None:
        """Forget the tables that ended more than ``KEEP_FINISHED_DAYS`` ago."""
        cutoff = time.time() - KEEP_FINISHED_DAYS * 86400
        old = "SELECT id FROM tables WHERE status NOT IN ('lobby', 'playing') AND ended < ?"
        self.write(
            (f"DELETE FROM moves WHERE table_id IN ({old})", (cutoff,)),
            (f"DELETE FROM seats WHERE table_id IN ({old})", (cutoff,)),
            ("DELETE FROM tables WHERE status NOT IN ('lobby', 'playing') AND ended < ?", (cutoff,)),
        )

    def close(self) -> None:
        """Commit what is queued, stop the writer, release the directory."""
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join(FLUSH_TIMEOUT)
            self._thread = None
        self._unlock()

    def _unlock(self) -> None:
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    # --- tables -------------------------------------------------------------------------------------

    @staticmethod
    def table_row(
        table_id: int,
        *,
        game: str,
        players: int,
        timing_name: str,
        timing: Timing,
        password: str | None,
        host: int | None,
        scores: Sequence[int],
    ) -> Statement:
        """A new table's row: its game and configuration. Its ``Recorder`` writes it with the table's first seats,
        in one commit (a table on the disk without its seats would be restored empty), then its moves."""
        values = timing.values()
        return (
            "INSERT INTO tables (id, game, players, timing_name, timing, password, host, status, scores, created) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, 'lobby', ?, ?)",
            (
                table_id,
                game,
                players,
                timing_name,
                json.dumps(values),
                password,
                host,
                json_text(list(scores)),
                time.time(),
            ),
        )

    def set_status(self, table_id: int, status: str) -> None:
        self.write(ended(table_id, status))

    def refuse(self, table_id: int, reason: str) -> None:
        """A live table that cannot be restored as it was: kept for inspection and ``replay``, never half-loaded."""
        log.error(
            "table_refused table=%d reason=%r: its journal does not replay; it is kept, not restored", table_id, reason
        )
        self.set_status(table_id, "refused")
