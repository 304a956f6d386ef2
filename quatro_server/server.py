"""The network shell: trio over TCP, one task per connection, one timer task per table.

Everything about the game is decided by the lobby and the engine; this module moves bytes and owns
the clock (trio's). Each connection has a reader (frames in, one reply per request), an outbox (bytes
out, bounded; one flusher sends for every connection, ``quatro_server.outbound``), an inbound rate limit,
and dies alone: a bad peer takes its own connection down, never a table or another player.
"""

from __future__ import annotations

import logging
import math
import signal
from dataclasses import dataclass, field
from typing import Any

import trio

from quatro_shared import messages as m
from quatro_shared import protocol as p
from quatro_shared.framing import FrameDecoder, ProtocolError, encode
from quatro_shared.wire import request_from_wire, to_wire

from quatro_server.lobby import Lobby, Room
from quatro_server.outbound import Flusher, Outbox
from quatro_server.quiet import LoopWatch, settle_heap

log = logging.getLogger("quatro.server")

#: Connections one server accepts at once; more are told the server is full and closed.
MAX_CONNECTIONS = 2000
#: Bytes read per receive call.
RECEIVE_BYTES = 65536
#: Inbound rate limit (token bucket): a burst of this many requests, refilled at RATE per second.
#: A person sends a few a second; a bot or a fast client a few more; a flood far more.
REQUEST_BURST = 60
REQUEST_RATE = 30.0
#: Requests refused for flooding in a row before the connection is closed.
FLOOD_DISCONNECT = 100
#: Seconds a new connection has to say hello.
HELLO_TIMEOUT = 10.0
#: Seconds a closing connection gets to send what is queued (an error, a goodbye) before it is cut.
FLUSH_GRACE = 1.0


@dataclass(eq=False)
class Connection:
    """One client connection: what the lobby sees as a ``Peer``, plus its queues and limits."""

    stream: trio.abc.Stream
    address: str
    # --- outbound: an outbox the flusher sends (quatro_server.outbound) ---
    outbox: Outbox
    name: str = "player"
    room: Room | None = None
    seat: int | None = None
    hello: bool = False
    closed_reason: str | None = None
    tokens: float = REQUEST_BURST
    refill_at: float = 0.0
    flooded: int = 0
    reading: trio.CancelScope = field(default_factory=trio.CancelScope)

    def __post_init__(self) -> None:
        self.outbox.on_error = self.close  # a failed send, or a full outbox: the connection goes

    def send(self, message: dict[str, Any] | bytes) -> None:
        """Queue a frame (a message, or a frame already encoded); never blocks. A full outbox means the client
        stopped reading: drop it."""
        if self.closed_reason is not None:
            return
        if not self.outbox.put(message if isinstance(message, bytes) else encode(message)):
            self.close("slow_reader")

    def close(self, reason: str) -> None:
        """Stop reading; what is already queued is still sent (within ``FLUSH_GRACE``), then the socket closes."""
        if self.closed_reason is None:
            self.closed_reason = reason
            log.info("connection_closing peer=%s reason=%s", self.address, reason)
        self.reading.cancel()

    def allow(self, now: float) -> bool:
        """Token bucket: bursts allowed, floods refused."""
        self.tokens = min(REQUEST_BURST, self.tokens + (now - self.refill_at) * REQUEST_RATE)
        self.refill_at = now
        if self.tokens >= 1:
            self.tokens -= 1
            self.flooded = 0
            return True
        self.flooded += 1
        return False


