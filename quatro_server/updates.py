"""The bytes of a batch's updates, built once per audience (protocol 2).

One batch of engine events reaches up to 8 seats. What the whole table sees (a public event, the table's
countdowns) is converted and encoded once and the same bytes go into every seat's frame; a team's event is
encoded once for both partners; only what is private to a seat (its hand, its chosen emoji, its cooldowns, its
``seq``, a snapshot's view) is built for that seat. A frame is assembled from these pre-encoded parts: a msgpack
map header followed by key/value pairs, the events an array header followed by the events' own bytes.

Which events a seat gets is decided by ``Emit.visible_to``, the engine's one gate of hidden information (H1, H3);
this module only encodes what it is handed.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence

import msgpack

from quatro_server.engine import Emit, Table, clock_parts, view
from quatro_shared import protocol as p
from quatro_shared.framing import MAX_FRAME_BYTES, PREFIX_BYTES, frame
from quatro_shared.wire import to_wire

_packb: Callable[[object], bytes] = msgpack.Packer(use_bin_type=True, autoreset=True).pack
_pack_length = struct.Struct(">I").pack  # a frame's length prefix (quatro_shared.framing)
assert PREFIX_BYTES == 4


def _array_header(n: int) -> bytes:
    return bytes((0x90 | n,)) if n < 16 else b"\xdc" + n.to_bytes(2, "big")


def _map_header(n: int) -> bytes:
    return bytes((0x80 | n,))  # an update has at most 7 keys


_KIND = _packb("kind") + _packb(p.UPDATE)
_TABLE = _packb("table")
_SEQ = _packb("seq")
_SNAPSHOT = _packb("snapshot") + _packb(True)
_DELTA = _packb("snapshot") + _packb(False)
_EVENTS = _packb("events")
_CLOCK = _packb("clock")
_OWN = _packb("own")
_VIEW = _packb("view")
_OWN_SWAP = _packb("swap_wait_ms")
_OWN_CHANNEL = _packb("channel_wait_ms")


def _clock_bytes(phase_ms: int | None, next_pulse_ms: list[int | None], last_pulse_ms: list[int | None], vote_ms: int | None, vote_wait_ms: int) -> bytes:
    """A clock's map (``clock_parts``' fields), its fields at their default (``vote_ms`` None, ``vote_wait_ms`` 0)
    left out: most batches have no vote running and none waiting. Packed in one call, keys in ``Clock``'s order."""
    fields: dict[str, object] = {"phase_ms": phase_ms, "next_pulse_ms": next_pulse_ms, "last_pulse_ms": last_pulse_ms}
    if vote_ms is not None:
        fields["vote_ms"] = vote_ms
    if vote_wait_ms:
        fields["vote_wait_ms"] = vote_wait_ms
    return _packb(fields)


def _own_bytes(swap_wait_ms: int, channel_wait_ms: int) -> bytes:
    """The seat's own cooldowns, a field that is 0 left out (the caller leaves the map out when both are)."""
    if swap_wait_ms and channel_wait_ms:
        return b"\x82" + _OWN_SWAP + _packb(swap_wait_ms) + _OWN_CHANNEL + _packb(channel_wait_ms)
    if swap_wait_ms:
        return b"\x81" + _OWN_SWAP + _packb(swap_wait_ms)
    return b"\x81" + _OWN_CHANNEL + _packb(channel_wait_ms)


def _uint(n: int) -> bytes:
    """A ``seq`` as msgpack writes it (a fixint below 128: one byte)."""
    return _FIXINTS[n] if n < 128 else _packb(n)


_FIXINTS = [bytes((i,)) for i in range(128)]


