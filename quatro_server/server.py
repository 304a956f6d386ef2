"""The network shell: trio over TCP, one task per connection, one timer for every table.

Everything about the game is decided by the lobby and the engine; this module moves bytes and owns
the clock (trio's). Each connection has a reader (frames in, one reply per request), an outbox (bytes
out, bounded in bytes; one flusher sends for every connection, ``quatro_server.net.outbound``), an inbound rate
limit, a heartbeat deadline, and dies alone: a bad peer takes its own connection down, never a table or
another player.

What one peer may cost is bounded (docs/reliability.md adds it up): bytes queued for it
(``MAX_OUTBOUND_BYTES``; the lobby list is state, so a watcher holds at most the latest one), bytes held
for its half-received frame (the codec's ``MAX_FRAME_BYTES``), connections per remote address
(``MAX_CONNECTIONS_PER_ADDRESS``), time silent (``HEARTBEAT_TIMEOUT``) and time idle in the lobby
(``LOBBY_IDLE_LIMIT``).
"""

from __future__ import annotations

import errno
import heapq
import hmac
import logging
import math
import os
import signal
import socket
import ssl
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from itertools import count
from typing import TYPE_CHECKING, Protocol

import msgpack
import trio

from quatro_shared import messages as m
from quatro_shared import protocol as p
from quatro_shared.framing import FrameDecoder, Message, Outgoing, ProtocolError, encode
from quatro_shared.framing import frame as _frame
from quatro_shared.wire import quote, request_from_wire, to_wire

from quatro_server.directory import DirectoryError
from quatro_server.net.outbound import MAX_OUTBOUND_BYTES, Flusher, Outbox
from quatro_server.net.quiet import LoopWatch, Reading, settle_heap
from quatro_server.tables.lobby import Lobby
from quatro_server.tables.room import BotJob, Room

if TYPE_CHECKING:
    from quatro_server.workers.admin import AdminListener

log = logging.getLogger("quatro.server")

#: Seconds after a restart during which the seats of a table restored from the journal stay as they were (connected,
#: the host keeping the role) for their players to come back; then whoever has not is disconnected (R19, R18).
RESTORE_GRACE = 15.0
#: Connections one server accepts at once; more are told the server is full and closed.
MAX_CONNECTIONS = 2000
#: Connections from one remote address (IP) at once. A household or a LAN party behind one router seats a few
#: dozen players at most; one host cannot take every slot of ``MAX_CONNECTIONS`` and lock others out.
MAX_CONNECTIONS_PER_ADDRESS = 32
#: Connections from a doors' address (``ServerConfig.door_addresses``) past its per-address share that are let say
#: ``hello`` to show the door token (a door's client); one without it is then refused ``too_many_connections``.
MAX_DOOR_PENDING = 64
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
#: Seconds a connection in the lobby (at no table) may send nothing but pings before it is closed (``bye`` ``idle``):
#: a person browsing tables acts within minutes; a connection that only holds a slot gives it back.
LOBBY_IDLE_LIMIT = 600.0
#: Seconds a closing connection gets to send what is queued (an error, a goodbye) before it is cut.
FLUSH_GRACE = 1.0
#: Seconds the tables' timer may sleep past the earliest deadline, so that tables due within that much of each other
#: share one wake-up of the event loop. A wake-up of an idle loop costs it tens of µs (its caches gone cold), about as
#: much as all it then does for a pulse; a table's pulses come at their own moments, so on a server of many tables
#: nearly every pulse was a wake-up of its own (docs/performance.md, fourth round). The rules are not moved: time
#: passes at each deadline at its own moment (``Table.advance``), so a move that comes meanwhile meets the table as
#: it was due to be; only telling the seats waits, by this much at most (a pulse shows for most of a second).
TIMER_SLACK = 0.010
#: Seconds of ticking tables the timer does in one pass of the event loop before it lets the loop read requests and
#: flush answers, then goes on (``Server._tick_all``): a thousand busy tables may be due in one wake-up.
PASS_BUDGET = 0.002
#: Seconds at least between two pushes of the lobby's list (``Server._push_lobby``): seating one table changes the
#: list a dozen times, and at a thousand tables each list costs milliseconds to build; someone browsing the lobby
#: sees a seat taken within this much.
LOBBY_PUSH_EVERY = 0.1
#: accept() failures that mean the machine is out of something (file descriptors, memory): wait, then retry.
ACCEPT_CAPACITY_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.ENOBUFS})
ACCEPT_RETRY = 0.1
#: A repeated log line (an accept failure, a refused connection) is written at most once per this many seconds,
#: with the count of those suppressed meanwhile.
LOG_EVERY = 10.0
#: TCP keepalive, the backstop under the heartbeat: probe a connection quiet for KEEPALIVE_IDLE seconds every
#: KEEPALIVE_INTERVAL seconds, KEEPALIVE_COUNT times; give up on data unacknowledged for USER_TIMEOUT seconds.
KEEPALIVE_IDLE = 30
KEEPALIVE_INTERVAL = 10
KEEPALIVE_COUNT = 3
TCP_USER_TIMEOUT = 60
#: Seconds the server, closing a connection after its last word (a ``bye``, an error), reads and drops what the
#: client still sends, its own side shut down: closing a socket with unread bytes sends a reset, which may destroy
#: that last word before the client reads it (or fail the client's next send, so that it never looks).
LINGER = 1.0
#: Bytes at most read and dropped so (a client that keeps sending is cut at once after them).
LINGER_BYTES = 256 * 1024
#: Seconds a client that sent requests faster than it reads their answers has to read them, once they fill half its
#: outbound budget: meanwhile its requests are left unread (backpressure); one that reads nothing in this time is
#: a ``slow_reader``, and goes.
SLOW_READER_AFTER = 10.0
#: Slow bots' decisions (``Game.slow_bot``: an exact search) made at once, each in a worker thread: one keeps a core for
#: the event loop on a small machine; the others queue (docs/bots.md).
BOT_THINKERS = 1
#: Seconds between two looks, while the server drains, at whether every running match has ended.
DRAIN_POLL = 0.1
#: The requests answered from the journal, off the event loop (``Server._answer_from_archive``).
_ARCHIVE_KINDS = frozenset({p.PAST_MATCHES, p.REPLAY})


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """The shell's limits and timeouts. Tests pass short ones; the defaults are the module's constants."""

    max_connections: int = MAX_CONNECTIONS
    max_connections_per_address: int = MAX_CONNECTIONS_PER_ADDRESS
    max_outbound_bytes: int = MAX_OUTBOUND_BYTES
    hello_timeout: float = HELLO_TIMEOUT
    heartbeat_timeout: float = p.HEARTBEAT_TIMEOUT
    lobby_idle_limit: float = LOBBY_IDLE_LIMIT
    flush_grace: float = FLUSH_GRACE
    slow_reader_after: float = SLOW_READER_AFTER
    linger: float = LINGER
    timer_slack: float = TIMER_SLACK
    pass_budget: float = PASS_BUDGET
    #: Remote addresses exempt from the per-address limits (connections, tables): a load generator on this
    #: machine, or a gateway that relays many people from one address and limits them itself.
    trusted_addresses: frozenset[str] = frozenset()
    #: The token the doors hand their clients (``protocol.DOOR_TOKEN_ENV``; None: no door is open), and the addresses
    #: those clients come from. A connection whose ``hello`` carries the token is counted under the doors' caps,
    #: not its address's share; every other connection from there keeps the per-address limits.
    door_token: str | None = None
    door_addresses: frozenset[str] = frozenset()
    max_door_pending: int = MAX_DOOR_PENDING
    #: TLS on the game port (``quatro_server.net.tls.server_context``); None: in the clear. The handshake runs within the
    #: hello window (``hello_timeout``): a peer that does not finish it is refused ``tls_handshake``.
    tls: ssl.SSLContext | None = None
    #: The words of a stop that is final (``--final-goodbye``: a private game's server, which its opener ended): the
    #: goodbye is ``bye closed`` with them, so that nobody waits for a restart. None: ``bye shutdown``.
    final_goodbye: str | None = None


