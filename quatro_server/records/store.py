"""The records: per person and game, the matches played and won, the game's own tallies, and the rating; kept in
SQLite beside the journal (``records.sqlite3`` in the server's data directory, mode 0600, WAL), or in memory for a
server that keeps no journal (``--no-journal``: its records last as long as the process).

One transaction per finished match (``match_ended``): a few rows read and written, well under a millisecond on a
laptop (``docs/protocol.md`` section 20 gives the figure), on the event loop, once per match. Nothing here is a secret:
a person is a digest of their key (``quatro_server.records.identity``), a bot a level.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from quatro_server.records import ratings
from quatro_server.records.identity import is_bot
from quatro_server.records.match import MatchRecord
from quatro_server.records.ratings import Rating

log = logging.getLogger("quatro.records")

FILE_NAME = "records.sqlite3"
#: Seconds a server waits for the records file while another process holds it locked (a --workers server's workers
#: open it together at their start), trying again every OPEN_RETRY seconds.
OPEN_PATIENCE = 10.0
OPEN_RETRY = 0.02
SCHEMA_VERSION = 1

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS records ("
    " person TEXT NOT NULL, game TEXT NOT NULL, name TEXT NOT NULL,"
    " mu REAL NOT NULL, sigma REAL NOT NULL, shown REAL NOT NULL,"
    " matches INTEGER NOT NULL, wins INTEGER NOT NULL, counts TEXT NOT NULL, played REAL NOT NULL,"
    " PRIMARY KEY (person, game))",
    "CREATE INDEX IF NOT EXISTS records_board ON records (game, shown DESC, matches DESC, name, person)",
    "CREATE INDEX IF NOT EXISTS records_name ON records (name, played DESC)",
    # Tables whose matches are not rated (``create_table``'s ``rated: false``): the journal restores the table, this
    # says it stays friendly.
    "CREATE TABLE IF NOT EXISTS friendly_tables (id INTEGER PRIMARY KEY)",
)


class RecordsError(Exception):
    """The records file cannot be used (another program's file, a newer schema)."""


@dataclass(frozen=True, slots=True)
class Player:
    """Who played a seat: a person (a key's digest, or ``bot:LEVEL``) and the name they played under."""

    person: str
    name: str


@dataclass(frozen=True, slots=True)
class Entry:
    """One person's record in one game."""

    person: str
    game: str
    name: str
    rating: Rating
    matches: int
    wins: int
    counts: Mapping[str, int] = field(default_factory=dict)

    @property
    def bot(self) -> bool:
        return is_bot(self.person)


class Records:
    """The records of one server."""

    def __init__(self, db: sqlite3.Connection, path: Path | None) -> None:
        self.db, self.path = db, path
        # One writer at a time from the first read: two processes that both found no schema row would both write it.
        db.execute("BEGIN IMMEDIATE")
        for statement in _SCHEMA:
            db.execute(statement)
        row = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        if row is None:
            db.execute("INSERT INTO meta (key, value) VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
        elif row[0] != str(SCHEMA_VERSION):
            raise RecordsError(f"{path}: records of schema {row[0]}; this server reads schema {SCHEMA_VERSION}")
        db.commit()

    @classmethod
    def open(cls, data_dir: Path) -> Records:
        """The records in ``data_dir`` (``records.sqlite3``), made if there are none. Raises ``RecordsError``."""
        path = Path(data_dir) / FILE_NAME
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))  # the user's alone from the first byte
        deadline = time.monotonic() + OPEN_PATIENCE
        while True:
            db = None
            try:
                db = sqlite3.connect(path, isolation_level="DEFERRED")
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")  # WAL: a crash loses at most the last match, never the file
                return cls(db, path)
            except sqlite3.OperationalError as exc:
                # The workers of one server open the file at once: while one turns a new file to WAL and writes its
                # schema, the others are told "database is locked" at once, whatever the busy timeout. They wait
                # their turn; a file that stays locked is another program's.
                if db is not None:
                    db.close()
                if "locked" not in str(exc) and "busy" not in str(exc):
                    raise RecordsError(f"{path}: not a records file ({exc})") from exc
                if time.monotonic() >= deadline:
                    raise RecordsError(f"{path}: still locked by another program after {OPEN_PATIENCE:g} s") from exc
                time.sleep(OPEN_RETRY)
            except sqlite3.DatabaseError as exc:
                if db is not None:
                    db.close()
                raise RecordsError(f"{path}: not a records file ({exc})") from exc

    @classmethod
    def memory(cls) -> Records:
        """Records that last as long as the process."""
        return cls(sqlite3.connect(":memory:"), None)

    def close(self) -> None:
        self.db.close()

    # --- a finished match ----------------------------------------------------------------------------

    def match_ended(self, game: str, record: MatchRecord, seats: Sequence[Player | None], when: float) -> None:
        """Count a finished match of ``game`` and rate it. ``seats[i]`` played seat i (None: an anonymous player, who
        is rated as a newcomer for the others' sake and keeps nothing).

        A person who played on more than one side (``against_themselves``: a bot level on both teams, the usual
        case) keeps nothing of the match either: whichever side won, they both won and lost it, so a match and a
        win (or a loss) would be a false record, and a rating moved by beating oneself a false rating. Their seats
        still count with their rating as it stands, for the others' sake."""
        people = {player.person for player in seats if player is not None}
        unrecorded = against_themselves(record, seats)
        current = {entry.person: entry for entry in self._entries(game, people)}
        sides = len(record.places)
        teams: list[list[Rating]] = [[] for _ in range(sides)]
        where: list[tuple[int, int]] = []  # each seat's place in ``teams``
        for seat, player in enumerate(seats):
            side = record.side_of[seat]
            entry = None if player is None else current.get(player.person)
            where.append((side, len(teams[side])))
            teams[side].append(Rating() if entry is None else entry.rating)
        rated = ratings.rate(teams, record.places)
        new: dict[str, list[Rating]] = defaultdict(list)
        won: dict[str, bool] = defaultdict(bool)
        counts: dict[str, dict[str, int]] = {}
        names: dict[str, str] = {}
        for seat, player in enumerate(seats):
            if player is None or player.person in unrecorded:
                continue
            side, index = where[seat]
            new[player.person].append(rated[side][index])
            won[player.person] |= record.won(seat)
            names[player.person] = player.name
            mine = counts.setdefault(player.person, {})
            for key, value in record.seat_counts(seat).items():
                mine[key] = mine.get(key, 0) + value
        with self.db:
            for person, given in new.items():
                before = current.get(person)
                rating = ratings.merged(given)
                total = dict(before.counts) if before is not None else {}
                for key, value in counts[person].items():
                    total[key] = total.get(key, 0) + value
                self.db.execute(
                    "INSERT OR REPLACE INTO records (person, game, name, mu, sigma, shown, matches, wins, counts, played)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        person,
                        game,
                        names[person],
                        rating.mu,
                        rating.sigma,
                        rating.shown,
                        (before.matches if before else 0) + 1,
                        (before.wins if before else 0) + int(won[person]),
                        json.dumps(total, sort_keys=True),
                        when,
                    ),
                )

    # --- reading --------------------------------------------------------------------------------------

    def _entries(self, game: str, people: set[str]) -> list[Entry]:
        if not people:
            return []
        marks = ",".join("?" * len(people))
        rows = self.db.execute(
            f"SELECT person, game, name, mu, sigma, matches, wins, counts FROM records WHERE game = ? AND person IN ({marks})",
            (game, *sorted(people)),
        ).fetchall()
        return [_entry(row) for row in rows]

    def leaderboard(self, game: str, offset: int, limit: int) -> tuple[int, list[Entry]]:
        """How many people ``game`` has records of, and ``limit`` of them from place ``offset`` (0: the top), best
        rating first (ties: more matches first, then the name)."""
        (total,) = self.db.execute("SELECT COUNT(*) FROM records WHERE game = ?", (game,)).fetchone()
        rows = self.db.execute(
            "SELECT person, game, name, mu, sigma, matches, wins, counts FROM records WHERE game = ?"
            " ORDER BY shown DESC, matches DESC, name, person LIMIT ? OFFSET ?",
            (game, limit, offset),
        ).fetchall()
        return int(total), [_entry(row) for row in rows]

    def card(self, person: str) -> list[tuple[Entry, int]]:
        """``person``'s record in every game they played, each with their place on its leaderboard (1: the top)."""
        rows = self.db.execute(
            "SELECT person, game, name, mu, sigma, matches, wins, counts FROM records WHERE person = ? ORDER BY game",
            (person,),
        ).fetchall()
        found = []
        for row in rows:
            entry = _entry(row)
            (above,) = self.db.execute(
                "SELECT COUNT(*) FROM records WHERE game = ? AND shown > ?", (entry.game, entry.rating.shown)
            ).fetchone()
            found.append((entry, int(above) + 1))
        return found

    def person_named(self, name: str) -> str | None:
        """The person who last played under ``name`` (a name is no identity: this is a convenience for looking up)."""
        row = self.db.execute(
            "SELECT person FROM records WHERE name = ? ORDER BY played DESC LIMIT 1", (name,)
        ).fetchone()
        return None if row is None else str(row[0])

    def name_of(self, person: str) -> str | None:
        row = self.db.execute(
            "SELECT name FROM records WHERE person = ? ORDER BY played DESC LIMIT 1", (person,)
        ).fetchone()
        return None if row is None else str(row[0])

    # --- friendly tables -------------------------------------------------------------------------------

    def friendly(self, table: int) -> None:
        with self.db:
            self.db.execute("INSERT OR IGNORE INTO friendly_tables (id) VALUES (?)", (table,))

    def is_friendly(self, table: int) -> bool:
        return self.db.execute("SELECT 1 FROM friendly_tables WHERE id = ?", (table,)).fetchone() is not None


def against_themselves(record: MatchRecord, seats: Sequence[Player | None]) -> set[str]:
    """The people of a match who sat on more than one of its sides: it is no match of theirs to win or lose."""
    sides: dict[str, set[int]] = defaultdict(set)
    for seat, player in enumerate(seats):
        if player is not None:
            sides[player.person].add(record.side_of[seat])
    return {person for person, theirs in sides.items() if len(theirs) > 1}


def _entry(row: tuple[object, ...]) -> Entry:
    person, game, name, mu, sigma, matches, wins, counts = row
    try:
        tallies = {str(k): int(v) for k, v in json.loads(str(counts)).items()}
    except (ValueError, AttributeError, TypeError):
        tallies = {}
    return Entry(
        str(person),
        str(game),
        str(name),
        Rating(float(str(mu)), float(str(sigma))),
        int(str(matches)),
        int(str(wins)),
        tallies,
    )
