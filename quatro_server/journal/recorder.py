"""The journal of one table as it happens: the room tells its ``Recorder`` what it did, after each thing it did.

The room (``quatro_server.tables.room.Room``) owns the rules table and drives it; after every input it gives the table
(the match's start, an action, time passing) it hands the recorder the input and the events it produced, before it
tells anyone. The recorder writes the move, the table's status and scores where the move changes them, and once in a
while a checkpoint, through the journal's writer (``quatro_server.journal.store``). Which events matter and how they
are written is the game's ``Codec``.

Nearly every move is routine (a swap, a pulse): the recorder queues one tuple for it, and the writer thread encodes
it. A move that wins a point is committed before ``acted`` / ``advanced`` returns (R20). If the disk refuses it, the
recorder is ``held``: the room tells nobody anything more of the table, and lets no time pass on it, until the
journal has committed the point (``released``).
"""

from __future__ import annotations

import logging
import random
from collections.abc import Iterable, Sequence
from itertools import count

from quatro_server.journal.codec import AnyCodec, Opening, json_text
from quatro_server.journal.store import INSERT_MOVE, Journal, Later, MoveRow, Statement, ended
from quatro_server.rules import Outcome, RulesTable

log = logging.getLogger("quatro.journal")

#: Seconds between a held table's looks at the journal: how soon after the disk takes its point the table goes on.
HOLD_LOOK = 0.25

#: A seat as the journal keeps it: name, bot level (None: a human or nobody), the digest of its secret, its order.
SeatRecord = tuple[str | None, str | None, str | None, int]


