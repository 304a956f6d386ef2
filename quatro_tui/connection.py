"""The client's link to a Quatro server: an asyncio shell around the shared client core, pushes as Textual messages.

Textual runs on asyncio, so this is an asyncio client; what the protocol means (request ids and their replies,
``seq`` and snapshots, reading pushes, the seat to come back to, when a heartbeat ping is due) is the shared,
sans-I/O ``quatro_shared.client.ClientCore``'s job. This module moves bytes and keeps time. ``Connection.run()``
is meant to run in a Textual worker: it reads, resolves each request's future with its typed reply, sends a
``ping`` when the core says one is due, and hands every push to ``deliver`` as a Textual message. When the
connection drops (or the server goes silent for ``HEARTBEAT_TIMEOUT``) it says so (``LinkDropped``) and
reconnects by itself with the seat secret (R19), waiting longer after each failure, until it succeeds
(``LinkBack``), the server says the seat is gone (``SeatLost``), or the player quits. A server that said
goodbye because it is shutting down (``bye`` ``shutdown``) is tried for ``RESTART_PATIENCE`` only, long
enough for a restart to bring the seat back; then the connection stops and says so (``ServerGone``).

A request naming a table that another server holds is answered ``moved`` (protocol section 21): the connection
goes to that server, says hello and asks again there, and the caller gets that answer, as if nothing had moved;
from then on it is that server's connection (a reconnection goes there).
When the core finds an update missing (protocol section 11) the connection says so (``SeqGap``) and resyncs the
way the protocol says, by reconnecting and rejoining with the seat's secret, which brings a snapshot
(``LinkBack`` with ``resynced``).
"""

from __future__ import annotations

import asyncio
import os
import ssl
from collections.abc import Callable
from typing import Any

from textual.message import Message

from quatro_shared import messages as m
from quatro_shared.client import (
    Answered,
    ChatSaid,
    ClientCore,
    ClientEvent,
    NoticeGiven,
    Place,
    Recalled,
    ResyncNeeded,
    SeatingChanged,
    TablesListed,
    Unseated,
    Updated,
    WatchStopped,
)
from quatro_shared.client import (
    ServerBye as ByeReceived,
)
from quatro_shared.framing import ProtocolError
from quatro_shared.protocol import DOOR_TOKEN_ENV, QUATRO, UNPROVEN_MOVE
from quatro_shared.tls import SCHEME, Endpoint, SpeaksTls, speaks_tls_words

from quatro_tui.words import unreachable

#: Seconds to wait for a TCP connection and the server's hello before counting an attempt as failed.
CONNECT_TIMEOUT = 5.0
#: Seconds to wait for a request's reply; the server answers every request at once, so this only
#: bounds how long a request can hang on a link that died without telling anyone.
REPLY_TIMEOUT = 10.0
#: Reconnection backoff: the first retry comes quickly (most drops are blips), then doubles up to the cap.
BACKOFF_FIRST = 0.25
BACKOFF_CAP = 5.0
#: Seconds a server that said goodbye (``bye`` ``shutdown``) is tried again before the connection gives up: a
#: restart (which keeps every seat, docs/journal.md) listens again within a few seconds.
RESTART_PATIENCE = 20.0
READ_BYTES = 65536


class ConnectionLost(Exception):
    """The request could not be answered: the link is down (it may come back by itself)."""


# --- what the connection tells the app --------------------------------------------------------------


class LinkMessage(Message):
    """Something a connection tells the app; ``origin`` is that connection. A connection the app has closed (to go
    back to the lobby, to try again) may still have told something on its way out: the app ignores what comes from
    any connection but its current one."""

    origin: Connection | None = None


class ServerUpdate(LinkMessage):
    """A table's events and the seat's fresh view (the server's ``update`` push)."""

    def __init__(
        self, table: int, seq: int, snapshot: bool, events: list[Any], view: Any, received_at: float, game: str = QUATRO
    ):
        super().__init__()
        self.table, self.seq, self.snapshot = table, seq, snapshot
        #: The table's game (a name of ``quatro_tui.games``): ``events`` and ``view`` are of its contract's classes.
        self.events, self.view, self.game = events, view, game
        #: The loop's clock when the frame arrived: countdowns run from here.
        self.received_at = received_at


