"""The table journal in process: exact resumption, points committed before they are told, refusal of a bad
journal, one server per data directory, retention, and the replay notation."""

from __future__ import annotations

import json
import random
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from itertools import count
from pathlib import Path
from typing import Any

import pytest

from quatro_shared import protocol as p
from quatro_shared.games.quarto import contract as q
from quatro_shared.games.quatro import actions as a
from quatro_shared.games.quatro.signs import SIGNS
from quatro_shared.games.quatro.views import Phase
from quatro_shared.tables import Connect, Disconnect, TablePhase
from quatro_shared.wire import request_from_wire, to_wire

from conftest import STEADY
from helpers.disk import SmallDisk, mounted
from helpers.lobby_peer import RecordingPeer as Peer
from helpers.lobby_peer import decoded
from quatro_server import games
from quatro_server import journal as j
from quatro_server.games.quarto.engine import QuartoTable
from quatro_server.games.quarto.engine import view as quarto_view
from quatro_server.games.quatro.engine import Table, view
from quatro_server.journal import store
from quatro_server.server import RESTORE_GRACE
from quatro_server.tables.lobby import Lobby
from quatro_server.tables.room import Room

ids = count(1)


def ask(lobby: Lobby, peer: Peer, now: float, kind: str, **fields: Any) -> dict[str, Any]:
    return to_wire(lobby.handle(peer, request_from_wire({"kind": kind, "id": next(ids), **fields}), now))


def open_lobby(data_dir: Path, now: float) -> tuple[Lobby, j.Journal, list[Room]]:
    """A lobby on the journal of ``data_dir``, as a (re)started server has it at ``now``."""
    lobby = Lobby(timing_profiles={"steady": STEADY}, seed=7)
    journal = j.Journal.open(data_dir)
    return lobby, journal, lobby.restore(journal, now)


def views(room: Room) -> dict[int, dict[str, Any]]:
    """What every seat sees, at the table's own time: countdowns are what is left, so a rebased table shows the same."""
    assert room.table is not None
    return {seat: to_wire(view(room.table, seat, room.table.now)) for seat in range(room.players)}


def test_r19_a_round_in_progress_resumes_exactly_on_the_new_clock(tmp_path):
    """Hands, center, signs, the channel and its emoji, a pending vote and every cooldown come back as they were,
    each with the time it had left; secrets, names, teams, host and password still hold; later restarts too."""
    lobby, journal, restored = open_lobby(tmp_path, 0.0)
    assert restored == []
    ann, bob, cid = Peer("ann"), Peer("bob"), Peer("cid")
    created = ask(lobby, ann, 0.0, p.CREATE_TABLE, players=4, timing="steady", password="hunter2")
    table_id = created["table"]
    secrets = {0: created["secret"]}
    for peer in (bob, cid):
        reply = ask(lobby, peer, 0.1, p.JOIN, table=table_id, password="hunter2")
        secrets[reply["seat"]] = reply["secret"]
    assert ask(lobby, ann, 0.4, p.ADD_BOT, level="random")["kind"] == p.OK
    ask(lobby, bob, 0.5, p.RENAME, name="bobby")
    assert ask(lobby, ann, 1.0, p.START)["kind"] == p.OK
    room = lobby.rooms[table_id]
    ask(lobby, ann, 1.5, "pick_sign", sign="fox")
    for peer in (ann, bob, cid):
        ask(lobby, peer, 2.0, "ready")
    assert room.table.phase is Phase.ROUND
    hand, center = room.table.hand(ann.seat), room.table.center
    assert ask(lobby, ann, 2.5, "swap", give=hand[0], slot=1, take=center[1])["kind"] == p.OK
    assert ask(lobby, bob, 2.6, "take_channel")["kind"] == p.OK
    assert ask(lobby, bob, 2.7, "choose_emoji", sign="owl")["kind"] == p.OK
    room.tick(3.15)  # a pulse at 3.1 and whatever the bot does
    assert ask(lobby, cid, 3.2, "ask_reshuffle")["kind"] == p.OK
    assert ask(lobby, ann, 3.3, "vote", yes=True)["kind"] == p.OK
    before = views(room)
    names = [s.name for s in room.seats]
    host = room.table.host
    journal.close()  # what a kill leaves: everything committed (a kill loses at most the uncommitted tail)

    lobby2, journal2, restored = open_lobby(tmp_path, 5000.0)
    (room2,) = restored
    assert room2.id == table_id and room2.table is not None
    assert room2.table.now == pytest.approx(5000.0)
    assert views(room2) == before
    assert [s.name for s in room2.seats] == names and room2.table.host == host
    assert [entry.table for entry in lobby2.listing()] == [table_id]
    # Secrets still open their seats; a wrong one opens nothing.
    wrong = ask(lobby2, Peer("eve"), 5000.1, p.REJOIN, table=table_id, secret="not-a-secret")
    assert wrong["kind"] == p.REFUSED and wrong["reason"] == p.BAD_SECRET
    back = {}
    for seat, secret in secrets.items():
        peer = Peer(names[seat] or "x")
        reply = ask(lobby2, peer, 5000.2, p.REJOIN, table=table_id, secret=secret)
        assert reply["kind"] == p.OK and reply["seat"] == seat
        snapshot = next(m for m in peer.sent if m["kind"] == p.UPDATE)
        assert snapshot["snapshot"] is True and snapshot["view"]["hand"] == before[seat]["hand"]
        back[seat] = peer
    # The vote goes on where it was: the last voter says yes, the cards are dealt again (R16).
    voter = next(seat for seat in before[0]["vote"]["voters"] if seat not in before[0]["vote"]["yes"])
    assert ask(lobby2, back[voter], 5000.3, "vote", yes=True)["kind"] == p.OK
    assert room2.table.reshuffle_used
    assert ask(lobby2, back[0], 5000.4, "call")["kind"] == p.OK
    scores = list(room2.table.scores)
    assert sum(scores) == 1
    journal2.close()

    lobby3, journal3, (room3,) = open_lobby(tmp_path, 99.0)  # a clock that reads less than before: still fine
    assert list(room3.table.scores) == scores and room3.table.phase is Phase.BREAK
    assert room3.table.phase_ends_at - room3.table.now == pytest.approx(STEADY.break_length - 0.0, abs=1e-6)
    journal3.close()


