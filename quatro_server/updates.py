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

from collections.abc import Sequence

import msgpack

from quatro_server.engine import Emit, Table, clock, own_timers, view
from quatro_shared.views import Clock, OwnTimers
from quatro_shared import protocol as p
from quatro_shared.framing import frame
from quatro_shared.wire import to_wire

_packb = msgpack.Packer(use_bin_type=True, autoreset=True).pack


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
_PHASE_MS = _packb("phase_ms")
_NEXT_PULSE = _packb("next_pulse_ms")
_LAST_PULSE = _packb("last_pulse_ms")
_VOTE_MS = _packb("vote_ms")
_VOTE_WAIT = _packb("vote_wait_ms")


def _clock_bytes(c: Clock) -> bytes:
    """A clock's map, its fields at their default (``vote_ms`` None, ``vote_wait_ms`` 0) left out: most batches
    have no vote running and none waiting."""
    parts = [_PHASE_MS, _packb(c.phase_ms), _NEXT_PULSE, _packb(c.next_pulse_ms), _LAST_PULSE, _packb(c.last_pulse_ms)]
    if c.vote_ms is not None:
        parts += (_VOTE_MS, _packb(c.vote_ms))
    if c.vote_wait_ms:
        parts += (_VOTE_WAIT, _packb(c.vote_wait_ms))
    return _map_header(len(parts) // 2) + b"".join(parts)


def _own_bytes(own: OwnTimers) -> bytes:
    """The seat's own cooldowns, a field that is 0 left out (the caller leaves the map out when both are)."""
    parts: list[bytes] = []
    if own.swap_wait_ms:
        parts += (_OWN_SWAP, _packb(own.swap_wait_ms))
    if own.channel_wait_ms:
        parts += (_OWN_CHANNEL, _packb(own.channel_wait_ms))
    return _map_header(len(parts) // 2) + b"".join(parts)


class Batch:
    """One batch of a table's events, about to be told to its seats. Encodes each part at most once."""

    __slots__ = ("table_id", "table", "emits", "now", "_events", "_blobs", "_clock", "_head", "_public")

    def __init__(self, table_id: int, table: Table, emits: Sequence[Emit], now: float) -> None:
        self.table_id = table_id
        self.table = table
        self.emits = emits
        self.now = now
        self._events: list[bytes | None] = [None] * len(emits)
        self._blobs: dict[tuple[int, ...], bytes] = {}
        self._clock: bytes | None = None
        self._head = _KIND + _TABLE + _packb(table_id)
        #: Every event public (most batches: a swap, a pulse): every seat sees all of them.
        self._public = (
            tuple(range(len(emits))) if all(emit.seat is None and emit.team is None for emit in emits) else None
        )

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

    def update(self, seat: int, seq: int, seen: tuple[int, ...], snapshot: bool) -> bytes:
        """The frame of ``seat``'s update: a snapshot (its full view), or what changed."""
        events = self._events_blob(seen)
        seq_bytes = _SEQ + _packb(seq)
        if snapshot:
            body = _map_header(6) + self._head + seq_bytes + _SNAPSHOT + _EVENTS + events + _VIEW
            return frame(body + _packb(to_wire(view(self.table, seat, self.now))))
        if self._clock is None:
            self._clock = _CLOCK + _clock_bytes(clock(self.table, self.now))
        own = own_timers(self.table, seat, self.now)
        if own.swap_wait_ms == 0 and own.channel_wait_ms == 0:
            return frame(_map_header(6) + self._head + seq_bytes + _DELTA + _EVENTS + events + self._clock)
        own_bytes = _OWN + _own_bytes(own)
        return frame(_map_header(7) + self._head + seq_bytes + _DELTA + _EVENTS + events + self._clock + own_bytes)
