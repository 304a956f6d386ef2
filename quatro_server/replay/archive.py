"""The server's past matches, from its journal: the ``past_matches`` list and a seat's ``replay`` (protocol §19).

Only a match that is over is listed or replayed, never one under way (its frames would tell a player at the table
what another seat sees). A public table's matches may be replayed by anyone, from any seat: what a seat saw is
what that seat's player saw, and nothing more (``quatro_server.replay.seat``); the whole truth beside it comes only
after each reveal. A password table's matches are for those who could sit there: the ``replay`` request carries the
table's password or the secret of one of its seats (the journal holds their digests, never them).

Both read the journal file with their own read-only connection and may take a while (a long match is replayed
whole): the server runs them in a worker thread, never on its event loop. A replay's frames are cut into chunks
that fit one reply (``CHUNK_BYTES``); the last few replays built are kept (``KEEP_REPLAYS``), so that asking for the
next chunk does not replay the match again.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import OrderedDict
from pathlib import Path

import msgpack

from quatro_shared import messages as m
from quatro_shared import protocol as p
from quatro_shared.framing import MAX_ARRAY_LEN

from quatro_server.journal import JournalError, SavedTable
from quatro_server.journal.archive import read_starts, read_table
from quatro_server.replay.seat import NotReplayable, SeatReplay, game_of, match_facts, matches_of, seat_replay
from quatro_server.tables.credentials import password_matches, secret_matches

#: Matches in one ``past_matches`` reply.
PAGE = 20
#: The bytes of frames in one ``replay`` reply: well under a frame's limit (``MAX_FRAME_BYTES``, 64 KiB), with
#: room for the notes and the reply's other fields.
CHUNK_BYTES = 40 * 1024
#: Notes' bytes in a reply (the first chunk carries them all): more are left out, the frames never are.
NOTES_BYTES = 16 * 1024
#: Frames (and their times) in one ``replay`` reply, and notes in the first: an array of the framing holds no more
#: (``MAX_ARRAY_LEN``). A match's frames have no bound the rules set (an 8-seat match to five points at the standard
#: pace, each seat swapping every 2 s cooldown of a 180 s round, tells up to 720 swaps a round to every seat, and a
#: drawn round scores nothing, so rounds have no bound), so a long replay comes in as many chunks as it takes, never
#: in a longer array.
CHUNK_FRAMES = MAX_ARRAY_LEN
#: Replays kept built, for the chunks that follow.
KEEP_REPLAYS = 16


class Archive:
    """The past matches of the journal at ``path``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        #: Whether a match (by its table and its start move's number) is over, and its scores.
        self._facts_of: dict[tuple[int, int], tuple[bool, tuple[int, ...]]] = {}
        self._replays: OrderedDict[tuple[int, int, int], SeatReplay] = OrderedDict()

    # --- past_matches --------------------------------------------------------------------------------

    def past_matches(self, offset: int = 0, page: int = PAGE) -> m.Matches:
        """The matches that are over, newest first, ``page`` of them from ``offset``."""
        found: list[m.MatchSummary] = []
        want = offset + page + 1
        try:
            for saved, starts in read_starts(self.path):
                for match in range(len(starts) - 1, -1, -1):
                    over, scores = self._facts(saved, starts, match)
                    if not over:
                        continue
                    found.append(_summary(saved, starts, match, scores))
                    if len(found) >= want:
                        break
                if len(found) >= want:
                    break
        except (JournalError, sqlite3.Error):
            found = []
        return m.Matches(tuple(found[offset : offset + page]), len(found) > offset + page)

    def _facts(
        self, saved: SavedTable, starts: list[tuple[int, float, float]], match: int
    ) -> tuple[bool, tuple[int, ...]]:
        """Whether the match is over, and its scores: the table's row says so for a table that ended over; any other
        match is replayed once to tell (its record never changes: the answer is kept)."""
        if match == len(starts) - 1:
            if saved.status == "over":
                return True, tuple(saved.scores)
            if saved.status != "closed":
                return False, ()  # under way, or refused at a restart
        key = (saved.id, starts[match][0])
        with self._lock:
            known = self._facts_of.get(key)
        if known is None:
            try:
                known = match_facts(read_table(self.path, saved.id) or saved, match)
            except JournalError:
                known = (False, ())
            with self._lock:
                self._facts_of[key] = known
        return known

    # --- replay -------------------------------------------------------------------------------------

    def replay(self, request_id: int, ask: m.Replay) -> tuple[m.Reply, bool]:
        """The reply to ``ask``, and whether it was refused for a wrong password or secret (the caller counts the
        guess as the lobby counts a password's)."""
        try:
            saved = read_table(self.path, ask.table)
        except JournalError:
            saved = None
        if saved is None:
            return m.refused(request_id, p.NO_SUCH_TABLE, f"no past table {ask.table}"), False
        if saved.password is not None and not _may_see(saved, ask):
            return m.refused(
                request_id, p.BAD_PASSWORD, "a password table's match: give its password or a seat's secret"
            ), True
        if not 0 <= ask.seat < saved.players:
            return m.refused(request_id, p.NO_SUCH_SEAT, f"table {saved.id} has {saved.players} seats"), False
        try:
            replay = self._built(saved, ask.seat, ask.match)
        except NotReplayable as exc:
            return m.refused(request_id, exc.reason, exc.message), False
        return m.Ok(request_id, chunk(replay, ask.start or 0)), False

    def _built(self, saved: SavedTable, seat: int, match: int | None) -> SeatReplay:
        if match is None:
            last = len(matches_of(saved)) - 1
            match = last if last < 0 or match_facts(saved, last)[0] else last - 1
            if match < 0:
                raise NotReplayable(p.NOT_OVER, f"table {saved.id} has no match that is over")
        key = (saved.id, match, seat)
        with self._lock:
            kept = self._replays.get(key)
            if kept is not None:
                self._replays.move_to_end(key)
                return kept
        replay = seat_replay(saved, seat, match)
        with self._lock:
            self._replays[key] = replay
            while len(self._replays) > KEEP_REPLAYS:
                self._replays.popitem(last=False)
        return replay


