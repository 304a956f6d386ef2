"""What the server costs per message it delivers: the real Quatro server against a bare trio relay, same load, same run.

    python benchmarks/server_fanout.py [--tables 1,10,50] [--seconds 6] [--warmup 2] [--pace 3] [--relays plain,flusher]
    python benchmarks/server_fanout.py --json        # the same figures as one JSON document on stdout
    python benchmarks/server_fanout.py --tables 50 --rounds 3 --json   # relay and server alternating, median ratio

For each size, K tables of 8 seats are filled by load clients (raw sockets in this process, framed with
``quatro_shared.framing``) and played by two targets in turn, each in its own process on 127.0.0.1:

1. ``relay``: a minimal trio server that fans a real-sized 8-player ``update`` frame (built once by the
   rules engine) out to the 8 connections of the requester's table for every ``swap``, and one for every
   held channel's pulse; every request gets an ``ok``. Writer: one task per connection, one ``send_all``
   per frame (the simplest writer, ``naive``), or one flusher task sending each connection's joined frames once
   per scheduler pass (``flusher``, the design the server uses). This is the floor: trio, the framing codec
   and loopback TCP. ``plain`` is the hardest floor, the same frames with as little around them as trio allows:
   raw socket reads (``sock.recv`` when epoll says readable, no ``SocketStream``), one bytearray per connection
   flushed once per scheduler pass, one pulse timer for every held channel that sleeps to the earliest deadline
   plus the server's slack (``quatro_server.server.TIMER_SLACK``, or ``--timer-slack``), and nothing else. The
   default relays are ``plain`` and ``flusher``.
2. ``quatro``: ``python -m quatro_server`` itself (the operator's command, journalling every table to a fresh
   data directory unless ``--no-journal``) with a timing file whose durations are the standard ones divided by
   ``--pace`` (rounds long enough never to end in the window).

Every seat plays the same way on both: it takes its channel and chooses an emoji, so each seat's pulse
reaches all 8 seats; then it swaps at its cooldown's pace (a card of its hand for a center card, from
its latest view; a swap someone beat is refused "taken", as in play). The server process's CPU time is
read from /proc/PID/task/PID/schedstat (nanoseconds on the CPU, user and system, of the thread that runs
trio) before and after the measured window; messages are counted as the clients receive them. Latency is
a swap request sent to the requester's own update carrying that swap received (this process's clock).

Printed per size and target: deliveries per second, server CPU share, server CPU µs per delivered message,
latency p50/p99 (and, to judge the run: the load clients' CPU, swaps accepted, update size). Then the ratio
Quatro / relay for each relay, every target's p99 and longest pass (one pass of trio's run loop, measured by
``quatro_server.net.quiet.LoopWatch`` in the server and in every relay alike: two clock reads per pass), and the tables one core holds at the standard pace: a million µs over (µs per message ×
deliveries per table per second), the latter the highest per-table rate of the run divided by the pace
(every duration scales with it), and also for the architecture's working figure of 80 per table.

With ``--rounds N``, each table count is measured N times, the targets taking turns (relay, server, relay, server,
...): on a shared machine whose speed drifts from one minute to the next, both figures of a round drift alike, so the
ratio is the median of the rounds' ratios (each listed), and each target's other figures are its median round's.

With ``--json``, the same runs print one JSON document (the table goes to stderr): for each table count, the
server's µs per delivered message beside each relay's (``relay_plain_us_per_msg``, ...), the server over each relay
(``ratio_to_plain``, ``ratio_to_flusher``, ...: same load, same run; the median of the rounds, each round's in
``ratio_to_plain_rounds``, ...), ``tables_per_core`` at the standard pace, ``p50_ms`` and ``p99_ms`` of swap -> own
update (each relay's p99 as ``relay_plain_p99_ms``, ...), bytes received per seat per second (as run, and brought
to the standard pace), and the server's longest batch of work (pass) and longest garbage collection (its
``loop_stats`` log line for the window, on SIGUSR1; each relay's as ``relay_plain_longest_batch_ms`` and
``relay_plain_longest_gc_ms``, ...; the relays keep Python's collector as it comes, the server raises its thresholds).
The server is started with ``--max-tables`` and ``--max-connections`` raised to what the run needs.

Figures, not tests: nothing here asserts a threshold. Results go to docs/performance.md by hand.
"""

from __future__ import annotations

import argparse
import gc
import heapq
import json
import logging
import os
import random
import re
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import msgpack  # noqa: E402
import trio  # noqa: E402

from quatro_shared.framing import PREFIX_BYTES, FrameDecoder, encode  # noqa: E402
from quatro_shared.games.quatro.signs import SIGNS  # noqa: E402
from quatro_shared.protocol import PROTOCOL_VERSION  # noqa: E402

from quatro_server.net.quiet import LoopWatch  # noqa: E402
from quatro_server.server import MAX_CONNECTIONS, TIMER_SLACK  # noqa: E402
from quatro_server.tables.limits import MAX_TABLES  # noqa: E402
from quatro_server.timing import STANDARD, Timing  # noqa: E402

SEATS = 8
HOST = "127.0.0.1"
_PREFIX = struct.Struct(">I")
#: An update's body starts with its map header, then "kind": "update" (the server and the relay put kind first).
_UPDATE_MARK = b"\xa4kind\xa6update"
#: The round never ends inside a run (no call, no counter, no draw): the load stays the same throughout.
ROUND_SECONDS = 3600.0
CONNECT_TIMEOUT = 30.0
#: Seconds between the pings of seats waiting for the other tables to be seated (the heartbeat timeout is 30 s).
KEEP_ALIVE = 10.0
#: Tables seated through the lobby at the same time.
SEATING_AT_ONCE = 8


def paced_timing(pace: float) -> Timing:
    """Standard durations divided by ``pace`` (rounds kept long)."""
    values = {name: value / pace for name, value in STANDARD.values().items() if name != "target_score"}
    values["round_length"] = ROUND_SECONDS
    return STANDARD.changed(**values)


# --- the load clients ------------------------------------------------------------------------------


@dataclass
class Stats:
    """What the clients received, and the swap latencies, while ``measuring``."""

    measuring: bool = False
    frames: int = 0
    updates: int = 0
    bytes: int = 0
    swaps: int = 0
    swaps_ok: int = 0
    latencies: list[float] = field(default_factory=list)


