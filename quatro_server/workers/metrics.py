"""The metrics endpoint (``quatro-server --metrics [HOST:]PORT``): the server's figures in Prometheus's text format.

Each server has a registry of its own (``prometheus_client.CollectorRegistry``, never the library's global one), so
that several servers in one process (the tests, a worker's supervisor) never mix their figures. Most figures are read
when a scrape comes, from what the server keeps anyway (its tables, connections and counts: ``Server.frames_in``,
``Server.ended``, ``Flusher.frames``): the hot path pays an addition per message and nothing else. Two are measured
as they happen: the event loop's lag (a task that sleeps and sees how late it wakes) and the journal's commits (timed
on the writer's thread).

The endpoint is answered on the trio loop itself, by a small HTTP responder: the figures are read from sets and
dicts the loop changes, which only the loop may walk safely (``prometheus_client.start_http_server`` answers on a
thread of its own, which would need a lock on the hot path or a copy of the state). A scrape costs the loop the
time to write the text (well under a millisecond for a few hundred tables) every scrape interval.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import trio
from prometheus_client import CollectorRegistry, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

if TYPE_CHECKING:
    from quatro_server.doors.gate import Gate
    from quatro_server.server import Connection, Server

log = logging.getLogger("quatro.metrics")

#: Seconds between the loop-lag task's wake-ups; how late each comes is the lag.
LAG_INTERVAL = 0.25
#: The loop lag's buckets (seconds): a busy loop is late by a millisecond or two; past 50 ms players feel it.
LAG_BUCKETS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
#: A journal commit's buckets (seconds): a sync to the disk takes a few milliseconds; a failing disk, seconds.
COMMIT_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0)
#: A scrape's request: bytes at most, seconds to send it, and scrapes answered at once (more wait to be accepted).
MAX_REQUEST_BYTES = 8192
REQUEST_TIMEOUT = 5.0
MAX_SCRAPES = 4
#: Connections the endpoint holds at once (answered or waiting for a scrape slot), and from one address: each is
#: gone within REQUEST_TIMEOUT of its accept, and one more is closed at once. A scraper needs one; these bound a
#: flood of silent connections far inside the descriptors the game port keeps (``doors.descriptor_reserve``).
MAX_CONNECTIONS = 32
MAX_CONNECTIONS_PER_ADDRESS = 16
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
#: Why connections end that the server refused (``Server.ended``); the rest ended otherwise (the peer left, went
#: silent, was cut for flooding or not reading).
REFUSALS = frozenset(
    {"server_full", "too_many_connections", "tls_handshake", "no_hello", "incompatible_version", "not_a_door"}
)


class Metrics:
    """One server's figures and their endpoint. ``watch`` the server, then ``serve`` and ``measure_loop``."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        self.server: Server | None = None
        #: The doors' figures: sessions open now, and the gates whose refusals are counted (name -> ...).
        self.door_sessions: dict[str, Callable[[], int]] = {}
        self.door_gates: dict[str, list[Gate]] = {}
        self.loop_lag = Histogram(
            "quatro_loop_lag_seconds",
            "How late the event loop woke a task that slept",
            buckets=LAG_BUCKETS,
            registry=self.registry,
        )
        self.journal_commit = Histogram(
            "quatro_journal_commit_seconds",
            "How long the journal's commits took",
            buckets=COMMIT_BUCKETS,
            registry=self.registry,
        )
        self._scrapes = trio.CapacityLimiter(MAX_SCRAPES)
        self.registry.register(_Figures(self))
        self._gate: Gate | None = None  # made on the loop (its quiet log reads the loop's clock)

    def watch(self, server: Server) -> None:
        """Read ``server``'s figures (and time its journal's commits, if it keeps one)."""
        self.server = server
        journal = server.lobby.journal
        if journal is not None:
            observe = self.journal_commit.observe
            journal.on_commit = lambda seconds, items: observe(seconds)

    def add_door(self, name: str, sessions: Callable[[], int], gates: list[Gate]) -> None:
        """A door's sessions open now (read on a scrape, from the door's thread's own count) and its gates."""
        self.door_sessions[name] = sessions
        self.door_gates[name] = gates

    def text(self) -> bytes:
        """The figures as Prometheus reads them."""
        return generate_latest(self.registry)

    async def measure_loop(self, interval: float = LAG_INTERVAL) -> None:
        """Sleep ``interval`` at a time, for ever, and record how late each wake-up came."""
        observe = self.loop_lag.observe
        while True:
            due = trio.current_time() + interval
            await trio.sleep_until(due)
            observe(max(0.0, trio.current_time() - due))

    async def serve(
        self,
        host: str | None,
        port: int,
        *,
        task_status: trio.TaskStatus[list[trio.SocketListener]] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Answer scrapes on ``host:port`` (``GET /metrics``) until cancelled."""
        listeners = await trio.open_tcp_listeners(port, host=host)
        async with trio.open_nursery() as nursery:
            task_status.started(listeners)
            await trio.serve_listeners(self._answer, listeners, handler_nursery=nursery)

    async def _answer(self, stream: trio.SocketStream) -> None:
        """One connection: within REQUEST_TIMEOUT of its accept (waiting for a slot included) it is answered and
        closed; past the gate's bounds it is closed at once, one log line for a burst (``metrics_refused``)."""
        from quatro_server.doors.gate import Gate
        from quatro_server.server import QuietLog

        if self._gate is None:
            self._gate = Gate(MAX_CONNECTIONS, MAX_CONNECTIONS_PER_ADDRESS, QuietLog(log), "metrics")
        gate = self._gate
        try:
            address = str(stream.socket.getpeername()[0])
        except OSError:
            address = "?"
        if gate.admit(address) is not None:
            await trio.aclose_forcefully(stream)
            return
        try:
            with trio.move_on_after(REQUEST_TIMEOUT):
                # A slot is taken once the request has come: silent connections hold none, and a scraper's
                # request is answered at once however many of them wait.
                line = await _request_line(stream)
                async with self._scrapes:
                    await stream.send_all(_response(line, self.text))
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            pass
        finally:
            gate.release(address)
            await trio.aclose_forcefully(stream)


async def _request_line(stream: trio.SocketStream) -> bytes:
    """The request's first line, once its headers have come (b"" if they never do within the bounds)."""
    head = b""
    while b"\r\n\r\n" not in head and b"\n\n" not in head:
        if len(head) > MAX_REQUEST_BYTES:
            return b""
        data = await stream.receive_some(4096)
        if not data:
            return b""
        head += data
    return head.split(b"\n", 1)[0].strip()


def _response(line: bytes, text: Callable[[], bytes]) -> bytes:
    parts = line.split()
    if len(parts) != 3 or not parts[2].startswith(b"HTTP/"):
        return _http(400, b"Bad Request", b"a scrape is GET /metrics\n")
    method, target = parts[0], parts[1].split(b"?", 1)[0]
    if method not in (b"GET", b"HEAD"):
        return _http(405, b"Method Not Allowed", b"a scrape is GET /metrics\n")
    if target not in (b"/metrics", b"/"):
        return _http(404, b"Not Found", b"the figures are at /metrics\n")
    body = text()
    return _http(200, b"OK", b"" if method == b"HEAD" else body, CONTENT_TYPE.encode(), len(body))


def _http(
    status: int,
    reason: bytes,
    body: bytes,
    content_type: bytes = b"text/plain; charset=utf-8",
    length: int | None = None,
) -> bytes:
    head = b"HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % (
        status,
        reason,
        content_type,
        len(body) if length is None else length,
    )
    return head + body


