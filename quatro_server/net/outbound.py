"""The outbound path: a byte buffer per connection, and one flusher for all of them.

A connection's frames are appended to its ``Outbox`` (never blocking; bounded in bytes by
``MAX_OUTBOUND_BYTES``: a client that stops reading fills it and is dropped, never allowed to stall a table; the
server stops reading a client's requests while the answers to them fill half of it, and goes on as the client reads
them: a burst of its own requests is never taken for not reading, ``quatro_server.server``);
the lobby list is state, not history, so a waiting one is replaced by a newer one and a watcher holds at most
the latest). The outbox is then marked dirty. The ``Flusher``, called by trio's run loop at the end of every scheduler pass
(its ``before_io_wait`` hook: every task of that pass has queued its frames), hands each dirty connection's joined
bytes to **one non-blocking send()**. Only when the kernel's socket
buffer is full does a connection get a task of its own, which waits until the socket is writable and marks it
dirty again. A stream with no socket (an in-process gateway) is written by such a task, one ``send_all`` per pass.

Measured (``docs/performance.md``, ``benchmarks/server_fanout.py``): a writer task per connection costs a task
switch, a trio checkpoint and a ``send()`` per frame or wake-up; this costs one ``send()`` per connection per
pass, however many frames and tables the pass produced.
"""

from __future__ import annotations

import errno
import logging
import os
import time
from collections.abc import Callable

import trio

log = logging.getLogger("quatro.outbound")

#: Bytes queued for one client and not yet taken by its socket. The busiest seat (8 players, pulses, swaps and
#: a bot's every move) is sent well under 20 KB a second; 128 KiB is several seconds of that, or a few lobby
#: lists, so a reader that merely stalls for a moment is kept, while one that stops reading is dropped (its seat
#: is kept, R19) before it costs more than this.
MAX_OUTBOUND_BYTES = 128 * 1024


def failure(exc: OSError) -> str:
    """Why a write to a peer failed, in the log's words: the kernel's own cut of a peer that took nothing for its
    ``TCP_USER_TIMEOUT`` (a zero window: it does not read) is a ``slow_reader``; anything else is ``write_failed``."""
    return "slow_reader" if exc.errno == errno.ETIMEDOUT else "write_failed"