class Server:
    """Every table and connection of one Quatro server."""

    def __init__(self, lobby: Lobby) -> None:
        self.lobby = lobby
        self.connections: set[Connection] = set()
        self._nursery: trio.Nursery | None = None
        self._wakeups: dict[int, trio.Event] = {}
        self.flusher = Flusher()
        lobby.on_room_created = self._room_created

    # --- tables --------------------------------------------------------------------------------

    def _room_created(self, room: Room) -> None:
        assert self._nursery is not None
        self._wakeups[room.id] = trio.Event()
        room.on_change = lambda: self._wake(room.id)
        self._nursery.start_soon(self._run_room, room)

    def _wake(self, room_id: int) -> None:
        """Wake a room's timer task; a room whose task has ended has nothing to wake."""
        wakeup = self._wakeups.get(room_id)
        if wakeup is not None:
            wakeup.set()

    async def _run_room(self, room: Room) -> None:
        """Sleep until the room's next deadline (or until something changes), then let time pass."""
        try:
            while room.id in self.lobby.rooms:
                wake = room.next_wake()
                with trio.move_on_at(math.inf if wake is None else wake):
                    await self._wakeups[room.id].wait()
                self._wakeups[room.id] = trio.Event()
                now = trio.current_time()
                room.tick(now)
                if room.expired(now):
                    self.lobby.close(room)
        except Exception:
            log.exception("table_failed table=%d", room.id)  # a table's bug ends that table, not the server
            self.lobby.close(room)
            for seat in room.seats:
                peer, seat.peer = seat.peer, None
                if peer is not None:
                    peer.room = peer.seat = None  # nothing of a broken table runs again, not even on the way out
                    peer.send(to_wire(m.Bye(m.BYE_TABLE_FAILED, "this table hit an error")))
                    peer.close("table_failed")
        finally:
            self._wakeups.pop(room.id, None)
            log.info("table_stopped table=%d", room.id)

    # --- connections ---------------------------------------------------------------------------

    async def handle(self, stream: trio.SocketStream) -> None:
        try:
            peername = stream.socket.getpeername()
            address = f"{peername[0]}:{peername[1]}"
        except OSError:
            address = "?"
        conn = Connection(stream, address, self.flusher.outbox(stream))
        if len(self.connections) >= MAX_CONNECTIONS:
            await _send_and_close(stream, to_wire(m.Error(None, p.SERVER_FULL, "the server is full")))
            return
        self.connections.add(conn)
        log.info("connection_open peer=%s", address)
        try:
            with conn.reading:
                await self._read(conn)
            conn.close(conn.closed_reason or "eof")
            # What is queued goes out (an error, a goodbye); a peer that does not read is cut off.
            with trio.move_on_after(FLUSH_GRACE):
                await conn.outbox.drained()
        except Exception:
            log.exception("connection_failed peer=%s", address)  # never escapes: the server and tables go on
        finally:
            conn.outbox.close()  # before the socket closes: its descriptor number may be reused at once
            self.connections.discard(conn)
            try:
                self.lobby.detach(conn, trio.current_time(), leaving=False)
            except Exception:
                log.exception("detach_failed peer=%s", address)
            with trio.CancelScope(shield=True):
                await conn.stream.aclose()
            log.info("connection_closed peer=%s reason=%s", address, conn.closed_reason)

    async def _read(self, conn: Connection) -> None:
        decoder = FrameDecoder()
        with trio.move_on_after(HELLO_TIMEOUT) as hello_window:
            while not conn.hello:
                if not await self._receive(conn, decoder):
                    return
        if hello_window.cancelled_caught:
            conn.send(to_wire(m.Error(None, p.HELLO_FIRST, f"say hello within {HELLO_TIMEOUT:.0f} s")))
            conn.close("no_hello")
            return
        while await self._receive(conn, decoder):
            pass

    async def _receive(self, conn: Connection, decoder: FrameDecoder) -> bool:
        """Read once and answer every complete request. False when the connection is done."""
        try:
            data = await conn.stream.receive_some(RECEIVE_BYTES)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return False
        if not data:
            return False
        try:
            frames = decoder.feed(data)
        except ProtocolError as exc:
            conn.send(to_wire(m.Error(None, exc.code, str(exc))))
            conn.close(f"protocol_error:{exc.code}")
            return False
        for frame in frames:
            if conn.closed_reason is not None:
                return False
            self._answer(conn, frame)
        return conn.closed_reason is None

    def _answer(self, conn: Connection, frame: dict[str, Any]) -> None:
        now = trio.current_time()
        raw_id = frame.get("id")
        request_id = raw_id if isinstance(raw_id, int) and not isinstance(raw_id, bool) else None
        if not conn.allow(now):
            if conn.flooded >= FLOOD_DISCONNECT:
                conn.send(to_wire(m.Error(request_id, p.RATE_LIMITED, "too many requests: disconnected")))
                conn.close("flood")
            else:
                wait = (1 - conn.tokens) / REQUEST_RATE
                conn.send(to_wire(m.refused(request_id, p.RATE_LIMITED, "too many requests: slow down", wait)))
            return
        try:
            request = request_from_wire(frame)
        except p.RequestError as exc:
            conn.send(to_wire(m.Error(request_id, exc.code, exc.message)))
            return
        if not conn.hello:
            conn.send(to_wire(self._hello(conn, request)))
            if request.kind == p.HELLO and not conn.hello:
                conn.close("incompatible_version")
            return
        if request.kind == p.HELLO:
            conn.send(to_wire(m.Error(request.id, p.ALREADY_HELLO, "hello was already said on this connection")))
            return
        conn.send(to_wire(self.lobby.handle(conn, request, now)))

    def _hello(self, conn: Connection, request: m.Request) -> m.Reply:
        hello = request.body
        if not isinstance(hello, m.Hello):
            return m.Error(request.id, p.HELLO_FIRST, "the first request must be hello")
        if hello.version != p.PROTOCOL_VERSION:
            return m.refused(
                request.id,
                p.INCOMPATIBLE_VERSION,
                f"this server speaks protocol {p.PROTOCOL_VERSION}; the client speaks {hello.version}",
            )
        conn.hello, conn.name = True, hello.name
        self.lobby.watchers.add(conn)
        log.info("hello peer=%s name=%r", conn.address, conn.name)
        return m.Ok(
            request.id,
            m.Welcome(
                version=p.PROTOCOL_VERSION,
                server="quatro",
                profiles=tuple(sorted(self.lobby.profiles)),
                tables=self.lobby.listing(),
            ),
        )

    # --- the whole server ------------------------------------------------------------------------

    async def serve(
        self, host: str | None, port: int, *, task_status: trio.TaskStatus[list[trio.SocketListener]] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Listen and serve until cancelled; on cancellation every client is told the server is going away."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            await nursery.start(self.flusher.run)
            listeners = await trio.open_tcp_listeners(port, host=host)
            nursery.start_soon(self._accept, listeners)
            task_status.started(listeners)
            try:
                await trio.sleep_forever()
            finally:
                self.goodbye()

    async def _accept(self, listeners: list[trio.SocketListener]) -> None:
        await trio.serve_listeners(self.handle, listeners)

    def goodbye(self, reason: str = m.BYE_SHUTDOWN) -> None:
        for conn in list(self.connections):
            conn.send(to_wire(m.Bye(reason, "the server is shutting down")))


async def _send_and_close(stream: trio.abc.Stream, message: dict[str, Any]) -> None:
    with trio.move_on_after(1):
        try:
            await stream.send_all(encode(message))
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
    await stream.aclose()


async def run(
    host: str | None, port: int, lobby: Lobby, *, task_status: trio.TaskStatus[list[trio.SocketListener]] = trio.TASK_STATUS_IGNORED
) -> None:
    """Serve until SIGINT or SIGTERM, then say goodbye to every client and stop. SIGUSR1 logs the loop's figures
    (its longest batch of work and collection, ``quatro_server.quiet``) since the last SIGUSR1 and starts afresh."""
    server = Server(lobby)
    watch = LoopWatch()
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM, signal.SIGUSR1) as signals:
        async with trio.open_nursery() as nursery:
            listeners = await nursery.start(server.serve, host, port)
            settle_heap()  # a quiet tail: start-up's objects frozen, fewer collections (quatro_server.quiet)
            watch.install()
            task_status.started(listeners)
            async for signum in signals:
                if signum == signal.SIGUSR1:  # an operator asks: the loop's figures since the last ask, then afresh
                    watch.report()
                    watch.reset()
                    continue
                log.info("shutdown signal=%s", signal.Signals(signum).name)
                server.goodbye()
                await trio.sleep(0.2)  # let the writers flush the goodbyes
                nursery.cancel_scope.cancel()
                break
    watch.uninstall()
    watch.report()