class LoadSeat:
    """One seat's connection: counts every frame, keeps the latest update undecoded, answers requests by id."""

    def __init__(self, stream: trio.SocketStream | None, stats: Stats, index: int) -> None:
        self.stream: trio.SocketStream = stream  # type: ignore[assignment]  # None until ``open``
        self.stats = stats
        self.index = index
        self.seat = 0  # as the server's join reply says
        self.buffer = bytearray()
        self.ids = 0
        self.waiting: dict[int, trio.Event] = {}
        self.replies: dict[int, dict[str, Any]] = {}
        self.latest: bytes | None = None  # the last update's body (for its size)
        self.unread: list[bytes] = []  # updates not yet applied to ``state``: decoded only when the seat needs it
        #: What a load seat needs of its view (protocol 2 sends a full view only in a snapshot): phase, hand, center.
        self.state: dict[str, Any] = {}
        self.got_update = trio.Event()
        self.swap_sent_at: float | None = None  # set while a swap's own update is awaited
        self.hello = False  # said hello: pinged while other tables are seated (``seat_quatro``)
        self.sending = trio.Lock()  # a request and a ping never write at once

    async def open(self, port: int, nursery: trio.Nursery, host: str = HOST) -> None:
        self.stream = await trio.open_tcp_stream(host, port)
        nursery.start_soon(self.read)

    async def join(self, table: int, name: str, nursery: trio.Nursery) -> dict[str, Any]:
        """Join ``table``; a table held by another server (``moved``, servers sharing a directory) is joined there,
        on a connection of its own, as the client core does."""
        reply = await self.request("join", table=table)
        if reply["kind"] == "moved":
            await self.stream.aclose()
            self.buffer.clear()
            await self.open(reply["port"], nursery, reply["host"] or HOST)  # "": the host this one was reached at
            _ok(await self.request("hello", version=PROTOCOL_VERSION, name=name), "hello")
            reply = await self.request("join", table=table)
        return reply

    async def read(self) -> None:
        stats = self.stats
        buffer = self.buffer
        while True:
            try:
                data = await self.stream.receive_some(65536)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return
            if not data:
                return
            buffer += data
            start, end = 0, len(buffer)
            while end - start >= PREFIX_BYTES:
                (length,) = _PREFIX.unpack_from(buffer, start)
                if end - start - PREFIX_BYTES < length:
                    break
                body = bytes(buffer[start + PREFIX_BYTES : start + PREFIX_BYTES + length])
                start += PREFIX_BYTES + length
                if stats.measuring:
                    stats.frames += 1
                    stats.bytes += PREFIX_BYTES + length
                if body.startswith(_UPDATE_MARK, 1):
                    if stats.measuring:
                        stats.updates += 1
                    self.latest = body
                    self.unread.append(body)
                    if len(self.unread) > 256:  # a seat that never looks (the relay's): keep memory bounded
                        self.view()
                    self.got_update.set()
                    if self.swap_sent_at is not None:
                        self._own_swap(body)
                else:
                    self._reply(msgpack.unpackb(body, raw=False))
            del buffer[:start]

    def _own_swap(self, body: bytes) -> None:
        """The requester's own update: the first one carrying its swap."""
        message = msgpack.unpackb(body, raw=False)
        if any(ev.get("kind") == "swapped" and ev.get("seat") == self.seat for ev in message["events"]):
            if self.stats.measuring:
                self.stats.latencies.append(time.perf_counter() - self.swap_sent_at)
            self.swap_sent_at = None

    def _reply(self, message: dict[str, Any]) -> None:
        request_id = message.get("id")
        if message.get("kind") in ("ok", "refused", "error", "moved") and request_id in self.waiting:
            self.replies[request_id] = message
            self.waiting.pop(request_id).set()

    async def request(self, kind: str, **values: Any) -> dict[str, Any]:
        self.ids += 1
        request_id = self.ids
        done = self.waiting[request_id] = trio.Event()
        async with self.sending:
            await self.stream.send_all(encode({"kind": kind, "id": request_id, **values}))
        with trio.fail_after(CONNECT_TIMEOUT):
            await done.wait()
        return self.replies.pop(request_id)

    def view(self) -> dict[str, Any] | None:
        """The seat's phase, hand and center, from its snapshot and the updates since (a client core's job, cut
        down to what the load needs, so that the load process stays light)."""
        for body in self.unread:
            self._apply(msgpack.unpackb(body, raw=False))
        self.unread.clear()
        return self.state or None

    def _apply(self, update: dict[str, Any]) -> None:
        state = self.state
        view = update.get("view")
        if update.get("snapshot") and view is not None:
            state.update(phase=view["phase"], hand=list(view["hand"]), center=list(view["center"]))
            return
        if not state:
            return
        for ev in update.get("events", ()):
            kind = ev.get("kind")
            if kind == "swapped" and len(state["center"]) > ev["slot"]:
                state["center"][ev["slot"]] = ev["put_down"]
                if ev["seat"] == self.seat and ev["put_down"] in state["hand"]:
                    state["hand"][state["hand"].index(ev["put_down"])] = ev["taken"]
            elif kind == "dealt":
                state["center"] = list(ev["center"])
            elif kind == "hand_dealt" and ev["seat"] == self.seat:
                state["hand"] = list(ev["hand"])
            elif kind == "signing_started":
                state.update(phase="signing", hand=[], center=[])
            elif kind == "round_opened":
                state["phase"] = "round"
            elif kind == "break_started":
                state["phase"] = "break"
            elif kind == "match_over":
                state["phase"] = "over"


def _ok(reply: dict[str, Any], what: str) -> dict[str, Any]:
    if reply["kind"] != "ok":
        raise RuntimeError(f"{what}: {reply}")
    return reply


async def take_channel(s: LoadSeat, sign: str, timing: Timing, rng: random.Random) -> None:
    """Take the channel and choose an emoji at a random moment of the first pulse interval: channels taken all
    at once would pulse all at once, every table in step, which no real crowd of tables does."""
    await trio.sleep(rng.uniform(0, timing.pulse_interval))
    _ok(await s.request("take_channel"), "take_channel")
    _ok(await s.request("choose_emoji", sign=sign), "choose_emoji")


async def seat_quatro(
    tables: list[list[LoadSeat]], timing: Timing, port: int, readers: trio.Nursery, first: int = 0
) -> None:
    """Fill every table through the real lobby, start the matches, sign, open the rounds, take every channel.
    ``tables`` are filled here: a table's connections are opened when it is seated (a connection has 10 s to say
    hello, and thousands opened at once would wait longer)."""

    async def table_setup(seats: list[LoadSeat], n: int) -> None:
        for s in seats:
            await s.open(port, readers)
        for s in seats:
            _ok(await s.request("hello", version=PROTOCOL_VERSION, name=f"load{first + n}-{s.index}"), "hello")
            s.hello = True
        created = _ok(await seats[0].request("create_table", players=SEATS), "create_table")
        seats[0].seat = created["seat"]
        for s in seats[1:]:
            s.seat = _ok(await s.join(created["table"], f"load{first + n}-{s.index}", readers), "join")["seat"]
        _ok(await seats[0].request("start"), "start")
        for s in seats:
            await s.got_update.wait()
        for s in seats:
            if s.seat < SEATS // 2:  # the first partner of each team picks the sign (R6)
                _ok(await s.request("pick_sign", sign=SIGNS[s.seat]), "pick_sign")
            _ok(await s.request("ready"), "ready")
        with trio.fail_after(CONNECT_TIMEOUT):
            while any((s.view() or {}).get("phase") != "round" for s in seats):
                await trio.sleep(0.01)

    async def one_at_a_time(seats: list[LoadSeat], n: int) -> None:
        # A few tables are seated at once: a connection that said hello watches the lobby until it sits, and
        # thousands of watchers told of every seat taken would measure the lobby's churn, not the play.
        async with limit:
            await table_setup(seats, n)
        async with trio.open_nursery() as nursery:
            for s in seats:
                nursery.start_soon(take_channel, s, SIGNS[(s.seat + 4) % len(SIGNS)], timing, rng)

    async def keep_alive() -> None:
        # Seating hundreds of tables takes longer than the server's heartbeat timeout: the seats seated first ping,
        # as a real client does, or the server rightly closes them as silent before the play begins.
        while True:
            await trio.sleep(KEEP_ALIVE)
            for seats in tables:
                for s in seats:
                    if s.stream is not None and s.hello:
                        # The ping's id is taken now: a request made while this waits for the lock takes the next
                        # one, and an id read after the wait would be the request's, its reply the ping's.
                        s.ids += 1
                        ping = encode({"kind": "ping", "id": s.ids})
                        try:
                            async with s.sending:
                                await s.stream.send_all(ping)
                        except (trio.BrokenResourceError, trio.ClosedResourceError):
                            pass

    rng = random.Random(len(tables))
    limit = trio.Semaphore(SEATING_AT_ONCE)
    async with trio.open_nursery() as pinging:
        pinging.start_soon(keep_alive)
        async with trio.open_nursery() as nursery:
            for n, seats in enumerate(tables):
                nursery.start_soon(one_at_a_time, seats, n)
        pinging.cancel_scope.cancel()


async def seat_relay(tables: list[list[LoadSeat]], timing: Timing, first: int = 0) -> None:
    async def table_setup(seats: list[LoadSeat], n: int) -> None:
        for s in seats:
            s.seat = _ok(await s.request("join", table=first + n), "join")["seat"]
        async with trio.open_nursery() as nursery:
            for s in seats:
                nursery.start_soon(take_channel, s, SIGNS[s.seat + 4], timing, rng)

    rng = random.Random(len(tables))
    async with trio.open_nursery() as nursery:
        for n, seats in enumerate(tables):
            nursery.start_soon(table_setup, seats, n)


async def play(s: LoadSeat, timing: Timing, rng: random.Random, quatro: bool) -> None:
    """Swap at the cooldown's pace, from the seat's latest view (any cards will do for the relay).

    The schedule is fixed in advance (a random phase, then one swap per period) and does not wait for
    replies: seats whose pace hung on replies would fall into step after any stall and swap in bursts.
    """
    period = timing.swap_cooldown * 1.05  # a little over the cooldown: swaps are not refused for it
    next_at = trio.current_time() + rng.uniform(0, period)
    while True:
        await trio.sleep_until(next_at)
        now = trio.current_time()
        while next_at <= now:  # a slot missed while the last reply was awaited is skipped, not made up
            next_at += period
        give, slot, take = "AS", rng.randrange(4), "KH"
        if quatro:
            view = s.view()
            if view is None or view["phase"] != "round" or len(view["hand"]) != 4:
                continue
            give, take = rng.choice(view["hand"]), view["center"][slot]
        measuring = s.stats.measuring
        s.swap_sent_at = time.perf_counter()
        reply = await s.request("swap", give=give, slot=slot, take=take)
        s.swap_sent_at = None
        if measuring:
            s.stats.swaps += 1
            s.stats.swaps_ok += reply["kind"] == "ok"


