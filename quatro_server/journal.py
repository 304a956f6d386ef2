"""The table journal: every table and its match, move by move, in SQLite, so that tables outlive the process.

One file per server, ``DATA_DIR/journal.sqlite3`` (WAL mode, the standard library's ``sqlite3``), holding for each
table its configuration (seats, timing values, the password's hash), its seats (names, bot levels, the digests of
the seat secrets), its host and scores, and its match as the inputs the rules engine was given (``start``, ``act``,
``advance``, ``rebase``) with the raw times they were given at and the events each produced, plus once a round a
``checkpoint`` (the engine's whole state and its random source's). The engine is deterministic given its inputs and
its random source, so a restarted server rebuilds every table exactly from its last checkpoint by replaying the
inputs since, checks that each one produces the events recorded beside it, and moves the result onto its new clock
(``Table.rebase``): hands, center, signs, channels, votes and cooldowns with the time they had left.
``docs/journal.md`` says why, and what a crash can cost.

Writes go to a queue that one writer thread commits in batches, off the event loop. The one exception is a round's
end: the batch holding a won point is committed (and synced to disk) before the call that scored it returns, so no
player, reply or listing can see a point the journal does not hold (R20).
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import queue
import random
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import count
from pathlib import Path
from typing import Any, TextIO

import trio

from quatro_shared import actions as a
from quatro_shared import events as e
from quatro_shared import seating
from quatro_shared.views import Phase
from quatro_shared.wire import WireError, action_from_wire, to_wire

from quatro_server.bots import LEVELS, Bot, make_bot
from quatro_server.datadir import default_data_dir as default_data_dir  # the journal lives in the data directory
from quatro_server.engine import ROUTINE_EVENTS, Emit, Outcome, Table, events_for, routine
from quatro_server.lobby import Lobby, Room, Seat
from quatro_server.timing import Timing

log = logging.getLogger("quatro.journal")

FILE_NAME = "journal.sqlite3"
LOCK_NAME = "journal.lock"
#: Written in the SQLite header (``PRAGMA application_id``): a file without it is not a Quatro journal.
APPLICATION_ID = 0x51545231  # "QTR1"
FORMAT = "quatro-journal"
#: The layout below. A journal of another version is refused, never guessed at.
SCHEMA_VERSION = 1
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
#: Rows at most in one multi-row INSERT (SQLite allows 32,766 parameters a statement; a move has 7).
ROWS_PER_INSERT = 500
#: How many nice levels below the server the writer thread runs (Linux, where a thread has its own). The journal is
#: background work: at the server's own priority, its wake-ups preempted the event loop on the loop's core (a context
#: switch and a cold cache for every table's next request); measured with ``benchmarks/server_fanout.py``, the loop's
#: cost per message fell by about 0.6 us. A commit someone waits for (a round's end) still comes at once: the loop
#: sleeps meanwhile.
WRITER_NICENESS = 10
#: Seconds after a restart during which the seats of a restored table stay as they were (connected, the host
#: keeping the role) for their players to come back; then whoever has not is disconnected (R19, R18).
RESTORE_GRACE = 15.0

#: Tables in these states are restored on start; the others are kept for ``replay`` only.
LIVE = ("lobby", "playing")

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE tables (
    id INTEGER PRIMARY KEY,
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


#: One SQL statement and its parameters.
Statement = tuple[str, tuple[Any, ...]]

_INSERT_MOVE = "INSERT INTO moves (table_id, n, at, kind, seat, input, events) VALUES (?, ?, ?, ?, ?, ?, ?)"

#: A routine move as the event loop hands it over (nearly every move: a swap, a pulse): the ``moves`` row's values,
#: its input and events not yet encoded (the writer encodes them: ``_statements``). Built with no more than one
#: tuple, since the loop builds one for every move of every table.
MoveRow = tuple[int, int, float, str, int | None, a.Action | str | None, tuple[Emit, ...]]


def ended(table_id: int, status: str) -> Statement:
    """A live table's end: ``over``, ``closed`` or ``refused``, from now on (the retention counts from it)."""
    return (
        "UPDATE tables SET status = ?, ended = ? WHERE id = ? AND status IN ('lobby', 'playing')",
        (status, time.time(), table_id),
    )


class JournalError(Exception):
    """A journal that cannot be used: not a Quatro journal, another version, damaged, or in use."""


# --- what a journal holds -----------------------------------------------------------------------------


