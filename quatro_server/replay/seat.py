"""A journalled match as one seat saw it: the very ``update`` frames the live server sent that seat, rebuilt.

A rules table is a deterministic state machine (``docs/journal.md``): replaying a match's recorded inputs from its
``start`` gives the same table, move by move. ``seat_replay`` does that, and after each batch of events hands it to
the same gate the live room uses (``Game.batch``, then ``seen_by`` for the seat and its team, then ``update``), so
that a replay can never show a seat more than it was sent (H1, H3): the first frame is the match's snapshot, every
later one the delta the seat received, numbered by its ``seq``. A batch the seat saw none of gives no frame.

The live room tells a batch after everything one input did at one instant (an action and the time that passed
before it; a timer's tick and the bots' moves at it): the journal keeps those as moves at the same time, and the
replay gathers consecutive moves of one instant into one batch, as the room did.

Beside the frames, the game's ``Commentary`` (``Game.commentary``), if it has one, reads the whole record (every
event, hidden or not) and says what a seat could not see, attached to the frame it belongs after, in the game's own
words (``quatro_server.games.quatro.commentary``, for one). What the seat saw is the frames; the notes are for after.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from quatro_server.game import AnyGame
from quatro_server.games import DEFAULT_GAME, GAMES
from quatro_server.journal import Mismatch, Opening, SavedMove, SavedTable, replay_move
from quatro_server.rules import RulesTable
from quatro_server.timing import Timing


class NotReplayable(Exception):
    """A match that cannot be replayed: none such, not over, or not as it was recorded. ``reason`` is a protocol
    reason (``quatro_shared.protocol``)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


@dataclass(slots=True)
class SeatReplay:
    """One seat's replay of one match."""

    table: int
    match: int
    seat: int
    game: str
    players: int
    #: Who sat where ("" for nobody), the seats bots played, the table's durations.
    names: tuple[str, ...] = ()
    bot_seats: tuple[int, ...] = ()
    timing: dict[str, float] = field(default_factory=dict)
    #: The seat's update frames, as the server sent them (msgpack, without the length prefix).
    frames: list[bytes] = field(default_factory=list)
    #: Each frame's match time, in milliseconds from the match's start (time a server was down left out).
    times: list[int] = field(default_factory=list)
    #: What the full record says beside the frames: ``(frame index, lines)``, shown from that frame on; an empty
    #: ``lines`` clears what was shown.
    notes: list[tuple[int, tuple[str, ...]]] = field(default_factory=list)


def game_of(saved: SavedTable) -> AnyGame | None:
    """The game a journalled table played (a journal of version 1 names none: the default game)."""
    return DEFAULT_GAME if saved.game is None else GAMES.get(saved.game)


def matches_of(saved: SavedTable) -> list[list[SavedMove]]:
    """The table's matches (a rematch is a new ``start``), each its moves from its ``start`` on."""
    found: list[list[SavedMove]] = []
    for move in saved.moves:
        if move.kind == "start":
            found.append([])
        if found:
            found[-1].append(move)
    return found


def _instants(moves: Sequence[SavedMove]) -> list[list[SavedMove]]:
    """The moves gathered as the room told them: consecutive inputs of one instant; a restart stands alone."""
    groups: list[list[SavedMove]] = []
    for move in moves:
        if move.kind == "checkpoint":
            continue  # the table's state, for restoring: nothing happened
        last = groups[-1] if groups else None
        if last is not None and move.kind != "rebase" and last[-1].kind != "rebase" and last[-1].at == move.at:
            last.append(move)
        else:
            groups.append([move])
    return groups


def _play(table: RulesTable, game: AnyGame, move: SavedMove) -> Sequence[object]:
    """One recorded input given to the table again; raises ``NotReplayable`` if it does not replay as recorded."""
    try:
        return replay_move(table, game.journal, move)
    except Mismatch as exc:
        raise NotReplayable("not_replayable", str(exc)) from None