# --- measuring a target ------------------------------------------------------------------------------


def _cpu_seconds(pid: int) -> float:
    """Seconds on the CPU, user and system, of the process's main thread (where trio runs), read to the nanosecond."""
    try:
        with open(f"/proc/{pid}/task/{pid}/schedstat") as f:
            return int(f.read().split()[0]) / 1e9
    except (OSError, ValueError, IndexError):  # no schedstat: fall back to clock ticks (every thread)
        with open(f"/proc/{pid}/stat") as f:
            parts = f.read().rsplit(")", 1)[1].split()
        return (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")


def _process_cpu_seconds(pid: int) -> float:
    """Seconds on the CPU of every thread of the process (the event loop's, the journal's writer, any other)."""
    total = 0.0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return _cpu_seconds(pid)
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0]) / 1e9
        except (OSError, ValueError, IndexError):
            continue
    return total


@dataclass
class Result:
    target: str
    tables: int
    window: float
    server_cpu: float
    client_cpu: float
    stats: Stats
    update_bytes: float
    loop: dict[str, float] = field(default_factory=dict)  # the server's loop_stats, when it reports them
    passes: str = ""  # the server's loop_passes of the window: the pass histogram and the longest passes' make-up
    process_cpu: float = 0.0  # every thread of the server process (the loop's, the journal writer's)
    generator: list[dict[str, Any]] = field(default_factory=list)  # each lean load worker's CPU share and lag

    @property
    def process_us_per_delivery(self) -> float:
        return self.process_cpu / max(1, self.stats.frames) * 1e6

    @property
    def bytes_per_seat_per_s(self) -> float:
        return self.stats.bytes / self.window / (self.tables * SEATS)

    @property
    def deliveries_per_s(self) -> float:
        return self.stats.frames / self.window

    @property
    def us_per_delivery(self) -> float:
        return self.server_cpu / max(1, self.stats.frames) * 1e6

    def latency_ms(self, q: float) -> float | None:
        samples = sorted(self.stats.latencies)
        if not samples:
            return None
        return samples[min(len(samples) - 1, int(round(q * (len(samples) - 1))))] * 1000


def placed(boost: int = 0, cores: set[int] | None = None) -> None:
    """Where this process runs: ``boost`` nice levels above normal (``--boost``), on ``cores`` alone (``--pin``).

    Where the kernel schedules by session (autogroups, Linux's default on desktops), a nice level weighs only
    within the session, and every other session gets an equal share however nice its processes are: so the
    session's own group is raised as well."""
    if boost:
        os.nice(-boost)
        try:
            Path("/proc/self/autogroup").write_text(str(-boost))
        except OSError:
            pass  # no autogroups (or no right to): the nice level alone
    if cores:
        os.sched_setaffinity(0, cores)


def pinned_cores(pin: bool) -> tuple[set[int] | None, set[int] | None]:
    """With ``--pin``, the target's core (the first this process may use) and the load's (the others); else none."""
    if not pin:
        return None, None
    usable = sorted(os.sched_getaffinity(0))
    if len(usable) < 2:
        raise SystemExit("--pin needs two cores: one for the target, the rest for the load")
    return {usable[0]}, set(usable[1:])


class Target:
    """A server process on 127.0.0.1: started, measured, always stopped."""

    def __init__(self, command: list[str], boost: int = 0, cores: set[int] | None = None) -> None:
        self.command = command
        self.boost = boost  # run this much above the normal priority (``--boost``)
        self.cores = cores  # run on these cores alone (``--pin``)
        self.process: subprocess.Popen[str] | None = None
        self.port = 0
        self.metrics_port = 0  # its metrics endpoint (``quatro+metrics``), printed before the game port
        self.log = tempfile.TemporaryFile(mode="w+")  # the server's log, read for its loop_stats once it stops

    def loop_stats(self) -> dict[str, float]:
        self.log.seek(0)
        found = re.findall(r"loop_stats (.*)$", self.log.read(), re.MULTILINE)
        if len(found) < 2:
            return {}
        pairs = dict(item.split("=", 1) for item in found[1].split())  # [0]: start-up and seating; [1]: the window
        return {k: float(v) for k, v in pairs.items() if re.fullmatch(r"[\d.]+", v)}

    def told(self, lines: int = 12) -> str:
        """The last warnings and errors the server logged (why a run failed: seats closed, stalls)."""
        self.log.seek(0)
        found = [
            line for line in self.log.read().splitlines() if re.search(r"WARNING|ERROR|closed|reason=|Traceback", line)
        ]
        return "\n".join(found[-lines:])

    def loop_passes(self) -> str:
        """The window's ``loop_passes`` line as the server logged it (its pass histogram and longest passes)."""
        self.log.seek(0)
        found = re.findall(r"loop_passes (.*)$", self.log.read(), re.MULTILINE)
        return found[1] if len(found) >= 2 else ""

    def __enter__(self) -> Target:
        boost, cores = self.boost, self.cores
        self.process = subprocess.Popen(
            self.command,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=self.log,
            stdin=subprocess.DEVNULL,
            text=True,
            preexec_fn=(lambda: placed(boost, cores)) if boost or cores else None,
        )
        if cores and os.sched_getaffinity(self.process.pid) != cores:
            self.__exit__()
            raise RuntimeError(f"the target was not placed on cores {sorted(cores)}")
        deadline = time.monotonic() + CONNECT_TIMEOUT
        assert self.process.stdout is not None
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                break
            if line.startswith("Metrics: http://"):
                self.metrics_port = int(line.strip().rsplit(":", 1)[1].split("/", 1)[0])
                continue
            if f"{HOST}:" in line:
                self.port = int(line.strip().rsplit(":", 1)[1])
                return self
        status = self.process.poll()
        self.__exit__()
        self.log.seek(0)
        said = "\n".join(self.log.read().strip().splitlines()[-15:]) or "(it logged nothing)"
        how = f"it exited with status {status}" if status is not None else f"nothing in {CONNECT_TIMEOUT:g} s"
        raise RuntimeError(f"{' '.join(self.command)} did not start listening ({how}); its log ends:\n{said}")

    def __exit__(self, *exc: object) -> None:
        process = self.process
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


async def measure(target: str, port: int, pid: int, tables: int, args: argparse.Namespace, timing: Timing) -> Result:
    stats = Stats()
    rng = random.Random(tables)
    quatro = target.startswith("quatro")
    async with trio.open_nursery() as nursery:
        seat_tables: list[list[LoadSeat]] = []
        for n in range(tables):
            seats = []
            for i in range(SEATS):
                if quatro:
                    seats.append(LoadSeat(None, stats, i))  # connected when its table is seated
                    continue
                s = LoadSeat(await trio.open_tcp_stream(HOST, port), stats, i)
                nursery.start_soon(s.read)
                seats.append(s)
            seat_tables.append(seats)
        with trio.fail_after(CONNECT_TIMEOUT + tables):
            if quatro:
                await seat_quatro(seat_tables, timing, port, nursery)
            else:
                await seat_relay(seat_tables, timing)
        for seats in seat_tables:
            for s in seats:
                nursery.start_soon(play, s, timing, random.Random(rng.getrandbits(64)), quatro)
        await trio.sleep(args.warmup)
        gc.collect()
        os.kill(pid, signal.SIGUSR1)  # the target's loop figures start afresh with the window...
        cpu0, all0, own0, t0 = _cpu_seconds(pid), _process_cpu_seconds(pid), time.process_time(), time.perf_counter()
        stats.measuring = True
        await trio.sleep(args.seconds)
        stats.measuring = False
        cpu1, all1, own1, t1 = _cpu_seconds(pid), _process_cpu_seconds(pid), time.process_time(), time.perf_counter()
        os.kill(pid, signal.SIGUSR1)  # ...and are logged as it closes
        sample = next((s.latest for seats in seat_tables for s in seats if s.latest), b"")
        nursery.cancel_scope.cancel()
    for seats in seat_tables:
        for s in seats:
            await s.stream.aclose()
    return Result(
        target, tables, t1 - t0, cpu1 - cpu0, own1 - own0, stats, len(sample) + PREFIX_BYTES, process_cpu=all1 - all0
    )