@dataclass(slots=True)
class SavedSeat:
    seat: int
    name: str | None
    bot: str | None
    secret: str | None
    order: int


@dataclass(slots=True)
class SavedMove:
    n: int
    at: float
    kind: str
    seat: int | None
    input: str | None
    events: str


@dataclass(slots=True)
class SavedTable:
    id: int
    players: int
    timing_name: str
    timing: dict[str, Any]
    password: str | None
    host: int | None
    status: str
    round: int
    scores: list[int]
    created: float
    ended: float | None
    seats: list[SavedSeat] = field(default_factory=list)
    moves: list[SavedMove] = field(default_factory=list)


def encode_emits(emits: list[Emit] | tuple[Emit, ...]) -> str:
    """A batch of events as the journal keeps it: ``[team, seat, event]`` per event, who could see it beside it."""
    return json.dumps([[emit.team, emit.seat, to_wire(emit.event)] for emit in emits], separators=(",", ":"))


class Later:
    """A statement parameter encoded by the writer thread, not on the event loop: events and actions are frozen
    dataclasses, safe to hand over as they are."""

    __slots__ = ("encode", "value")

    def __init__(self, encode: Callable[[Any], str], value: Any) -> None:
        self.encode, self.value = encode, value


def encode_checkpoint(table_and_rng: tuple[dict[str, Any], Any]) -> str:
    table, rng = table_and_rng
    return json.dumps({"table": table, "rng": rng}, separators=(",", ":"))


def encode_action(action: a.Action) -> str:
    return json.dumps(to_wire(action), separators=(",", ":"))


def decode_action(text: str) -> a.Action:
    data = json.loads(text)
    kind = data.get("kind") if isinstance(data, dict) else None
    if kind == a.Connect.kind:
        return a.Connect()
    if kind == a.Disconnect.kind:
        return a.Disconnect()
    return action_from_wire(data)


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
        raise JournalError(f"{path} is not a Quatro journal ({exc}); move it away or choose another --data-dir") from exc
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
        raise JournalError(f"{path} is damaged ({exc}); move it away or choose another --data-dir") from exc
    if meta.get("format") != FORMAT:
        raise JournalError(f"{path} is not a Quatro journal (format {meta.get('format')!r})")
    if meta.get("schema") != str(SCHEMA_VERSION):
        raise JournalError(
            f"{path} is a Quatro journal of version {meta.get('schema')}; this server reads version {SCHEMA_VERSION}"
        )
    if problems != ["ok"]:
        raise JournalError(f"{path} is damaged ({'; '.join(problems[:3])}); move it away or choose another --data-dir")