class Recorder:
    """The journal of one table: its seats, and its matches move by move."""

    __slots__ = (
        "journal",
        "table_id",
        "codec",
        "table",
        "held",
        "look_at",
        "missed",
        "told",
        "_moves",
        "_routine",
        "_row",
    )

    def __init__(
        self, journal: Journal, table_id: int, codec: AnyCodec, next_move: int = 0, row: Statement | None = None
    ) -> None:
        self.journal = journal
        self.table_id = table_id
        self.codec = codec
        #: The match being recorded (checkpoints are taken of it); None before the first.
        self.table: RulesTable | None = None
        #: A point the disk did not take yet (the journal's count of queued items it needs committed): until it
        #: is, the room tells nobody of it nor of anything after it, and the table's time stands still (R20).
        self.held: int | None = None
        #: When a held table looks at the journal again (the room's timer task wakes for it).
        self.look_at = 0.0
        #: The table was restored from a journal that had missed writes: it is as of the last commit.
        self.missed = False
        #: The scores as of the last point told: what the lobby list shows while a point is held.
        self.told: tuple[int, ...] = ()
        self._moves = count(next_move)
        self._routine = codec.routine  # asked for every move: looked up once
        #: A new table's own row (``Journal.table_row``), written with its first seats; None once written or restored.
        self._row = row

    # --- the room --------------------------------------------------------------------------------

    def seating(self, host: int | None, seats: Iterable[SeatRecord]) -> None:
        """Seats, names and host as they are now (the room calls it on every change of them). A new table's row
        goes in the same commit as its first seats."""
        row, self._row = self._row, None
        self.journal.write(
            *((row,) if row is not None else ()),
            ("UPDATE tables SET host = ? WHERE id = ?", (host, self.table_id)),
            *(
                (
                    "INSERT OR REPLACE INTO seats (table_id, seat, name, bot, secret, ord) VALUES (?, ?, ?, ?, ?, ?)",
                    (self.table_id, i, name, level, secret, order),
                )
                for i, (name, level, secret, order) in enumerate(seats)
            ),
        )

    def closed(self) -> None:
        """The room is gone (finished, abandoned or failed): kept ``KEEP_FINISHED_DAYS`` for ``replay``."""
        self.journal.set_status(self.table_id, "closed")
        self.journal.prune()

    # --- a match ---------------------------------------------------------------------------------

    @staticmethod
    def seed(rng: random.Random) -> int:
        """The seed of a new match's random source, drawn from the room's: the ``start`` move keeps it."""
        return rng.getrandbits(128)

    def started(self, opening: Opening, table: RulesTable, now: float, emits: Sequence[object]) -> None:
        """``table``'s match began at ``now`` from ``opening`` (whose seed made its random source)."""
        self.table = table
        if emits:
            self._notable(
                (self.table_id, next(self._moves), now, "start", None, None, tuple(emits), self.codec), opening
            )

    def acted(self, seat: int, action: object, now: float, outcome: Outcome[object, object]) -> None:
        """``seat`` did ``action`` at ``now``; ``outcome`` is what the table answered. A refused action changed
        nothing, but the time that passed before it may have: that is recorded as time passing."""
        events = outcome.events
        if not events:
            return
        if outcome.refusal is None:
            row: MoveRow = (self.table_id, next(self._moves), now, "act", seat, action, tuple(events), self.codec)
        else:
            row = (self.table_id, next(self._moves), now, "advance", None, None, tuple(events), self.codec)
        if self._routine(events):
            self.journal.write_move(row)
        else:
            self._notable(row)

    def advanced(self, now: float, emits: Sequence[object]) -> None:
        """Time passed to ``now`` and ``emits`` happened."""
        if not emits:
            return
        row: MoveRow = (self.table_id, next(self._moves), now, "advance", None, None, tuple(emits), self.codec)
        if self._routine(emits):
            self.journal.write_move(row)
        else:
            self._notable(row)

    def resumed(self, table: RulesTable, now: float) -> None:
        """A restored ``table`` moves onto this process's clock: every deadline keeps the time it had left, and a
        ``rebase`` move says by how much, so that a table restored twice replays the same way. A table of a journal
        that had missed writes knows it (``missed``), and its ``rebase`` move says so."""
        self.table = table
        self.told = tuple(table.scores)
        self.missed = self.journal.missed
        if self.missed:
            log.warning(
                "table_restored_behind table=%d: as of the journal's last commit; later moves were lost", self.table_id
            )
        self._rebase(table, now, **({"missed": True} if self.missed else {}))

    def stand_still(self, now: float) -> None:
        """A held table's time does not run: every deadline keeps the time it had when the point was held."""
        if self.table is not None and now > self.table.now:
            self._rebase(self.table, now, held=True)

    def released(self, now: float) -> bool:
        """Whether the held point is committed now (the table goes on, with the time it had); else the next look
        is ``HOLD_LOOK`` from ``now``."""
        if self.held is None:
            return True
        if not self.journal.committed(self.held):
            self.look_at = now + HOLD_LOOK
            return False
        self.held = None
        self.stand_still(now)
        if self.table is not None:
            self.told = tuple(self.table.scores)
        log.warning("table_released table=%d: its point is committed; the table goes on", self.table_id)
        return True

    def _rebase(self, table: RulesTable, now: float, **facts: object) -> None:
        delta = now - table.now
        table.rebase(delta)
        self.journal.write(
            (
                INSERT_MOVE,
                (
                    self.table_id,
                    next(self._moves),
                    table.now,
                    "rebase",
                    None,
                    json_text({"delta": delta, **facts}),
                    "[]",
                ),
            )
        )

    def _notable(self, row: MoveRow, opening: Opening | None = None) -> None:
        """A move that may change the table's status, scores or round, or call for a checkpoint: the move and what
        it changes, committed together; a won point committed before this returns (R20)."""
        table_id, n, at, kind, seat, action, events, codec = row
        told = self.told  # the scores told before this move (a match's start tells its own)
        given: str | Later[object] | None = (
            json_text(opening.record())
            if opening is not None
            else (None if action is None else Later(codec.encode_action, action))
        )
        statements: list[Statement] = [
            (INSERT_MOVE, (table_id, n, at, kind, seat, given, Later(codec.encode_events, events)))
        ]
        if opening is not None:  # a match (a rematch too) starts from nothing won
            assert self.table is not None
            told = tuple(self.table.scores)
            if self.held is None:
                self.told = told
            statements.append(
                (
                    "UPDATE tables SET status = 'playing', scores = ?, round = 0 WHERE id = ?",
                    (json_text(list(self.table.scores)), table_id),
                )
            )
        notes = codec.notes(events)
        if notes.scores is not None:
            if self.held is None:
                self.told = tuple(notes.scores)  # told at once, unless the disk refuses it (below)
            statements.append(
                (
                    "UPDATE tables SET scores = ?, round = ? WHERE id = ?",
                    (json_text(list(notes.scores)), notes.round, table_id),
                )
            )
        if notes.over:
            statements.append(ended(table_id, "over"))
        self.journal.write(*statements)
        if notes.checkpoint:
            self._checkpoint()
        if notes.scores is not None and not self.journal.flush():
            if self.held is None:
                self.told = told
            self.held, self.look_at = self.journal.queued, at + HOLD_LOOK
            log.error(
                "journal_not_durable table=%d: a point waits for the disk; the table is held until it is committed",
                table_id,
            )

    def _checkpoint(self) -> None:
        """The whole table and its random source's state: a restore replays only the moves after the last one."""
        checkpoints, table = self.codec.checkpoints, self.table
        if checkpoints is None or table is None:
            return
        self.journal.write(
            (
                INSERT_MOVE,
                (
                    self.table_id,
                    next(self._moves),
                    table.now,
                    "checkpoint",
                    None,
                    Later(json_text, checkpoints.save(table)),
                    "[]",
                ),
            )
        )