# --- the lean load generator: worker processes, raw sockets, no event-loop framework ------------------------------
#
# With hundreds of tables the load generator above (a trio task per seat) costs more CPU than the server it loads:
# at 500 tables it saturated its core first, so the latency it measured was its own. Here the seats are split over
# worker processes. Each seats its tables through the lobby with the code above (trio), then hands the sockets to a
# plain epoll loop: read what is readable, cut frames by their prefix, decode only what the seat needs (its own
# swap's update, a reply, the updates it applies before it swaps), and swap on a heap of per-seat schedules. Each
# worker measures its own CPU and how late its swaps leave against their schedule (``lag``): a generator that
# keeps up sends on time and uses well under its core.


@dataclass
class WorkerReport:
    """What one worker measured in the window."""

    stats: Stats
    cpu: float  # seconds on the CPU in the window (every thread of the worker)
    lags: list[float]  # seconds each swap left after its scheduled time
    sample: bytes
    skipped: tuple[int, int]  # slots skipped: the last swap's reply had not come; the seat had no view to swap from


async def _worker_setup(
    target: str, port: int, first: int, count: int, timing: Timing, stats: Stats
) -> list[list[LoadSeat]]:
    quatro = target.startswith("quatro")
    tables = [[LoadSeat(None, stats, i) for i in range(SEATS)] for _ in range(count)]
    async with trio.open_nursery() as readers:
        with trio.fail_after(CONNECT_TIMEOUT + count):
            if quatro:
                await seat_quatro(tables, timing, port, readers, first)
            else:
                for seats in tables:
                    for s in seats:
                        await s.open(port, readers)
                await seat_relay(tables, timing, first)
        readers.cancel_scope.cancel()  # the readers stop between two reads: every seat's buffer is whole frames or a tail
    return tables


def lean_worker(
    control: Any,
    target: str,
    port: int,
    first: int,
    count: int,
    pace: float,
    seed: int,
    boost: int = 0,
    cores: set[int] | None = None,
) -> None:
    """One load process: seat ``count`` tables (from table ``first``), then play them until told to stop."""
    import select

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    placed(boost, cores)
    timing = paced_timing(pace)
    stats = Stats()
    try:
        tables = trio.run(_worker_setup, target, port, first, count, timing, stats)
    except BaseException as exc:  # noqa: BLE001 - told to the parent, which stops the run
        control.send(("failed", repr(exc)))
        return
    quatro = target.startswith("quatro")
    seats = [s for t in tables for s in t]
    by_fd: dict[int, LoadSeat] = {}
    poll = select.epoll()
    for s in seats:
        fd = s.stream.socket.fileno()
        by_fd[fd] = s
        poll.register(fd, select.EPOLLIN)
    poll.register(control.fileno(), select.EPOLLIN)
    rng = random.Random(seed)
    period = timing.swap_cooldown * 1.05  # a little over the cooldown, as ``play``
    now = time.perf_counter()
    schedule = [(now + rng.uniform(0, period), i) for i in range(len(seats))]
    heapq.heapify(schedule)
    outstanding: dict[LoadSeat, tuple[int, bool]] = {}  # a seat's swap awaiting its reply: (id, measured)
    lags: list[float] = []
    skipped = [0, 0]  # slots skipped in the window: the last reply not come yet; no view to swap from
    cpu0 = 0.0
    sample = b""
    control.send(("ready", len(seats)))

    def receive(s: LoadSeat, fd: int) -> None:
        try:
            data = os.read(fd, 262144)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            poll.unregister(fd)
            return
        buffer = s.buffer
        buffer += data
        start, end = 0, len(buffer)
        measuring = stats.measuring
        while end - start >= PREFIX_BYTES:
            (length,) = _PREFIX.unpack_from(buffer, start)
            if end - start - PREFIX_BYTES < length:
                break
            body = bytes(buffer[start + PREFIX_BYTES : start + PREFIX_BYTES + length])
            start += PREFIX_BYTES + length
            if measuring:
                stats.frames += 1
                stats.bytes += PREFIX_BYTES + length
            if body.startswith(_UPDATE_MARK, 1):
                if measuring:
                    stats.updates += 1
                s.latest = body
                if quatro:
                    s.unread.append(body)
                if s.swap_sent_at is not None:
                    s._own_swap(body)
                continue
            reply = msgpack.unpackb(body, raw=False)
            sent = outstanding.get(s)
            if sent is not None and reply.get("id") == sent[0]:
                del outstanding[s]
                s.swap_sent_at = None
                if sent[1] and stats.measuring:
                    stats.swaps += 1
                    stats.swaps_ok += reply.get("kind") == "ok"
        del buffer[:start]

    def swap(s: LoadSeat) -> bool:
        give, slot, take = "AS", rng.randrange(4), "KH"
        if quatro:
            view = s.view()
            if view is None or view["phase"] != "round" or len(view["hand"]) != 4:
                return False
            give, take = rng.choice(view["hand"]), view["center"][slot]
        s.ids += 1
        outstanding[s] = (s.ids, stats.measuring)
        s.swap_sent_at = time.perf_counter()
        data = encode({"kind": "swap", "id": s.ids, "give": give, "slot": slot, "take": take})
        fd = s.stream.socket.fileno()
        sent = os.write(fd, data)
        if sent < len(data):  # a full socket buffer (never seen on loopback): finish the write, blocking
            s.stream.socket._sock.setblocking(True)  # noqa: SLF001
            s.stream.socket._sock.sendall(data[sent:])  # noqa: SLF001
            s.stream.socket._sock.setblocking(False)  # noqa: SLF001
        return True

    while True:
        timeout = max(0.0, schedule[0][0] - time.perf_counter())
        for fd, _ in poll.poll(timeout):
            if fd in by_fd:
                receive(by_fd[fd], fd)
                continue
            command = control.recv()
            if command == "start":
                cpu0 = time.process_time()
                stats.measuring = True
            elif command == "stop":
                stats.measuring = False
                sample = next((x.latest for x in seats if x.latest), b"")
                control.send(("report", WorkerReport(stats, time.process_time() - cpu0, lags, sample, tuple(skipped))))
            else:  # quit
                return
        now = time.perf_counter()
        while schedule[0][0] <= now:
            at, i = schedule[0]
            s = seats[i]
            nxt = at + period
            while nxt <= now:  # a slot missed is skipped, not made up
                nxt += period
            heapq.heapreplace(schedule, (nxt, i))
            if s in outstanding:
                skipped[0] += stats.measuring
                continue  # the last swap's reply has not come: this slot is skipped, as ``play`` does
            if stats.measuring:
                lags.append(now - at)
            if not swap(s):
                skipped[1] += stats.measuring


def _scrape_for(port: int, seconds: float, every: float) -> int:
    """Scrape the server's metrics endpoint every ``every`` seconds for ``seconds`` (as Prometheus would, more
    often); the scrapes made."""
    import urllib.request

    end, scrapes = time.perf_counter() + seconds, 0
    while end - time.perf_counter() > 0:
        with urllib.request.urlopen(f"http://{HOST}:{port}/metrics", timeout=5) as answer:
            answer.read()
        scrapes += 1
        time.sleep(max(0.0, min(every, end - time.perf_counter())))
    return scrapes