class Latest:
    """A queued frame that a newer one of its kind empties while it waits (the lobby list: state, not history)."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data


class Outbox:
    """One connection's bytes on their way out. ``put`` never blocks; the ``Flusher`` sends.

    ``size`` counts every byte queued and not yet taken by the socket (a write in flight included): it never
    exceeds ``limit``.
    """

    __slots__ = (
        "fd",
        "stream",
        "flusher",
        "limit",
        "chunks",
        "size",
        "blocked",
        "failed",
        "_latest",
        "_drained",
        "_wake_at",
        "on_error",
    )

    def __init__(
        self,
        fd: int,
        flusher: Flusher | None,
        on_error: Callable[[str], None] = lambda reason: None,
        limit: int | None = None,
        stream: trio.abc.SendStream | None = None,
    ) -> None:
        #: The socket's descriptor, or -1 for a stream without one (written by a task with ``send_all``).
        self.fd = fd
        self.stream = stream
        #: None: nothing sends it (bytes are only taken with ``take``).
        self.flusher = flusher
        #: Read when the connection is made (so that a test may give one connection a small one).
        self.limit = MAX_OUTBOUND_BYTES if limit is None else limit
        self.chunks: list[bytes | Latest] = []
        self.size = 0
        #: The socket buffer was full (or a stream write is under way): a task waits until it can take more.
        self.blocked = False
        #: A send failed (the peer is gone): nothing more is sent.
        self.failed = False
        self._latest: Latest | None = None  # the superseding frame still waiting in ``chunks``
        self._drained: trio.Event | None = None
        self._wake_at = 0  # ``_drained`` is set once ``size`` is down to this (``below``)
        #: Called with a reason when the connection must be dropped (``slow_reader``, ``write_failed``).
        self.on_error = on_error

    def put(self, data: bytes, *, supersede: bool = False) -> bool:
        """Queue ``data``. False (and nothing queued) if it would take the outbox over its limit.

        With ``supersede``, ``data`` replaces the superseding frame still waiting, if any (emptied, and ``data``
        queued after whatever came meanwhile): state whose latest value is all a reader needs."""
        if self.failed:
            return True  # the connection is going away; what it would have been sent no longer matters
        if not supersede:  # nearly every frame: nothing to replace
            size = self.size + len(data)
            if size > self.limit:
                return False
            self.size = size
            self.chunks.append(data)
            flusher = self.flusher
            if flusher is not None:  # ``Flusher.mark``, inlined: every frame passes here
                flusher._dirty[self] = None
                flusher.frames += 1
            return True
        old = self._latest
        grown = len(data) - (0 if old is None else len(old.data))
        if self.size + grown > self.limit:
            return False
        self.size += grown
        if old is not None:
            old.data = b""
        self._latest = Latest(data)
        self.chunks.append(self._latest)
        if self.flusher is not None:
            self.flusher.mark(self)
            self.flusher.frames += 1
        return True

    def take(self) -> bytes:
        """Everything queued, as one write (empty when nothing is). Its bytes stay counted in ``size`` until
        ``sent`` says the socket took them."""
        chunks, self.chunks, self._latest = self.chunks, [], None
        if len(chunks) == 1:
            only = chunks[0]
            return only.data if isinstance(only, Latest) else only
        return b"".join(c.data if isinstance(c, Latest) else c for c in chunks)

    def sent(self, n: int) -> bool:
        """The socket took ``n`` bytes of what was taken. True if that woke a task waiting for ``drained`` (or
        ``below``)."""
        self.size -= n
        if self.size <= self._wake_at:
            return self._settled()
        return False

    async def drained(self) -> None:
        """Return once everything queued has been handed to the kernel, or sending has failed."""
        await self.below(0)

    async def below(self, level: int) -> None:
        """Return once at most ``level`` bytes are queued (the peer has read the rest), or sending has failed."""
        while self.size > level and not self.failed:
            self._wake_at = level
            if self._drained is None:
                self._drained = trio.Event()
            await self._drained.wait()

    def close(self) -> None:
        """The connection's socket is about to close: never touch its descriptor again (it may be reused)."""
        self.failed = True
        self.chunks.clear()
        self._latest = None
        self.size = 0
        self._settled()

    def _settled(self) -> bool:
        self._wake_at = 0
        if self._drained is not None:
            self._drained.set()
            self._drained = None
            return True
        return False

    def _fail(self, reason: str) -> None:
        if not self.failed:
            self.close()
            self.on_error(reason)