class _Figures(Collector):
    """The figures read on each scrape, from the server as it is (on the loop's thread: ``Metrics.serve``)."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterator[Metric]:
        server = self.metrics.server
        if server is not None:
            yield from _tables(server)
            yield from _connections(server)
            yield from _journal(server)
        yield from _doors(self.metrics)


def _tables(server: Server) -> Iterator[Metric]:
    tables = GaugeMetricFamily("quatro_tables", "Tables open, by game and phase", labels=["game", "phase"])
    seats = GaugeMetricFamily(
        "quatro_seats", "Seats of the open tables: taken by a person, by a bot, or empty", labels=["game", "kind"]
    )
    connected = GaugeMetricFamily("quatro_seats_connected", "Seats whose person is connected now", labels=["game"])
    watchers = GaugeMetricFamily("quatro_watchers", "Connections watching a table from no seat", labels=["game"])
    by_phase: Counter[tuple[str, str]] = Counter()
    by_kind: Counter[tuple[str, str]] = Counter()
    live: Counter[str] = Counter()
    watching: Counter[str] = Counter()
    for room in server.lobby.rooms.values():
        game = room.game.name
        by_phase[game, str(room.phase)] += 1
        watching[game] += len(room.watchers)
        for seat in room.seats:
            kind = "bot" if seat.bot is not None else "empty" if seat.empty else "human"
            by_kind[game, kind] += 1
            if kind == "human" and seat.peer is not None:
                live[game] += 1
    for (game, phase), n in sorted(by_phase.items()):
        tables.add_metric([game, phase], n)
    for (game, kind), n in sorted(by_kind.items()):
        seats.add_metric([game, kind], n)
    for game in sorted({game for game, _ in by_kind} | set(watching)):
        connected.add_metric([game], live[game])
        watchers.add_metric([game], watching[game])
    yield from (tables, seats, connected, watchers)


def _state(conn: Connection) -> str:
    if not conn.secured:
        return "handshake"
    if not conn.hello:
        return "hello"
    if conn.seat is not None:
        return "seated"
    return "watching" if conn.room is not None else "lobby"


def _connections(server: Server) -> Iterator[Metric]:
    states: Counter[str] = Counter(_state(conn) for conn in server.connections)
    connections = GaugeMetricFamily(
        "quatro_connections",
        "Connections open now, by state (handshake: TLS under way; hello: not greeted yet)",
        labels=["state"],
    )
    for state in ("handshake", "hello", "lobby", "seated", "watching"):
        connections.add_metric([state], states[state])
    yield connections
    yield CounterMetricFamily(
        "quatro_messages_received", "Messages (frames) received from clients", value=server.frames_in
    )
    yield CounterMetricFamily(
        "quatro_messages_sent", "Messages (frames) queued to clients", value=server.flusher.frames
    )
    yield CounterMetricFamily(
        "quatro_socket_sends", "Writes handed to the kernel (several messages each)", value=server.flusher.sends
    )
    refused = CounterMetricFamily("quatro_refusals", "Connections the server refused, by reason", labels=["reason"])
    ended = CounterMetricFamily("quatro_disconnects", "Connections that ended otherwise, by reason", labels=["reason"])
    for reason, n in sorted(server.ended.items()):
        (refused if reason in REFUSALS else ended).add_metric([reason], n)
    yield refused
    yield ended


def _journal(server: Server) -> Iterator[Metric]:
    journal = server.lobby.journal
    if journal is None:
        return
    yield GaugeMetricFamily(
        "quatro_journal_behind", "Journal writes queued and not committed yet", value=journal.behind()
    )
    yield GaugeMetricFamily(
        "quatro_journal_failing",
        "1 while the disk refuses the journal's commits",
        value=1 if journal.failed is not None else 0,
    )


def _doors(metrics: Metrics) -> Iterator[Metric]:
    if not metrics.door_sessions:
        return
    sessions = GaugeMetricFamily(
        "quatro_door_sessions", "Door sessions open now (each a client process)", labels=["door"]
    )
    for name, count in sorted(metrics.door_sessions.items()):
        sessions.add_metric([name], count())
    yield sessions
    refused = CounterMetricFamily(
        "quatro_door_refusals", "Door connections refused, by door and reason", labels=["door", "reason"]
    )
    for name, gates in sorted(metrics.door_gates.items()):
        reasons: Counter[str] = Counter()
        for gate in gates:
            for reason, n in dict(gate.refused).items():  # a copy: the door's thread may count meanwhile
                reasons[f"{gate.name}_{reason}" if gate.name != name else reason] += n
        for reason, n in sorted(reasons.items()):
            refused.add_metric([name, reason], n)
    yield refused