def drive_lean_load(
    target: str,
    port: int,
    tables: int,
    args: argparse.Namespace,
    probe: Any,
    window_edge: Any = None,
    hold: Any = None,
) -> tuple[list[WorkerReport], float, list[Any]]:
    """Seat ``tables`` tables on the server at ``port`` with ``args.procs`` load processes (the lean generator), play
    them ``args.warmup`` seconds, then measure ``args.seconds``: what each load process reported, the window's length,
    and ``probe()`` read at both ends of it (the server's CPU time, as the caller counts it). ``window_edge()`` runs
    just before each reading; ``hold(seconds)`` passes the window (default: a sleep)."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    procs = max(1, min(args.procs, tables))
    shares = [tables // procs + (k < tables % procs) for k in range(procs)]
    workers = []
    first = 0
    for k, count in enumerate(shares):
        parent, child = context.Pipe()
        worker = context.Process(
            target=lean_worker,
            args=(
                child,
                target,
                port,
                first,
                count,
                args.pace,
                tables * 1000 + k,
                args.boost,
                pinned_cores(args.pin)[1],
            ),
            daemon=True,
        )
        worker.start()
        workers.append((worker, parent))
        first += count
    try:
        for worker, pipe in workers:
            if not pipe.poll(CONNECT_TIMEOUT + tables):
                raise RuntimeError("a load worker did not finish seating its tables")
            status = pipe.recv()
            if status[0] != "ready":
                raise RuntimeError(f"a load worker failed: {status[1]}")
        time.sleep(args.warmup)
        if window_edge is not None:
            window_edge()
        before, t0 = probe(), time.perf_counter()
        for _, pipe in workers:
            pipe.send("start")
        (hold or time.sleep)(args.seconds)
        for _, pipe in workers:
            pipe.send("stop")
        after, t1 = probe(), time.perf_counter()
        if window_edge is not None:
            window_edge()
        reports: list[WorkerReport] = []
        for _, pipe in workers:
            if not pipe.poll(30):
                raise RuntimeError("a load worker did not report")
            reports.append(pipe.recv()[1])
    finally:
        for worker, pipe in workers:
            try:
                pipe.send("quit")
            except OSError:
                pass
        for worker, _ in workers:
            worker.join(5)
            if worker.is_alive():
                worker.kill()
    return reports, t1 - t0, [before, after]


def lean_result(
    target: str, tables: int, reports: list[WorkerReport], window: float, server_cpu: float, process_cpu: float
) -> Result:
    """The figures of a run of the lean generator: its reports merged, each load process's CPU share and lag."""
    stats = Stats()
    for r in reports:
        for name in ("frames", "updates", "bytes", "swaps", "swaps_ok"):
            setattr(stats, name, getattr(stats, name) + getattr(r.stats, name))
        stats.latencies += r.stats.latencies
    sample = next((r.sample for r in reports if r.sample), b"")
    result = Result(
        target,
        tables,
        window,
        server_cpu,
        sum(r.cpu for r in reports),
        stats,
        len(sample) + PREFIX_BYTES,
        process_cpu=process_cpu,
    )
    result.generator = [
        {
            "cpu_share": round(r.cpu / window, 3),
            "swaps_sent": len(r.lags),
            "lag_p99_ms": _quantile_ms(r.lags, 0.99),
            "skipped_awaiting_reply": r.skipped[0],
            "skipped_no_view": r.skipped[1],
        }
        for r in reports
    ]
    return result


def run_target_lean(target: str, tables: int, args: argparse.Namespace, timing: Timing, timing_file: Path) -> Result:
    """``run_target`` with the load in ``args.procs`` worker processes (the lean generator)."""
    command = _target_command(target, tables, args, timing_file)
    server = Target(command, args.boost, pinned_cores(args.pin)[0])
    with server:
        assert server.process is not None
        pid = server.process.pid

        def usr1() -> None:  # the target's loop figures: afresh as the window opens, logged as it closes
            os.kill(pid, signal.SIGUSR1)

        def hold(seconds: float) -> None:
            if server.metrics_port:
                _scrape_for(server.metrics_port, seconds, args.scrape_every)
            else:
                time.sleep(seconds)

        try:
            reports, window, (before, after) = drive_lean_load(
                target, server.port, tables, args, lambda: (_cpu_seconds(pid), _process_cpu_seconds(pid)), usr1, hold
            )
        except RuntimeError:
            print(f"{target} at {tables} tables failed; its log's last warnings:\n{server.told()}", file=sys.stderr)
            raise
    result = lean_result(target, tables, reports, window, after[0] - before[0], after[1] - before[1])
    result.loop = server.loop_stats()
    result.passes = server.loop_passes()
    return result


def _quantile_ms(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] * 1000, 2)


#: Starts the operator's command: ``--gc-thresholds`` replaces the server's collector thresholds, ``--timer-slack`` its
#: timer's slack, ``--switch-interval`` its hold of the interpreter's lock, to measure them against others. (The caps
#: on tables and connections are the command's own flags.)
_SERVE = (
    "import functools, sys; from quatro_server import cli, server; from quatro_server.net import quiet;"
    " cli.ServerConfig = functools.partial(server.ServerConfig,"
    " timer_slack=float(sys.argv[2]) if sys.argv[2] else server.TIMER_SLACK);"
    " quiet.GC_THRESHOLDS = tuple(map(int, sys.argv[1].split(','))) if sys.argv[1] else quiet.GC_THRESHOLDS;"
    " quiet.SWITCH_INTERVAL = float(sys.argv[3]) if sys.argv[3] else quiet.SWITCH_INTERVAL;"
    " from quatro_server.cli import main; sys.exit(main(sys.argv[4:]))"
)


def _target_command(target: str, tables: int, args: argparse.Namespace, timing_file: Path) -> list[str]:
    if target.startswith("quatro"):
        serve = ["--host", HOST, "--port", "0", "--timing", str(timing_file), "--log-level", args.log_level]
        serve += ["--trusted-address", HOST]  # every load client comes from here
        # The operator's server journals every table, in a fresh data directory for every run (never the user's): a
        # run after another of the same size would otherwise restore the last one's tables and serve them too.
        if args.directory:
            serve += ["--directory", args.directory]  # the table directory on (benchmarks/directory.py compares)
        if args.no_journal:
            serve += ["--no-journal"]
        else:
            serve += ["--data-dir", tempfile.mkdtemp(prefix=f"data-{tables}-", dir=timing_file.parent)]
        if target == "quatro+metrics":
            serve += ["--metrics", "0"]  # the endpoint on, the loop's lag measured, and scraped in the window
        # The caps raised when the run needs more (1,000 tables are 8,000 connections; the defaults hold 500 tables
        # and 2,000 connections), never lowered: a small run meets the server as an operator starts it.
        serve += [
            "--max-tables",
            str(max(MAX_TABLES, tables)),
            "--max-connections",
            str(max(MAX_CONNECTIONS, tables * SEATS + 100)),
        ]
        command = [sys.executable, "-c", _SERVE, args.gc_thresholds, args.timer_slack, args.switch_interval, *serve]
    else:
        writer = _writer(target)  # relay, relay-coalesce, relay-flusher, relay-plain
        command = [
            sys.executable,
            str(Path(__file__).resolve()),
            "--serve-relay",
            writer,
            "--pace",
            str(args.pace),
            "--timer-slack",
            args.timer_slack,
        ]
    return command


def run_target(target: str, tables: int, args: argparse.Namespace, timing: Timing, timing_file: Path) -> Result:
    if args.procs:
        return run_target_lean(target, tables, args, timing, timing_file)
    command = _target_command(target, tables, args, timing_file)
    server = Target(command)
    with server:
        assert server.process is not None
        result = trio.run(measure, target, server.port, server.process.pid, tables, args, timing)
    result.loop = server.loop_stats()
    return result


# --- the bare relay (the baseline's server process) -----------------------------------------------------


def sample_update_body() -> dict[str, Any]:
    """A mid-round update of an 8-player table as the server sends it for a swap or a pulse (protocol 3: the
    events alone, no clock, as nothing but time moved the countdowns). The relay adds the batch's event."""
    return {"kind": "update", "table": 1, "seq": 40, "snapshot": False, "at": 185_000_123, "events": []}


async def _read_ready(fd: int) -> bytes:
    """A read once the socket is readable (``quatro_server.server`` reads the same way)."""
    while True:
        await trio.lowlevel.wait_readable(fd)
        try:
            return os.read(fd, 65536)
        except BlockingIOError:
            continue


class RelayConn:
    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.send, self.receive = trio.open_memory_channel[bytes](512)
        self.chunks: list[bytes] = []  # the flusher writer's buffer
        self.blocked = False  # the flusher's socket buffer was full: a task is sending the rest
        self.table: list[RelayConn] | None = None
        self.seat = 0
        self.fd = stream.socket.fileno()

    def queue(self, frame: bytes) -> None:
        try:
            self.send.send_nowait(frame)
        except (trio.WouldBlock, trio.BrokenResourceError, trio.ClosedResourceError):
            pass


def relay_answer(relay: Any, conn: Any, frame: dict[str, Any], hold: Callable[[Any, str], None]) -> None:
    """One request at a relay, whichever writer: ``join`` seats the connection, ``swap`` fans one update out to its
    table, ``choose_emoji`` holds its channel (``hold``: the relay's own pulses); each is answered ``ok``."""
    kind, request_id = frame["kind"], frame.get("id")
    if kind == "join":
        conn.table = relay.tables.setdefault(frame["table"], [])
        conn.seat = len(conn.table)
        conn.table.append(conn)
        relay.reply(conn, {"kind": "ok", "id": request_id, "table": frame["table"], "seat": conn.seat})
        return
    if kind == "swap" and conn.table is not None:
        event = {"kind": "swapped", "seat": conn.seat, "slot": frame["slot"], "give": frame["give"]}
        relay.fan_out(conn.table, {**event, "take": frame["take"]})
    elif kind == "choose_emoji":
        hold(conn, frame["sign"])
    relay.reply(conn, {"kind": "ok", "id": request_id})