class ServerSeating(LinkMessage):
    """Who sits where, who hosts and the durations in force (the server's ``table`` push)."""

    def __init__(self, seating: m.Seating):
        super().__init__()
        self.seating = seating


class ServerLobby(LinkMessage):
    """The server's tables (the ``lobby`` push, and the list a hello or ``list_tables`` returns). ``draining``: the
    server takes no new tables (it drains before a restart)."""

    def __init__(self, tables: tuple[m.TableSummary, ...], draining: bool = False):
        super().__init__()
        self.tables, self.draining = tables, draining


class ServerChat(LinkMessage):
    """A chat line where this connection is (the server's ``chat`` push): another player's text."""

    def __init__(self, line: m.ChatLine):
        super().__init__()
        self.line = line


class ServerWatchEnded(LinkMessage):
    """This connection watches its table no more (the server's ``watch_ended`` push): it is in the lobby."""

    def __init__(self, table: int, reason: str, text: str):
        super().__init__()
        self.table, self.reason, self.text = table, reason, text


class ServerRecent(LinkMessage):
    """What the seat saw of its match before this rejoin (the server's ``recent`` push), for the feed."""

    def __init__(self, table: int, game: str, events: list[Any]):
        super().__init__()
        self.table, self.game, self.events = table, game, events


class ServerNotice(LinkMessage):
    """A line from the server's operator (the server's ``notice`` push), for whatever screen shows: plain text.
    ``draining``: the server takes no new tables from now on."""

    def __init__(self, text: str, draining: bool):
        super().__init__()
        self.text, self.draining = text, draining


class ServerSeatEnded(LinkMessage):
    """The server's operator closed this connection's table or removed its player (the ``seat_ended`` push): the
    connection is in the lobby, its seat's secret void. ``reason``: ``closed_by_operator`` or ``removed_by_operator``."""

    def __init__(self, table: int, reason: str, text: str):
        super().__init__()
        self.table, self.reason, self.text = table, reason, text


class ServerBye(LinkMessage):
    """The server is going away, or another connection took this seat."""

    def __init__(self, reason: str, text: str):
        super().__init__()
        self.reason, self.text = reason, text


class LinkDropped(LinkMessage):
    """The link is down; the next attempt comes in ``retry_in`` seconds. ``goodbye``: the server said it was
    shutting down (it may be restarting)."""

    def __init__(self, attempt: int, retry_in: float, why: str, goodbye: bool = False):
        super().__init__()
        self.attempt, self.retry_in, self.why = attempt, retry_in, why
        self.goodbye = goodbye


class ServerGone(LinkMessage):
    """The server said goodbye (shutting down) and has not come back within ``RESTART_PATIENCE``, or said it
    stops for good (``final``: ``bye closed``, a private game its opener ended): no more retries. ``text``: its
    words."""

    def __init__(self, text: str, final: bool = False):
        super().__init__()
        self.text, self.final = text, final


class LinkBack(LinkMessage):
    """The link is back, and the seat with it (a fresh snapshot follows as a ``ServerUpdate``).

    ``resynced``: the link was cut on purpose, after an update went missing (``SeqGap``)."""

    def __init__(self, resynced: bool = False):
        super().__init__()
        self.resynced = resynced


class SeqGap(LinkMessage):
    """An update went missing (``got`` came where ``expected`` was due; ``got`` None: it could not be read).
    The update is dropped and the connection resyncs: a reconnection and a rejoin bring a snapshot."""

    def __init__(self, expected: int, got: int | None):
        super().__init__()
        self.expected, self.got = expected, got