def _load_tables(conn: sqlite3.Connection, where: str, *, since_checkpoint: bool = False) -> list[SavedTable]:
    """Tables, their seats and their moves (``since_checkpoint``: from the last checkpoint on, what a restore needs),
    read in one transaction (one consistent state of the file)."""
    conn.execute("BEGIN")
    try:
        tables = [
            SavedTable(
                id=row[0], players=row[1], timing_name=row[2], timing=json.loads(row[3]), password=row[4],
                host=row[5], status=row[6], round=row[7], scores=json.loads(row[8]), created=row[9], ended=row[10],
            )
            for row in conn.execute(
                "SELECT id, players, timing_name, timing, password, host, status, round, scores, created, ended "
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
            if since_checkpoint:
                first = conn.execute(
                    "SELECT coalesce(max(n), 0) FROM moves WHERE table_id = ? AND kind = 'checkpoint'", (table.id,)
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
        return _load_tables(conn, "1")
    except (sqlite3.DatabaseError, ValueError) as exc:
        raise JournalError(f"{path} is damaged ({exc})") from exc
    finally:
        conn.close()


def _merged(statements: Iterator[Statement]) -> Iterator[Statement]:
    """The same statements, in the same order, with runs of one single-row ``INSERT ... VALUES (...)`` made into
    multi-row INSERTs: one statement (one step of SQLite, one hand-over of the interpreter's lock) per run."""
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


def _statements(items: list[tuple[Statement, ...] | MoveRow]) -> Iterator[Statement]:
    """The statements of the queued items, in order: a routine move's row as its ``INSERT``, its input and events
    encoded here, on the writer's thread."""
    for item in items:
        if type(item[0]) is int:  # a MoveRow (its table id first); statements start with their SQL
            table_id, n, at, kind, seat, input_, emits = item
            encoded = encode_action(input_) if isinstance(input_, a.Action) else input_
            yield _INSERT_MOVE, (table_id, n, at, kind, seat, encoded, encode_emits(emits))
        else:
            yield from item  # type: ignore[misc]


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
        #: Set when a write failed: the server goes on, in memory only from then on (it says so in its log).
        self.failed: str | None = None
        #: What the writer commits, in order: statements to commit together, or a routine move's row.
        self._queue: queue.SimpleQueue[tuple[Statement, ...] | MoveRow | None] = queue.SimpleQueue()
        self._queued = 0
        self._committed = 0
        self._done = threading.Condition()
        self._urgent = threading.Event()  # a flush is waiting: commit what is queued without gathering more
        self._thread: threading.Thread | None = None
        self._lock: TextIO | None = None

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
            raise JournalError(f"another quatro-server is using {data_dir}; give each server its own --data-dir") from None
        journal._lock = lock
        try:
            if not journal.path.exists():
                journal.path.touch(mode=0o600)  # hands and seeds are in there: for the operator's eyes only
            conn = _connect(journal.path)
            try:
                _check(conn, journal.path, create=True)
                conn.execute("PRAGMA journal_mode = WAL")
                journal.saved = _load_tables(conn, "status IN ('lobby', 'playing')", since_checkpoint=True)
                journal.last_id = conn.execute("SELECT coalesce(max(id), 0) FROM tables").fetchone()[0]
            finally:
                conn.close()
        except OSError as exc:
            journal._unlock()
            raise JournalError(f"cannot use {journal.path}: {exc.strerror or exc}") from exc
        except (sqlite3.DatabaseError, ValueError, TypeError) as exc:  # TypeError: a row of the wrong shape
            journal._unlock()
            raise JournalError(f"{journal.path} is damaged ({exc}); move it away or choose another --data-dir") from exc
        except JournalError:
            journal._unlock()
            raise
        journal._thread = threading.Thread(target=journal._write_loop, name="quatro-journal", daemon=True)
        journal._thread.start()
        journal.prune()
        return journal

    # --- writing ------------------------------------------------------------------------------------

    def write(self, *statements: Statement) -> None:
        """Queue statements to be committed together (never one without the others), with whatever else is queued,
        by the writer thread. A ``Later`` parameter is encoded there."""
        self._queued += 1
        self._queue.put(statements)

    def write_move(self, row: MoveRow) -> None:
        """Queue a routine move's row (``RoomJournal.move``), committed like ``write``'s statements."""
        self._queued += 1
        self._queue.put(row)

    def flush(self, timeout: float = FLUSH_TIMEOUT) -> bool:
        """Wait until everything queued so far is committed. False if a write failed or the disk took too long."""
        if self.failed is not None:
            return False
        target = self._queued
        self._urgent.set()
        with self._done:
            done = self._done.wait_for(lambda: self._committed >= target, timeout)
        return done and self.failed is None

    def _write_loop(self) -> None:
        _lower_this_thread(WRITER_NICENESS)
        conn = _connect(self.path)
        conn.execute("PRAGMA synchronous = FULL")  # a commit is on the disk, not only in the page cache
        try:
            while True:
                batch = [self._queue.get()]
                if batch[0] is not None and self._urgent.wait(GATHER):
                    self._urgent.clear()
                while True:
                    try:
                        batch.append(self._queue.get_nowait())
                    except queue.Empty:
                        break
                items = [item for item in batch if item is not None]
                if items and self.failed is None:
                    try:
                        conn.execute("BEGIN IMMEDIATE")
                        for sql, params in _merged(_statements(items)):
                            conn.execute(sql, [p.encode(p.value) if isinstance(p, Later) else p for p in params])
                        conn.execute("COMMIT")
                    except Exception as exc:  # a full disk, an I/O error: never let the writer die silently
                        self.failed = str(exc) or type(exc).__name__
                        log.error("journal_failed path=%s error=%r: tables are no longer crash-safe", self.path, self.failed)
                        try:
                            if conn.in_transaction:
                                conn.execute("ROLLBACK")
                        except sqlite3.Error:
                            pass
                with self._done:
                    self._committed += len(items)
                    self._done.notify_all()
                if len(items) < len(batch):
                    return
        finally:
            conn.close()

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

    def room(self, room: Room) -> RoomJournal:
        """A new room: its row, then everything that happens to it."""
        timing = {name: getattr(room.timing, name) for name in room.timing.__slots__}
        self.write((
            "INSERT INTO tables (id, players, timing_name, timing, password, host, status, scores, created) "
            "VALUES (?, ?, ?, ?, ?, ?, 'lobby', ?, ?)",
            (room.id, room.players, room.timing_name, json.dumps(timing), room.password, room.host,
             json.dumps([0] * seating.team_count(room.players)), time.time()),
        ))
        return RoomJournal(self, room.id)

    def set_status(self, table_id: int, status: str) -> None:
        self.write(ended(table_id, status))


class RoomJournal:
    """The journal of one room: the Room and its table call it at the points below."""

    def __init__(self, journal: Journal, table_id: int, next_move: int = 0) -> None:
        self.journal = journal
        self.table_id = table_id
        self._moves = count(next_move)

    def seating(self, room: Room) -> None:
        """Seats, names and host as they are now (called on every change of them)."""
        host = room.game.host(room) if room.table is not None else room.host
        self.journal.write(
            ("UPDATE tables SET host = ? WHERE id = ?", (host, self.table_id)),
            *(
                (
                    "INSERT OR REPLACE INTO seats (table_id, seat, name, bot, secret, ord) VALUES (?, ?, ?, ?, ?, ?)",
                    (self.table_id, i, s.name, None if s.bot is None else s.bot.level, s.secret, s.order),
                )
                for i, s in enumerate(room.seats)
            ),
        )

    def open_table(
        self,
        players: int,
        *,
        timing: Timing,
        rng: random.Random,
        bots: set[int] | frozenset[int],
        host: int | None,
        seat_order: list[int],
    ) -> JournaledTable:
        """The match starts: a table whose shuffles come from a seed the journal keeps, so it can be replayed."""
        seed = rng.getrandbits(128)
        table = JournaledTable(
            players, timing=timing, rng=random.Random(seed), bots=frozenset(bots), host=host, seat_order=seat_order
        )
        table.start_input = {"seed": f"{seed:032x}", "bots": sorted(bots), "host": host, "order": list(seat_order)}
        table.journal = self
        return table

    def move(self, kind: str, seat: int | None, input_: a.Action | str | None, at: float, emits: list[Emit]) -> bool:
        """One input of the table (an action, the start's JSON, or None for time passing) and what it produced, with
        the table's status and scores where it changes them, all committed together. A round's end is committed
        before this returns (R20). Returns whether the move began a round's signing (the table then writes a
        checkpoint).

        Nearly every move is routine (a swap, a pulse: nothing but the move to record); its row goes to the writer
        as it is, which encodes it there (the loop builds one tuple per move)."""
        row = (self.table_id, next(self._moves), at, kind, seat, input_, tuple(emits))
        if kind != "start" and routine(emits):
            self.journal.write_move(row)
            return False
        return self._notable(row, emits)

    def _notable(self, row: MoveRow, emits: list[Emit]) -> bool:
        """A move that changes the table's status, scores or round, or begins a round's signing."""
        table_id, n, at, kind, seat, input_, events = row
        encoded = Later(encode_action, input_) if isinstance(input_, a.Action) else input_
        statements: list[Statement] = [(_INSERT_MOVE, (table_id, n, at, kind, seat, encoded, Later(encode_emits, events)))]
        if kind == "start":
            statements.append(("UPDATE tables SET status = 'playing' WHERE id = ?", (self.table_id,)))
        scored = signing = False
        for emit in emits:
            event = emit.event
            if type(event) in ROUTINE_EVENTS:  # a swap or a pulse beside the notable events: nothing more to record
                continue
            if isinstance(event, e.SigningStarted):
                signing = True
            elif isinstance(event, e.RoundEnded):
                scored = True
                statements.append((
                    "UPDATE tables SET scores = ?, round = ? WHERE id = ?",
                    (json.dumps(list(event.scores)), event.round, self.table_id),
                ))
            elif isinstance(event, e.MatchOver):
                statements.append(ended(self.table_id, "over"))
        self.journal.write(*statements)
        if scored and not self.journal.flush():
            log.error("journal_not_durable table=%d: a round's end could not be committed", self.table_id)
        return signing

    def checkpoint(self, table: Table) -> None:
        """The whole table and its random source's state: a restore replays only the moves after the last one."""
        self.journal.write((
            "INSERT INTO moves (table_id, n, at, kind, seat, input, events) VALUES (?, ?, ?, 'checkpoint', NULL, ?, '[]')",
            (self.table_id, next(self._moves), table.now, Later(encode_checkpoint, (table.state(), table.rng.getstate()))),
        ))

    def closed(self, room: Room) -> None:
        """The room is gone (finished, abandoned or failed): kept ``KEEP_FINISHED_DAYS`` for ``replay``."""
        self.journal.set_status(self.table_id, "closed")
        self.journal.prune()


class JournaledTable(Table):
    """A rules table that journals every input it is given (with the events it produced) as it happens."""

    journal: RoomJournal | None = None
    start_input: dict[str, Any] | None = None  # what the start move records: seed, bots, host, seating order

    def start(self, now: float) -> list[Emit]:
        emits = super().start(now)
        if self.journal is not None and emits:
            self._journal("start", None, json.dumps(self.start_input or {}), now, emits)
        return emits

    def _journal(self, kind: str, seat: int | None, input_: a.Action | str | None, now: float, emits: list[Emit]) -> None:
        assert self.journal is not None
        if self.journal.move(kind, seat, input_, now, emits):
            self.journal.checkpoint(self)  # once a round: restoring replays the current round's moves only

    def act(self, seat: int, action: object, now: float) -> Outcome:
        outcome = super().act(seat, action, now)  # the time passing before it is part of the act (``_run_to``)
        if self.journal is not None and outcome.events:
            if outcome.refusal is None:  # accepted: an action the engine knows (``_HANDLERS``)
                self._journal("act", seat, action, now, outcome.events)  # type: ignore[arg-type]
            else:  # refused: it changed nothing, but time passed before it
                self._journal("advance", None, None, now, outcome.events)
        return outcome

    def advance(self, now: float) -> list[Emit]:
        emits = super().advance(now)
        if self.journal is not None and emits:
            self._journal("advance", None, None, now, emits)
        return emits


# --- restoring ----------------------------------------------------------------------------------------


class Mismatch(Exception):
    """A journalled table that does not replay as it was recorded."""


def replay_table(saved: SavedTable, timing: Timing) -> tuple[JournaledTable | None, list[list[Emit]]]:
    """Rebuild ``saved``'s table: from its last checkpoint (or its start), replay its inputs, checking each one's
    events against the record. Returns the table (None if the match never started) and the events of each move
    replayed. Raises ``Mismatch``."""
    moves = saved.moves
    if not moves:
        return None, []
    if [move.n for move in moves] != list(range(moves[0].n, moves[0].n + len(moves))):
        raise Mismatch("a move is missing")
    if moves[0].kind not in ("start", "checkpoint") or moves[0].input is None or (moves[0].kind == "start") != (moves[0].n == 0):
        raise Mismatch("the moves begin neither with the match's start nor with a checkpoint")
    last = max((i for i, move in enumerate(moves) if move.kind == "checkpoint"), default=None)
    if last is None:
        start = json.loads(moves[0].input)
        table = JournaledTable(
            saved.players,
            timing=timing,
            rng=random.Random(int(start["seed"], 16)),
            bots=frozenset(start["bots"]),
            host=start["host"],
            seat_order=list(start["order"]),
        )
        todo = moves
    else:
        checkpoint = json.loads(moves[last].input or "{}")
        version, internal, gauss = checkpoint["rng"]
        rng = random.Random()
        rng.setstate((version, tuple(internal), gauss))
        table = JournaledTable.from_state(checkpoint["table"], timing=timing, rng=rng)
        if table.players != saved.players:
            raise Mismatch("its checkpoint is of another table")
        todo = moves[last + 1 :]
    batches = []
    for move in todo:
        if move.kind == "start":
            emits = table.start(move.at)
        elif move.kind == "act":
            if move.input is None or move.seat is None:
                raise Mismatch(f"move {move.n} names no action or no seat")
            outcome = table.act(move.seat, decode_action(move.input), move.at)
            if not outcome.ok:
                raise Mismatch(f"move {move.n} is refused on replay ({outcome.refusal})")
            emits = outcome.events
        elif move.kind == "advance":
            emits = table.advance(move.at)
        elif move.kind == "rebase":
            table.rebase(float(json.loads(move.input or "{}")["delta"]))
            emits = []
        elif move.kind == "checkpoint":
            raise Mismatch(f"move {move.n} is a checkpoint after the last one")
        else:
            raise Mismatch(f"move {move.n} is of unknown kind {move.kind!r}")
        if encode_emits(emits) != move.events:
            raise Mismatch(f"move {move.n} ({move.kind}) does not replay as recorded")
        batches.append(emits)
    return table, batches


def _restore_room(lobby: Lobby, journal: Journal, saved: SavedTable, now: float) -> Room | None:
    """The room of ``saved`` as it was, on the clock's ``now``; None for a match that had ended. Raises on damage."""
    timing = Timing(**saved.timing)
    if not saved.seats and not saved.moves:  # killed between the table's row and its first seat: nobody sat there
        journal.set_status(saved.id, "closed")
        return None
    if [s.seat for s in saved.seats] != list(range(saved.players)):
        raise Mismatch("its seats are not all recorded")
    rng = lobby._rng()
    seats: list[Seat] = []
    for kept in saved.seats:
        if kept.bot is not None and kept.bot not in LEVELS:
            raise Mismatch(f"seat {kept.seat} has an unknown bot level {kept.bot!r}")
        bot = None if kept.bot is None else make_bot(kept.bot, random.Random(rng.getrandbits(64)))
        seats.append(Seat(name=kept.name, bot=bot, secret=kept.secret, order=kept.order))
    room = Room(
        id=saved.id, players=saved.players, timing_name=saved.timing_name, timing=timing,
        password=saved.password, rng=rng, seats=seats, host=saved.host,
    )
    room._orders = count(max((s.order for s in seats), default=0) + 1)
    room.idle_since = now  # nobody is connected yet: the room closes if nobody comes back (ABANDON_AFTER)
    table, batches = replay_table(saved, timing)
    for emits in batches:  # since the last checkpoint: the current round
        for i, s in enumerate(room.seats):
            if isinstance(s.bot, Bot):  # a journalled room plays Quatro: its bots are Quatro's
                seen = events_for(emits, i, room.players)
                if seen:
                    s.bot.observe(seen)  # the bot remembers what it had seen (H2: nothing more)
    room_journal = RoomJournal(journal, saved.id, next_move=saved.moves[-1].n + 1 if saved.moves else 0)
    if table is not None:
        if saved.scores != list(table.scores):
            raise Mismatch(f"its scores {saved.scores} are not those of its moves {table.scores}")
        if table.phase is Phase.OVER:
            journal.set_status(saved.id, "over")
            return None
        delta = now - table.now
        table.rebase(delta)
        room_journal.move("rebase", None, json.dumps({"delta": delta}), table.now, [])
        table.journal = room_journal
        room.table = table
        for s in room.seats:
            if s.bot is not None:
                s.bot_wake = now + s.bot.think_time()
    room.journal = room_journal
    return room


def restore(lobby: Lobby, journal: Journal, now: float) -> list[Room]:
    """Put the journal's live tables back into ``lobby`` as they were, on the clock's ``now``.

    A table that does not replay as recorded is refused alone (logged, marked ``refused``, kept for inspection);
    the others are restored. Each table is rebuilt whole before it is added: nothing is ever half-loaded.
    """
    rooms = []
    for saved in journal.saved:
        try:
            room = _restore_room(lobby, journal, saved, now)
        except (Mismatch, WireError, ValueError, KeyError, TypeError, IndexError) as exc:
            log.error("table_refused table=%d reason=%r: its journal does not replay; it is kept, not restored", saved.id, str(exc))
            journal.set_status(saved.id, "refused")
            continue
        if room is not None:
            lobby.rooms[room.id] = room
            rooms.append(room)
            log.info("table_restored table=%d phase=%s", room.id, room.phase)
    journal.saved = []
    lobby._ids = count(max([journal.last_id, *lobby.rooms]) + 1)
    lobby.journal = journal
    journal.flush()
    return rooms


def end_grace(lobby: Lobby, rooms: list[Room], now: float) -> None:
    """The restart's grace is over: seats nobody came back to are disconnected (R19) and lose the host role (R18)."""
    for room in rooms:
        if lobby.rooms.get(room.id) is not room:
            continue
        if room.table is None:
            if room.host is not None and room.seats[room.host].peer is None:
                room.lobby_host_leaves()
                room.broadcast_seating()
            continue
        emits: list[Any] = []
        for i, s in enumerate(room.seats):
            if s.bot is None and s.peer is None:
                emits.extend(room.table.act(i, a.Disconnect(), now).events)
        room.publish(emits, now)
    lobby.announce()


async def settle(lobby: Lobby, rooms: list[Room], grace: float = RESTORE_GRACE) -> None:
    """Wait out the restart's grace, then ``end_grace``."""
    if rooms:
        await trio.sleep(grace)
        end_grace(lobby, rooms, trio.current_time())