class Relay(trio.abc.Instrument):
    """Answers every request ``ok``; a swap fans one update out to the table, a held channel pulses it."""

    def __init__(self, writer: str, pace: float) -> None:
        self.writer = writer
        self.pulse_interval = STANDARD.pulse_interval / pace
        self.template = sample_update_body()
        self.tables: dict[int, list[RelayConn]] = {}
        self.dirty: set[RelayConn] = set()

    def fan_out(self, table: list[RelayConn], event: dict[str, Any]) -> None:
        frame = encode({**self.template, "events": [event]})  # one encode per batch, as a server shares public events
        for conn in table:
            self.send(conn, frame)

    def reply(self, conn: RelayConn, message: dict[str, Any]) -> None:
        self.send(conn, encode(message))

    def send(self, conn: RelayConn, frame: bytes) -> None:
        if self.writer == "flusher":
            conn.chunks.append(frame)
            self.dirty.add(conn)
        else:
            conn.queue(frame)

    async def pulse(self, conn: RelayConn, sign: str) -> None:
        while conn.table is not None:
            await trio.sleep(self.pulse_interval)
            self.fan_out(conn.table, {"kind": "pulse", "seat": conn.seat, "sign": sign})

    async def handle(self, stream: trio.SocketStream) -> None:
        conn = RelayConn(stream)
        try:
            async with trio.open_nursery() as nursery:
                if self.writer != "flusher":
                    nursery.start_soon(self.write_naive if self.writer == "naive" else self.write_coalesced, conn)
                decoder = FrameDecoder()
                while True:
                    try:
                        # The flusher relay reads as the server does: when epoll says the socket is readable.
                        data = await (_read_ready(conn.fd) if self.writer == "flusher" else stream.receive_some(65536))
                    except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                        break
                    if not data:
                        break
                    for frame in decoder.feed(data):
                        relay_answer(self, conn, frame, lambda c, sign: nursery.start_soon(self.pulse, c, sign))
                nursery.cancel_scope.cancel()
        finally:
            if conn.table is not None:
                conn.table.remove(conn)
            conn.table = None
            self.dirty.discard(conn)
            with trio.CancelScope(shield=True):
                await stream.aclose()

    async def write_naive(self, conn: RelayConn) -> None:
        """The simplest writer: one ``send_all`` per frame."""
        async for frame in conn.receive:
            try:
                await conn.stream.send_all(frame)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return

    async def write_coalesced(self, conn: RelayConn) -> None:
        """Everything queued at a wake-up in one ``send_all`` (what quatro_server.server does)."""
        async for first in conn.receive:
            chunks = [first]
            while True:
                try:
                    chunks.append(conn.receive.receive_nowait())
                except (trio.WouldBlock, trio.EndOfChannel):
                    break
            try:
                await conn.stream.send_all(b"".join(chunks))
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return

    def before_io_wait(self, timeout: float) -> None:
        """The flusher (installed as a trio instrument, as the server's ``Flusher``): at the end of every scheduler
        pass, each dirty connection's joined buffer in one ``send()``."""
        if not self.dirty:
            return
        dirty, self.dirty = self.dirty, set()
        woke = False
        for conn in dirty:
            if conn.blocked:
                continue
            data = b"".join(conn.chunks)
            conn.chunks.clear()
            try:
                sent = os.write(conn.fd, data)  # a non-blocking send, no checkpoint
            except BlockingIOError:
                sent = 0
            except OSError:
                continue
            if sent < len(data):  # the socket buffer is full: a task waits until it can take the rest
                conn.chunks.insert(0, data[sent:])
                conn.blocked = True
                trio.lowlevel.spawn_system_task(self._unblock, conn)
                woke = True
        if woke:
            trio.lowlevel.current_trio_token().run_sync_soon(lambda: None)  # the loop's sleep was chosen before this

    async def _unblock(self, conn: RelayConn) -> None:
        try:
            await conn.stream.socket.wait_writable()
        except (OSError, trio.ClosedResourceError):
            return
        conn.blocked = False
        self.dirty.add(conn)


class PlainConn:
    """A plain relay's connection: its socket, the bytes queued for it, its table."""

    __slots__ = ("sock", "out", "queued", "blocked", "table", "seat")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.out = bytearray()  # everything queued since the last flush, sent in one ``send()``
        self.queued = False  # on the flusher's list for this pass
        self.blocked = False  # the kernel's buffer was full: a task waits until it takes the rest
        self.table: list[PlainConn] | None = None
        self.seat = 0


class PlainRelay(trio.abc.Instrument):
    """The hardest floor (``--relays plain``): the same frames as ``Relay``, with as little around them as trio allows.

    Raw sockets (accepted and read with ``sock.recv`` when epoll says readable, no ``SocketStream``), one bytearray
    per connection appended to and sent by one flusher once per scheduler pass (trio's ``before_io_wait`` hook, one
    ``send()`` per connection, ``wait_writable`` only when the kernel's buffer is full), and one pulse timer for every
    held channel that sleeps to the earliest deadline plus the server's slack and fires every pulse then due. Nothing
    else: no per-connection task but its reader, no channel, no limit, no heartbeat."""

    def __init__(self, pace: float, slack: float) -> None:
        self.pulse_interval = STANDARD.pulse_interval / pace
        self.slack = slack
        self.template = sample_update_body()
        self.tables: dict[int, list[PlainConn]] = {}
        self.dirty: list[PlainConn] = []
        self.pulses: list[tuple[float, int, PlainConn, dict[str, Any]]] = []  # (deadline, order, holder, event)
        self.order = 0
        self.pulse_added = trio.Event()  # set when the timer had nothing to wait for and now has
        self.nursery: trio.Nursery | None = None

    def send(self, conn: PlainConn, frame: bytes) -> None:
        conn.out += frame
        if not conn.queued:
            conn.queued = True
            self.dirty.append(conn)

    def reply(self, conn: PlainConn, message: dict[str, Any]) -> None:
        self.send(conn, encode(message))

    def fan_out(self, table: list[PlainConn], event: dict[str, Any]) -> None:
        frame = encode({**self.template, "events": [event]})  # one encode per batch, as ``Relay``
        for conn in table:
            self.send(conn, frame)

    def before_io_wait(self, timeout: float) -> None:
        """The flusher: at the end of every scheduler pass, each connection's queued bytes in one ``send()``."""
        if not self.dirty:
            return
        dirty, self.dirty = self.dirty, []
        woke = False
        for conn in dirty:
            conn.queued = False
            if conn.blocked:
                continue  # its waiting task queues it again when the kernel takes more
            out = conn.out
            try:
                sent = conn.sock.send(out)
            except BlockingIOError:
                sent = 0
            except OSError:
                out.clear()  # the peer is gone: its reader ends the connection
                continue
            if sent == len(out):
                out.clear()
            else:
                del out[:sent]
                conn.blocked = True
                trio.lowlevel.spawn_system_task(self._unblock, conn)
                woke = True
        if woke:
            trio.lowlevel.current_trio_token().run_sync_soon(lambda: None)  # the loop's sleep was chosen before this

    async def _unblock(self, conn: PlainConn) -> None:
        try:
            await trio.lowlevel.wait_writable(conn.sock)
        except (OSError, trio.ClosedResourceError):
            return
        conn.blocked = False
        if conn.out and not conn.queued:
            conn.queued = True
            self.dirty.append(conn)

    async def run_pulses(self) -> None:
        """Every held channel's pulse, one task: sleep to the earliest deadline plus the slack, fire all that are due.
        A channel is taken with its first pulse an interval away, never before a deadline already waited for, so the
        timer is woken only when it had none."""
        heap = self.pulses
        interval = self.pulse_interval
        while True:
            if not heap:
                await self.pulse_added.wait()
                self.pulse_added = trio.Event()
                continue
            await trio.sleep_until(heap[0][0] + self.slack)
            now = trio.current_time()
            while heap and heap[0][0] <= now:
                at, order, conn, event = heap[0]
                if conn.table is None:
                    heapq.heappop(heap)  # the holder left
                    continue
                self.fan_out(conn.table, event)
                at += interval
                heapq.heapreplace(heap, (at if at > now else now + interval, order, conn, event))

    def hold_channel(self, conn: PlainConn, sign: str) -> None:
        self.order += 1
        heapq.heappush(
            self.pulses,
            (
                trio.current_time() + self.pulse_interval,
                self.order,
                conn,
                {"kind": "pulse", "seat": conn.seat, "sign": sign},
            ),
        )
        self.pulse_added.set()

    async def accept(self, listener: socket.socket) -> None:
        assert self.nursery is not None
        while True:
            await trio.lowlevel.wait_readable(listener)
            while True:
                try:
                    sock, _ = listener.accept()
                except BlockingIOError:
                    break
                sock.setblocking(False)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # as trio's SocketStream (and the server)
                self.nursery.start_soon(self.handle, PlainConn(sock))

    async def handle(self, conn: PlainConn) -> None:
        sock = conn.sock
        decoder = FrameDecoder()
        try:
            while True:
                await trio.lowlevel.wait_readable(sock)
                try:
                    data = sock.recv(65536)
                except BlockingIOError:
                    continue
                except OSError:
                    break
                if not data:
                    break
                for frame in decoder.feed(data):
                    relay_answer(self, conn, frame, self.hold_channel)
        finally:
            if conn.table is not None:
                conn.table.remove(conn)
            conn.table = None
            conn.out.clear()
            trio.lowlevel.notify_closing(sock)
            sock.close()

    async def serve(self) -> None:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((HOST, 0))
        listener.listen(4096)
        listener.setblocking(False)
        async with trio.open_nursery() as nursery:
            self.nursery = nursery
            trio.lowlevel.add_instrument(self)
            nursery.start_soon(self.run_pulses)
            nursery.start_soon(self.accept, listener)
            print(f"relay (plain) listening on {HOST}:{listener.getsockname()[1]}", flush=True)