class Batch:
    """One batch of a table's events, about to be told to its seats. Encodes each part at most once.

    A delta update is assembled as: map header, ``kind`` and ``table`` (the batch's), the seat's ``seq``, then the
    part shared by every seat that sees the same events (``snapshot`` false, the events, the table's clock), then
    the seat's own cooldowns if any is running. Only ``seq`` and the cooldowns are packed per seat."""

    __slots__ = ("table_id", "table", "emits", "now", "_events", "_blobs", "_tails", "_clock", "_head", "_public", "_own")

    def __init__(self, table_id: int, table: Table, emits: Sequence[Emit], now: float) -> None:
        self.table_id = table_id
        self.table = table
        self.emits = emits
        self.now = now
        self._events: list[bytes | None] = [None] * len(emits)
        self._blobs: dict[tuple[int, ...], bytes] = {}
        self._tails: dict[tuple[int, ...], bytes] = {}
        self._clock: bytes | None = None
        self._own: list[tuple[int, int]] | None = None  # every seat's own cooldowns, worked out with the clock
        head = _HEADS.get(table_id)
        if head is None:
            if len(_HEADS) >= _HEADS_KEPT:
                _HEADS.clear()
            head = _HEADS[table_id] = _KIND + _TABLE + _packb(table_id) + _SEQ
        self._head = head
        #: Every event public (most batches: a swap, a pulse): every seat sees all of them.
        self._public: tuple[int, ...] | None = tuple(range(len(emits)))
        for emit in emits:
            if emit.seat is not None or emit.team is not None:
                self._public = None
                break

    def seen_by(self, seat: int, team: int) -> tuple[int, ...]:
        """The positions of the events ``seat`` may see (H1)."""
        if self._public is not None:
            return self._public
        return tuple(i for i, emit in enumerate(self.emits) if emit.visible_to(seat, team))

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

    def _timers(self) -> list[tuple[int, int]]:
        """The table's clock (packed, once) and every seat's own cooldowns, from one pass over the seats."""
        own: list[tuple[int, int]] = []
        self._clock = _CLOCK + _clock_bytes(*clock_parts(self.table, self.now, own))
        self._own = own
        return own

    def _tail(self, seen: tuple[int, ...]) -> bytes:
        """What follows ``seq`` in a delta update, the same for every seat that sees ``seen``."""
        tail = self._tails.get(seen)
        if tail is None:
            if self._clock is None:
                self._timers()
            assert self._clock is not None
            tail = self._tails[seen] = _DELTA + _EVENTS + self._events_blob(seen) + self._clock
        return tail

    def public_deltas(self) -> Callable[[int, int], bytes] | None:
        """When every event of the batch is public (a swap, a pulse: most batches), the delta update of each seat
        as ``delta(seat, seq)``, byte for byte ``update(seat, seq, seen, False)``: the parts every seat shares and
        each seat's cooldowns worked out once, so that a seat costs one join. None for any other batch."""
        seen = self._public
        if not seen:
            return None
        own = self._own or self._timers()
        head, tail = self._head, self._tails.get(seen) or self._tail(seen)
        # Per seat: its map header, and what follows the shared tail (its cooldowns, if any is running).
        ends = [(_MAP7, _OWN + _own_bytes(swap_ms, channel_ms)) if swap_ms or channel_ms else (_MAP6, b"") for swap_ms, channel_ms in own]
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
            body = _map_header(6) + self._head + _uint(seq) + _SNAPSHOT + _EVENTS + self._events_blob(seen) + _VIEW
            return frame(body + _packb(to_wire(view(self.table, seat, self.now))))
        swap_ms, channel_ms = (self._own or self._timers())[seat]
        tail = self._tails.get(seen) or self._tail(seen)
        seq_bytes = _FIXINTS[seq] if seq < 128 else _packb(seq)
        if swap_ms or channel_ms:
            body = b"".join((_MAP7, self._head, seq_bytes, tail, _OWN, _own_bytes(swap_ms, channel_ms)))
        else:
            body = b"".join((_MAP6, self._head, seq_bytes, tail))
        if len(body) > MAX_FRAME_BYTES:
            return frame(body)  # raises
        return _pack_length(len(body)) + body


#: A batch's first keys by table id (``kind``, ``table`` and the ``seq`` key), built once per table; forgotten all
#: at once past ``_HEADS_KEPT`` tables (rebuilt on the next batch: a few bytes each).
_HEADS: dict[int, bytes] = {}
_HEADS_KEPT = 4096


_MAP6 = _map_header(6)
_MAP7 = _map_header(7)