class QuietLog:
    """Repeated lines, at most one per key every ``every`` seconds; the next one written counts those suppressed.

    Keys are a fixed vocabulary chosen by the code (never a peer's address or text), so the table stays tiny.
    """

    def __init__(
        self, logger: logging.Logger, every: float = LOG_EVERY, clock: Callable[[], float] = trio.current_time
    ) -> None:
        self.logger, self.every, self.clock = logger, every, clock
        self._state: dict[str, list[float]] = {}  # key -> [last written at, suppressed since]

    def __call__(self, key: str, level: int, message: str, *args: object, exc_info: bool = False) -> None:
        if not self.logger.isEnabledFor(level):
            return
        now = self.clock()
        state = self._state.get(key)
        if state is not None and now < state[0] + self.every:
            state[1] += 1
            return
        suppressed = 0 if state is None else int(state[1])
        self._state[key] = [now, 0]
        if suppressed:
            message += " suppressed=%d"
            args = (*args, suppressed)
        self.logger.log(level, message, *args, exc_info=exc_info)


#: The last broadcast encoded, and its bytes: a ``lobby`` or ``table`` push goes to many connections as one
#: object, so it is encoded once and every queue shares the same bytes. Holding the object keeps its id unique.
class _LastBroadcast:
    message: Outgoing | None = None
    data: bytes = b""


#: An ``ok`` with no fields up to its id: {"kind": "ok", "id": ...}, as ``encode(to_wire(m.Ok(id)))`` writes it.
_OK_HEAD = b"\x82" + msgpack.packb("kind") + msgpack.packb(p.OK) + msgpack.packb("id")
_packb = msgpack.Packer(use_bin_type=True, autoreset=True).pack


def _encode(message: Outgoing) -> bytes:
    if message.get("kind") not in (p.LOBBY, p.TABLE):
        return encode(message)
    if _LastBroadcast.message is not message:
        _LastBroadcast.message, _LastBroadcast.data = message, encode(message)
    return _LastBroadcast.data


