"""The client's link to a Quatro server: asyncio streams, the shared codec, requests awaiting replies, pushes as messages.

Textual runs on asyncio, so this is an asyncio client. ``Connection.run()`` is meant to run in a Textual
worker: it reads frames, resolves each request's future with its reply, and hands every push (``update``,
``table``, ``lobby``, ``bye``) to ``deliver`` as a Textual message, already checked and rebuilt by
``quatro_shared.wire``. When the connection drops it says so (``LinkDropped``) and reconnects by itself with the seat
secret (R19), waiting longer after each failure, until it succeeds (``LinkBack``), the server says the
seat is gone (``SeatLost``), or the player quits.

Updates are numbered per seat (``seq``, protocol section 11): 1, 2, 3... from a ``join``, and on from a rejoin's
snapshot. An update out of that order (a gap, a repeat, a first update that is neither ``seq`` 1 nor a snapshot)
means one was lost: the connection says so (``SeqGap``), drops the update, and resyncs the way the protocol
says, by reconnecting and rejoining with the seat's secret, which brings a snapshot (``LinkBack`` with
``resynced``).
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from textual.message import Message

from quatro_shared import protocol as p
from quatro_shared.events import Event
from quatro_shared.framing import FrameDecoder, ProtocolError, encode
from quatro_shared.views import SeatView
from quatro_shared.wire import WireError, event_from_wire, view_from_wire

#: Seconds to wait for a TCP connection and the server's hello before counting an attempt as failed.
CONNECT_TIMEOUT = 5.0
#: Seconds to wait for a request's reply; the server answers every request at once, so this only
#: bounds how long a request can hang on a link that died without telling anyone.
REPLY_TIMEOUT = 10.0
#: Reconnection backoff: the first retry comes quickly (most drops are blips), then doubles up to the cap.
BACKOFF_FIRST = 0.25
BACKOFF_CAP = 5.0
READ_BYTES = 65536


class ConnectionLost(Exception):
    """The request could not be answered: the link is down (it may come back by itself)."""


# --- what the connection tells the app --------------------------------------------------------------


class ServerUpdate(Message):
    """A table's events and the seat's fresh view (the server's ``update`` push)."""

    def __init__(self, table: int, seq: int, snapshot: bool, events: list[Event], view: SeatView, received_at: float):
        super().__init__()
        self.table, self.seq, self.snapshot = table, seq, snapshot
        self.events, self.view = events, view
        #: The loop's clock when the frame arrived: countdowns run from here.
        self.received_at = received_at


class ServerSeating(Message):
    """Who sits where, who hosts and the durations in force (the server's ``table`` push)."""

    def __init__(self, seating: dict[str, Any]):
        super().__init__()
        self.seating = seating


class ServerLobby(Message):
    """The server's tables (the ``lobby`` push, and the list a hello or ``list_tables`` returns)."""

    def __init__(self, tables: list[dict[str, Any]]):
        super().__init__()
        self.tables = tables


class ServerBye(Message):
    """The server is going away, or another connection took this seat."""

    def __init__(self, reason: str, text: str):
        super().__init__()
        self.reason, self.text = reason, text


class LinkDropped(Message):
    """The link is down; the next attempt comes in ``retry_in`` seconds."""

    def __init__(self, attempt: int, retry_in: float, why: str):
        super().__init__()
        self.attempt, self.retry_in, self.why = attempt, retry_in, why


class LinkBack(Message):
    """The link is back, and the seat with it (a fresh snapshot follows as a ``ServerUpdate``).

    ``resynced``: the link was cut on purpose, after an update went missing (``SeqGap``)."""

    def __init__(self, resynced: bool = False):
        super().__init__()
        self.resynced = resynced


class SeqGap(Message):
    """An update came out of order (``got`` where ``expected`` was due; ``expected`` None: a snapshot or ``seq`` 1).
    The update is dropped and the connection resyncs: a reconnection and a rejoin bring a snapshot."""

    def __init__(self, expected: int | None, got: int):
        super().__init__()
        self.expected, self.got = expected, got


class SeatLost(Message):
    """The seat cannot be recovered (its secret was refused, or the seat was taken over): no more retries."""

    def __init__(self, why: str):
        super().__init__()
        self.why = why


@dataclass
class Seat:
    """Where this client sits: what a reconnection needs (R19)."""

    table: int
    seat: int
    secret: str


class Connection:
    """One player's connection to one server. Not thread-safe: use it from the app's event loop."""

    def __init__(
        self,
        host: str,
        port: int,
        name: str,
        deliver: Callable[[Message], Any],
        *,
        backoff_first: float = BACKOFF_FIRST,
        backoff_cap: float = BACKOFF_CAP,
    ) -> None:
        self.host, self.port, self.name = host, port, name
        self.deliver = deliver
        self.backoff_first, self.backoff_cap = backoff_first, backoff_cap
        self.seat: Seat | None = None
        self.hello: dict[str, Any] | None = None
        self.connected = False
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._decoder = FrameDecoder()
        self._ready: list[dict[str, Any]] = []  # frames decoded, not yet handled
        self._closing = False
        self._stop_after_bye = False
        #: The ``seq`` of the seat's last update; None before its first (a ``join`` starts the count at 1, a
        #: rejoin's snapshot sets it).
        self.seq: int | None = None
        #: Set when an update went missing: why the link is being cut, until the rejoin that resyncs.
        self._resync_why: str | None = None

    # --- opening and closing ----------------------------------------------------------------------

    async def open(self) -> dict[str, Any]:
        """Connect and say hello; returns the server's hello reply. Raises ``OSError`` or ``ConnectionLost``."""
        async with asyncio.timeout(CONNECT_TIMEOUT):
            self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
        self._decoder = FrameDecoder()
        self._ready = []
        self.connected = True
        frame = await self._request_directly(p.HELLO, version=p.PROTOCOL_VERSION, name=self.name)
        if frame["kind"] != p.OK:
            self._drop_link()
            raise ConnectionLost(frame.get("message", "the server refused hello"))
        self.hello = frame
        return frame

    async def close(self) -> None:
        """Leave for good: no reconnection, pending requests fail."""
        self._closing = True
        self._drop_link()

    def abort(self) -> None:
        """Cut the link as a network failure would (tests, and a stalled link): ``run`` then reconnects."""
        if self._writer is not None:
            self._writer.transport.abort()

    def _drop_link(self) -> None:
        self.connected = False
        if self._writer is not None:
            self._writer.transport.abort()
        self._writer = self._reader = None
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionLost("the connection dropped"))
        self._pending.clear()

    async def _request_directly(self, kind: str, **fields: Any) -> dict[str, Any]:
        """A request answered before ``run()`` reads (hello, and the rejoin of a reconnection)."""
        self._before(kind)
        request_id = next(self._ids)
        self._send({"kind": kind, "id": request_id, **fields})
        async with asyncio.timeout(CONNECT_TIMEOUT):
            while True:
                frame = await self._read_frame()
                if frame is None:
                    raise ConnectionLost(f"the server closed the connection during {kind}")
                if frame.get("id") == request_id and frame["kind"] in (p.OK, p.REFUSED, p.ERROR):
                    return frame
                self._dispatch(frame)

    # --- requests ---------------------------------------------------------------------------------

    async def request(self, kind: str, **fields: Any) -> dict[str, Any]:
        """Send a request and wait for its reply (``ok``, ``refused`` or ``error``). Raises ``ConnectionLost``."""
        if not self.connected or self._writer is None:
            raise ConnectionLost("not connected")
        self._before(kind)
        request_id = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        self._send({"kind": kind, "id": request_id, **fields})
        try:
            async with asyncio.timeout(REPLY_TIMEOUT):
                reply = await future
        except TimeoutError:
            raise ConnectionLost(f"no reply to {kind}") from None
        finally:
            self._pending.pop(request_id, None)
        if kind in (p.CREATE_TABLE, p.JOIN) and reply["kind"] == p.OK:
            self.seat = Seat(reply["table"], reply["seat"], reply["secret"])
        elif kind == p.REJOIN and reply["kind"] == p.OK:
            self.seat = Seat(reply["table"], reply["seat"], fields["secret"])
        elif kind == p.LEAVE and reply["kind"] == p.OK:
            self.seat = None
            self.seq = None
        return reply

    def _before(self, kind: str) -> None:
        """Before a request that seats this connection: its updates are counted afresh. A ``join`` (or a new
        table) starts at ``seq`` 1; a ``rejoin`` brings a snapshot (or, before the match, ``seq`` 1 at its start),
        which arrives before the reply."""
        if kind in (p.CREATE_TABLE, p.JOIN, p.REJOIN):
            self.seq = None
            self._resync_why = None

    def _send(self, message: dict[str, Any]) -> None:
        assert self._writer is not None
        # asyncio buffers the write; the reader task notices a dead link, so no drain() per frame.
        self._writer.write(encode(message))

    # --- reading ----------------------------------------------------------------------------------

    async def _read_frame(self) -> dict[str, Any] | None:
        """The next frame, None at end of stream."""
        ready = self._ready
        while not ready:
            assert self._reader is not None
            data = await self._reader.read(READ_BYTES)
            if not data:
                return None
            ready.extend(self._decoder.feed(data))
        return ready.pop(0)

    async def run(self) -> None:
        """Read until closed, reconnecting when the link drops. Run it in a worker, after ``open()``."""
        attempt = 0
        while not self._closing:
            why = "the connection dropped"
            try:
                while True:
                    frame = await self._read_frame()
                    if frame is None:
                        why = "the server closed the connection"
                        break
                    self._dispatch(frame)
            except (OSError, ProtocolError, AttributeError, AssertionError) as exc:
                why = f"the connection failed ({type(exc).__name__})"
            self._drop_link()
            if self._closing or self._stop_after_bye:
                return
            resync = self._resync_why is not None and self.seat is not None
            if resync:
                why, self._resync_why = f"resyncing after {self._resync_why}", None
            # Reconnect with backoff, until it works, the seat is refused, or the player quits. A resync (the link
            # was cut on purpose) tries at once, and only counts as a lost connection if that fails.
            delay = self.backoff_first
            at_once = resync
            while not self._closing:
                if at_once:
                    at_once = False
                else:
                    attempt += 1
                    self.deliver(LinkDropped(attempt, delay, why))
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, self.backoff_cap)
                try:
                    await self.open()
                    if self.seat is not None:
                        # takeover: this client's own old link is dead, even if the server has not noticed yet.
                        reply = await self._request_directly(
                            p.REJOIN, table=self.seat.table, secret=self.seat.secret, takeover=True
                        )
                        if reply["kind"] != p.OK:
                            self.deliver(SeatLost(reply.get("message", "the seat could not be recovered")))
                            self._closing = True
                            self._drop_link()
                            return
                except (OSError, ConnectionLost, ProtocolError, TimeoutError) as exc:
                    why = f"cannot reach {self.host}:{self.port} ({exc or type(exc).__name__})"
                    self._drop_link()
                    continue
                attempt = 0
                self.deliver(LinkBack(resynced=resync))
                break

    def _dispatch(self, frame: dict[str, Any]) -> None:
        kind = frame.get("kind")
        if kind in (p.OK, p.REFUSED, p.ERROR):
            future = self._pending.get(frame.get("id"))  # type: ignore[arg-type]
            if future is not None and not future.done():
                future.set_result(frame)
            return
        if kind == p.UPDATE and self._resync_why is not None:
            return  # an update went missing: everything until the rejoin's snapshot is stale
        try:
            message = self._push(frame)
        except (WireError, KeyError, TypeError):
            return  # a push this client cannot read is skipped: the next update carries a full view
        if isinstance(message, ServerUpdate) and not self._in_order(message):
            return
        if message is not None:
            self.deliver(message)

    def _in_order(self, update: ServerUpdate) -> bool:
        """Check ``update``'s ``seq`` (section 11); on a gap or a repeat, start a resync and say so."""
        if update.snapshot:
            self.seq = update.seq  # the game as it is now: the new base
            return True
        expected = 1 if self.seq is None else self.seq + 1
        if update.seq == expected:
            self.seq = update.seq
            return True
        if self.seat is None:
            # No seat, so no secret to resync with (and a seatless connection gets no updates): take the view.
            self.seq = update.seq
            return True
        self.deliver(SeqGap(None if self.seq is None else expected, update.seq))
        self._resync_why = f"update {update.seq} came where {expected} was due"
        # Reconnect and rejoin (section 11): ``run`` sees the link end, and the rejoin brings a snapshot.
        self._ready.clear()
        self.abort()
        return False

    def _push(self, frame: dict[str, Any]) -> Message | None:
        """A push as a message; raises ``WireError`` (or ``KeyError``) if the view itself cannot be read."""
        kind = frame["kind"]
        if kind == p.UPDATE:
            return ServerUpdate(
                frame["table"],
                frame["seq"],
                frame["snapshot"],
                _events(frame["events"]),
                view_from_wire(frame["view"]),
                asyncio.get_running_loop().time(),
            )
        if kind == p.TABLE:
            return ServerSeating(frame)
        if kind == p.LOBBY:
            return ServerLobby(frame["tables"])
        if kind == p.BYE:
            if frame.get("reason") == "replaced":
                # Another connection holds the seat now: reconnecting would only fight it.
                self._stop_after_bye = True
                self.seat = None
            return ServerBye(frame.get("reason", ""), frame.get("message", ""))
        return None


def _events(items: list[Any]) -> list[Event]:
    """The events this client can read. One it does not know (a newer server's) is skipped, never the update:
    the view beside it still holds everything the screen needs."""
    out = []
    for item in items:
        try:
            out.append(event_from_wire(item))
        except WireError:
            continue
    return out
