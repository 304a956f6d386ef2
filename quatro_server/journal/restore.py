"""Reading the live tables back: each rebuilt from its record, checked move by move, and handed over as plain data.

A rules table is a deterministic state machine: given the same inputs at the same times and the same random source,
it produces the same table. ``restore`` rebuilds every table that was live when the last server stopped from its
current match's start (or its last checkpoint), replays the inputs since, and checks that each one produces the very
events recorded beside it. What it returns is data (``RestoredTable``: the table's configuration, its seats, its
rebuilt rules table, the events replayed); the lobby builds its rooms from it (``quatro_server.tables.lobby.Lobby.restore``)
and moves each table onto its own clock (``Recorder.resumed``).

A table that does not replay as recorded is refused alone: not returned, marked ``refused`` in the journal, kept
for inspection and ``replay``. Nothing is ever half-loaded.
"""

from __future__ import annotations

import json
import logging
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from quatro_server.journal.codec import AnyCodec, Opening
from quatro_server.journal.saved import SavedMove, SavedSeat, SavedTable
from quatro_server.journal.store import Journal
from quatro_server.rules import RulesTable
from quatro_server.timing import Timing

log = logging.getLogger("quatro.journal")


class Mismatch(Exception):
    """A journalled table that does not replay as it was recorded."""


#: What a restore may meet in a damaged or tampered record, besides a ``Mismatch``.
DAMAGE = (Mismatch, ValueError, KeyError, TypeError, IndexError)


@dataclass(slots=True)
class RestoredTable:
    """A live table of the journal, as it stood at its last recorded move: everything a room is built from."""

    id: int
    #: The game's name as the journal has it (None: a table of a journal of version 1).
    game: str | None
    codec: AnyCodec
    players: int
    timing_name: str
    timing: Timing
    password: str | None  # its salted hash
    host: int | None
    seats: list[SavedSeat]
    #: The rules table, on the clock of the server that wrote it (``table.now``: its last recorded move); None for
    #: a table whose match had not started.
    table: RulesTable | None = None
    #: The events of each move replayed (from the current match's start or last checkpoint): what the seats saw of
    #: it, for bots to be told again (H2: nothing more).
    replayed: list[Sequence[object]] = field(default_factory=list)
    #: The number of the table's next move.
    next_move: int = 0


def replay_table(
    saved: SavedTable, codec: AnyCodec, timing: Timing
) -> tuple[RulesTable | None, list[Sequence[object]]]:
    """Rebuild ``saved``'s table: from its current match's start or last checkpoint, replay its inputs, checking each
    one's events against the record. Returns the table (None if no match ever started) and the events of each move
    replayed. Raises ``Mismatch`` (or another of ``DAMAGE``)."""
    moves = saved.moves
    if not moves:
        return None, []
    if [move.n for move in moves] != list(range(moves[0].n, moves[0].n + len(moves))):
        raise Mismatch("a move is missing")
    if moves[0].kind not in ("start", "checkpoint"):
        raise Mismatch("the moves begin neither with the match's start nor with a checkpoint")
    last = max(i for i, move in enumerate(moves) if move.kind in ("start", "checkpoint"))
    base = moves[last]
    if base.input is None:
        raise Mismatch(f"move {base.n} ({base.kind}) records nothing to start from")
    if base.kind == "checkpoint":
        if codec.checkpoints is None:
            raise Mismatch(f"move {base.n} is a checkpoint, which this game does not write")
        table = codec.checkpoints.load(json.loads(base.input), timing)
        if table.players != saved.players:
            raise Mismatch("its checkpoint is of another table")
        todo = moves[last + 1 :]
    else:
        opening = Opening.from_record(saved.players, json.loads(base.input))
        table = codec.new_table(opening, timing, random.Random(opening.seed))
        todo = moves[last:]
    batches: list[Sequence[object]] = []
    for move in todo:
        batches.append(replay_move(table, codec, move))
    return table, batches


def replay_move(table: RulesTable, codec: AnyCodec, move: SavedMove) -> Sequence[object]:
    """One recorded input given to ``table`` again; its events. Raises ``Mismatch`` if it does not replay as
    recorded (refused, of an unknown kind, or with other events)."""
    emits: Sequence[object]
    if move.kind == "start":
        emits = table.start(move.at)
    elif move.kind == "act":
        if move.input is None or move.seat is None:
            raise Mismatch(f"move {move.n} names no action or no seat")
        outcome = table.act(move.seat, codec.decode_action(move.input), move.at)
        if outcome.refusal is not None:
            raise Mismatch(f"move {move.n} is refused on replay ({outcome.refusal})")
        emits = outcome.events
    elif move.kind == "advance":
        emits = table.advance(move.at)
    elif move.kind == "rebase":
        table.rebase(float(json.loads(move.input or "{}")["delta"]))
        emits = []
    else:
        raise Mismatch(f"move {move.n} is of unknown kind {move.kind!r}")
    if codec.encode_events(emits) != move.events:
        raise Mismatch(f"move {move.n} ({move.kind}) does not replay as recorded")
    return emits


def _restored(saved: SavedTable, codec_of: Callable[[str | None], AnyCodec | None]) -> RestoredTable:
    if saved.damage is not None:
        raise Mismatch(saved.damage)
    codec = codec_of(saved.game)
    if codec is None:
        raise Mismatch(f"it is a table of {saved.game!r}, a game this server does not host")
    if [s.seat for s in saved.seats] != list(range(saved.players)):
        raise Mismatch("its seats are not all recorded")
    timing = Timing.from_values(saved.timing)
    table, batches = replay_table(saved, codec, timing)
    if table is not None and saved.scores != list(table.scores):
        raise Mismatch(f"its scores {saved.scores} are not those of its moves {list(table.scores)}")
    return RestoredTable(
        id=saved.id,
        game=saved.game,
        codec=codec,
        players=saved.players,
        timing_name=saved.timing_name,
        timing=timing,
        password=saved.password,
        host=saved.host,
        seats=saved.seats,
        table=table,
        replayed=batches,
        next_move=saved.moves[-1].n + 1 if saved.moves else 0,
    )


def restore(journal: Journal, codec_of: Callable[[str | None], AnyCodec | None]) -> list[RestoredTable]:
    """The tables that were live when the journal's last server stopped, each rebuilt whole (``codec_of`` gives the
    codec of a game by the name the journal has for it). A table that does not replay as recorded is refused (logged,
    marked ``refused``); a table nobody ever sat at is closed; a table whose match had ended is marked ``over``: none
    of these is returned. The journal forgets what it read."""
    tables = []
    for saved in journal.saved:
        if not saved.seats and not saved.moves:  # killed between the table's row and its first seat: nobody sat there
            journal.set_status(saved.id, "closed")
            continue
        try:
            restored = _restored(saved, codec_of)
        except DAMAGE as exc:
            journal.refuse(saved.id, str(exc))
            continue
        if restored.table is not None and restored.codec.over(restored.table):
            journal.set_status(saved.id, "over")
            continue
        tables.append(restored)
    journal.saved = []
    return tables
