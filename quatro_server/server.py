"""The network shell: trio over TCP, one task per connection, one timer task per table.

Everything about the game is decided by the lobby and the engine; this module moves bytes and owns
the clock (trio's). Each connection has a reader (frames in, one reply per request), a writer (a
bounded queue out, coalesced per wake-up), an inbound rate limit, and dies alone: a bad peer takes
its own connection down, never a table or another player.
"""

from __future__ import annotations

import logging
import math
import signal
from dataclasses import dataclass, field
from typing import Any

import trio

from quatro_shared import protocol as p
from quatro_shared.framing import FrameDecoder, ProtocolError, encode

from quatro_server.lobby import Lobby, Room

log = logging.getLogger("quatro.server")

#: Connections one server accepts at once; more are told the server is full and closed.
MAX_CONNECTIONS = 2000
#: Frames queued for one client. A client that stops reading fills it and is dropped (its seat is kept, R19).
MAX_OUTBOUND_FRAMES = 512
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
        self.outbox_send, self.outbox_receive = trio.open_memory_channel[bytes](MAX_OUTBOUND_FRAMES)

    def send(self, message: dict[str, Any]) -> None:
        """Queue a frame; never blocks. A full queue means the client stopped reading: drop it."""
        if self.closed_reason is not None:
            return
        try:
            self.outbox_send.send_nowait(encode(message))
        except trio.WouldBlock:
            self.close("slow_reader")

    def close(self, reason: str) -> None:
        """Stop reading; what is already queued is still sent (within ``FLUSH_GRACE``), then the socket closes."""
        if self.closed_reason is None:
            self.closed_reason = reason
            log.info("connection_closing peer=%s reason=%s", self.address, reason)
        self.outbox_send.close()
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
                    peer.send({"kind": p.BYE, "reason": "table_failed", "message": "this table hit an error"})
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
        conn = Connection(stream, address)
        if len(self.connections) >= MAX_CONNECTIONS:
            await _send_and_close(stream, p.error(None, p.SERVER_FULL, "the server is full"))
            return
        self.connections.add(conn)
        log.info("connection_open peer=%s", address)
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._write, conn)
                with conn.reading:
                    await self._read(conn)
                conn.close(conn.closed_reason or "eof")
                # The writer ends once the queue is drained; a peer that does not read is cut off.
                nursery.cancel_scope.deadline = trio.current_time() + FLUSH_GRACE
        except Exception:
            log.exception("connection_failed peer=%s", address)  # never escapes: the server and tables go on
        finally:
            self.connections.discard(conn)
            try:
                self.lobby.detach(conn, trio.current_time(), leaving=False)
            except Exception:
                log.exception("detach_failed peer=%s", address)
            with trio.CancelScope(shield=True):
                await conn.stream.aclose()
            log.info("connection_closed peer=%s reason=%s", address, conn.closed_reason)

    async def _write(self, conn: Connection) -> None:
        """Send everything queued, coalesced: one system call per wake-up rather than per frame."""
        async for first in conn.outbox_receive:
            chunks = [first]
            while True:
                try:
                    chunks.append(conn.outbox_receive.receive_nowait())
                except (trio.WouldBlock, trio.EndOfChannel):
                    break
            try:
                await conn.stream.send_all(b"".join(chunks))
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                conn.close("write_failed")
                return

    async def _read(self, conn: Connection) -> None:
        decoder = FrameDecoder()
        with trio.move_on_after(HELLO_TIMEOUT) as hello_window:
            while not conn.hello:
                if not await self._receive(conn, decoder):
                    return
        if hello_window.cancelled_caught:
            conn.send(p.error(None, p.HELLO_FIRST, f"say hello within {HELLO_TIMEOUT:.0f} s"))
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
            conn.send(p.error(None, exc.code, str(exc)))
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
                conn.send(p.error(request_id, p.RATE_LIMITED, "too many requests: disconnected"))
                conn.close("flood")
            else:
                wait = (1 - conn.tokens) / REQUEST_RATE
                conn.send(p.refused(request_id, p.RATE_LIMITED, "too many requests: slow down", wait))
            return
        try:
            request = p.parse_request(frame)
        except p.RequestError as exc:
            conn.send(p.error(request_id, exc.code, exc.message))
            return
        if not conn.hello:
            conn.send(self._hello(conn, request))
            if request.kind == p.HELLO and not conn.hello:
                conn.close("incompatible_version")
            return
        if request.kind == p.HELLO:
            conn.send(p.error(request.id, p.ALREADY_HELLO, "hello was already said on this connection"))
            return
        conn.send(self.lobby.handle(conn, request, now))

    def _hello(self, conn: Connection, request: p.Request) -> dict[str, Any]:
        if request.kind != p.HELLO:
            return p.error(request.id, p.HELLO_FIRST, "the first request must be hello")
        version = request.fields["version"]
        if version != p.PROTOCOL_VERSION:
            return p.refused(
                request.id,
                p.INCOMPATIBLE_VERSION,
                f"this server speaks protocol {p.PROTOCOL_VERSION}; the client speaks {version}",
            )
        conn.hello, conn.name = True, request.fields["name"]
        self.lobby.watchers.add(conn)
        log.info("hello peer=%s name=%r", conn.address, conn.name)
        return p.ok(
            request.id,
            version=p.PROTOCOL_VERSION,
            server="quatro",
            profiles=sorted(self.lobby.profiles),
            tables=self.lobby.listing(),
        )

    # --- the whole server ------------------------------------------------------------------------

    async def serve(
        self, host: str | None, port: int, *, task_status: trio.TaskStatus[list[trio.SocketListener]] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Listen and serve until cancelled; on cancellation every client is told the server is going away."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            for room in list(self.lobby.rooms.values()):
                self._room_created(room)  # tables restored from the journal before the server started
            listeners = await trio.open_tcp_listeners(port, host=host)
            nursery.start_soon(self._accept, listeners)
            task_status.started(listeners)
            try:
                await trio.sleep_forever()
            finally:
                self.goodbye()

    async def _accept(self, listeners: list[trio.SocketListener]) -> None:
        await trio.serve_listeners(self.handle, listeners)

    def goodbye(self, reason: str = "shutdown") -> None:
        for conn in list(self.connections):
            conn.send({"kind": p.BYE, "reason": reason, "message": "the server is shutting down"})


async def _send_and_close(stream: trio.abc.Stream, message: dict[str, Any]) -> None:
    with trio.move_on_after(1):
        try:
            await stream.send_all(encode(message))
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
    await stream.aclose()


async def run(host: str | None, port: int, lobby: Lobby, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
    """Serve until SIGINT or SIGTERM, then say goodbye to every client and stop."""
    server = Server(lobby)
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:
            listeners = await nursery.start(server.serve, host, port)
            task_status.started(listeners)
            async for signum in signals:
                log.info("shutdown signal=%s", signal.Signals(signum).name)
                server.goodbye()
                await trio.sleep(0.2)  # let the writers flush the goodbyes
                nursery.cancel_scope.cancel()
                break
