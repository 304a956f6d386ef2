"""The outbound path: a byte buffer per connection, and one flusher for all of them.

A connection's frames are appended to its ``Outbox`` (never blocking; bounded in bytes by
``MAX_OUTBOUND_BYTES``: a client that stops reading fills it and is dropped, never allowed to stall a table).
The outbox is then marked dirty. One ``Flusher`` task, woken in the scheduler pass where something was queued,
waits one more pass-step so that every task of that pass has queued its frames, then hands each dirty
connection's joined bytes to **one non-blocking send()** and goes back to sleep. Only when the kernel's socket
buffer is full does a connection get a task of its own, which waits until the socket is writable and marks it
dirty again.

Measured (``docs/performance.md``, ``benchmarks/server_fanout.py``): a writer task per connection costs a task
switch, a trio checkpoint and a ``send()`` per frame or wake-up; this costs one ``send()`` per connection per
pass, however many frames and tables the pass produced.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable

import trio

log = logging.getLogger("quatro.outbound")

#: Bytes queued for one client beyond what its socket buffer holds. A busy table's update is about 150 bytes and
#: the largest message (a lobby list of 200 tables) about 20 KB, so this is several seconds of a busy table (and
#: the kernel's own buffer comes first): only a client that has stopped reading reaches it. It is then dropped
#: (its seat is kept, R19).
MAX_OUTBOUND_BYTES = 256 * 1024


class Outbox:
    """One connection's bytes on their way out. ``put`` never blocks; the ``Flusher`` sends."""

    __slots__ = ("fd", "flusher", "limit", "chunks", "size", "blocked", "failed", "_drained", "on_error")

    def __init__(
        self, fd: int, flusher: Flusher, on_error: Callable[[str], None] = lambda reason: None, limit: int | None = None
    ) -> None:
        self.fd = fd
        self.flusher = flusher
        #: Read when the connection is made (so that a test may give one connection a small one).
        self.limit = MAX_OUTBOUND_BYTES if limit is None else limit
        self.chunks: list[bytes] = []
        self.size = 0
        #: The socket buffer was full: a task waits until the socket is writable.
        self.blocked = False
        #: A send failed (the peer is gone): nothing more is sent.
        self.failed = False
        self._drained: trio.Event | None = None
        #: Called with a reason when the connection must be dropped (``slow_reader``, ``write_failed``).
        self.on_error = on_error

    def put(self, data: bytes) -> bool:
        """Queue ``data``. False (and nothing queued) if it would take the outbox over its limit."""
        if self.failed:
            return True  # the connection is going away; what it would have been sent no longer matters
        if self.size + len(data) > self.limit:
            return False
        self.chunks.append(data)
        self.size += len(data)
        self.flusher.mark(self)
        return True

    async def drained(self) -> None:
        """Return once everything queued has been handed to the kernel, or sending has failed."""
        while self.size and not self.failed:
            if self._drained is None:
                self._drained = trio.Event()
            await self._drained.wait()

    def close(self) -> None:
        """The connection's socket is about to close: never touch its descriptor again (it may be reused)."""
        self.failed = True
        self.chunks.clear()
        self.size = 0
        self._settled()

    def _settled(self) -> None:
        if self._drained is not None:
            self._drained.set()
            self._drained = None

    def _fail(self, reason: str) -> None:
        if not self.failed:
            self.failed = True
            self.chunks.clear()
            self.size = 0
            self._settled()
            self.on_error(reason)


class Flusher:
    """One task that sends for every connection: one ``send()`` per dirty connection per scheduler pass."""

    def __init__(self) -> None:
        self._dirty: dict[Outbox, None] = {}  # an ordered set: connections are served in the order they were marked
        self._wake = trio.Event()
        self._nursery: trio.Nursery | None = None
        #: Sends handed to the kernel, and passes that sent anything (their ratio: connections served per pass).
        self.sends = 0
        self.passes = 0

    def mark(self, box: Outbox) -> None:
        self._dirty[box] = None
        self._wake.set()

    def outbox(self, stream: trio.SocketStream) -> Outbox:
        """An outbox for a connection's socket."""
        return Outbox(stream.socket.fileno(), self)

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Send until cancelled."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            task_status.started()
            while True:
                await self._wake.wait()
                self._wake = trio.Event()
                # One more step: every task runnable in this pass queues its frames before any is sent.
                await trio.lowlevel.cancel_shielded_checkpoint()
                dirty, self._dirty = self._dirty, {}
                self.passes += 1
                for box in dirty:
                    self._send(box)

    def _send(self, box: Outbox) -> None:
        if box.blocked or box.failed or not box.chunks:
            return
        chunks = box.chunks
        data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        self.sends += 1
        try:
            sent = os.write(box.fd, data)  # the socket is non-blocking (trio's): this never waits
        except BlockingIOError:
            sent = 0
        except OSError:
            box._fail("write_failed")
            return
        if sent == len(data):
            chunks.clear()
            box.size = 0
            box._settled()
            return
        # The kernel's buffer is full: keep the rest, and let a task wait until the socket can take more.
        box.chunks = [data[sent:]]
        box.size = len(data) - sent
        box.blocked = True
        assert self._nursery is not None
        self._nursery.start_soon(self._wait_writable, box)

    async def _wait_writable(self, box: Outbox) -> None:
        try:
            await trio.lowlevel.wait_writable(box.fd)
        except (trio.ClosedResourceError, OSError):
            box._fail("write_failed")
            return
        box.blocked = False
        self.mark(box)