@dataclass(eq=False)
class Connection:
    """One client connection: what the lobby sees as a ``Peer``, plus its queue, limits and deadlines."""

    stream: trio.abc.Stream
    address: str  # host:port, for logs
    origin: str | None = "?"  # the remote address alone: connections and tables are counted per origin (None: trusted)
    max_outbound_bytes: int = MAX_OUTBOUND_BYTES
    #: Bytes out, bounded by ``max_outbound_bytes``; the server's flusher sends it (quatro_server.net.outbound). The
    #: default one is sent by nobody: its bytes are only taken with ``take``.
    outbox: Outbox = field(default_factory=lambda: Outbox(-1, None))
    name: str = "player"
    #: Who the player is across sessions (``hello``'s person key, as its digest); None: anonymous.
    person: str | None = None
    room: Room | None = None
    seat: int | None = None
    hello: bool = False
    closed_reason: str | None = None
    tokens: float = REQUEST_BURST
    refill_at: float = 0.0
    flooded: int = 0
    #: When anything last arrived (the heartbeat), and when a request other than ``ping`` last did (the idle limit).
    last_heard: float = 0.0
    last_active: float = 0.0
    reading: trio.CancelScope = field(default_factory=trio.CancelScope)
    #: The socket's descriptor, read directly (``_read_socket``); -1 for a stream without one (read as a stream).
    fd: int = -1
    #: Counted in its origin's share of connections; or let in past it until its ``hello`` shows the door token.
    counted: bool = False
    pending_door: bool = False
    #: Requests read and not answered yet: held back while the client reads the answers before them.
    waiting: list[Message] = field(default_factory=list)
    #: False while its TLS handshake is under way (a plain connection is never anything else than True).
    secured: bool = True
    #: Accepted on the doors' own loopback listener: its hello must show the door token (``Server.serve``).
    door_only: bool = False
    #: A table it named is being looked up in the table directory (``Server._look_up``): one at a time.
    looking_up: bool = False

    def __post_init__(self) -> None:
        self.outbox.limit = self.max_outbound_bytes
        self.outbox.on_error = self.close  # a failed send, or a full outbox: the connection goes

    @property
    def queued_bytes(self) -> int:
        """Bytes queued or being written: never above ``max_outbound_bytes``."""
        return self.outbox.size

    def send(self, message: Outgoing | bytes) -> None:
        """Queue a frame (a message, or a frame already encoded); never blocks. A client over its byte budget
        stopped reading: drop it (R19 keeps its seat). A ``lobby`` push supersedes the one still waiting (dropped,
        and the new one queued after whatever came meanwhile): a watcher is sent the latest list, never a backlog."""
        if self.closed_reason is not None:
            return
        if isinstance(message, bytes):  # a frame built once per audience (updates, seating): the hot path
            if not self.outbox.put(message):
                self.close("slow_reader")
            return
        if not self.outbox.put(_encode(message), supersede=message.get("kind") == p.LOBBY):
            self.close("slow_reader")

    def take(self) -> bytes:
        """Everything queued, as one write (counted in ``queued_bytes`` until the socket takes it)."""
        return self.outbox.take()

    def close(self, reason: str) -> None:
        """Stop reading; what is already queued is still sent (within the flush grace), then the socket closes."""
        if self.closed_reason is None:
            self.closed_reason = reason
            log.debug("connection_closing peer=%s reason=%s", self.address, reason)
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


def _keepalive(stream: trio.abc.Stream) -> None:
    """TCP keepalive and a user timeout on the socket: the kernel's backstop under the heartbeat."""
    sock = getattr(stream, "socket", None)
    if sock is None:
        return
    options = [(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)]
    for name, value in (
        ("TCP_KEEPIDLE", KEEPALIVE_IDLE),
        ("TCP_KEEPINTVL", KEEPALIVE_INTERVAL),
        ("TCP_KEEPCNT", KEEPALIVE_COUNT),
        ("TCP_USER_TIMEOUT", TCP_USER_TIMEOUT * 1000),
    ):
        if hasattr(socket, name):  # Linux names; elsewhere the system's keepalive defaults apply
            options.append((socket.IPPROTO_TCP, getattr(socket, name), value))
    for level, option, value in options:
        try:
            sock.setsockopt(level, option, value)
        except OSError:
            pass