class Flusher(trio.abc.Instrument):
    """Sends for every connection: one ``send()`` per dirty connection per scheduler pass.

    It sends from trio's ``before_io_wait`` hook, which the run loop calls once per pass, after every task runnable
    in that pass has run and just before it waits for I/O: every frame queued in the pass is out before the loop
    sleeps, and the flush costs no task, no wake-up event and no extra scheduler step (as a flusher task, each pass
    cost two task steps more). ``run`` installs the hook and keeps the nursery for the rare tasks that wait (a full
    socket buffer, a stream without a socket)."""

    def __init__(self) -> None:
        self._dirty: dict[Outbox, None] = {}  # an ordered set: connections are served in the order they were marked
        self._nursery: trio.Nursery | None = None
        self._token: trio.lowlevel.TrioToken | None = None
        self._woke = False  # this flush woke a task or started one: the loop must not sleep before it runs
        #: Sends handed to the kernel, and passes that sent anything (their ratio: connections served per pass).
        self.sends = 0
        self.passes = 0
        #: Frames queued to be sent, to every connection (the metrics' messages out).
        self.frames = 0
        #: Seconds spent sending in the hook (the loop's trace, ``Server.pass_reading``).
        self.seconds = 0.0

    def mark(self, box: Outbox) -> None:
        self._dirty[box] = None

    def outbox(self, stream: trio.abc.SendStream, limit: int | None = None) -> Outbox:
        """An outbox for a connection's stream: its socket written directly, any other stream by ``send_all``."""
        sock = getattr(stream, "socket", None)
        if sock is None:
            return Outbox(-1, self, limit=limit, stream=stream)
        return Outbox(sock.fileno(), self, limit=limit)

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Send until cancelled."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            self._token = trio.lowlevel.current_trio_token()
            trio.lowlevel.add_instrument(self)
            try:
                task_status.started()
                await trio.sleep_forever()
            finally:
                self._nursery = None
                try:
                    trio.lowlevel.remove_instrument(self)
                except KeyError:
                    pass

    def before_io_wait(self, timeout: float) -> None:
        if not self._dirty or self._nursery is None:
            return
        dirty, self._dirty = self._dirty, {}
        self.passes += 1
        started = time.perf_counter()
        write = os.write
        for box in dirty:
            # The common case written out (every connection of every pass comes here): one socket, one queued chunk
            # or several joined, one write the kernel takes whole. Anything else goes to ``_send``.
            chunks = box.chunks
            if not chunks or box.blocked or box.failed or box.fd < 0 or box._latest is not None:
                if chunks:
                    self._guarded(box)
                continue
            # No ``Latest`` among the chunks (``_latest`` is None, checked above): plain bytes.
            data: bytes = chunks[0] if len(chunks) == 1 else b"".join(chunks)  # type: ignore[assignment, arg-type]
            try:
                sent = write(box.fd, data)  # the socket is non-blocking (trio's): this never waits
            except OSError:
                box.chunks = [data]  # the general path decides: a full buffer waits, a broken peer is dropped
                self._guarded(box)
                continue
            self.sends += 1
            box.chunks = []
            if sent == len(data):
                box.size -= sent
                if box._drained is not None and box.size <= box._wake_at:
                    box._settled()
                    self._woke = True
            else:
                self._rest(box, data, sent)
        self.seconds += time.perf_counter() - started
        if self._woke or self._dirty:
            # The run loop chose how long to sleep before this hook ran: a task woken or started here (a connection's
            # ``drained``, a wait for a full socket) must not wait out that sleep. Waking the loop costs one write to
            # its wake-up socket, and happens only in these rare cases.
            self._woke = False
            assert self._token is not None
            self._token.run_sync_soon(_nothing)

    def _guarded(self, box: Outbox) -> None:
        try:
            self._send(box)
        except Exception:  # never out of the hook: trio would drop the instrument, and nothing would be sent again
            log.exception("flush_failed")
            self._woke = True
            box._fail("write_failed")

    def _send(self, box: Outbox) -> None:
        if box.blocked or box.failed or not box.chunks:
            return
        data = box.take()
        self.sends += 1
        assert self._nursery is not None
        if box.fd < 0:  # no socket: a task writes it, and the box waits meanwhile
            box.blocked = True
            self._woke = True
            self._nursery.start_soon(self._send_stream, box, data)
            return
        try:
            sent = os.write(box.fd, data)  # the socket is non-blocking (trio's): this never waits
        except BlockingIOError:
            sent = 0
        except OSError as exc:
            self._woke = True  # its owner closes the connection: the reader is woken to stop
            box._fail(failure(exc))
            return
        if sent < len(data):
            self._rest(box, data, sent)
        elif box.sent(sent):
            self._woke = True

    def _rest(self, box: Outbox, data: bytes, sent: int) -> None:
        """The kernel's buffer is full: keep the rest first in line, and let a task wait until the socket can take
        more."""
        assert self._nursery is not None
        box.chunks.insert(0, data[sent:])
        box.blocked = True
        self._woke = True
        self._nursery.start_soon(self._wait_writable, box)
        if box.sent(sent):
            self._woke = True

    async def _send_stream(self, box: Outbox, data: bytes) -> None:
        assert box.stream is not None
        try:
            await box.stream.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            box._fail("write_failed")
            return
        if box.failed:
            return
        box.blocked = False
        box.sent(len(data))
        if box.chunks:
            self.mark(box)

    async def _wait_writable(self, box: Outbox) -> None:
        try:
            await trio.lowlevel.wait_writable(box.fd)
        except trio.ClosedResourceError:
            box._fail("write_failed")
            return
        except OSError as exc:
            box._fail(failure(exc))
            return
        box.blocked = False
        self.mark(box)


def _nothing() -> None:
    return None