def seat_replay(saved: SavedTable, seat: int, match: int | None = None, *, commentary: bool = True) -> SeatReplay:
    """Seat ``seat``'s replay of ``saved``'s match number ``match`` (from 0; None: the last that is over). Only a
    match that is over is replayed. Raises ``NotReplayable``."""
    game = game_of(saved)
    if game is None:
        raise NotReplayable("unknown_game", f"table {saved.id} played {saved.game!r}, a game this server does not host")
    if not 0 <= seat < saved.players:
        raise NotReplayable("no_such_seat", f"table {saved.id} has {saved.players} seats")
    matches = matches_of(saved)
    try:
        finished = [i for i, moves in enumerate(matches) if i < len(matches) - 1 or _over(saved, game, moves)]
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        raise NotReplayable("not_replayable", f"table {saved.id} does not replay as recorded ({exc})") from exc
    if match is None:
        if not finished:
            raise NotReplayable("not_over", f"table {saved.id} has no match that is over")
        match = finished[-1]
    if match not in finished:
        if 0 <= match < len(matches):
            raise NotReplayable("not_over", f"match {match} of table {saved.id} is not over: it cannot be replayed yet")
        raise NotReplayable("no_such_match", f"table {saved.id} has no match {match}")
    return frames_of(saved, match, seat, commentary=commentary)


def frames_of(saved: SavedTable, match: int, seat: int, *, commentary: bool = True) -> SeatReplay:
    """Seat ``seat``'s frames of match ``match`` as far as its record goes, over or not: ``seat_replay`` is the one
    that lets only a finished match out. Raises ``NotReplayable``."""
    game = game_of(saved)
    matches = matches_of(saved)
    if game is None or not 0 <= match < len(matches):
        raise NotReplayable("no_such_match", f"table {saved.id} has no match {match}")
    try:
        return _replay(saved, game, matches[match], match, seat, commentary)
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        raise NotReplayable("not_replayable", f"table {saved.id} does not replay as recorded ({exc})") from exc


def _new_table(saved: SavedTable, game: AnyGame, start: SavedMove) -> RulesTable:
    if start.input is None:
        raise NotReplayable("not_replayable", f"move {start.n} records nothing to start from")
    opening = Opening.from_record(saved.players, json.loads(start.input))
    table: RulesTable = game.journal.new_table(opening, Timing.from_values(saved.timing), random.Random(opening.seed))
    return table


def _over(saved: SavedTable, game: AnyGame, moves: Sequence[SavedMove]) -> bool:
    """Whether a match's record ends with the match over (the last match of a table may have been left midway)."""
    return saved.status == "over" or bool(game.over(final_table(saved, game, moves)))


def final_table(saved: SavedTable, game: AnyGame, moves: Sequence[SavedMove]) -> RulesTable:
    """The table as a match's record leaves it. Raises ``NotReplayable`` (or ``ValueError``...) if it does not replay."""
    table = _new_table(saved, game, moves[0])
    for move in moves:
        if move.kind != "checkpoint":
            _play(table, game, move)
    return table


def match_facts(saved: SavedTable, match: int) -> tuple[bool, tuple[int, ...]]:
    """Whether match ``match`` of ``saved`` is over, and its scores as its record leaves them."""
    game = game_of(saved)
    matches = matches_of(saved)
    if game is None or not 0 <= match < len(matches):
        return False, ()
    try:
        table = final_table(saved, game, matches[match])
    except (NotReplayable, ValueError, KeyError, TypeError, IndexError):
        return False, ()
    return bool(game.over(table)), tuple(int(x) for x in table.scores)


def _replay(
    saved: SavedTable, game: AnyGame, moves: Sequence[SavedMove], match: int, seat: int, commentary: bool
) -> SeatReplay:
    table = _new_table(saved, game, moves[0])
    team = game.team_of(seat, saved.players)
    notes = game.commentary([s.name for s in saved.seats]) if commentary else None
    replay = SeatReplay(
        saved.id,
        match,
        seat,
        game.name,
        saved.players,
        names=tuple(s.name or "" for s in saved.seats),
        bot_seats=tuple(s.seat for s in saved.seats if s.bot),
        timing=dict(saved.timing),
    )
    origin = moves[0].at
    seq = 0
    for group in _instants(moves):
        emits: list[object] = []
        for move in group:
            if move.kind == "rebase":
                origin += float(json.loads(move.input or "{}")["delta"])
            emits.extend(_play(table, game, move))
        if not emits:
            continue
        now = group[-1].at
        batch = game.batch(saved.id, table, emits, now)
        seen = batch.seen_by(seat, team)
        if seen or seq == 0:
            seq += 1
            frame = batch.update(seat, seq, seen, seq == 1)
            replay.frames.append(bytes(frame[4:]))  # without the length prefix (quatro_shared.framing)
            replay.times.append(max(0, round((now - origin) * 1000)))
        if notes is not None:
            lines = notes.note(table, emits)
            if lines is not None:
                replay.notes.append((max(len(replay.frames) - 1, 0), tuple(lines)))
    return replay