def _may_see(saved: SavedTable, ask: m.Replay) -> bool:
    """A password table's match: the right password, or the secret of one of its seats."""
    if ask.password is not None and saved.password is not None and password_matches(saved.password, ask.password):
        return True
    secret = ask.secret
    return secret is not None and any(s.secret is not None and secret_matches(s.secret, secret) for s in saved.seats)


def chunk(replay: SeatReplay, start: int, limit: int | None = None, count: int = CHUNK_FRAMES) -> m.ReplayFrames:
    """The frames from ``start`` that fit one reply (at least one, if any is left; ``limit``: bytes of frames, by
    default ``CHUNK_BYTES``; ``count``: frames, and notes, at most); the notes with the first."""
    limit = CHUNK_BYTES if limit is None else limit
    start = max(0, min(start, len(replay.frames)))
    end, size = start, 0
    while (
        end < len(replay.frames) and end - start < count and (end == start or size + len(replay.frames[end]) <= limit)
    ):
        size += len(replay.frames[end]) + 8
        end += 1
    notes: list[m.ReplayNote] = []
    if start == 0:
        budget = NOTES_BYTES if limit == CHUNK_BYTES else limit
        for frame, lines in replay.notes:
            budget -= 8 + sum(len(line) + 2 for line in lines)
            if budget < 0 or len(notes) >= count:
                break
            notes.append(m.ReplayNote(frame, lines))
    return m.ReplayFrames(
        table=replay.table,
        match=replay.match,
        seat=replay.seat,
        game=replay.game,
        players=replay.players,
        names=replay.names,
        bot_seats=replay.bot_seats,
        timing=replay.timing,
        total=len(replay.frames),
        start=start,
        frames=tuple(msgpack.unpackb(frame, raw=False) for frame in replay.frames[start:end]),
        times=tuple(replay.times[start:end]),
        notes=tuple(notes),
    )


def _summary(
    saved: SavedTable, starts: list[tuple[int, float, float]], match: int, scores: tuple[int, ...]
) -> m.MatchSummary:
    """A match of the list. Its times: the table's wall clock when it opened, moved on by the server's clock since
    the table's first move (moves keep the server's clock, not the wall's)."""
    first_at = starts[0][1]
    _n, began, last = starts[match]
    game = game_of(saved)
    return m.MatchSummary(
        table=saved.id,
        match=match,
        game=saved.game or (game.name if game else ""),
        players=saved.players,
        names=tuple(s.name or "" for s in saved.seats),
        bot_seats=tuple(s.seat for s in saved.seats if s.bot),
        started=int(saved.created + began - first_at),
        ended=int(saved.created + last - first_at),
        scores=scores,
        password=saved.password is not None,
    )