def serve_relay(writer: str, pace: float, slack: float) -> None:
    """A relay until SIGTERM. Its loop is watched as the server's is (``quatro_server.net.quiet.LoopWatch``: two clock
    reads per scheduler pass): SIGUSR1 logs its longest pass since the last one, then starts afresh."""
    logging.basicConfig(level=logging.INFO, format="%(message)s")  # stderr, read for loop_stats
    watch = LoopWatch()

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            watch.install()
            nursery.start_soon(report_on_usr1)
            if writer == "plain":
                nursery.start_soon(PlainRelay(pace, slack).serve)
                return
            relay = Relay(writer, pace)
            if writer == "flusher":
                trio.lowlevel.add_instrument(relay)
            listeners = await trio.open_tcp_listeners(0, host=HOST)
            print(f"relay ({writer}) listening on {HOST}:{listeners[0].socket.getsockname()[1]}", flush=True)
            nursery.start_soon(trio.serve_listeners, relay.handle, listeners)

    async def report_on_usr1() -> None:
        # SIGTERM through the same receiver, so that a SIGUSR1 sent before it is reported before the relay stops.
        with trio.open_signal_receiver(signal.SIGUSR1, signal.SIGTERM) as signals:
            async for signum in signals:
                if signum == signal.SIGTERM:
                    os._exit(0)  # nothing to flush: the benchmark already hung up
                watch.report()
                watch.reset()

    trio.run(main)


# --- the report ------------------------------------------------------------------------------------------


#: The architecture's working figure for a busy 8-seat table at the standard pace (docs: "Outbound path").
REFERENCE_DELIVERIES = 80.0
#: Server CPU share above which a run counts as saturated.
SATURATED = 0.9
HEADER = (
    f"  {'target':<14} {'tables':>6} {'conns':>5} {'msg/s':>7} {'server CPU':>10} {'µs/msg':>7} "
    f"{'+threads':>8} {'p50 ms':>7} {'p99 ms':>7} {'n':>5}   {'client CPU':>10} {'swaps ok':>11} {'B/update':>8}"
)


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def print_result(r: Result, out: Any = sys.stdout) -> None:
    s = r.stats
    print(
        f"  {r.target:<14} {r.tables:>6} {r.tables * SEATS:>5} {r.deliveries_per_s:>7.0f} {r.server_cpu / r.window:>10.1%} "
        f"{r.us_per_delivery:>7.1f} {r.process_us_per_delivery:>8.1f} {_ms(r.latency_ms(0.5)):>7} {_ms(r.latency_ms(0.99)):>7} {len(s.latencies):>5}   "
        f"{r.client_cpu / r.window:>10.1%} {f'{s.swaps_ok}/{s.swaps}':>11} {r.update_bytes:>8.0f}",
        file=out,
        flush=True,
    )


def demand_per_table(results: dict[tuple[str, int], Result], sizes: list[int], pace: float) -> float:
    """What a table asks of the server: the most deliveries per table any run served, brought to the standard pace.
    A busier server serves a table less (its players' views are staler, so more swaps lose their race), so a
    loaded run's own rate would flatter it. At the standard pace every duration is ``pace`` times longer."""
    return max(results["quatro", tables].deliveries_per_s / tables for tables in sizes) / pace


def summary_json(
    results: dict[tuple[str, int], Result],
    sizes: list[int],
    relays: list[str],
    pace: float,
    rounds: dict[tuple[str, int], list[float]],
) -> dict[str, Any]:
    demand = demand_per_table(results, sizes, pace)
    rows = []
    for tables in sizes:
        q = results["quatro", tables]
        row: dict[str, Any] = {
            "tables": tables,
            "connections": tables * SEATS,
            "deliveries_per_s": round(q.deliveries_per_s, 1),
            "server_cpu_share": round(q.server_cpu / q.window, 3),
            "us_per_msg": round(q.us_per_delivery, 2),
            "process_us_per_msg": round(q.process_us_per_delivery, 2),
        }
        for relay in relays:
            r, key = results[relay, tables], relay.replace("-", "_")
            row[f"{key}_us_per_msg"] = round(r.us_per_delivery, 2)
            row[f"{key}_p99_ms"] = None if r.latency_ms(0.99) is None else round(r.latency_ms(0.99), 2)
            row[f"{key}_longest_batch_ms"] = r.loop.get("longest_batch_ms")
            row[f"{key}_longest_gc_ms"] = r.loop.get("longest_gc_ms")  # a long pass may be one collection
        for relay in relays:  # the server over each relay: the median of the rounds' ratios, and each round's
            name = _writer(relay)
            row[f"ratio_to_{name}"] = round(statistics.median(rounds[relay, tables]), 2)
            row[f"ratio_to_{name}_rounds"] = [round(r, 2) for r in rounds[relay, tables]]
        p50, p99 = q.latency_ms(0.5), q.latency_ms(0.99)
        row.update(
            tables_per_core=round(1e6 / (q.us_per_delivery * demand)),
            p50_ms=None if p50 is None else round(p50, 2),
            p99_ms=None if p99 is None else round(p99, 2),
            latency_samples=len(q.stats.latencies),
            bytes_per_seat_per_s=round(q.bytes_per_seat_per_s),
            bytes_per_seat_per_s_standard_pace=round(q.bytes_per_seat_per_s / pace),
            bytes_per_update=round(q.update_bytes),
            swaps_ok=q.stats.swaps_ok,
            swaps=q.stats.swaps,
            generator=q.generator or None,
            longest_batch_ms=q.loop.get("longest_batch_ms"),
            longest_gc_ms=q.loop.get("longest_gc_ms"),
            collections=q.loop.get("collections"),
            passes=q.passes or None,
        )
        rows.append(row)
    return {
        "python": sys.version.split()[0],
        "trio": trio.__version__,
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        "pace": pace,
        "deliveries_per_table_per_s_standard_pace": round(demand, 1),
        "sizes": rows,
    }


def _writer(relay: str) -> str:
    """A relay target's writer: relay -> naive, relay-plain -> plain."""
    return relay.split("-", 1)[1] if "-" in relay else "naive"