def test_a_table_before_its_match_comes_back_with_its_seats_host_and_password(tmp_path):
    lobby, journal, _ = open_lobby(tmp_path, 0.0)
    ann, bob = Peer("ann"), Peer("bob")
    created = ask(lobby, ann, 0.0, p.CREATE_TABLE, players=6, timing="steady", password="pw")
    ask(lobby, bob, 0.1, p.JOIN, table=created["table"], password="pw")
    ask(lobby, ann, 0.2, p.ADD_BOT, level="hard")
    journal.close()
    lobby2, journal2, (room,) = open_lobby(tmp_path, 10.0)
    assert room.phase is TablePhase.LOBBY and room.host == 0
    assert room.summary(10.5).idle_s == 0  # back since the restart, not idle since the clock's zero
    assert [s.bot.level if s.bot else None for s in room.seats] == [None, None, "hard", None, None, None]
    assert room.password is not None and "pw" not in room.password  # a hash, never the password
    wrong = ask(lobby2, Peer("eve"), 11.0, p.JOIN, table=room.id, password="nope")
    assert wrong["kind"] == p.REFUSED and wrong["reason"] == p.BAD_PASSWORD
    assert ask(lobby2, Peer("cid"), 11.0, p.JOIN, table=room.id, password="pw")["kind"] == p.OK
    assert ask(lobby2, Peer("ann"), 11.0, p.REJOIN, table=room.id, secret=created["secret"])["kind"] == p.OK
    # New tables never reuse an id the journal holds.
    assert ask(lobby2, Peer("dee"), 12.0, p.CREATE_TABLE, players=4)["table"] > room.id
    journal2.close()


def test_a_new_table_s_row_is_committed_with_its_host_s_seat_never_alone(tmp_path, monkeypatch):
    """The writer may commit between any two writes; a table on the disk without its seats would come back empty
    (and be closed). So its row and its creator's seat are one write."""
    lobby, journal, _ = open_lobby(tmp_path, 0.0)
    writes: list[tuple[str, ...]] = []
    original = journal.write

    def write(*statements: store.Statement) -> None:
        writes.append(tuple(sql for sql, _ in statements))
        original(*statements)

    monkeypatch.setattr(journal, "write", write)
    created = ask(lobby, Peer("ann"), 0.0, p.CREATE_TABLE, players=4, timing="steady")
    with_row = [w for w in writes if any(sql.startswith("INSERT INTO tables") for sql in w)]
    assert len(with_row) == 1 and any("INTO seats" in sql for sql in with_row[0]), writes
    assert journal.flush()
    journal.close()
    _, journal2, (room,) = open_lobby(tmp_path, 1.0)
    assert room.id == created["table"] and room.seats[0].name == "ann"
    journal2.close()


def test_the_writer_runs_its_statements_while_the_loop_waits_and_never_waits_past_its_bound(tmp_path, monkeypatch):
    """The writer's Python takes the interpreter's lock: it runs while the event loop waits for sockets
    (``loop_idle`` set), never keeps a loop waiting in ``flush`` for it, and a loop never idle still has its writes
    committed, ``IDLE_WAIT`` late at most."""
    import threading

    journal = j.Journal.open(tmp_path)
    idle = threading.Event()  # the loop is working
    journal.loop_idle = idle
    monkeypatch.setattr(store, "IDLE_WAIT", 60.0)
    journal.write(
        journal.table_row(
            1, game="quatro", players=4, timing_name="steady", timing=STEADY, password=None, host=0, scores=[0, 0]
        )
    )
    time.sleep(0.3)
    assert not journal.committed(journal.queued)  # held while the loop works
    idle.set()  # the loop waits for its sockets
    wait_for(lambda: journal.committed(journal.queued))
    idle.clear()
    journal.write(store.ended(1, "lobby"))
    assert journal.flush(timeout=5)  # a flush is the loop waiting for the writer: the writer does not wait for it
    assert not idle.is_set()  # and the pass goes on as it was
    monkeypatch.setattr(store, "IDLE_WAIT", 0.01)
    journal.write(store.ended(1, "closed"))
    wait_for(
        lambda: journal.committed(journal.queued)
    )  # a loop never idle: committed all the same, a bounded wait later
    journal.close()


def test_r20_the_point_is_on_disk_before_anyone_is_told(tmp_path):
    """Every update that tells a round's end is sent after the journal holds its score (read by another connection)."""
    lobby, journal, _ = open_lobby(tmp_path, 0.0)
    seen: list[tuple[list[int], list[int]]] = []

    class Watching(Peer):
        def send(self, message: dict[str, Any] | bytes) -> None:
            for event in decoded(message).get("events", []):
                if event["kind"] == "round_ended":
                    with sqlite3.connect(tmp_path / j.FILE_NAME) as conn:
                        stored = json.loads(conn.execute("SELECT scores FROM tables").fetchone()[0])
                    seen.append((event["scores"], stored))
            super().send(message)

    ann = Watching("ann")
    ask(lobby, ann, 0.0, p.CREATE_TABLE, players=4, timing="steady")
    for _ in range(3):
        ask(lobby, ann, 0.1, p.ADD_BOT, level="random")
    ask(lobby, ann, 0.2, p.START)
    ask(lobby, ann, 0.3, "ready")
    assert ask(lobby, ann, 0.5, "call")["kind"] == p.OK
    assert seen and all(told == stored for told, stored in seen)
    journal.close()


