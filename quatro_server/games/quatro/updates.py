"""The bytes of a batch's updates, built once per audience (protocol 3).

Every frame here is a ``quatro_shared.games.quatro.update.Update`` as ``to_wire`` and ``framing.encode`` would write it: a
snapshot is built that way; a delta, far more frequent, is assembled by hand from pre-encoded parts, byte for byte
the same (``tests/test_updates.py`` compares the two for every seat of every batch of many random matches). The
countdowns come from the engine's ``clock`` and ``own_waits``, the figures every view shows.

One batch of engine events reaches up to 8 seats. What the whole table sees (a public event, the table's
countdowns) is converted and encoded once and the same bytes go into every seat's frame; a team's event is
encoded once for both partners; only what is private to a seat (its hand, its chosen emoji, its cooldowns, its
``seq``, a snapshot's view) is built for that seat. A frame is assembled from these pre-encoded parts: a msgpack
map header followed by key/value pairs, the events an array header followed by the events' own bytes.

Most batches are a swap or a pulse, which move no countdown otherwise than by time passing (a pulse keeps its
channel's beat): their updates carry no clock, and only the swapper gets its cooldowns (``Batch.timeless``). Every
other update carries the table's clock, and the seat its cooldowns. Which of the two an update is depends on the
events its seat is sent alone (``Batch.timeless_for``): a private event elsewhere in the batch has no say (H3).

Which events a seat gets is decided by ``Emit.visible_to``, the engine's one gate of hidden information (H1, H3);
this module only encodes what it is handed. The public audience (every watcher of the table, protocol section 18)
is seat ``NO_SEAT``: it sees the public events alone, has no cooldowns, and one frame a batch serves every watcher.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Callable, Sequence

import msgpack

from quatro_shared import protocol as p
from quatro_shared.framing import MAX_FRAME_BYTES, PREFIX_BYTES, encode, frame
from quatro_shared.games.quatro.events import Pulse, Swapped
from quatro_shared.games.quatro.update import Update
from quatro_shared.tables import NO_SEAT
from quatro_shared.wire import to_wire

from quatro_server.games.quatro.engine import ROUTINE_EVENTS, Emit, Table, clock, own_waits, pulsed_on_beat, view

_packb: Callable[[object], bytes] = msgpack.Packer(use_bin_type=True, autoreset=True).pack
_pack_length = struct.Struct(">I").pack  # a frame's length prefix (quatro_shared.framing)
assert PREFIX_BYTES == 4


def _array_header(n: int) -> bytes:
    return bytes((0x90 | n,)) if n < 16 else b"\xdc" + n.to_bytes(2, "big")


def _map_header(n: int) -> bytes:
    return bytes((0x80 | n,))  # a delta has at most 8 keys


_KIND = _packb("kind") + _packb(p.UPDATE)
_TABLE = _packb("table")
_SEQ = _packb("seq")
_DELTA = _packb("snapshot") + _packb(False)
_AT = _packb("at")
_EVENTS = _packb("events")
_CLOCK = _packb("clock")
_OWN = _packb("own")
_OWN_SWAP = _packb("swap_wait_ms")
_OWN_CHANNEL = _packb("channel_wait_ms")


def _own_bytes(swap_wait_ms: int, channel_wait_ms: int) -> bytes:
    """The seat's own cooldowns (``OwnTimers``), a field that is 0 left out (the caller leaves the map out when both
    are)."""
    if swap_wait_ms and channel_wait_ms:
        return b"\x82" + _OWN_SWAP + _packb(swap_wait_ms) + _OWN_CHANNEL + _packb(channel_wait_ms)
    if swap_wait_ms:
        return b"\x81" + _OWN_SWAP + _packb(swap_wait_ms)
    return b"\x81" + _OWN_CHANNEL + _packb(channel_wait_ms)


@functools.lru_cache(maxsize=4096)
def _head(table_id: int) -> bytes:
    """An update's first keys: ``kind``, ``table`` and the ``seq`` key. Remembered for the last tables that had a
    batch, since every batch starts with them: the bytes depend on the table id alone, so a remembered one is never
    stale (a table id used again gets the same bytes)."""
    return _KIND + _TABLE + _packb(table_id) + _SEQ


#: A ``seq`` below 128 as msgpack writes it (a fixint: one byte).
_FIXINTS = [bytes((i,)) for i in range(128)]
#: A timeless batch holds only routine events, which ``Batch`` tests one by one.
assert ROUTINE_EVENTS == {Swapped, Pulse}


class Batch:
    """One batch of a table's events, about to be told to its seats. Encodes each part at most once.

    A delta update is assembled as: map header, ``kind`` and ``table`` (the batch's), the seat's ``seq``, then the
    part shared by every seat that sees the same events (``snapshot`` false, ``at``, the events, the table's clock
    unless what the seat sees is ``timeless``), then the seat's own cooldowns if any is running (without a clock:
    only a swapper's). Only ``seq`` and the cooldowns are packed per seat.

    Whether a seat's update carries the clock and its cooldowns is decided from the events that seat is sent, never
    from the whole batch (H3): another seat's emoji chosen in the same tick as a swap must not turn the swap's
    update into one with a clock, which would tell the table when the private choice was made."""

    __slots__ = (
        "table_id",
        "table",
        "emits",
        "now",
        "timeless",
        "at",
        "_at",
        "_events",
        "_blobs",
        "_tails",
        "_clock",
        "_head",
        "_public",
        "_moved",
        "_waits",
        "_ran_on",
    )

    def __init__(self, table_id: int, table: Table, emits: Sequence[Emit], now: float) -> None:
        self.table_id = table_id
        self.table = table
        self.emits = emits
        self.now = now
        self._events: list[bytes | None] = [None] * len(emits)
        self._blobs: dict[tuple[int, ...], bytes] = {}
        self._tails: dict[tuple[int, ...], bytes] = {}
        self._clock: bytes | None = None  # the ``clock`` key and the table's ``Clock``, packed, built with ``_waits``
        self._waits: list[tuple[int, int]] | None = None  # every seat's cooldowns, beside a clock
        self._ran_on: list[tuple[int, int]] | None = None  # every seat's cooldowns in an update without a clock
        #: ``at``: when the batch was built, in milliseconds on the server's clock (a late caller's: the table's).
        self.at = round(max(now, table.now) * 1000)
        self._at = _AT + _packb(self.at)
        self._head = _head(table_id)
        #: Every event public (most batches: a swap, a pulse): every seat sees all of them.
        public = True
        #: The positions of the events that moved a countdown otherwise than by time passing: any but swaps and
        #: pulses on their beat. An update holding none of them carries no clock and a client runs its countdowns
        #: on (protocol 3). A pulse half an interval late or more (a stalled server, a test's jump in time) is sent
        #: with the clock: a client could not tell which beat it fell on.
        moved: list[int] = []
        for i, emit in enumerate(emits):
            if emit.seat is not None or emit.team is not None:
                public = False
            event = emit.event
            kind = type(event)
            if kind is Swapped:
                continue
            if kind is Pulse and pulsed_on_beat(table, event.seat, now):  # type: ignore[attr-defined]
                continue
            moved.append(i)
        self._public: tuple[int, ...] | None = tuple(range(len(emits))) if public else None
        self._moved = frozenset(moved)
        #: What a seat that sees every event of the batch is sent: no clock (only swaps and pulses on their beat).
        self.timeless = bool(emits) and not moved

    def seen_by(self, seat: int, team: int) -> tuple[int, ...]:
        """The positions of the events ``seat`` may see (H1)."""
        if self._public is not None:
            return self._public
        return tuple(i for i, emit in enumerate(self.emits) if emit.visible_to(seat, team))

    def timeless_for(self, seen: tuple[int, ...]) -> bool:
        """Whether the update of a seat that sees ``seen`` goes without a clock: none of those events moved a
        countdown otherwise than by time passing (what the seat does not see has no say)."""
        return bool(seen) and self._moved.isdisjoint(seen)

    def _events_blob(self, seen: tuple[int, ...]) -> bytes:
        """The ``events`` array for one audience: the same bytes for every seat that sees the same events."""
        blob = self._blobs.get(seen)
        if blob is None:
            parts = [_array_header(len(seen))]
            for i in seen:
                encoded = self._events[i]
                if encoded is None:
                    encoded = self._events[i] = _packb(to_wire(self.emits[i].event))
                parts.append(encoded)
            blob = self._blobs[seen] = b"".join(parts)
        return blob

    def _clocked(self) -> list[tuple[int, int]]:
        """The table's clock (packed, once) and every seat's own cooldowns."""
        waits = self._waits
        if waits is None:
            table, now = self.table, self.now
            waits = self._waits = [own_waits(table, seat, now) for seat in range(table.players)]
            self._clock = _CLOCK + _packb(to_wire(clock(table, now)))
        return waits

    def _running_on(self) -> list[tuple[int, int]]:
        """Every seat's cooldowns in an update without a clock: a swapper's after its swap; the others' run on
        (-1, -1: not sent)."""
        own = self._ran_on
        if own is None:
            own = self._ran_on = [_RUN_ON] * self.table.players
            for emit in self.emits:
                event = emit.event
                if type(event) is Swapped:
                    own[event.seat] = own_waits(self.table, event.seat, self.now)
        return own

    def _tail(self, seen: tuple[int, ...], timeless: bool) -> bytes:
        """What follows ``seq`` in a delta update, the same for every seat that sees ``seen``."""
        tail = self._tails.get(seen)
        if tail is None:
            clock = b""
            if not timeless:
                self._clocked()
                assert self._clock is not None
                clock = self._clock
            tail = self._tails[seen] = _DELTA + self._at + _EVENTS + self._events_blob(seen) + clock
        return tail

    @staticmethod
    def _end(swap_ms: int, channel_ms: int, timeless: bool) -> tuple[bytes, bytes]:
        """A seat's map header, and what follows the shared tail: its cooldowns, when the update carries them."""
        if not timeless:
            if swap_ms or channel_ms:
                return _MAPS[8], _OWN + _own_bytes(swap_ms, channel_ms)
            return _MAPS[7], b""  # with a clock, cooldowns left out are both free
        if swap_ms < 0:
            return _MAPS[6], b""  # not a swapper: its cooldowns run on
        return _MAPS[7], _OWN + (_own_bytes(swap_ms, channel_ms) if swap_ms or channel_ms else b"\x80")

    def public_deltas(self) -> Callable[[int, int], bytes] | None:
        """When every event of the batch is public (a swap, a pulse: most batches), the delta update of each seat
        as ``delta(seat, seq)``, byte for byte ``update(seat, seq, seen, False)``: the parts every seat shares and
        each seat's cooldowns worked out once, so that a seat costs one join. None for any other batch."""
        seen = self._public
        if not seen:
            return None
        timeless = self.timeless
        own = self._running_on() if timeless else self._clocked()
        head, tail = self._head, self._tails.get(seen) or self._tail(seen, timeless)
        # Per seat: its map header, and what follows the shared tail (its cooldowns, if the update carries them).
        end = self._end
        ends = [end(swap_ms, channel_ms, timeless) for swap_ms, channel_ms in own]
        size = 1 + len(head) + len(tail)
        fixints = _FIXINTS

        def delta(seat: int, seq: int) -> bytes:
            header, end = ends[seat]
            seq_bytes = fixints[seq] if seq < 128 else _packb(seq)
            length = size + len(seq_bytes) + len(end)
            if length > MAX_FRAME_BYTES:
                return frame(header + head + seq_bytes + tail + end)  # raises
            return b"".join((_pack_length(length), header, head, seq_bytes, tail, end))

        return delta

    def update(self, seat: int, seq: int, seen: tuple[int, ...], snapshot: bool) -> bytes:
        """The frame of ``seat``'s update: a snapshot (its full view), or what changed."""
        if snapshot:
            events = tuple(self.emits[i].event for i in seen)
            return encode(to_wire(Update(self.table_id, seq, True, self.at, events, view(self.table, seat, self.now))))
        timeless = self.timeless_for(seen)
        if seat == NO_SEAT:  # a watcher: no cooldowns of its own (a clock, when there is one, is the table's)
            swap_ms, channel_ms = _RUN_ON if timeless else (0, 0)
        else:
            swap_ms, channel_ms = (self._running_on() if timeless else self._clocked())[seat]
        header, end = self._end(swap_ms, channel_ms, timeless)
        tail = self._tails.get(seen) or self._tail(seen, timeless)
        seq_bytes = _FIXINTS[seq] if seq < 128 else _packb(seq)
        body = b"".join((header, self._head, seq_bytes, tail, end))
        if len(body) > MAX_FRAME_BYTES:
            return frame(body)  # raises
        return _pack_length(len(body)) + body


#: Map headers by key count: a delta without a clock has 6 or 7 keys, one with a clock 7 or 8.
_MAPS = {n: _map_header(n) for n in (6, 7, 8)}
#: A seat's cooldowns in a timeless batch when it did not swap: not sent, they run on.
_RUN_ON = (-1, -1)