class SeatLost(LinkMessage):
    """The seat cannot be recovered (its secret was refused, or the seat was taken over): no more retries.
    ``reason``: the refusal's (``unproven_move``: the directory sent the rejoin to a server that could not prove it
    holds the table, and the secret was kept), "" when there was none."""

    def __init__(self, why: str, reason: str = ""):
        super().__init__()
        self.why = why
        self.reason = reason


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
        restart_patience: float | None = None,
        person: str | None = None,
        tls: ssl.SSLContext | None = None,
        tls_ca: str | None = None,
        address: str | None = None,
    ) -> None:
        self.host, self.port, self.name = host, port, name
        #: The server's address as the person typed it (``tls://`` included): every message names it so.
        self.address = address
        self._typed_at = (host, port)
        #: The context that verifies the server's certificate (``quatro_shared.tls``); None: in the clear.
        self.tls, self.tls_ca = tls, tls_ca
        self.deliver = deliver
        self.backoff_first, self.backoff_cap = backoff_first, backoff_cap
        self.restart_patience = RESTART_PATIENCE if restart_patience is None else restart_patience
        #: The server's words when it said goodbye because it is shutting down (None: it has not).
        self.goodbye: str | None = None
        #: The server said it stops for good (``bye closed``): the link going is the end, not a drop.
        self._final = False
        self.core = ClientCore(name, person)
        # A door's client (SSH, browser) was handed the server's door token: its hello says so.
        self.core.door = os.environ.get(DOOR_TOKEN_ENV) or None
        self.connected = False
        self._pending: dict[int, asyncio.Future[m.Reply]] = {}
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._ready: list[ClientEvent] = []  # events decoded, not yet handled
        self._closing = False
        #: Set when an update went missing: why the link is being cut, until the rejoin that resyncs.
        self._resync_why: str | None = None
        #: Set while a request answered ``moved`` is taken to the server that holds its table: ``run`` waits for it.
        self._moving: asyncio.Event | None = None

    def _tell(self, message: LinkMessage) -> None:
        message.origin = self
        self.deliver(message)

    @property
    def seat(self) -> Place | None:
        """Where this client sits (table, seat, secret): what a reconnection needs (R19)."""
        return self.core.place

    @property
    def seq(self) -> int | None:
        return self.core.seq

    @property
    def hello(self) -> m.Welcome | None:
        return self.core.welcome

    @property
    def shown(self) -> str:
        """The server's address for a person: as they typed it, unless a ``moved`` took the link elsewhere."""
        if self.address is not None and (self.host, self.port) == self._typed_at:
            return self.address
        return str(Endpoint(self.host, self.port, self.tls is not None))

    async def _speaks_tls(self) -> bool:
        """Whether the server's port speaks TLS: a handshake (nothing verified, nothing sent after it) answered."""
        probe = ssl.create_default_context()
        probe.check_hostname, probe.verify_mode = False, ssl.CERT_NONE
        try:
            async with asyncio.timeout(CONNECT_TIMEOUT):
                _, writer = await asyncio.open_connection(self.host, self.port, ssl=probe)
        except (OSError, TimeoutError):
            return False
        writer.transport.abort()
        return True

    def _now(self) -> float:
        return asyncio.get_running_loop().time()

    @staticmethod
    async def reachable(host: str, port: int) -> None:
        """Whether anything listens at ``host``:``port``: a TCP connection opened and dropped at once, nothing sent.
        Raises what ``open`` would (``OSError``, ``TimeoutError``) when nothing does, so that a person is told so
        before being asked anything."""
        async with asyncio.timeout(CONNECT_TIMEOUT):
            _, writer = await asyncio.open_connection(host, port)
        writer.transport.abort()

    # --- opening and closing ----------------------------------------------------------------------

    async def open(self) -> m.Welcome:
        """Connect and say hello; returns the server's welcome. Raises ``OSError`` or ``ConnectionLost``."""
        async with asyncio.timeout(CONNECT_TIMEOUT):
            self._reader, self._writer = await asyncio.open_connection(
                self.host, self.port, ssl=self.tls, server_hostname=self.host if self.tls is not None else None
            )
        self._ready = []
        self.connected = True
        try:
            reply = await self._request_directly(self.core.hello)
        except (ConnectionLost, ProtocolError, TimeoutError):
            # A TLS port hangs up on a hello in the clear (or answers with a TLS record, no frame): say so, and how.
            if self.tls is None and await self._speaks_tls():
                self._drop_link()
                shown = self.shown.removeprefix(SCHEME)
                raise SpeaksTls(speaks_tls_words(shown)) from None
            raise
        if not isinstance(reply, m.Ok) or not isinstance(reply.payload, m.Welcome):
            self._drop_link()
            raise ConnectionLost(getattr(reply, "message", "the server refused hello"))
        return reply.payload

    async def close(self) -> None:
        """Leave for good: no reconnection, pending requests fail."""
        self.close_now()

    def close_now(self) -> None:
        """``close``, from code that cannot wait (an app ending on an error)."""
        self._closing = True
        self._drop_link()

    def abort(self) -> None:
        """Cut the link as a network failure would (tests, and a stalled link): ``run`` then reconnects."""
        if self._writer is not None:
            self._writer.transport.abort()

    def _drop_link(self, why: str = "the connection dropped") -> None:
        """Cut the link; every request still waiting for its reply fails with ``ConnectionLost(why)``."""
        self.connected = False
        if self._writer is not None:
            self._writer.transport.abort()
        self._writer = self._reader = None
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionLost(why))
        self._pending.clear()
        self.core.connection_lost()

    async def _request_directly(self, make: Callable[[float], tuple[int, bytes]]) -> m.Reply:
        """A request answered before ``run()`` reads (hello, and the rejoin of a reconnection)."""
        request_id, data = make(self._now())
        self._write(data)
        async with asyncio.timeout(CONNECT_TIMEOUT):
            while True:
                event = await self._next_event()
                if event is None:
                    raise ConnectionLost("the server closed the connection")
                if isinstance(event, Answered) and event.id == request_id:
                    return event.reply
                self._dispatch(event)

    # --- requests ---------------------------------------------------------------------------------

    async def request(self, body: m.RequestBody) -> m.Reply:
        """Send a request and wait for its reply (``Ok``, ``Refused`` or ``Error``). Raises ``ConnectionLost``. A
        ``moved`` is followed: the reply is the one the server holding the table gave."""
        reply = await self._request_once(body)
        if isinstance(reply, m.MovedTo) and self.core.redirect is not None:
            moving = self._moving = asyncio.Event()
            try:
                self._drop_link()  # ``run`` sees the link end, and waits for the new one instead of reconnecting
                reply = await self._hand_over()
            finally:
                self._moving = None
                moving.set()
        return reply

    async def _hand_over(self) -> m.Reply:
        """Connect to the server a ``moved`` named, say hello and ask again, until an answer that is not ``moved``
        (the core gives up after ``MAX_MOVES``), as the core leads (``redirect``): a request that carries a secret
        is asked there only once that server proved it holds it (``prove``, on the same link). Raises
        ``ConnectionLost`` when that server cannot be reached. A server that could not prove it (``unproven_move``)
        is left at once, and this connection goes back to the server it came from."""
        came_from = self.host, self.port
        while True:
            redirect = self.core.redirect
            assert redirect is not None
            try:
                if redirect.connect:
                    self.host, self.port = redirect.address(self.host)
                    await self.open()
                reply = await self._request_directly(self.core.repeat)
            except (OSError, TimeoutError) as exc:
                self._drop_link()
                raise ConnectionLost(unreachable(exc, self.host, self.port)) from None
            except ConnectionLost:
                self._drop_link()
                raise
            if isinstance(reply, m.Refused) and reply.reason == UNPROVEN_MOVE:
                await self._go_back(came_from)
                return reply
            if self.core.redirect is None:
                return reply
            if self.core.redirect.connect:
                self._drop_link()

    async def _go_back(self, came_from: tuple[str, int]) -> None:
        """Leave a server that could not prove it holds a table, for the one this connection came from (its lobby,
        as before the request). Should that one not answer, the link is down: ``run`` reconnects there."""
        self._drop_link()
        self.host, self.port = came_from
        try:
            await self.open()
        except (OSError, TimeoutError, ConnectionLost, ProtocolError):
            self._drop_link()

    async def _request_once(self, body: m.RequestBody) -> m.Reply:
        if not self.connected or self._writer is None:
            raise ConnectionLost("not connected")
        request_id, data = self.core.send(body, self._now())
        future: asyncio.Future[m.Reply] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        self._write(data)
        try:
            async with asyncio.timeout(REPLY_TIMEOUT):
                return await future
        except TimeoutError:
            raise ConnectionLost(f"no reply to {body.kind}") from None
        finally:
            self._pending.pop(request_id, None)

    def _write(self, data: bytes) -> None:
        assert self._writer is not None
        # asyncio buffers the write; the reader task notices a dead link, so no drain() per frame.
        self._writer.write(data)

    # --- reading ----------------------------------------------------------------------------------

    async def _next_event(self) -> ClientEvent | None:
        """The next event from the server, None at end of stream. Sends the heartbeat ping while it waits, and
        raises ``ConnectionLost`` when the server has been silent for ``HEARTBEAT_TIMEOUT``."""
        ready = self._ready
        reader = self._reader
        while not ready:
            if reader is None or self._reader is not reader:
                return None  # the link was cut, or replaced (a request followed its table to another server)
            due = self.core.ping_due()
            try:
                async with asyncio.timeout(None if due is None else max(0.0, due - self._now())):
                    data = await reader.read(READ_BYTES)
            except TimeoutError:
                now = self._now()
                if self.core.server_gone(now):
                    raise ConnectionLost("the server went silent") from None
                ping = self.core.ping_if_due(now)
                if ping is not None and self._writer is not None:
                    self._write(ping)
                continue
            if not data:
                return None
            ready.extend(self.core.receive_data(data, self._now()))
        return ready.pop(0)

    async def run(self) -> None:
        """Read until closed, reconnecting when the link drops. Run it in a worker, after ``open()``."""
        attempt = 0
        while not self._closing:
            why = lost = "the connection dropped"
            try:
                while True:
                    event = await self._next_event()
                    if event is None:
                        why = "the server closed the connection"
                        break
                    self._dispatch(event)
            except ConnectionLost as exc:
                why = str(exc)
            except ProtocolError as exc:
                # The server's bytes broke the framing or its limits: the stream cannot be trusted past them, so the
                # link goes, but a request waiting for its reply is told what happened, not that the link dropped.
                why = lost = f"the server sent a message this client cannot read ({exc.code}: {exc.message})"
            except (OSError, AttributeError, AssertionError):
                why = "the connection failed"
            moving = self._moving
            if moving is not None:
                await moving.wait()  # a request follows its table to another server (``request``)
                if self.connected:
                    continue  # the new server's link: read it
                why = f"cannot reach {self.shown}"
            self._drop_link(lost)
            if self._closing or self.core.replaced:
                return
            if self._final and self.goodbye is not None:
                self._closing = True
                self._tell(ServerGone(self.goodbye, final=True))
                return
            resync = self._resync_why is not None and (self.core.place is not None or self.core.watching is not None)
            if resync:
                why, self._resync_why = f"resyncing after {self._resync_why}", None
            # Reconnect with backoff, until it works, the seat is refused, or the player quits. A resync (the link
            # was cut on purpose) tries at once, and only counts as a lost connection if that fails.
            delay = self.backoff_first
            at_once = resync
            goodbye, give_up_at = self.goodbye, self._now() + self.restart_patience
            while not self._closing:
                if at_once:
                    at_once = False
                else:
                    if goodbye is not None and self._now() + delay > give_up_at:
                        # It said it was going, and it has not come back: stop, and say so.
                        self._closing = True
                        self._tell(ServerGone(goodbye))
                        return
                    attempt += 1
                    self._tell(LinkDropped(attempt, delay, why, goodbye=goodbye is not None))
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, self.backoff_cap)
                try:
                    await self.open()
                    if self.core.watching is not None and self.core.place is None:
                        # A watcher watches again: a fresh snapshot of the public table.
                        reply = await self._request_directly(self.core.rewatch)
                        if isinstance(reply, m.MovedTo) and self.core.redirect is not None:
                            self._drop_link()
                            reply = await self._hand_over()
                        if not isinstance(reply, m.Ok):
                            self._tell(
                                ServerWatchEnded(
                                    self.core.watching,
                                    getattr(reply, "reason", ""),
                                    getattr(reply, "message", "the table can no longer be watched"),
                                )
                            )
                            self.core.watching = None
                    elif self.core.place is not None:
                        # takeover: this client's own old link is dead, even if the server has not noticed yet.
                        reply = await self._request_directly(lambda now: self.core.rejoin(now, takeover=True))
                        if isinstance(reply, m.MovedTo) and self.core.redirect is not None:
                            self._drop_link()
                            reply = await self._hand_over()  # the table is held elsewhere now: rejoin it there
                        if not isinstance(reply, m.Ok):
                            self._tell(
                                SeatLost(
                                    getattr(reply, "message", "the seat could not be recovered"),
                                    str(getattr(reply, "reason", "")),
                                )
                            )
                            self._closing = True
                            self._drop_link()
                            return
                except (OSError, ConnectionLost, ProtocolError, TimeoutError) as exc:
                    why = unreachable(
                        exc, self.host, self.port, tls=self.tls is not None, ca=self.tls_ca, address=self.shown
                    )
                    self._drop_link()
                    continue
                attempt = 0
                self.goodbye = None
                self._tell(LinkBack(resynced=resync))
                break

    def _dispatch(self, event: ClientEvent) -> None:
        if isinstance(event, Answered):
            future = self._pending.get(event.id)
            if future is not None and not future.done():
                future.set_result(event.reply)
        elif isinstance(event, Updated):
            u = event.update
            self._tell(ServerUpdate(u.table, u.seq, u.snapshot, list(u.events), event.view, self._now(), event.game))
        elif isinstance(event, ResyncNeeded):
            self._tell(SeqGap(event.expected, event.got))
            self._resync_why = event.why
            # Reconnect and rejoin (section 11): ``run`` sees the link end, and the rejoin brings a snapshot.
            self._ready.clear()
            self.abort()
        elif isinstance(event, SeatingChanged):
            self._tell(ServerSeating(event.seating))
        elif isinstance(event, TablesListed):
            self._tell(ServerLobby(event.tables, self.core.draining))
        elif isinstance(event, ChatSaid):
            self._tell(ServerChat(event.line))
        elif isinstance(event, WatchStopped):
            self._tell(ServerWatchEnded(event.ended.table, event.ended.reason, event.ended.message))
        elif isinstance(event, NoticeGiven):
            self._tell(ServerNotice(event.notice.text, event.notice.draining))
        elif isinstance(event, Recalled):
            self._tell(ServerRecent(event.recent.table, event.recent.game, list(event.recent.events)))
        elif isinstance(event, Unseated):
            self._tell(ServerSeatEnded(event.ended.table, event.ended.reason, event.ended.message))
        elif isinstance(event, ByeReceived):
            # After "replaced" another connection holds the seat: the core forgets it, and ``run`` stops. After
            # "shutdown" the server is going: ``run`` tries again for ``restart_patience`` only.
            if event.bye.reason == m.BYE_SHUTDOWN:
                self.goodbye = event.bye.message or "the server is shutting down"
            elif event.bye.reason == m.BYE_CLOSED:
                # It stops for good: no restart to wait for, so no retries once the link goes.
                self.goodbye = event.bye.message or "the server stopped for good"
                self._final = True
            self._tell(ServerBye(event.bye.reason, event.bye.message))