def _median_run(runs: list[Result]) -> Result:
    """The run of median cost per message (the lower middle one of an even count)."""
    return sorted(runs, key=lambda r: r.us_per_delivery)[(len(runs) - 1) // 2]


def print_summary(
    results: dict[tuple[str, int], Result],
    sizes: list[int],
    relays: list[str],
    pace: float,
    out: Any = sys.stdout,
    rounds: dict[tuple[str, int], list[float]] | None = None,
) -> None:
    demand = demand_per_table(results, sizes, pace)
    print(
        f"summary: server CPU per delivered message, Quatro / bare relay (same load, same run); tables per core at the"
        f" standard pace for {demand:.0f} deliveries/s per table (every seat swapping at its cooldown, every channel"
        f" pulsing), and for the architecture's {REFERENCE_DELIVERIES:.0f}/s",
        file=out,
    )
    for tables in sizes:
        quatro = results["quatro", tables]
        ratios = "  ".join(
            f"/ {relay} {results[relay, tables].us_per_delivery:.1f} µs = {_ratio(results, rounds, relay, tables)}"
            for relay in relays
        )
        busy = quatro.server_cpu / quatro.window
        note = "  (server saturated: its cost per message is a floor)" if busy > SATURATED else ""
        print(
            f"  {tables:>4} tables: quatro {quatro.us_per_delivery:.1f} µs {ratios};"
            f" about {1e6 / (quatro.us_per_delivery * demand):.0f} tables per core"
            f" ({1e6 / (quatro.us_per_delivery * REFERENCE_DELIVERIES):.0f} at {REFERENCE_DELIVERIES:.0f}/s){note}",
            file=out,
            flush=True,
        )
        targets = ["quatro", *relays]
        p99 = ", ".join(f"{t} {_ms(results[t, tables].latency_ms(0.99))}" for t in targets)
        passes = ", ".join(f"{t} {_ms(results[t, tables].loop.get('longest_batch_ms'))}" for t in targets)
        print(f"{'':>13} p99 swap -> own update (ms): {p99}; longest pass (ms): {passes}", file=out, flush=True)


def _ratio(
    results: dict[tuple[str, int], Result], rounds: dict[tuple[str, int], list[float]] | None, relay: str, tables: int
) -> str:
    """The server over ``relay``: the median of the rounds' ratios, each round's listed when there are several."""
    each = (rounds or {}).get((relay, tables)) or [
        results["quatro", tables].us_per_delivery / results[relay, tables].us_per_delivery
    ]
    text = f"{statistics.median(each):.2f}x"
    return text if len(each) == 1 else f"{text} (rounds: {', '.join(f'{r:.2f}' for r in each)})"


WRITERS = ("naive", "coalesce", "flusher", "plain")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", default="1,10,50", help="table counts to measure, comma-separated (8 seats each)")
    parser.add_argument("--seconds", type=float, default=6.0, help="measured window of each run")
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds of full load before the window opens")
    parser.add_argument("--pace", type=float, default=3.0, help="play this many times faster than the standard timing")
    parser.add_argument(
        "--relays",
        default="plain,flusher",
        help="relay writers to measure, comma-separated, or none: naive (one send_all per frame), "
        "coalesce (one send_all per wake-up), flusher (one task sends for every connection, like the server), "
        "plain (the hardest floor: raw socket reads, one buffer per connection flushed once per pass, one pulse "
        "timer with the server's slack)",
    )
    parser.add_argument(
        "--json", action="store_true", help="print the figures as one JSON document (the table to stderr)"
    )
    parser.add_argument(
        "--gc-thresholds", default="", help="the server's collector thresholds, e.g. 700,10,10 (Python's)"
    )
    parser.add_argument(
        "--switch-interval",
        default="",
        help="the server's hold of the interpreter's lock while another thread waits, in seconds (its "
        "default: quatro_server.net.quiet.SWITCH_INTERVAL), e.g. 0.005 (Python's)",
    )
    parser.add_argument(
        "--timer-slack",
        default="",
        help="the server's timer slack in seconds (its default: quatro_server.server.TIMER_SLACK), e.g. 0: every table "
        "woken at its own deadline",
    )
    parser.add_argument("--log-level", default="info", help="the Quatro server's log level (its default: info)")
    parser.add_argument("--no-journal", action="store_true", help="serve without the table journal (to see its cost)")
    parser.add_argument(
        "--directory",
        metavar="URL",
        default="",
        help="serve with this table directory (redis://HOST:PORT/DB), to see its cost",
    )
    parser.add_argument(
        "--procs",
        type=int,
        default=1,
        help="load worker processes (the lean generator: raw sockets, one epoll loop each); 0: the load in this "
        "process, a trio task per seat",
    )
    parser.add_argument(
        "--boost",
        type=int,
        default=0,
        help="run the target and the load workers this many nice levels above normal (needs the right to): on a "
        "machine busy with other work, the tail then shows the server rather than the other work preempting it",
    )
    parser.add_argument(
        "--pin",
        action="store_true",
        help="run the target on one core alone and the load on the others (the lean generator only): the server's "
        "figures are one core's, and the load never takes that core from it",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="measure each table count this many times, the targets alternating; the ratios are the median of the "
        "rounds' (each round's relay and server measured a minute apart at most)",
    )
    parser.add_argument(
        "--metrics",
        action="store_true",
        help="measure the server a second time with its metrics endpoint on (quatro-server --metrics), scraped "
        "every --scrape-every seconds in the window; prints the ratio, metrics on over off, round by round",
    )
    parser.add_argument(
        "--scrape-every",
        type=float,
        default=1.0,
        help="seconds between scrapes with --metrics (default 1: fifteen times Prometheus's usual)",
    )
    parser.add_argument("--serve-relay", metavar="WRITER", choices=WRITERS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_relay:
        serve_relay(args.serve_relay, args.pace, float(args.timer_slack) if args.timer_slack else TIMER_SLACK)
        return 0
    if args.pin and not args.procs:
        parser.error("--pin places the load processes: it needs --procs 1 or more")
    pinned_cores(args.pin)  # refused here, before any run, on a machine with one core
    sizes = [int(n) for n in args.tables.split(",")]
    writers = [] if args.relays == "none" else args.relays.split(",")
    if not set(writers) <= set(WRITERS):
        parser.error(f"--relays: choose among {', '.join(WRITERS)}")
    relays = ["relay" if w == "naive" else f"relay-{w}" for w in writers]
    timing = paced_timing(args.pace)
    out = sys.stderr if args.json else sys.stdout
    print(
        f"python {sys.version.split()[0]}, trio {trio.__version__}, {os.cpu_count()} CPUs, {sys.platform}; "
        f"pace x{args.pace:g} (swap cooldown {timing.swap_cooldown * 1000:.0f} ms, pulse every "
        f"{timing.pulse_interval * 1000:.0f} ms); window {args.seconds:g} s after {args.warmup:g} s of warm-up",
        file=out,
        flush=True,
    )
    print(HEADER, file=out, flush=True)
    results: dict[tuple[str, int], Result] = {}
    rounds: dict[tuple[str, int], list[float]] = {}  # (relay, tables): the server over that relay, round by round
    metered: dict[int, list[tuple[float, float]]] = {}  # tables: (µs per message with metrics, without), by round
    with tempfile.TemporaryDirectory() as tmp:
        timing_file = Path(tmp) / "bench.toml"
        timing_file.write_text("".join(f"{name} = {value!r}\n" for name, value in timing.values().items()))
        for tables in sizes:
            # Rounds alternate the targets (relay, server, relay, server, ...): a machine whose speed drifts over a
            # minute (a shared host) moves both figures of a round alike, so a round's ratio holds where the two
            # targets' absolute figures do not. Each target's figures are its median round's.
            runs: dict[str, list[Result]] = {
                target: [] for target in [*relays, "quatro", *(["quatro+metrics"] if args.metrics else [])]
            }
            for _ in range(args.rounds):
                for target in runs:
                    result = run_target(target, tables, args, timing, timing_file)
                    runs[target].append(result)
                    print_result(result, out)
            for target, done in runs.items():
                results[target, tables] = _median_run(done)
            for relay in relays:
                rounds[relay, tables] = [
                    q.us_per_delivery / r.us_per_delivery for q, r in zip(runs["quatro"], runs[relay])
                ]
            if args.metrics:
                metered[tables] = [
                    (m.us_per_delivery, q.us_per_delivery) for m, q in zip(runs["quatro+metrics"], runs["quatro"])
                ]
    print_summary(results, sizes, relays, args.pace, out, rounds)
    for tables, pairs in metered.items():
        ratios = sorted(on / off for on, off in pairs)
        extra = sorted(on - off for on, off in pairs)
        print(
            f"metrics on / off at {tables} tables: x{ratios[len(ratios) // 2]:.3f} (rounds: "
            f"{', '.join(f'{r:.3f}' for r in ratios)}), {extra[len(extra) // 2]:+.2f} us per delivered message, "
            f"scraped every {args.scrape_every:g} s",
            file=out,
            flush=True,
        )
    if args.json:
        report = summary_json(results, sizes, relays, args.pace, rounds)
        slack = float(args.timer_slack) if args.timer_slack else TIMER_SLACK
        target_cores, load_cores = pinned_cores(args.pin)
        report.update(
            load_processes=args.procs,
            boost=args.boost,
            target_cores=sorted(target_cores or ()),
            load_cores=sorted(load_cores or ()),
            rounds=args.rounds,
            timer_slack=slack,
        )
        print(json.dumps(report, indent=2), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