class Server:
    """Every table and connection of one Quatro server."""

    def __init__(self, lobby: Lobby, config: ServerConfig | None = None) -> None:
        self.lobby = lobby
        self.config = config or ServerConfig()
        self.connections: set[Connection] = set()
        self.per_origin: dict[str, int] = {}
        #: Connections past a doors' address's share, waiting to show the door token in their ``hello``.
        self.door_pending = 0
        self._nursery: trio.Nursery | None = None
        #: The tables' timer (``_run_timers``): a heap of (deadline, order, room), the deadline each room's latest
        #: entry is for (older entries are stale), the rooms to tick at once and the rooms new to the timer.
        self._timers: list[tuple[float, int, Room]] = []
        self._timer_order = count()
        self._armed: dict[int, float] = {}
        self._rooms_changed: dict[int, Room] = {}
        self._rooms_to_arm: list[Room] = []
        self._live: set[int] = set()  # the rooms the timer serves
        self._timer_wake = trio.Event()
        self.flusher = Flusher()
        self.quiet = QuietLog(log)
        self.thinkers = trio.CapacityLimiter(BOT_THINKERS)
        #: The worker threads reading past matches from the journal (``_answer_from_archive``).
        self.archivists = trio.CapacityLimiter(1)
        #: Frames read from every client, and connections ended by reason (refusals among them): the metrics'
        #: figures (``quatro_server.workers.metrics``), plain counts that cost the hot path an addition.
        self.frames_in = 0
        self.ended: dict[str, int] = {}
        #: Tables the timer ticked, and the seconds it spent ticking them (the loop's trace, ``pass_reading``).
        self.ticks = 0
        self.timer_seconds = 0.0
        #: Times the timer gave the loop back with tables still to tick (``_tick_all``).
        self.timer_yields = 0
        lobby.on_room_created = self._room_created
        #: While serving, the lobby's list is pushed by ``_push_lobby``, at most once per ``LOBBY_PUSH_EVERY``.
        self._lobby_stale = trio.Event()
        #: Set when the server is to stop by itself (a drain is over), with what its clients are told.
        self.stop_asked = trio.Event()
        self.stop_message = "the server is shutting down"

    def pass_reading(self) -> Reading:
        """The counts a pass of the run loop is traced by (``quatro_server.net.quiet.LoopWatch``)."""
        return self.frames_in, self.ticks, self.timer_seconds, self.flusher.sends, self.flusher.seconds

    def writer_cpu(self) -> float:
        """CPU seconds of the journal's writer thread so far (0 without a journal): the loop's trace, at debug."""
        journal = self.lobby.journal
        return journal.cpu_seconds() if journal is not None else 0.0

    # --- tables --------------------------------------------------------------------------------

    def _room_created(self, room: Room) -> None:
        self._live.add(room.id)
        self._rooms_to_arm.append(room)
        room.on_change = lambda: self._changed(room)
        room.think = lambda job: self._think(room, job)
        self._timer_wake.set()

    def _think(self, room: Room, job: BotJob) -> None:
        assert self._nursery is not None
        self._nursery.start_soon(self._run_bot_job, room, job)

    async def _run_bot_job(self, room: Room, job: BotJob) -> None:
        """A slow bot's decision, in a worker thread (off the event loop: no table waits for it), given back to its
        room when it is done; a room closed meanwhile is not asked."""
        try:
            async with self.thinkers:
                if self.lobby.rooms.get(room.id) is not room:
                    return
                actions = await trio.to_thread.run_sync(job.decide, abandon_on_cancel=True)
            if self.lobby.rooms.get(room.id) is room:
                room.bot_decided(job, actions, trio.current_time())
                self._changed(room)  # the timer lets time pass there now: its next deadline, its end if abandoned
        except Exception:
            self._table_failed(room)

    def _changed(self, room: Room) -> None:
        """Something changed at ``room`` (its deadline came forward, it closed): the timer lets its time pass now."""
        self._rooms_changed[room.id] = room
        self._timer_wake.set()

    async def _run_timers(self) -> None:
        """Every table's timer, one task: sleep until the earliest table's next deadline (or until a table says
        something changed), then let time pass at every table that is due.

        One task for all tables rather than one per table: a table's wake-up (a pulse, a bot's look) no longer costs
        a task of its own, a fresh cancel scope and event, and tables due within ``timer_slack`` of each other share
        one wake-up."""
        timers = self._timers
        slack = self.config.timer_slack
        while True:
            if not self._rooms_changed and not self._rooms_to_arm:
                with trio.move_on_at(timers[0][0] + slack if timers else math.inf):
                    await self._timer_wake.wait()
            self._timer_wake = trio.Event()
            now = trio.current_time()
            due = self._rooms_changed
            self._rooms_changed = {}
            while timers and timers[0][0] <= now:
                at, _, room = heapq.heappop(timers)
                if self._armed.get(room.id) == at:
                    del self._armed[room.id]
                    due.setdefault(room.id, room)
            await self._tick_all(list(due.values()), now)
            arm, self._rooms_to_arm = self._rooms_to_arm, []
            for room in arm:
                self._arm(room)

    async def _tick_all(self, rooms: list[Room], now: float) -> None:
        """Tick ``rooms``, yielding to the rest of the loop whenever ``pass_budget`` is spent: with a thousand busy
        tables one wake-up may find hundreds due, and ticking them all in one pass would hold every request read
        meanwhile (and the flush of its answer) behind them. After a yield time has moved on: the rest tick at the
        time they are reached, as they would have been had the timer woken then."""
        budget = self.config.pass_budget
        i, n = 0, len(rooms)
        while True:
            started, first = time.perf_counter(), i
            while i < n:
                self._tick(rooms[i], now)
                i += 1
                if i < n and time.perf_counter() - started > budget:
                    break
            self.ticks += i - first
            self.timer_seconds += time.perf_counter() - started
            if i >= n:
                return
            self.timer_yields += 1
            await trio.sleep(0)  # the requests read meanwhile are answered, and what was ticked is flushed
            now = trio.current_time()

    async def _push_lobby(self) -> None:
        """The lobby's list to its watchers when it changed: the first change of a quiet spell at once (in the next
        pass), the ones after it together, ``LOBBY_PUSH_EVERY`` apart."""
        lobby = self.lobby
        lobby.on_listing_stale = lambda: self._lobby_stale.set()
        try:
            while True:
                await self._lobby_stale.wait()
                self._lobby_stale = trio.Event()
                lobby.push_stale_listing(trio.current_time())
                await trio.sleep(LOBBY_PUSH_EVERY)
        finally:
            lobby.on_listing_stale = None
            lobby.push_stale_listing()

    def _arm(self, room: Room) -> None:
        """Put ``room``'s next deadline on the timer (a table gone stops its timer)."""
        if room.id not in self.lobby.rooms:
            self._armed.pop(room.id, None)
            if room.id in self._live:
                self._live.discard(room.id)
                log.info("table_stopped table=%d", room.id)
            return
        try:
            wake = room.next_wake()
        except Exception:
            self._table_failed(room)
            return
        if wake is None:
            self._armed.pop(room.id, None)
        elif self._armed.get(room.id) != wake:
            self._armed[room.id] = wake  # an entry for an earlier wake, if any, is now stale and skipped
            heapq.heappush(self._timers, (wake, next(self._timer_order), room))

    def _tick(self, room: Room, now: float) -> None:
        """Let time pass at ``room``: its deadlines, its bots, its end when abandoned."""
        if room.id in self.lobby.rooms:
            try:
                room.tick(now)
                if room.expired(now):
                    self.lobby.close(room)
            except Exception:
                self._table_failed(room)
        self._rooms_changed.pop(room.id, None)  # what this tick changed is armed below
        self._arm(room)

    def _table_failed(self, room: Room) -> None:
        """A table's bug ends that table, not the server: its players are told and let go."""
        log.exception("table_failed table=%d", room.id)
        self.lobby.close(room)
        for seat in room.seats:
            peer, seat.peer = seat.peer, None
            if peer is not None:
                peer.room = peer.seat = None  # nothing of a broken table runs again, not even on the way out
                peer.send(to_wire(m.Bye(m.BYE_TABLE_FAILED, "this table hit an error")))
                peer.close("table_failed")

    # --- connections ---------------------------------------------------------------------------

    def _ended(self, reason: str) -> None:
        self.ended[reason] = self.ended.get(reason, 0) + 1

    async def handle(self, stream: trio.abc.Stream, door_only: bool = False) -> None:
        """Serve one connection. A stream with no TCP peer (an in-process gateway, such as a door that relays
        its own users) is not counted per address: whoever relays it limits its own people. With TLS on
        (``ServerConfig.tls``) the stream is wrapped in a ``trio.SSLStream``, unless it came to the doors' own
        listener (``door_only``: loopback, the door token required)."""
        origin: str | None
        try:
            peername = stream.socket.getpeername()  # type: ignore[attr-defined]
            origin, address = str(peername[0]), f"{peername[0]}:{peername[1]}"
        except (OSError, AttributeError, IndexError, TypeError):
            origin, address = None, "?"
        config = self.config
        if len(self.connections) >= config.max_connections:
            self.quiet(
                "server_full",
                logging.WARNING,
                "connection_refused reason=server_full connections=%d",
                len(self.connections),
            )
            self._ended("server_full")
            await _send_and_close(stream, to_wire(m.Error(None, p.SERVER_FULL, "the server is full")))
            return
        trusted = origin is None or origin in config.trusted_addresses
        pending_door = False
        if origin is not None and not trusted and self.per_origin.get(origin, 0) >= config.max_connections_per_address:
            if config.door_token and origin in config.door_addresses and self.door_pending < config.max_door_pending:
                pending_door = True  # perhaps a door's client: its hello must show the token
            else:
                await self._too_many_connections(stream)
                return
        _keepalive(stream)
        raw = stream
        if config.tls is not None and not door_only:
            stream = trio.SSLStream(raw, config.tls, server_side=True)  # written and read as a stream (no fd)
        now = trio.current_time()
        conn = Connection(
            stream,
            address,
            None if trusted else origin,
            config.max_outbound_bytes,
            self.flusher.outbox(stream),
            last_heard=now,
            last_active=now,
        )
        conn.fd = conn.outbox.fd  # a socket's descriptor: read directly
        conn.secured, conn.door_only = stream is raw, door_only
        raw_fd = conn.fd if conn.fd >= 0 else getattr(getattr(raw, "socket", None), "fileno", lambda: -1)()
        self.connections.add(conn)
        if pending_door:
            conn.pending_door = True
            self.door_pending += 1
        elif origin is not None and not trusted:
            conn.counted = True
            self.per_origin[origin] = self.per_origin.get(origin, 0) + 1
        log.debug("connection_open peer=%s", address)
        linger = False
        try:
            with conn.reading:
                await self._read(conn)
            conn.close(conn.closed_reason or "eof")
            # What is queued goes out (an error, a goodbye); a peer that does not read is cut off.
            with trio.move_on_after(config.flush_grace):
                await conn.outbox.drained()
            # Its last word sent, the server closes first: it lingers (``_linger``) once the connection is gone.
            linger = (
                conn.closed_reason not in ("eof", "tls_handshake")
                and raw_fd >= 0
                and not conn.outbox.failed
                and not conn.outbox.size
            )
        except Exception:
            # never escapes: the server and tables go on
            self.quiet("connection_failed", logging.ERROR, "connection_failed peer=%s", address, exc_info=True)
        finally:
            conn.outbox.close()  # before the socket closes: its descriptor number may be reused at once
            self.connections.discard(conn)
            self._ended(conn.closed_reason or "eof")
            self._uncount(conn, origin)
            try:
                self.lobby.detach(conn, trio.current_time(), leaving=False)
            except Exception:
                log.exception("detach_failed peer=%s", address)
            try:
                if linger:
                    await _linger(raw, raw_fd, config.linger)
            finally:
                with trio.CancelScope(shield=True):
                    await trio.aclose_forcefully(conn.stream)
                log.debug("connection_closed peer=%s reason=%s", address, conn.closed_reason)

    async def _too_many_connections(self, stream: trio.abc.Stream) -> None:
        limit = self.config.max_connections_per_address
        self.quiet("too_many_connections", logging.INFO, "connection_refused reason=too_many_connections")
        self._ended("too_many_connections")
        await _send_and_close(
            stream, to_wire(m.Error(None, p.TOO_MANY_CONNECTIONS, f"at most {limit} connections per address"))
        )

    def _uncount(self, conn: Connection, origin: str | None) -> None:
        """``conn`` no longer counts in its origin's share (it has gone, or it is a door's client)."""
        if conn.pending_door:
            conn.pending_door = False
            self.door_pending -= 1
        if conn.counted and origin is not None:
            conn.counted = False
            left = self.per_origin.get(origin, 1) - 1
            if left > 0:
                self.per_origin[origin] = left
            else:
                self.per_origin.pop(origin, None)

    def _door_hello(self, conn: Connection, hello: m.Hello, request_id: int | None) -> bool:
        """A first ``hello``: a door's client (the door token) is counted under the doors' caps from now on, and
        its tables too; a connection let in past its address's share without the token is refused. False: refused."""
        token = self.config.door_token
        if token and hello.door is not None and hmac.compare_digest(hello.door.encode(), token.encode()):
            origin, conn.origin = conn.origin, None
            self._uncount(conn, origin)
            return True
        if conn.door_only:
            self.quiet("not_a_door", logging.INFO, "connection_refused reason=not_a_door peer=%s", conn.address)
            conn.send(
                to_wire(m.Error(request_id, p.BAD_REQUEST, "this port is for the server's doors: join its game port"))
            )
            conn.close("not_a_door")
            return False
        if conn.pending_door:
            limit = self.config.max_connections_per_address
            self.quiet("too_many_connections", logging.INFO, "connection_refused reason=too_many_connections")
            conn.send(to_wire(m.Error(request_id, p.TOO_MANY_CONNECTIONS, f"at most {limit} connections per address")))
            conn.close("too_many_connections")
            return False
        return True

    async def _read(self, conn: Connection) -> None:
        config = self.config
        decoder = FrameDecoder()
        with trio.move_on_after(config.hello_timeout) as hello_window:
            if not conn.secured and not await self._handshake(conn):
                return
            while not conn.hello:
                if not await self._receive(conn, decoder):
                    return
        if hello_window.cancelled_caught:
            if not conn.secured:  # nothing can be said: there is no TLS yet to say it in
                self.quiet("tls_handshake", logging.INFO, "connection_refused reason=tls_handshake why=timeout")
                conn.close("tls_handshake")
                return
            conn.send(to_wire(m.Error(None, p.HELLO_FIRST, f"say hello within {config.hello_timeout:.0f} s")))
            conn.close("no_hello")
            return
        while True:
            # One window per quiet spell, not one per read: its deadline is only ever brought forward while it is
            # open (a read that takes the connection to the lobby, where the idle limit applies). When it expires,
            # the deadlines are checked against what has arrived since, and a connection still heard from gets a
            # new window. A cancel scope per read cost a deadline pushed and popped for every request.
            silent_at = conn.last_heard + config.heartbeat_timeout
            idle_at = conn.last_active + config.lobby_idle_limit if conn.room is None else math.inf
            with trio.CancelScope(deadline=min(silent_at, idle_at)) as window:
                while await self._receive(conn, decoder):
                    if conn.room is None:
                        idle_at = conn.last_active + config.lobby_idle_limit
                        if idle_at < window.deadline:
                            window.deadline = idle_at
                return
            now = trio.current_time()
            if now >= conn.last_heard + config.heartbeat_timeout:
                # Gone, as far as anyone can tell: its seat is kept (R19) and, if it hosted, the role passes (R18).
                conn.send(
                    {
                        "kind": p.BYE,
                        "reason": "silent",
                        "message": f"nothing received for {config.heartbeat_timeout:g} s",
                    }
                )
                conn.close("silent")
                return
            if conn.room is None and now >= conn.last_active + config.lobby_idle_limit:
                conn.send(
                    {"kind": p.BYE, "reason": "idle", "message": f"idle in the lobby for {config.lobby_idle_limit:g} s"}
                )
                conn.close("idle")
                return

    async def _handshake(self, conn: Connection) -> bool:
        """The TLS handshake, within the hello window. False (the connection refused) if it failed: a plain client,
        a scanner, a client that does not trust the certificate."""
        assert isinstance(conn.stream, trio.SSLStream)
        try:
            await conn.stream.do_handshake()
        except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
            why = getattr(exc.__cause__, "reason", None) or type(exc.__cause__ or exc).__name__
            self.quiet("tls_handshake", logging.INFO, "connection_refused reason=tls_handshake why=%s", why)
            conn.close("tls_handshake")
            return False
        conn.secured = True
        return True

    async def _receive(self, conn: Connection, decoder: FrameDecoder) -> bool:
        """Read once and answer every complete request. False when the connection is done. Requests held back
        (``_backpressure``) are answered first, before anything more is read."""
        if conn.waiting:
            frames, conn.waiting = conn.waiting, []
        else:
            try:
                data = await (_read_socket(conn.fd) if conn.fd >= 0 else conn.stream.receive_some(RECEIVE_BYTES))
            except OSError as exc:
                if exc.errno == errno.ETIMEDOUT:  # the kernel gave up on it (TCP_USER_TIMEOUT): unread, or unreachable
                    conn.close("slow_reader" if conn.outbox.size or conn.outbox.blocked else "timed_out")
                return False
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return False
            if not data:
                return False
            conn.last_heard = trio.current_time()
            try:
                frames = decoder.feed(data)
            except ProtocolError as exc:
                conn.send(to_wire(m.Error(None, exc.code, str(exc))))
                conn.close(f"protocol_error:{exc.code}")
                return False
            self.frames_in += len(frames)
        outbox = conn.outbox
        for i, frame in enumerate(frames):
            if conn.closed_reason is not None:
                return False
            if outbox.size > outbox.limit // 2:
                conn.waiting = frames[i:]  # kept if the wait is cut short (the heartbeat's window): answered next
                if not await self._backpressure(conn):
                    return False
                conn.waiting = []
            self._answer(conn, frame)
        return conn.closed_reason is None

    async def _backpressure(self, conn: Connection) -> bool:
        """The answers to a client's requests fill half its outbound budget: read no more of its requests until it
        has read most of them. A client that reads nothing for ``slow_reader_after`` is a slow reader (False)."""
        with trio.move_on_after(self.config.slow_reader_after):
            await conn.outbox.below(conn.outbox.limit // 4)
            return conn.closed_reason is None and not conn.outbox.failed
        conn.close("slow_reader")
        return False

    def _answer(self, conn: Connection, frame: Message) -> None:
        now = trio.current_time()
        raw_id = frame.get("id")
        request_id = raw_id if isinstance(raw_id, int) and not isinstance(raw_id, bool) else None
        if not conn.allow(now):
            if conn.flooded >= FLOOD_DISCONNECT:
                conn.send(to_wire(m.Error(request_id, p.RATE_LIMITED, "too many requests: disconnected")))
                conn.close("flood")
                self.quiet("flood", logging.INFO, "connection_closed reason=flood peer=%s", conn.address)
            else:
                wait = (1 - conn.tokens) / REQUEST_RATE
                conn.send(to_wire(m.refused(request_id, p.RATE_LIMITED, "too many requests: slow down", wait)))
            return
        try:
            request = request_from_wire(frame)
        except p.RequestError as exc:
            conn.send(to_wire(m.Error(request_id, exc.code, exc.message)))
            return
        if request.kind != p.PING:
            conn.last_active = now
        if (
            request.kind in _ARCHIVE_KINDS
            and conn.hello
            and self.lobby.archive is not None
            and self._nursery is not None
        ):
            self._nursery.start_soon(self._answer_from_archive, conn, request, now)  # reads the journal: off the loop
            return
        if type(request.body) is m.Hello and not conn.hello and not self._door_hello(conn, request.body, request_id):
            return
        if (
            self.lobby.directory is not None
            and conn.hello
            and not conn.looking_up
            and self._nursery is not None
            and self.lobby.unknown_table(request) is not None
        ):
            conn.looking_up = True
            self._nursery.start_soon(self._look_up, conn, request)  # a table created elsewhere a moment ago?
            return
        reply = self.lobby.handle(conn, request, now, greeted=conn.hello)
        if request.kind == p.HELLO and not conn.hello:
            if type(reply) is not m.Ok:
                conn.send(to_wire(reply))
                conn.close("incompatible_version")
                return
            conn.hello = True
            log.debug("hello peer=%s name=%s", conn.address, quote(conn.name))
        if type(reply) is m.Ok and type(reply.payload) is m.Done:
            conn.send(_frame(_OK_HEAD + _packb(reply.id)))  # the commonest reply (every accepted action), pre-encoded
        elif type(reply) is m.Ok and type(reply.payload) is m.Tables:
            conn.send(self.lobby.tables_frame(reply))  # each table's line packed once while it is unchanged
        else:
            conn.send(to_wire(reply))

    async def _look_up(self, conn: Connection, request: m.Request) -> None:
        """A ``join``, ``rejoin`` or ``watch`` of a table nobody told this server of: the directory itself is read
        (off the event loop), so that a table created on another server a moment ago is ``moved`` to, not refused;
        then the lobby answers as usual (replies are matched by ``id``, in whatever order they come)."""
        assert self.lobby.directory is not None and isinstance(request.body, (m.Join, m.Rejoin, m.Watch))
        try:
            await self.lobby.directory.find(request.body.table)
        except DirectoryError as exc:
            self.quiet("directory_lookup_failed", logging.WARNING, "directory_lookup_failed error=%s", exc)
        finally:
            conn.looking_up = False
        if conn.closed_reason is None:
            conn.send(to_wire(self.lobby.handle(conn, request, trio.current_time(), greeted=True)))

    async def _answer_from_archive(self, conn: Connection, request: m.Request, now: float) -> None:
        """``past_matches`` and ``replay`` read the journal and may replay a long match: the lobby's three steps
        (``Lobby.archive_refusal``, ``read_archive``, ``archived``), the read in a worker thread, one at a time, the
        reply sent when it is ready (replies are matched by ``id``, in whatever order they come)."""
        lobby = self.lobby
        reply = lobby.archive_refusal(conn, request, now)
        if reply is None:
            async with self.archivists:
                answer, missed = await trio.to_thread.run_sync(lobby.read_archive, request)
            reply = lobby.archived(conn, request, answer, missed, trio.current_time())
        if conn.closed_reason is None:
            conn.send(to_wire(reply))

    # --- the whole server ------------------------------------------------------------------------

    async def serve(
        self,
        host: str | None,
        port: int,
        *,
        door_listeners: Sequence[trio.SocketListener] = (),
        sockets: list[socket.socket] | None = None,
        task_status: trio.TaskStatus[list[trio.SocketListener]] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Listen and serve until cancelled; on cancellation every client is told the server is going away.
        ``door_listeners`` (loopback, in the clear) admit the doors' own clients only: their hello must show the door
        token (with TLS on, the doors join there, ``docs/operating.md``). ``sockets``: listening sockets made by
        another process (a worker's, ``quatro_server.workers.supervisor``), served instead of listening on ``host`` and ``port``."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            await nursery.start(self.flusher.run)
            nursery.start_soon(self._run_timers)
            nursery.start_soon(self._push_lobby)
            for room in list(self.lobby.rooms.values()):
                self._room_created(room)  # tables restored from the journal before the server started
            if sockets is None:
                listeners = await trio.open_tcp_listeners(port, host=host)
            else:
                listeners = [trio.SocketListener(trio.socket.from_stdlib_socket(sock)) for sock in sockets]
            for listener in listeners:
                nursery.start_soon(self._accept, listener)
            for listener in door_listeners:
                nursery.start_soon(self._accept, listener, True)
            task_status.started(listeners)
            try:
                await trio.sleep_forever()
            finally:
                self.goodbye()

    async def _accept(self, listener: trio.SocketListener, door_only: bool = False) -> None:
        """Accept connections for ever. Out of file descriptors or memory: say so (quietly) and retry shortly."""
        assert self._nursery is not None
        async with listener:
            while True:
                try:
                    stream = await listener.accept()
                except OSError as exc:
                    if exc.errno not in ACCEPT_CAPACITY_ERRNOS:
                        raise
                    self.quiet(
                        "accept_failed",
                        logging.WARNING,
                        "accept_failed error=%s (%s) connections=%d",
                        errno.errorcode.get(exc.errno or 0, exc.errno),
                        os.strerror(exc.errno or 0),
                        len(self.connections),
                    )
                    await trio.sleep(ACCEPT_RETRY)
                    continue
                self._nursery.start_soon(self.handle, stream, door_only)

    def goodbye(self) -> None:
        final = self.config.final_goodbye
        message = to_wire(m.Bye(m.BYE_SHUTDOWN, self.stop_message) if final is None else m.Bye(m.BYE_CLOSED, final))
        for conn in list(self.connections):
            conn.send(message)

    # --- the operator's hand (``quatro_server.workers.admin``) -------------------------------------------------

    def notice(self, text: str, *, draining: bool = False) -> int:
        """The ``notice`` push to every connection that said hello, wherever it is; how many were told."""
        frame = encode(to_wire(m.Notice(text, draining=draining)))
        told = 0
        for conn in self.connections:
            if conn.hello:
                conn.send(frame)
                told += 1
        return told

    def running_matches(self) -> int:
        """Tables whose match has started and is not over (a drain waits for them)."""
        return sum(room.table is not None and not room.game.over(room.table) for room in self.lobby.rooms.values())

    def drain(self, timeout: float | None) -> int:
        """No new tables or matches from now on (``draining``); every client is told, and the lobby shows it. Once
        the running matches have ended, or after ``timeout`` seconds, the server stops (``stop_asked``). Returns
        how many matches run now."""
        lobby = self.lobby
        lobby.draining = True
        running = self.running_matches()
        log.info("draining running=%d timeout=%s", running, timeout)
        self.notice(
            "The server will restart soon: no new tables or matches. Running matches play on to their end.",
            draining=True,
        )
        lobby.announce()
        assert self._nursery is not None
        self._nursery.start_soon(self._drained, timeout)
        return running

    async def _drained(self, timeout: float | None) -> None:
        with trio.move_on_after(math.inf if timeout is None else timeout):
            while self.running_matches():
                await trio.sleep(DRAIN_POLL)
        running = self.running_matches()
        if running:
            kept = " Your table is kept: it comes back when the server does." if self.lobby.journal is not None else ""
            self.notice(f"The server is restarting now, before the end of your match.{kept}", draining=True)
            self.stop_message = "the server is restarting (drained before the end of every match)"
        else:
            self.stop_message = "the server is restarting (drained: every match had ended)"
        log.info("drained running=%d", running)
        self.stop_asked.set()


async def settle(lobby: Lobby, rooms: list[Room], grace: float = RESTORE_GRACE) -> None:
    """After a restart, wait out the grace the restored ``rooms`` get for their players to come back, then
    ``Lobby.end_grace``: whoever has not is disconnected (R19) and loses the host role (R18)."""
    if rooms:
        await trio.sleep(grace)
        lobby.end_grace(rooms, trio.current_time())


async def _read_socket(fd: int) -> bytes:
    """What a socket has to read, once it has anything (b"" at its end). A request arrives when the socket says it
    is readable, so this waits first and reads once: ``SocketStream.receive_some`` tries a read first, which nearly
    always fails (the request has not come yet) and costs a system call, an exception and a context manager more per
    request. Raises ``OSError`` when the connection broke, ``trio.ClosedResourceError`` if the socket was closed."""
    while True:
        await trio.lowlevel.wait_readable(fd)
        try:
            return os.read(fd, RECEIVE_BYTES)  # the socket is non-blocking (trio's): this never waits
        except BlockingIOError:
            continue  # woken for nothing (it happens): wait again


async def _linger(stream: trio.abc.Stream, fd: int, seconds: float) -> None:
    """Shut the connection's sending side (the client reads to the end of what it was sent, then its end), and read
    and drop what the client still sends until it closes too, for ``seconds`` and ``LINGER_BYTES`` at most."""
    sock = getattr(stream, "socket", None)
    if sock is None:
        return
    try:
        sock.shutdown(socket.SHUT_WR)
    except OSError:
        return  # already gone
    left = LINGER_BYTES
    with trio.move_on_after(seconds):
        while left > 0:
            try:
                data = await _read_socket(fd)
            except (OSError, trio.ClosedResourceError):
                return
            if not data:
                return
            left -= len(data)


async def _send_and_close(stream: trio.abc.Stream, message: Outgoing) -> None:
    with trio.move_on_after(1):
        try:
            await stream.send_all(encode(message))
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
    await trio.aclose_forcefully(stream)


class Watcher(Protocol):
    """What ``run`` tells of its server (``quatro_server.workers.metrics.Metrics``)."""

    def watch(self, server: Server) -> None: ...

    async def measure_loop(self) -> None: ...


async def run(
    host: str | None,
    port: int,
    lobby: Lobby,
    *,
    config: ServerConfig | None = None,
    door_listeners: Sequence[trio.SocketListener] = (),
    sockets: list[socket.socket] | None = None,
    metrics: Watcher | None = None,
    admin: AdminListener | None = None,
    task_status: trio.TaskStatus[list[trio.SocketListener]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve until SIGINT or SIGTERM, then say goodbye to every client and stop. SIGUSR1 logs the loop's figures
    (its longest batch of work and collection, ``quatro_server.net.quiet``) since the last SIGUSR1 and starts afresh.
    ``door_listeners``, ``sockets``: ``Server.serve``'s. ``metrics``: told of the server, its loop's lag measured (its
    endpoint is its owner's to serve). ``admin``: the operator's socket (``quatro_server.workers.admin``), served beside the
    game; a drain it asks for ends in the same goodbye."""
    server = Server(lobby, config)
    watch = LoopWatch(server.pass_reading, server.writer_cpu if log.isEnabledFor(logging.DEBUG) else None)
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM, signal.SIGUSR1) as signals:
        async with trio.open_nursery() as nursery:
            if metrics is not None:
                metrics.watch(server)
                nursery.start_soon(metrics.measure_loop)
            listeners = await nursery.start(
                partial(server.serve, host, port, door_listeners=door_listeners, sockets=sockets)
            )
            if admin is not None:
                nursery.start_soon(admin.serve, server)
            nursery.start_soon(_stop_when_asked, server, nursery.cancel_scope)
            settle_heap()  # a quiet tail: start-up's objects frozen, fewer collections (quatro_server.net.quiet)
            watch.install()
            if lobby.journal is not None:
                lobby.journal.loop_idle = watch.idle  # the writer's Python runs while the loop waits
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


async def _stop_when_asked(server: Server, scope: trio.CancelScope) -> None:
    """The server stops by itself (a drain is over): the same goodbye as an operator's SIGTERM."""
    await server.stop_asked.wait()
    log.info("shutdown reason=drained")
    server.goodbye()
    await trio.sleep(0.2)  # let the writers flush the goodbyes
    scope.cancel()