def test_a_foreign_or_damaged_journal_is_refused_whole(tmp_path):
    (tmp_path / "garbage").mkdir()
    (tmp_path / "garbage" / j.FILE_NAME).write_bytes(b"this is not a database" * 100)
    with pytest.raises(j.JournalError, match="not a Quatro journal"):
        j.Journal.open(tmp_path / "garbage")

    foreign = tmp_path / "foreign"
    foreign.mkdir()
    with sqlite3.connect(foreign / j.FILE_NAME) as conn:
        conn.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY, path TEXT)")
    with pytest.raises(j.JournalError, match="another application"):
        j.Journal.open(foreign)

    newer = tmp_path / "newer"
    j.Journal.open(newer).close()
    with sqlite3.connect(newer / j.FILE_NAME) as conn:
        conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema'")
    with pytest.raises(j.JournalError, match="version 99"):
        j.Journal.open(newer)

    damaged = tmp_path / "damaged"
    lobby, journal, _ = open_lobby(damaged, 0.0)
    ann = Peer("ann")
    for _ in range(40):
        ask(lobby, ann, 0.0, p.CREATE_TABLE, players=8, timing="steady")
        lobby.detach(ann, 0.0, leaving=True)
    journal.close()
    with sqlite3.connect(damaged / j.FILE_NAME) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray((damaged / j.FILE_NAME).read_bytes())
    assert len(data) > 3 * 4096
    for page in range(1, len(data) // 4096):
        data[page * 4096 : page * 4096 + 12] = b"\xff" * 12  # scribble over every page's header but the file's
    (damaged / j.FILE_NAME).write_bytes(bytes(data))
    with pytest.raises(j.JournalError, match="damaged|not a Quatro journal"):
        j.Journal.open(damaged)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[SmallDisk]:
    yield from mounted(tmp_path / "disk", "1m")


def test_a_journal_on_a_full_disk_is_refused_as_a_full_disk_not_as_damaged(small_disk):
    """Starting on a full disk: the operator is told the disk is full (and that freeing space is the cure)."""
    small_disk.fill()
    with pytest.raises(j.JournalError, match="is full") as refusal:
        j.Journal.open(small_disk.root / "data")
    assert "damaged" not in str(refusal.value)
    result = subprocess.run(
        [sys.executable, "-m", "quatro_server", "--port", "0", "--data-dir", str(small_disk.root / "data")],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 2 and "is full" in result.stderr and "damaged" not in result.stderr, result.stderr
    small_disk.free()  # space returns: the same directory serves
    j.Journal.open(small_disk.root / "data").close()


def test_a_table_whose_scores_or_timing_do_not_read_is_refused_alone(tmp_path, caplog):
    """Unreadable scores on one table, unreadable timing on another: those two are refused, the third restored."""
    lobby, journal, _ = open_lobby(tmp_path, 0.0)
    tables = []
    for name in ("ann", "bob", "cid"):
        peer = Peer(name)
        tables.append(playing_table(lobby, peer).id)
    journal.close()
    with sqlite3.connect(tmp_path / j.FILE_NAME) as conn:
        conn.execute("UPDATE tables SET scores = '[0,' WHERE id = ?", (tables[0],))
        conn.execute("UPDATE tables SET timing = 'not json' WHERE id = ?", (tables[1],))
    lobby2, journal2, restored = open_lobby(tmp_path, 100.0)
    assert [room.id for room in restored] == [tables[2]]
    assert f"table_refused table={tables[0]} reason='its scores do not read" in caplog.text
    assert f"table_refused table={tables[1]} reason='its timing does not read" in caplog.text
    journal2.close()
    with sqlite3.connect(tmp_path / j.FILE_NAME) as conn:
        statuses = dict(conn.execute("SELECT id, status FROM tables").fetchall())
    assert [statuses[t] for t in tables] == ["refused", "refused", "playing"]


def test_a_server_refuses_to_start_on_a_foreign_journal_and_says_why(tmp_path):
    (tmp_path / j.FILE_NAME).write_bytes(b"\x00" * 5000)
    result = subprocess.run(
        [sys.executable, "-m", "quatro_server", "--port", "0", "--data-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 2
    assert "not a Quatro journal" in result.stderr and str(tmp_path) in result.stderr
    assert "quatro join" not in result.stdout


def test_a_table_whose_moves_do_not_replay_is_refused_alone(tmp_path):
    """A tampered move: that table is not restored (nor half-restored), the others are."""
    lobby, journal, _ = open_lobby(tmp_path, 0.0)
    tables = []
    for name in ("ann", "bob"):
        peer = Peer(name)
        tables.append(ask(lobby, peer, 0.0, p.CREATE_TABLE, players=4, timing="steady")["table"])
        for _ in range(3):
            ask(lobby, peer, 0.1, p.ADD_BOT, level="random")
        ask(lobby, peer, 0.2, p.START)
        ask(lobby, peer, 0.3, "ready")
    journal.close()
    with sqlite3.connect(tmp_path / j.FILE_NAME) as conn:
        n, events = conn.execute(
            "SELECT n, events FROM moves WHERE table_id = ? ORDER BY n DESC LIMIT 1", (tables[0],)
        ).fetchone()
        tampered = events.replace('"kind":"round_opened","round":1', '"kind":"round_opened","round":2')
        assert tampered != events
        conn.execute("UPDATE moves SET events = ? WHERE table_id = ? AND n = ?", (tampered, tables[0], n))
    lobby2, journal2, restored = open_lobby(tmp_path, 100.0)
    assert [room.id for room in restored] == [tables[1]]
    assert tables[0] not in lobby2.rooms
    journal2.close()
    with sqlite3.connect(tmp_path / j.FILE_NAME) as conn:
        assert conn.execute("SELECT status FROM tables WHERE id = ?", (tables[0],)).fetchone()[0] == "refused"


def test_one_server_per_data_directory(tmp_path):
    journal = j.Journal.open(tmp_path)
    with pytest.raises(j.JournalError, match="another quatro-server"):
        j.Journal.open(tmp_path)
    journal.close()
    j.Journal.open(tmp_path).close()


def test_finished_tables_are_kept_for_the_stated_time_then_forgotten(tmp_path):
    lobby, journal, _ = open_lobby(tmp_path, 0.0)
    for name in ("old", "recent"):
        peer = Peer(name)
        ask(lobby, peer, 0.0, p.CREATE_TABLE, players=4, timing="steady")
        lobby.detach(peer, 0.0, leaving=True)  # nobody left: the table closes
    journal.close()
    with sqlite3.connect(tmp_path / j.FILE_NAME) as conn:
        conn.execute("UPDATE tables SET ended = ? WHERE id = 1", (time.time() - (j.KEEP_FINISHED_DAYS + 1) * 86400,))
    j.Journal.open(tmp_path).close()
    with sqlite3.connect(tmp_path / j.FILE_NAME) as conn:
        assert [row[0] for row in conn.execute("SELECT id FROM tables")] == [2]
        assert conn.execute("SELECT count(*) FROM seats WHERE table_id = 1").fetchone()[0] == 0


def play_to_the_end(tmp_path: Path) -> int:
    """A whole match (two points) between one caller and three bots; returns its table id."""
    lobby = Lobby(timing_profiles={"steady": replace(STEADY, target_score=2)}, seed=3)
    journal = j.Journal.open(tmp_path)
    lobby.restore(journal, 0.0)
    ann = Peer("ann")
    table_id = ask(lobby, ann, 0.0, p.CREATE_TABLE, players=4, timing="steady")["table"]
    for _ in range(3):
        ask(lobby, ann, 0.1, p.ADD_BOT, level="normal")
    ask(lobby, ann, 0.2, p.START)
    room = lobby.rooms[table_id]
    now = 0.3
    while room.table.phase is not Phase.OVER:
        if room.table.phase is Phase.SIGNING:
            ask(lobby, ann, now, "ready")
        elif room.table.phase is Phase.ROUND:
            hand, center = room.table.hand(0), room.table.center
            ask(lobby, ann, now, "swap", give=hand[0], slot=0, take=center[0])
            ask(lobby, ann, now + 0.1, "call")
        elif room.table.phase is Phase.BREAK:
            ask(lobby, ann, now, "next_round")
        now += 6.0
        room.tick(now)
    journal.close()
    return table_id


def test_replay_prints_the_match_move_by_move(tmp_path):
    table_id = play_to_the_end(tmp_path)
    by_id = subprocess.run(
        [sys.executable, "-m", "quatro_server", "replay", str(table_id), "--data-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert by_id.returncode == 0, by_id.stderr
    lines = by_id.stdout.splitlines()
    assert lines[0].startswith(f"# Quatro table {table_id}: 4 players, 2 teams, timing steady (first to 2)")
    assert lines[1] == "# s0 ann: team 0, human" and lines[2].endswith("team 1, bot normal")
    body = [line for line in lines if not line.startswith("#")]
    assert body[0] == "00:00.000 -- match starts: 4 players, first to 2"
    assert any(" s0 swap " in line for line in body) and any(" s0 hand " in line for line in body)
    assert any(" s0 call: " in line for line in body)
    assert "match over:" in body[-1]
    times = [line.split(" ", 1)[0] for line in body]
    assert times == sorted(times)  # match time never runs backwards
    by_file = subprocess.run(
        [sys.executable, "-m", "quatro_server", "replay", str(tmp_path / j.FILE_NAME), "--table", str(table_id)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert by_file.returncode == 0 and by_file.stdout == by_id.stdout
    missing = subprocess.run(
        [sys.executable, "-m", "quatro_server", "replay", "999", "--data-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert missing.returncode == 1 and "no table 999" in missing.stderr


def test_the_data_directory_defaults_to_the_users_xdg_data_home(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert j.default_data_dir() == tmp_path / "quatro"
    monkeypatch.delenv("XDG_DATA_HOME")
    assert j.default_data_dir() == Path.home() / ".local" / "share" / "quatro"


class Disk:
    """The journal's disk as its writer meets it: ``full`` makes every commit fail as SQLite fails on a full disk
    (SQLITE_FULL), until it is set back. (tests/test_crash.py fills a real file system.)"""

    def __init__(self) -> None:
        self.full = False
        #: When set: the statements a transaction may hold and still fit (a disk with a little room again).
        self.room: int | None = None
        disk = self

        class Connection(sqlite3.Connection):
            statements = 0

            def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:  # type: ignore[override]
                self.statements = 0 if sql.startswith("BEGIN") else self.statements + 1
                too_big = disk.room is not None and self.statements > disk.room
                if sql == "COMMIT" and (disk.full or too_big):
                    error = sqlite3.OperationalError("database or disk is full")
                    error.sqlite_errorcode = sqlite3.SQLITE_FULL  # type: ignore[attr-defined]
                    raise error
                return super().execute(sql, *args)

        self.connection = Connection


@pytest.fixture
def disk(monkeypatch: pytest.MonkeyPatch) -> Disk:
    disk = Disk()

    def connect(path: Path, *, read_only: bool = False) -> sqlite3.Connection:
        conn = sqlite3.connect(path, isolation_level=None, factory=disk.connection)
        conn.execute("PRAGMA busy_timeout = 5000")
        return conn

    monkeypatch.setattr(store, "_connect", connect)
    return disk


def stored_scores(data_dir: Path, table_id: int) -> list[int]:
    with sqlite3.connect(data_dir / j.FILE_NAME) as conn:
        return json.loads(conn.execute("SELECT scores FROM tables WHERE id = ?", (table_id,)).fetchone()[0])


def told_scores(peer: Peer) -> list[list[int]]:
    return [
        e["scores"]
        for m in peer.sent
        if m.get("kind") == p.UPDATE
        for e in m.get("events", [])
        if e["kind"] == "round_ended"
    ]


def playing_table(lobby: Lobby, ann: Peer) -> Room:
    table_id = ask(lobby, ann, 0.0, p.CREATE_TABLE, players=4, timing="steady")["table"]
    for _ in range(3):
        ask(lobby, ann, 0.1, p.ADD_BOT, level="random")
    ask(lobby, ann, 0.2, p.START)
    ask(lobby, ann, 0.3, "ready")
    return lobby.rooms[table_id]


def wait_for(check: Any, within: float = 5.0) -> None:
    deadline = time.monotonic() + within
    while not check():
        assert time.monotonic() < deadline, "not within the time"
        time.sleep(0.01)


def test_r20_on_a_full_disk_a_point_is_held_until_the_journal_takes_it(tmp_path, disk, caplog):
    """The disk fills: the server serves on, but tells nobody of a point it could not commit, and lets no time run on
    that table meanwhile. Space returns: the journal commits everything it kept, in order, and only then is the point
    told, the table going on with the time it had."""
    lobby, journal, _ = open_lobby(tmp_path, 0.0)
    ann = Peer("ann")
    room = playing_table(lobby, ann)
    assert journal.flush()
    disk.full = True
    started = time.perf_counter()
    assert ask(lobby, ann, 0.5, "call")["kind"] == p.OK
    assert time.perf_counter() - started < 1.0  # the loop does not wait on a disk that refuses writes
    assert room.recorder is not None and room.recorder.held is not None
    assert told_scores(ann) == [] and sum(room.table.scores) == 1  # won, not told
    assert list(room.summary(0.5).scores) == [0, 0]  # nor shown in the lobby list
    assert stored_scores(tmp_path, room.id) == [0, 0]
    assert "the disk is full" in (journal.failed or "")
    assert (tmp_path / store.BEHIND_NAME).exists()
    left = room.table.phase_ends_at - room.table.now
    wake = room.next_wake()
    assert wake is not None and wake <= 0.5 + 0.25
    room.tick(40.0)  # long past the break's end: the table's time stands still while the point waits
    assert told_scores(ann) == [] and room.table.phase is Phase.BREAK
    assert room.table.phase_ends_at - room.table.now == pytest.approx(left)
    assert "journal_failed" in caplog.text and "journal_not_durable" in caplog.text

    disk.full = False
    wait_for(lambda: journal.failed is None)
    room.tick(41.0)
    assert told_scores(ann) == [stored_scores(tmp_path, room.id)] == [list(room.table.scores)]
    assert list(room.summary(41.0).scores) == list(room.table.scores)
    assert room.table.phase_ends_at - room.table.now == pytest.approx(left)  # the break goes on as it was
    assert not (tmp_path / store.BEHIND_NAME).exists()
    assert "journal_resumed" in caplog.text
    journal.close()
    lobby2, journal2, (room2,) = open_lobby(tmp_path, 100.0)
    assert list(room2.table.scores) == told_scores(ann)[0] and not journal2.missed
    journal2.close()


def test_a_server_stopped_while_the_disk_was_full_says_so_and_restores_what_was_committed(tmp_path, disk, caplog):
    """Stopped with writes the disk refused: the next start says its journal missed writes, the restored table knows
    it (and its replay says so), and no point it restores was ever more than the players were told."""
    lobby, journal, _ = open_lobby(tmp_path, 0.0)
    ann = Peer("ann")
    room = playing_table(lobby, ann)
    assert journal.flush()
    disk.full = True
    ask(lobby, ann, 0.5, "call")
    assert room.recorder is not None and room.recorder.held is not None
    journal.close()  # the disk still full: what it refused is lost
    disk.full = False
    assert (tmp_path / store.BEHIND_NAME).exists()
    caplog.clear()
    lobby2, journal2, (room2,) = open_lobby(tmp_path, 100.0)
    assert journal2.missed and "journal_missed_writes" in caplog.text
    assert room2.recorder is not None and room2.recorder.missed
    assert list(room2.table.scores) == [0, 0] and told_scores(ann) == []
    assert journal2.flush()
    assert not (tmp_path / store.BEHIND_NAME).exists()  # the restore is written: the mark goes
    journal2.close()
    replay = subprocess.run(
        [sys.executable, "-m", "quatro_server", "replay", str(room.id), "--data-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "later moves were lost" in replay.stdout
    lobby3, journal3, (room3,) = open_lobby(tmp_path, 200.0)  # the start after that one has nothing to say
    assert not journal3.missed and not room3.recorder.missed
    journal3.close()


def test_a_disk_with_a_little_room_again_takes_the_backlog_a_part_at_a_time_in_order(tmp_path, disk):
    """What piled up while the disk was full is committed in parts, in order, when no single commit of all of it
    would fit."""
    journal = j.Journal.open(tmp_path)
    assert journal.flush()
    disk.full = True
    for i in range(5 * store.CATCH_UP_ITEMS):
        journal.write(("INSERT OR REPLACE INTO meta (key, value) VALUES ('last', ?)", (str(i),)))
    assert not journal.flush()
    # A part of CATCH_UP_ITEMS fits (ROWS_PER_INSERT rows a statement, and the COMMIT); the whole does not.
    disk.full, disk.room = False, store.CATCH_UP_ITEMS // store.ROWS_PER_INSERT + 2
    wait_for(lambda: journal.failed is None)
    assert journal.flush()
    journal.close()
    with sqlite3.connect(tmp_path / j.FILE_NAME) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'last'").fetchone()[0] == str(
            5 * store.CATCH_UP_ITEMS - 1
        )


def test_a_statement_that_can_never_be_written_is_lost_alone(tmp_path, caplog):
    """Not the disk: a statement the file refuses for good is dropped (and said) and the journal writes on."""
    lobby, journal, _ = open_lobby(tmp_path, 0.0)
    ann = Peer("ann")
    room = playing_table(lobby, ann)
    journal.write(("INSERT INTO no_such_table VALUES (1)", ()))
    assert ask(lobby, ann, 0.5, "call")["kind"] == p.OK
    assert told_scores(ann) == [stored_scores(tmp_path, room.id)]
    assert "journal_write_lost" in caplog.text and "items=1 " in caplog.text
    journal.close()


def test_r18_r19_after_the_restart_grace_absent_seats_are_disconnected_and_the_host_passes(tmp_path):
    """Within the grace the table is as it was (host included); then whoever has not come back is disconnected
    (R19) and the host role passes to the longest-seated human who is here (R18)."""
    lobby, journal, _ = open_lobby(tmp_path, 0.0)
    ann, bob = Peer("ann"), Peer("bob")
    ask(lobby, ann, 0.0, p.CREATE_TABLE, players=4, timing="steady")
    bob_secret = ask(lobby, bob, 0.1, p.JOIN, table=ann.room.id)["secret"]
    ask(lobby, ann, 0.2, p.ADD_BOT, level="normal")
    ask(lobby, ann, 0.2, p.ADD_BOT, level="normal")
    ask(lobby, ann, 0.3, p.START)
    journal.close()
    lobby2, journal2, (room,) = open_lobby(tmp_path, 50.0)
    back = Peer("bob")
    assert ask(lobby2, back, 51.0, p.REJOIN, table=room.id, secret=bob_secret)["kind"] == p.OK
    assert room.table.host == 0 and room.table.is_connected(0)  # the grace: ann's seat waits as it was
    lobby2.end_grace([room], 50.0 + RESTORE_GRACE)
    assert not room.table.is_connected(0) and room.table.is_connected(1)
    assert room.table.host == 1
    kinds = [ev["kind"] for m in back.sent if m["kind"] == p.UPDATE for ev in m["events"]]
    assert "seat_disconnected" in kinds and "host_changed" in kinds
    journal2.close()


def test_quatro_play_s_private_server_keeps_no_journal(tmp_path, monkeypatch):
    from quatro_tui.local_server import LocalServer

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    with LocalServer(timing="fast"):
        pass
    assert not (tmp_path / "quatro").exists()


def random_action(table: Table, seat: int, rng: random.Random) -> a.Action:
    """Something a player could send now (often legal, sometimes not: refusals must change nothing)."""
    roll = rng.random()
    if table.phase is Phase.SIGNING:
        return a.PickSign(rng.choice(SIGNS)) if roll < 0.3 else a.Ready()
    if table.phase is Phase.BREAK:
        return a.NextRound()
    hand, center = table.hand(seat), table.center
    if roll < 0.02:
        return a.Call()
    if roll < 0.03:
        return a.Counter()
    if roll < 0.06:
        return a.AskReshuffle()
    if roll < 0.12:
        return a.Vote(rng.random() < 0.8)
    if roll < 0.6 and hand:
        slot = rng.randrange(len(center))
        return a.Swap(rng.choice(hand), slot, center[slot])
    if roll < 0.75:
        return a.TakeChannel()
    if roll < 0.85:
        return a.ReleaseChannel()
    if roll < 0.9:
        return Connect() if rng.random() < 0.5 else Disconnect()
    return a.ChooseEmoji(rng.choice(SIGNS))


@pytest.mark.parametrize("seed", range(6))
def test_a_restored_table_is_the_same_table_now_and_ever_after(tmp_path, seed):
    """Random play, a crash at a random moment, a restore on another clock, then the same inputs to the original
    and the restored table (and to a third, restored from the second): every seat's view stays identical."""
    rng = random.Random(seed)
    lobby, journal, _ = open_lobby(tmp_path, 0.0)
    peers = [Peer(name) for name in ("ann", "bob", "cid", "dee")]
    ask(lobby, peers[0], 0.0, p.CREATE_TABLE, players=4, timing="steady")
    for peer in peers[1:]:
        ask(lobby, peer, 0.0, p.JOIN, table=peers[0].room.id)
    ask(lobby, peers[0], 0.1, p.START)
    rooms = [lobby.rooms[peers[0].room.id]]  # the original, then each restored one: the same inputs to all
    original = rooms[0].table
    now = 0.1
    offsets = [0.0]

    def step() -> None:
        nonlocal now
        now += rng.uniform(0.01, 0.5)
        if rng.random() < 0.3:
            for room, offset in zip(rooms, offsets):
                room.advance(now + offset)
        else:
            seat = rng.randrange(4)
            action = random_action(original, seat, rng)
            for room, offset in zip(rooms, offsets):
                room.act(seat, action, now + offset)
        reference = [to_wire(view(original, s, original.now)) for s in range(4)]
        for room in rooms[1:]:
            table = room.table
            assert [to_wire(view(table, s, table.now)) for s in range(4)] == reference, (seed, now)

    for _ in range(rng.randrange(20, 120)):
        step()
    for crash in range(2):
        journal.close()
        lobby = Lobby(timing_profiles={"steady": STEADY}, seed=7)
        journal = j.Journal.open(tmp_path)
        # The table comes back as it was at its last journalled input (an input that changed nothing is not
        # journalled): on the original's clock, that input's time, from the clock of the table that wrote it.
        last = journal.saved[0].moves[-1].at - offsets[-1]
        (room,) = lobby.restore(journal, last + rng.uniform(-500.0, 5000.0))
        offsets.append(room.table.now - last)
        rooms[-1].recorder = None  # the latest restored room journals from here on; the one before stops writing
        rooms.append(room)
        for _ in range(rng.randrange(10, 80)):
            step()
    journal.close()


@pytest.mark.parametrize("seed", range(4))
def test_a_table_s_state_at_any_moment_makes_the_same_table(seed):
    """``Table.from_state(table.state())`` mid-round, mid-vote, at the reveal: the same views, then the same future."""
    rng = random.Random(seed)
    table = Table(4, timing=STEADY, rng=random.Random(seed), bots={3}, host=0)
    table.start(0.0)
    now, copies, revealed = 0.0, [], 0
    for step in range(400):
        now += rng.uniform(0.01, 0.5)
        seat = rng.randrange(3)
        action = random_action(table, seat, rng)
        for t in [table, *copies]:
            t.act(seat, action, now)
        for copy in copies:
            assert [to_wire(view(copy, s, now)) for s in range(4)] == [to_wire(view(table, s, now)) for s in range(4)]
        if step % 37 == 0:
            source = random.Random()
            source.setstate(table.rng.getstate())
            state = json.loads(json.dumps(table.state()))  # as the journal keeps it
            copies.append(Table.from_state(state, timing=STEADY, rng=source))
            revealed += table.summary is not None
    assert revealed and table.round > 2  # some copies were made at a reveal; rounds were dealt after copies


def test_a_malformed_state_is_refused():
    table = Table(4, timing=STEADY, rng=random.Random(1))
    table.start(0.0)
    state = table.state()
    with pytest.raises(ValueError, match="not a table's state"):
        Table.from_state({**state, "scores": [0]}, timing=STEADY, rng=random.Random())
    with pytest.raises(ValueError, match="not a table's state"):
        Table.from_state({k: v for k, v in state.items() if k != "seats"}, timing=STEADY, rng=random.Random())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a thread's own priority is Linux's")
def test_the_writer_thread_runs_below_the_event_loops_priority(tmp_path: Path) -> None:
    """The journal's writer is background work: it must not preempt the thread that serves the tables."""
    book = j.Journal.open(tmp_path)
    try:
        assert book._thread is not None
        deadline = time.monotonic() + 5
        loop_nice = _nice(None)
        while _nice(book._thread.native_id) == loop_nice and time.monotonic() < deadline:
            time.sleep(0.01)  # the thread lowers itself as it starts
        assert _nice(book._thread.native_id) == min(19, loop_nice + j.WRITER_NICENESS)
        assert _nice(None) == loop_nice  # the server's own thread keeps its priority
    finally:
        book.close()


def _nice(tid: int | None) -> int:
    """A thread's nice value from /proc (None: this thread)."""
    import threading

    stat = Path(f"/proc/self/task/{tid or threading.get_native_id()}/stat").read_text()
    return int(stat.rsplit(")", 1)[1].split()[16])


# --- Quarto: the same journal, the game's own encoding -----------------------------------------------

#: A Quarto move clock that does not run out during a test, so that its countdown is there to be carried over.
QUARTO_TIMING = STEADY.changed(quarto_move_clock=30.0, break_length=5.0)


def open_quarto_lobby(data_dir: Path, now: float) -> tuple[Lobby, j.Journal, list[Room]]:
    lobby = Lobby(timing_profiles={"steady": QUARTO_TIMING}, seed=5)
    journal = j.Journal.open(data_dir)
    return lobby, journal, lobby.restore(journal, now)


def quarto_views(room: Room) -> list[dict[str, Any]]:
    assert isinstance(room.table, QuartoTable)
    return [to_wire(quarto_view(room.table, seat, room.table.now)) for seat in range(2)]


def quarto_move(room: Room, rng: random.Random) -> tuple[int, Any] | None:
    """A legal move of whichever seat may move now (``quatro_shared.games.quarto.contract.legal``), or None."""
    assert isinstance(room.table, QuartoTable)
    for seat in rng.sample(range(2), 2):
        moves = q.legal(quarto_view(room.table, seat, room.table.now))
        if moves:
            return seat, rng.choice(moves)
    return None


def quarto_pair(lobby: Lobby, now: float) -> tuple[Peer, Peer, dict[int, str]]:
    """A Quarto table of two people, started."""
    ann, bob = Peer("ann"), Peer("bob")
    created = ask(lobby, ann, now, p.CREATE_TABLE, game="quarto", timing="steady")
    joined = ask(lobby, bob, now, p.JOIN, table=created["table"])
    assert ask(lobby, ann, now, p.START)["kind"] == p.OK
    return ann, bob, {0: created["secret"], 1: joined["secret"]}


def test_q_a_quarto_game_in_progress_resumes_exactly_and_its_secrets_still_hold(tmp_path):
    """Board, pool, the piece in hand, whose turn and step, scores, the moves in Q7 and the move clock's time left."""
    lobby, journal, _ = open_quarto_lobby(tmp_path, 0.0)
    ann, bob, secrets = quarto_pair(lobby, 1.0)
    room = ann.room
    rng = random.Random(4)
    now = 1.0
    while not (
        room.table.phase is q.Phase.PLAYING and room.table.game.number == 2 and len(room.table.moves_text()) >= 3
    ):
        now += 0.5
        seat, move = quarto_move(room, rng)
        peer = ann if seat == 0 else bob
        assert (
            ask(lobby, peer, now, move.kind, **{k: v for k, v in to_wire(move).items() if k != "kind"})["kind"] == p.OK
        )
    before = quarto_views(room)
    assert sum(before[0]["scores"]) + before[0]["draws"] == 1 and before[0]["clock_ms"] == 30_000
    journal.close()

    lobby2, journal2, (room2,) = open_quarto_lobby(tmp_path, 9000.0)
    assert room2.game is games.GAMES["quarto"] and room2.id == room.id
    assert room2.table.now == pytest.approx(9000.0)
    assert quarto_views(room2) == before
    for seat, secret in secrets.items():
        back = Peer(("ann", "bob")[seat])
        assert ask(lobby2, back, 9000.5, p.REJOIN, table=room.id, secret=secret)["seat"] == seat
        snapshot = next(m for m in back.sent if m["kind"] == p.UPDATE)
        assert snapshot["view"]["board"] == before[seat]["board"] and snapshot["view"]["turn"] == before[seat]["turn"]
    journal2.close()


def test_q_a_won_game_is_on_disk_before_anyone_is_told(tmp_path):
    lobby, journal, _ = open_quarto_lobby(tmp_path, 0.0)
    seen: list[tuple[list[int], list[int]]] = []

    class Watching(Peer):
        def send(self, message: dict[str, Any] | bytes) -> None:
            for event in decoded(message).get("events", []):
                if event["kind"] == "quarto_game_ended":
                    with sqlite3.connect(tmp_path / j.FILE_NAME) as conn:
                        stored = json.loads(conn.execute("SELECT scores FROM tables").fetchone()[0])
                    seen.append((event["scores"], stored))
            super().send(message)

    ann = Watching("ann")
    ask(lobby, ann, 0.0, p.CREATE_TABLE, game="quarto", timing="steady")
    ask(lobby, ann, 0.0, p.ADD_BOT, level="random")
    ask(lobby, ann, 0.0, p.START)
    room, rng, now = ann.room, random.Random(2), 0.0
    while not seen:
        now += 0.5
        room.tick(now)
        moves = q.legal(quarto_view(room.table, 0, now))
        if moves:
            move = rng.choice(moves)
            ask(lobby, ann, now, move.kind, **{k: v for k, v in to_wire(move).items() if k != "kind"})
    assert all(told == stored for told, stored in seen)
    journal.close()


@pytest.mark.parametrize("seed", range(4))
def test_q_a_restored_quarto_table_is_the_same_table_now_and_ever_after(tmp_path, seed):
    """Random legal play (and connections dropping), two crashes at random moments, each restore on another clock:
    the same inputs to the original and the restored tables give the same views, to the match's end."""
    rng = random.Random(seed)
    lobby, journal, _ = open_quarto_lobby(tmp_path, 0.0)
    quarto_pair(lobby, 0.0)
    rooms = list(lobby.rooms.values())
    offsets = [0.0]
    now = 0.0

    def step() -> None:
        nonlocal now
        now += rng.uniform(0.05, 2.0) if rng.random() < 0.9 else rng.uniform(20.0, 40.0)  # sometimes the clock runs out
        roll = rng.random()
        chosen = quarto_move(rooms[0], rng)
        if roll < 0.25 or chosen is None:
            for room, offset in zip(rooms, offsets):
                room.advance(now + offset)
        else:
            seat, action = chosen if roll > 0.05 else (rng.randrange(2), rng.choice([Connect(), Disconnect()]))
            for room, offset in zip(rooms, offsets):
                room.act(seat, action, now + offset)
        reference = quarto_views(rooms[0])
        for room in rooms[1:]:
            assert quarto_views(room) == reference, (seed, now)

    for crash in range(3):
        for _ in range(rng.randrange(5, 60)):
            if rooms[0].table.phase is q.Phase.OVER:
                break
            step()
        if crash == 2:
            break
        journal.close()
        lobby = Lobby(timing_profiles={"steady": QUARTO_TIMING}, seed=5)
        journal = j.Journal.open(tmp_path)
        if rooms[0].table.phase is q.Phase.OVER:  # the match ended: kept for replay, not restored
            assert lobby.restore(journal, 100.0) == []
            break
        last = journal.saved[0].moves[-1].at - offsets[-1]
        (room,) = lobby.restore(journal, last + rng.uniform(-500.0, 5000.0))
        offsets.append(room.table.now - last)
        rooms[-1].recorder = None  # the latest restored room journals from here on
        rooms.append(room)
    journal.close()


def test_q_a_rematch_is_restored_from_its_own_start_with_its_own_scores(tmp_path):
    """After a whole match and a rematch's first moves, a restart finds the rematch (not the match before it)."""
    lobby, journal, _ = open_quarto_lobby(tmp_path, 0.0)
    ann = Peer("ann")
    ask(lobby, ann, 0.0, p.CREATE_TABLE, game="quarto", timing="steady")
    ask(lobby, ann, 0.0, p.ADD_BOT, level="random")
    ask(lobby, ann, 0.0, p.START)
    room, now = ann.room, 0.0
    while room.table.phase is not q.Phase.OVER:
        now += 0.5
        room.tick(now)
        for move in q.legal(quarto_view(room.table, 0, now))[:1]:
            ask(lobby, ann, now, move.kind, **{k: v for k, v in to_wire(move).items() if k != "kind"})
    assert sum(room.table.scores) + room.table.draws == q.DEFAULT_GAMES
    assert ask(lobby, ann, now + 1.0, p.REMATCH)["kind"] == p.OK
    for _ in range(6):
        now += 0.5
        room.tick(now)
        for move in q.legal(quarto_view(room.table, 0, now))[:1]:
            ask(lobby, ann, now, move.kind, **{k: v for k, v in to_wire(move).items() if k != "kind"})
    assert room.table.phase is q.Phase.PLAYING and room.table.scores == [0, 0]
    before = quarto_views(room)
    journal.close()
    lobby2, journal2, (room2,) = open_quarto_lobby(tmp_path, 50.0)
    assert quarto_views(room2) == before
    assert [s.bot.level if s.bot else None for s in room2.seats] == [None, "random"]
    journal2.close()


def test_a_quatro_rematch_is_restored_from_its_own_start(tmp_path):
    lobby = Lobby(timing_profiles={"steady": replace(STEADY, target_score=1)}, seed=3)
    journal = j.Journal.open(tmp_path)
    lobby.restore(journal, 0.0)
    ann = Peer("ann")
    ask(lobby, ann, 0.0, p.CREATE_TABLE, players=4, timing="steady")
    for _ in range(3):
        ask(lobby, ann, 0.1, p.ADD_BOT, level="random")
    ask(lobby, ann, 0.2, p.START)
    ask(lobby, ann, 0.3, "ready")
    assert ask(lobby, ann, 0.5, "call")["kind"] == p.OK
    assert ann.room.table.phase is Phase.OVER
    assert ask(lobby, ann, 1.0, p.REMATCH)["kind"] == p.OK
    ask(lobby, ann, 1.1, "ready")
    assert ann.room.table.phase is Phase.ROUND and list(ann.room.table.scores) == [0, 0]
    before = views(ann.room)
    journal.close()
    _, journal2, (room,) = open_lobby(tmp_path, 30.0)
    assert views(room) == before
    journal2.close()


def test_a_table_of_a_game_this_server_does_not_host_is_refused_alone(tmp_path, caplog):
    lobby, journal, _ = open_quarto_lobby(tmp_path, 0.0)
    quarto_pair(lobby, 0.0)
    quarto_pair(lobby, 0.0)
    journal.close()
    with sqlite3.connect(tmp_path / j.FILE_NAME) as conn:
        conn.execute("UPDATE tables SET game = 'chess' WHERE id = 1")
    lobby2, journal2, restored = open_quarto_lobby(tmp_path, 10.0)
    assert [room.id for room in restored] == [2]
    assert "table_refused table=1" in caplog.text and "'chess'" in caplog.text
    journal2.close()


def test_q_a_tampered_quarto_move_refuses_its_table(tmp_path):
    lobby, journal, _ = open_quarto_lobby(tmp_path, 0.0)
    ann, bob, _ = quarto_pair(lobby, 0.0)
    first = ann if ann.room.table.game.turn == 0 else bob
    piece = q.legal(quarto_view(first.room.table, first.seat, 0.0))[0]
    assert ask(lobby, first, 0.5, "give", piece=piece.piece)["kind"] == p.OK
    journal.close()
    with sqlite3.connect(tmp_path / j.FILE_NAME) as conn:
        conn.execute(
            "UPDATE moves SET input = ? WHERE kind = 'act' AND input LIKE '%give%'",
            (json.dumps({"kind": "give", "piece": 99}),),
        )
    _, journal2, restored = open_quarto_lobby(tmp_path, 10.0)
    assert restored == []
    journal2.close()
    with sqlite3.connect(tmp_path / j.FILE_NAME) as conn:
        assert conn.execute("SELECT status FROM tables").fetchone()[0] == "refused"


def test_a_journal_of_version_1_is_upgraded_and_its_tables_are_quatro_s(tmp_path):
    """A journal written before tables named their game: its tables come back as Quatro tables, and the file is
    brought to this version; ``replay`` reads a version 1 file as it is."""
    lobby, journal, _ = open_lobby(tmp_path, 0.0)
    ann = Peer("ann")
    secret = ask(lobby, ann, 0.0, p.CREATE_TABLE, players=4, timing="steady")["secret"]
    for _ in range(3):
        ask(lobby, ann, 0.1, p.ADD_BOT, level="random")
    ask(lobby, ann, 0.2, p.START)
    before = views(ann.room)
    journal.close()
    with sqlite3.connect(tmp_path / j.FILE_NAME) as conn:  # the layout of version 1
        conn.execute("ALTER TABLE tables DROP COLUMN game")
        conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema'")
        conn.commit()
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the whole file in one, to be copied
    old = tmp_path / "old"
    old.mkdir()
    (old / j.FILE_NAME).write_bytes((tmp_path / j.FILE_NAME).read_bytes())
    (saved,) = j.read_journal(old / j.FILE_NAME)
    assert saved.game is None and saved.moves[0].kind == "start"
    printed = subprocess.run(
        [sys.executable, "-m", "quatro_server", "replay", str(old / j.FILE_NAME)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert printed.returncode == 0 and printed.stdout.startswith("# Quatro table 1: 4 players"), printed.stderr
    lobby2, journal2, (room,) = open_lobby(tmp_path, 100.0)
    assert room.game is games.GAMES["quatro"] and views(room) == before
    assert ask(lobby2, Peer("ann"), 100.1, p.REJOIN, table=room.id, secret=secret)["kind"] == p.OK
    journal2.close()
    with sqlite3.connect(tmp_path / j.FILE_NAME) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()[0] == str(j.SCHEMA_VERSION)
        assert "game" in {row[1] for row in conn.execute("PRAGMA table_info(tables)")}


def test_replay_prints_a_quarto_match_in_q7(tmp_path):
    lobby, journal, _ = open_quarto_lobby(tmp_path, 0.0)
    ann = Peer("ann")
    table_id = ask(lobby, ann, 0.0, p.CREATE_TABLE, game="quarto", timing="steady")["table"]
    ask(lobby, ann, 0.0, p.ADD_BOT, level="normal")
    ask(lobby, ann, 0.0, p.START)
    room, now = ann.room, 0.0
    while room.table.phase is not q.Phase.OVER:
        now += 0.5
        room.tick(now)
        for move in q.legal(quarto_view(room.table, 0, now))[-1:]:
            ask(lobby, ann, now, move.kind, **{k: v for k, v in to_wire(move).items() if k != "kind"})
    journal.close()
    printed = subprocess.run(
        [sys.executable, "-m", "quatro_server", "replay", str(table_id), "--data-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert printed.returncode == 0, printed.stderr
    lines = printed.stdout.splitlines()
    assert lines[0].startswith(f"# Quarto table {table_id}: 2 players, timing steady, opened ")
    assert lines[1] == "# s0 ann: human" and lines[2] == "# s1 normal-bot-1: bot normal"
    body = [line for line in lines if not line.startswith("#")]
    assert body[0].startswith("00:00.000 -- match starts: 4 games, s")
    assert any(" gives " in line and "(turn " in line for line in body)
    placed = [line for line in body if " places " in line]
    assert placed and all(line.split(" on ")[1][:2] in {f"{c}{r}" for c in "abcd" for r in "1234"} for line in placed)
    assert sum(" game " in line and " over: " in line for line in body) == q.DEFAULT_GAMES
    assert "match over:" in body[-1]
