"""``quatro-server soak``: attack a live server for a while and report whether it held.

A real ``quatro-server`` runs as a child process on 127.0.0.1. Honest players (from 127.0.0.2) play whole
matches at a few tables, dropping and coming back with their seat secrets (R19) now and then, and time every
game action. Meanwhile hostile peers, each kind from its own loopback address as a host on the network would,
send broken frames, flood requests, fill the lobby with watchers that never read, create tables and vanish,
open idle connections past the per-address share, guess passwords, try to take seats with guessed secrets,
and go silent without a FIN. Every frame any of them receives is audited for hidden information. Each player
holds its seat's state as a client does (since protocol 2, a full view only in a snapshot): the snapshot's view,
with every later update applied by ``quatro_shared.games.quatro.apply``; its scores are read from that state (an update
that does not fit it is counted ``updates_out_of_step``), and its moves are drawn from what ``legal`` offers on it.

The report (``--json`` for a machine)::

    crashes           the server process died, or logged an error (a handler or a table failed)
    leaks             frames carrying what their seat may not see (quatro_server.tools.audit)
    hijacks           a seat taken or acted for without its secret, or an honest player replaced
    points_lost       a team's score seen going down by a connected player (R20: a point once won stays),
                      across drops and across kill -9 and restart of the server on its journal
    secrets_lost      a seat whose secret a restarted server refused
    peak_rss_mib      the server's peak resident memory
    bystander_p99_ms  the 99th percentile of the honest players' action round trips during the attack

The ``crashes`` scenario kills the server with SIGKILL every ``CRASH_EVERY`` seconds or so and restarts it on
the same data directory (its journal): the crash table's player must get its seat back with its secret, and see
no score lower than before. A kill the soak makes is not counted as a crash.

Beside the game port, the soak tries the sides, each scenario reported under its own name:

- the doors (``soak_doors``, ``--no-doors`` leaves them out): the SSH and browser doors under floods and drops;
- the table directory (``soak_directory``, ``--no-directory``): two servers on one real ``redis-server``, which
  is stopped (SIGSTOP) while players ping and create tables, restarted empty under live tables, and written a
  forged record by a peer that would harvest seat secrets; skipped, and said so, without ``redis-server``;
- the metrics port (``--no-metrics``): a flood of silent connections while a real scrape and a game-port hello
  are timed.

``docs/reliability.md`` keeps the figures of each.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import random
import re
import resource
import socket
import struct
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field

import trio

from quatro_shared import framing
from quatro_shared import protocol as p
from quatro_shared.framing import FrameDecoder, Message, Outgoing, ProtocolError, encode
from quatro_shared.games.quatro import actions as a
from quatro_shared.games.quatro import seating
from quatro_shared.games.quatro.apply import ApplyError, Tracker
from quatro_shared.games.quatro.legal import legal
from quatro_shared.games.quatro.update import Update
from quatro_shared.games.quatro.views import Phase, SeatView
from quatro_shared.wire import WireError, push_from_wire, to_wire

from quatro_server.tools import soak_directory, soak_doors
from quatro_server.tools.audit import frame_leaks


def _part(value: object) -> Mapping[str, object]:
    """A map of a frame or a report; an empty one where it holds something else."""
    return value if isinstance(value, dict) else {}


SERVER_HOST = "127.0.0.1"
#: Where each kind of peer connects from (loopback holds all of 127.0.0.0/8).
HONEST = "127.0.0.2"
ADDRESSES = {
    "junk": "127.0.0.1",
    "flood": "127.0.0.1",
    "watchers": "127.0.0.3",
    "table_churn": "127.0.0.4",
    "idle_flood": "127.0.0.5",
    "passwords": "127.0.0.6",
    "hijack": "127.0.0.7",
    "silent": "127.0.0.8",
    "slow_seat": "127.0.0.9",
}
#: Honest tables playing at once, of four humans each.
BYSTANDER_TABLES = 2
#: Seconds between two drops of an honest player (who then comes back with the seat secret).
DROP_EVERY = 12.0
#: Seconds between two kill -9s of the server (which restarts on its journal): a few per minute of soak.
CRASH_EVERY = 20.0


# --- a small client ------------------------------------------------------------------------------------------


class Peer:
    """One connection: requests with ids, every frame kept for the audit, a heartbeat while it lives."""

    def __init__(self, stream: trio.SocketStream, name: str, soak: Soak) -> None:
        self.stream, self.name, self.soak = stream, name, soak
        self.decoder = FrameDecoder()
        self.ids = itertools.count(1)
        self.waiting: dict[int, trio.Event] = {}
        self.replies: dict[int, Message] = {}
        #: The seat's state as a client holds it: a snapshot's view, with every later update applied
        #: (``quatro_shared.games.quatro.apply.Tracker``), and the same in wire form (what the soak's players read).
        self.state: SeatView | None = None
        self.tracker: Tracker | None = None
        self.view: Mapping[str, object] | None = None
        self.seat: int | None = None
        self.players: int | None = None
        self.secret: str | None = None
        self.table: int | None = None
        self.closed = False
        self.byes: list[str] = []
        self.sent_at = trio.current_time()
        self.scores: list[int] | None = None
        self._sending = trio.Lock()

    @classmethod
    async def connect(cls, soak: Soak, local: str, name: str, *, hello: bool = True, rcvbuf: int | None = None) -> Peer:
        sock = trio.socket.socket(trio.socket.AF_INET, trio.socket.SOCK_STREAM)
        if rcvbuf is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        await sock.bind((local, 0))
        await sock.connect((SERVER_HOST, soak.port))
        return cls(trio.SocketStream(sock), name, soak)

    async def read(self) -> None:
        try:
            while True:
                try:
                    data = await self.stream.receive_some(65536)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    break
                if not data:
                    break
                for frame in self.decoder.feed(data):
                    self._dispatch(frame)
        except ProtocolError:
            self.soak.count("client_protocol_errors")
        finally:
            self.closed = True
            for event in self.waiting.values():
                event.set()

    def _dispatch(self, frame: Message) -> None:
        kind = frame.get("kind")
        request_id = frame.get("id")
        waited = isinstance(request_id, int) and request_id in self.waiting
        secret = framing.text(frame, "secret")
        if kind == p.OK and secret is not None and waited:
            self.secret = secret  # this connection's own seat, from its own create/join
        team = None if self.seat is None or self.players is None else seating.team_of(self.seat, self.players)
        if kind == p.UPDATE:
            self._update(frame)
        self.soak.audit(self, frame, team)
        if kind in (p.OK, p.REFUSED, p.ERROR) and isinstance(request_id, int) and request_id in self.waiting:
            self.replies[request_id] = frame
            self.waiting.pop(request_id).set()
        elif kind == p.BYE:
            self.byes.append(str(frame.get("reason")))

    def _update(self, frame: Message) -> None:
        """Build the seat's state from an update, as a client does (a full view only in a snapshot; countdowns run on between clocks),
        and check its scores: a team's score never goes down (R20)."""
        try:
            update = push_from_wire(frame)
            if not isinstance(update, Update):
                raise WireError("bad_update", "not an update")
            if update.view is not None:
                state = update.view
                self.tracker = Tracker(state, update.at)
            elif self.tracker is None:
                raise WireError("out_of_step", "an update that is not a snapshot before any snapshot")
            else:
                state = self.tracker.update(update.events, update.clock, update.own, update.at)
        except (WireError, ApplyError):
            self.soak.count("updates_out_of_step")  # the audit says what is wrong with the frame itself
            self.state = self.view = self.tracker = None
            return
        self.state, self.view = state, to_wire(state)
        scores = list(state.scores)
        if self.scores is not None and len(scores) == len(self.scores):
            self.soak.points_lost += sum(max(0, a - b) for a, b in zip(self.scores, scores))
        self.scores = scores

    async def send(self, message: Outgoing) -> None:
        async with self._sending:
            self.sent_at = trio.current_time()
            await self.stream.send_all(encode(message))

    async def request(self, kind: str, timeout: float = 10.0, **fields: object) -> Message | None:
        """The reply, or None if the connection ended or the reply did not come in time."""
        return await self.ask(kind, fields, timeout)

    async def ask(self, kind: str, fields: Mapping[str, object], timeout: float = 10.0) -> Message | None:
        """``request``, its fields given as a map (a message as ``to_wire`` writes it, less its kind)."""
        if self.closed:
            return None
        request_id = next(self.ids)
        done = self.waiting[request_id] = trio.Event()
        try:
            await self.send({"kind": kind, "id": request_id, **fields})
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return None
        with trio.move_on_after(timeout):
            await done.wait()
        self.waiting.pop(request_id, None)
        reply = self.replies.pop(request_id, None)
        if reply is not None and reply["kind"] == p.OK and kind in (p.CREATE_TABLE, p.JOIN, p.REJOIN):
            self.table, self.seat = framing.whole(reply, "table"), framing.whole(reply, "seat")
            self.secret = framing.text(reply, "secret") if "secret" in reply else framing.text(fields, "secret")
        return reply

    async def heartbeat(self) -> None:
        while not self.closed:
            await trio.sleep_until(self.sent_at + p.HEARTBEAT_INTERVAL)
            if not self.closed and trio.current_time() >= self.sent_at + p.HEARTBEAT_INTERVAL:
                try:
                    await self.send({"kind": p.PING, "id": next(self.ids)})
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    return

    async def aclose(self) -> None:
        self.closed = True
        await trio.aclose_forcefully(self.stream)


# --- the server under test ------------------------------------------------------------------------------------


class ServerProcess:
    """``quatro-server`` in a child process on 127.0.0.1, its stderr scanned for errors."""

    def __init__(
        self,
        extra: list[str] | None = None,
        *,
        ready: bytes = b"quatro join",
        log_level: str = "warning",
        nofile: int | None = None,
        marks: tuple[str, ...] = (),
    ) -> None:
        self.extra = extra or []
        #: Words whose log lines are counted (``marks``: word -> lines), whatever their level.
        self.watched = marks
        self.marks: Counter[str] = Counter()
        #: What the server prints once everything it opens listens; its log's level; its descriptor limit
        #: (RLIMIT_NOFILE, as ``ulimit -n`` sets it; None: the soak's own).
        self.ready, self.log_level, self.nofile = ready, log_level, nofile
        self.process: trio.Process | None = None
        self.port = 0
        #: The ports of its doors and its metrics, for the scenarios that give it them (``soak_doors``,
        #: ``soak_directory``) among its ``extra`` arguments.
        self.ssh_port = self.web_port = self.metrics_port = 0
        self.errors: list[str] = []
        #: The log's size in bytes, and its tracebacks (whatever their level).
        self.log_bytes = 0
        self.tracebacks = 0
        self.log_tail: list[str] = []
        self.deaths = 0
        self.expected_exit = False
        self.peak_rss_kib = 0
        # The server journals its tables, as an operator's does, into a directory of its own (never the user's):
        # a restart comes back to the same tables.
        self.data_dir = tempfile.TemporaryDirectory(prefix="quatro-soak-")

    async def start(self, nursery: trio.Nursery) -> None:
        command = [
            sys.executable,
            "-m",
            "quatro_server",
            "serve",
            "--host",
            SERVER_HOST,
            "--port",
            str(self.port),
            "--timing",
            "fast",
            "--log-level",
            self.log_level,
            "--data-dir",
            self.data_dir.name,
            "--no-announce",
            *self.extra,
        ]
        nofile = self.nofile

        def limit() -> None:
            if nofile is not None:
                resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

        self.process = await trio.lowlevel.open_process(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=limit if nofile is not None else None
        )
        self.expected_exit = False
        stdout = self.process.stdout
        assert stdout is not None
        out = b""
        with trio.fail_after(30):
            while b"quatro join" not in out or self.ready not in out:
                chunk = await stdout.receive_some(4096)
                if not chunk:
                    raise RuntimeError(f"the server did not start: {out.decode(errors='replace')}")
                out += chunk
        found = re.search(rb"quatro join [\d.]+:(\d+)", out)
        assert found is not None
        self.port = int(found.group(1))
        nursery.start_soon(self._scan, self.process)
        nursery.start_soon(self._watch, self.process)

    async def _scan(self, process: trio.Process) -> None:
        buffer = b""
        assert process.stderr is not None
        while chunk := await process.stderr.receive_some(65536):
            self.log_bytes += len(chunk)
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                text = line.decode(errors="replace")
                if " ERROR " in text or " CRITICAL " in text:
                    self.errors.append(text[:300])
                if text.startswith("Traceback"):
                    self.tracebacks += 1
                for word in self.watched:
                    if word in text:
                        self.marks[word] += 1
                self.log_tail = [*self.log_tail[-19:], text[:300]]

    async def _watch(self, process: trio.Process) -> None:
        while process.returncode is None:
            self.peak_rss_kib = max(self.peak_rss_kib, _peak_rss_kib(process.pid))
            with trio.move_on_after(1.0):
                await process.wait()
        if not self.expected_exit:
            self.deaths += 1

    async def restart(self, nursery: trio.Nursery, *, kill: bool = True) -> None:
        """For crash scenarios: SIGKILL (or SIGTERM) the server and start it again on the same port."""
        assert self.process is not None
        self.expected_exit = True
        if kill:
            self.process.kill()
        else:
            self.process.terminate()
        await self.process.wait()
        await self.start(nursery)

    async def stop(self) -> None:
        if self.process is not None and self.process.returncode is None:
            self.peak_rss_kib = max(self.peak_rss_kib, _peak_rss_kib(self.process.pid))
            self.expected_exit = True
            await soak_directory.terminate(self.process)


def _peak_rss_kib(pid: int) -> int:
    """The process's peak resident set (VmHWM), in KiB; 0 when it cannot be read."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


# --- the soak ------------------------------------------------------------------------------------------------


Scenario = Callable[["Soak"], Awaitable[None]]


@dataclass
class Soak:
    seconds: float
    seed: int
    server: ServerProcess = field(default_factory=ServerProcess)
    counts: Counter[str] = field(default_factory=Counter)
    leak_samples: list[str] = field(default_factory=list)
    leaks: int = 0
    hijacks: int = 0
    points_lost: int = 0
    #: Seats whose secret a restarted server no longer took (the journal must keep every one).
    secrets_lost: int = 0
    latencies: list[float] = field(default_factory=list)
    secrets: set[str] = field(default_factory=set)
    #: The latest table list, kept fresh by one honest lister: the scenarios that pick tables read it.
    listing: list[Message] = field(default_factory=list)
    stop_at: float = math.inf
    nursery: trio.Nursery | None = None

    @property
    def port(self) -> int:
        return self.server.port

    def running(self) -> bool:
        return trio.current_time() < self.stop_at

    async def sleep(self, seconds: float) -> None:
        """Sleep, but never past the end of the soak."""
        await trio.sleep_until(min(trio.current_time() + seconds, self.stop_at))

    def count(self, what: str, n: int = 1) -> None:
        self.counts[what] += n

    def remember(self, reply: Message) -> None:
        """The seat secret of an ``ok`` to a create or a join, kept for the audit (it must show up nowhere else)."""
        secret = framing.text(reply, "secret")
        if secret is not None:
            self.secrets.add(secret)

    def audit(self, peer: Peer, frame: Message, team: int | None) -> None:
        self.count("frames_audited")
        found = frame_leaks(frame, peer.seat, team, own_secret=peer.secret, secrets=self.secrets, known=peer.view)
        if found:
            self.leaks += 1
            if len(self.leak_samples) < 10:
                self.leak_samples.append(f"{peer.name}: {found[:3]}")

    async def connect(
        self,
        local: str,
        name: str,
        *,
        rcvbuf: int | None = None,
        hello: bool = True,
        reader: bool = True,
        heartbeat: bool = True,
    ) -> Peer | None:
        """A peer from ``local``, reading (and pinging) in the soak's nursery; None when refused or unreachable."""
        assert self.nursery is not None
        try:
            peer = await Peer.connect(self, local, name, rcvbuf=rcvbuf)
        except OSError:
            self.count("connect_failed")
            return None
        if reader:
            self.nursery.start_soon(peer.read)
            if heartbeat:
                self.nursery.start_soon(peer.heartbeat)
        if hello and reader:
            reply = await peer.request(p.HELLO, version=p.PROTOCOL_VERSION, name=name)
            if reply is None or reply["kind"] != p.OK:
                self.count("hello_refused")
                await peer.aclose()
                return None
        elif hello:
            await peer.send({"kind": p.HELLO, "id": 0, "version": p.PROTOCOL_VERSION, "name": name})
        return peer

    def report(self) -> dict[str, object]:
        latencies = sorted(self.latencies)
        p99 = latencies[min(len(latencies) - 1, math.ceil(0.99 * len(latencies)) - 1)] if latencies else None
        return {
            "minutes": round(self.seconds / 60, 3),
            "seed": self.seed,
            "crashes": self.server.deaths + len(self.server.errors),
            "leaks": self.leaks,
            "hijacks": self.hijacks,
            "points_lost": self.points_lost,
            "secrets_lost": self.secrets_lost,
            "peak_rss_mib": round(self.server.peak_rss_kib / 1024, 1),
            "bystander_p99_ms": None if p99 is None else round(p99 * 1000, 1),
            "bystander_median_ms": None if not latencies else round(latencies[len(latencies) // 2] * 1000, 1),
            "bystander_actions": len(latencies),
            "server_errors": self.server.errors[:5],
            "leak_samples": self.leak_samples,
            "counts": dict(sorted(self.counts.items())),
        }


# --- honest players ----------------------------------------------------------------------------------------------


#: How often an honest player, looking at its table, does each kind of thing ``legal`` offers: (kinds, share).
#: Calls are rare (mostly wrong: a point for the others, which is a point all the same); the rest does nothing.
HONEST_ROUND: tuple[tuple[tuple[type[a.Action], ...], float], ...] = (
    ((a.Swap,), 0.6),
    ((a.TakeChannel, a.ReleaseChannel), 0.15),
    ((a.ChooseEmoji,), 0.1),
    ((a.Call,), 0.03),
)


def _action(view: SeatView, rng: random.Random) -> a.Action | None:
    """What an honest player does now, drawn from what its view allows (``legal``), or nothing."""
    moves = legal(view)
    if view.phase is Phase.SIGNING:
        picks = [move for move in moves if isinstance(move, a.PickSign)]
        if picks and rng.random() < 0.4:
            return rng.choice(picks)
        return next((move for move in moves if isinstance(move, a.Ready)), None)
    if view.phase is Phase.BREAK:
        return moves[0] if moves and rng.random() < 0.3 else None  # the host starts the next round early (R18)
    roll = rng.random()
    for kinds, share in HONEST_ROUND:
        if roll < share:
            chosen = [move for move in moves if isinstance(move, kinds)]
            own = a.ChooseEmoji(view.sign)
            if own in chosen and rng.random() < 0.5:
                return own  # the team's sign half the time: partners call on it, and rounds end with a point
            return rng.choice(chosen) if chosen else None
        roll -= share
    return None


async def _play(soak: Soak, peer: Peer, rng: random.Random) -> None:
    while soak.running() and not peer.closed:
        view = peer.view
        action = None if peer.state is None else _action(peer.state, rng)
        if action is not None:
            fields = to_wire(action)
            kind = fields.pop("kind")
            assert isinstance(kind, str)  # to_wire writes every action's kind
            start = trio.current_time()
            reply = await peer.ask(kind, fields)
            if reply is not None:
                soak.latencies.append(trio.current_time() - start)
                if reply["kind"] == p.ERROR:
                    soak.count("honest_errors")
        if view is not None and view.get("phase") == "over":
            return
        await trio.sleep(rng.uniform(0.15, 0.4))


async def bystander_table(soak: Soak, index: int) -> None:
    """Four honest players play match after match; one of them drops now and then and comes back (R19)."""
    rng = random.Random(soak.seed + index)
    while soak.running():
        peers: list[Peer] = []
        for n in range(4):
            peer = await soak.connect(HONEST, f"b{index}p{n}")
            if peer is None:
                soak.count("honest_refused")
                await trio.sleep(1)
                break
            peers.append(peer)
        if len(peers) < 4:
            for peer in peers:
                await peer.aclose()
            continue
        password = f"pw{index}-{rng.getrandbits(40):x}"  # a target for the guessers
        created = await peers[0].request(p.CREATE_TABLE, players=4, password=password)
        if created is None or created["kind"] != p.OK:
            soak.count("honest_create_refused")
            for peer in peers:
                await peer.aclose()
            await trio.sleep(1)
            continue
        soak.remember(created)
        for peer in peers:
            peer.players = 4
        soak.count("honest_tables")
        ok = True
        for peer in peers[1:]:
            joined = await peer.request(p.JOIN, table=created["table"], password=password)
            if joined is None or joined["kind"] != p.OK:
                ok = False
                soak.count("honest_join_refused")
                break
            soak.remember(joined)
        if not ok or (await peers[0].request(p.START) or {}).get("kind") != p.OK:
            for peer in peers:
                await peer.aclose()
            await trio.sleep(1)
            continue
        async with trio.open_nursery() as table:
            for n, peer in enumerate(peers):
                table.start_soon(_play, soak, peer, random.Random(rng.getrandbits(32)))
            table.start_soon(_drops, soak, peers, rng)
        for peer in peers:
            if any(reason == "replaced" for reason in peer.byes):
                soak.hijacks += 1
            await peer.aclose()
        soak.count("honest_matches")


async def _drops(soak: Soak, peers: list[Peer], rng: random.Random) -> None:
    """Now and then one honest player's link drops; it comes back with its secret, its seat and scores intact."""
    while soak.running() and not all(peer.closed for peer in peers):
        await soak.sleep(rng.uniform(0.5, 1.5) * DROP_EVERY)
        if not soak.running():
            return
        i = rng.randrange(len(peers))
        old = peers[i]
        if old.view is not None and old.view.get("phase") == "over":
            return
        await old.aclose()
        soak.count("honest_drops")
        await trio.sleep(rng.uniform(0.2, 1.0))
        back = await soak.connect(HONEST, old.name)
        if back is None:
            soak.count("honest_rejoin_failed")
            continue
        back.players, back.seat, back.secret, back.scores = old.players, old.seat, old.secret, old.scores
        reply = await back.request(p.REJOIN, table=old.table, secret=old.secret)
        if reply is None or reply["kind"] != p.OK:
            soak.count("honest_rejoin_failed")
            await back.aclose()
            continue
        soak.count("honest_rejoins")
        peers[i] = back
        assert soak.nursery is not None
        soak.nursery.start_soon(_play, soak, back, random.Random(rng.getrandbits(32)))


# --- hostile peers ---------------------------------------------------------------------------------------------


def _frame(body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + body


JUNK = [
    b"GET / HTTP/1.1\r\nHost: quatro\r\n\r\n",
    struct.pack(">I", 1 << 30),
    b"\x00\x00\x00\x00",
    _frame(b"\xc1"),
    _frame(b"\x91" * 20_000 + b"\xc0"),
    _frame(b"\x82\xa4kind\xa4ping\xa2id"),
]


async def junk(soak: Soak) -> None:
    """Broken frames of every kind, before and after hello: each must cost its own connection only."""
    rng = random.Random(soak.seed ^ 1)
    while soak.running():
        peer = await soak.connect(ADDRESSES["junk"], "junk", hello=rng.random() < 0.5)
        if peer is not None:
            data = (
                rng.choice(JUNK)
                if rng.random() < 0.7
                else bytes(rng.getrandbits(8) for _ in range(rng.randrange(1, 300)))
            )
            try:
                await peer.stream.send_all(data)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass
            with trio.move_on_after(2):
                while not peer.closed:
                    await trio.sleep(0.05)
            soak.count("junk_sent")
            await peer.aclose()
        await trio.sleep(0.05)


async def flood(soak: Soak) -> None:
    """Requests far past the rate limit, in single writes: refused, then disconnected."""
    while soak.running():
        peer = await soak.connect(ADDRESSES["flood"], "flood")
        if peer is not None:
            burst = b"".join(encode({"kind": p.PING, "id": i}) for i in range(400))
            try:
                await peer.stream.send_all(burst)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass
            with trio.move_on_after(3):
                while not peer.closed:
                    await trio.sleep(0.05)
            soak.count("floods_cut" if peer.closed else "floods_not_cut")
            await peer.aclose()
        await trio.sleep(0.5)


async def watchers(soak: Soak) -> None:
    """Lobby watchers that never read, on tiny windows, held for the whole soak while tables come and go."""
    held: list[Peer] = []
    for i in range(24):
        peer = await soak.connect(ADDRESSES["watchers"], f"watch{i}", rcvbuf=4096, reader=False)
        if peer is not None:
            held.append(peer)
    soak.count("watchers_held", len(held))
    while soak.running():
        await trio.sleep(0.5)
    for peer in held:
        await peer.aclose()


async def table_churn(soak: Soak) -> None:
    """Connect, create a table, vanish; again and again (each leaves a table held by a dropped creator)."""
    while soak.running():
        peer = await soak.connect(ADDRESSES["table_churn"], "churn")
        if peer is not None:
            reply = await peer.request(p.CREATE_TABLE, players=8)
            soak.count(f"churn_{'created' if reply and reply['kind'] == p.OK else (reply or {}).get('reason', 'lost')}")
            await peer.aclose()
        await trio.sleep(0.2)


async def idle_flood(soak: Soak) -> None:
    """More connections from one address than its share, saying hello and then nothing but heartbeats."""
    held: list[Peer] = []
    while soak.running():
        if len(held) < 40:
            peer = await soak.connect(ADDRESSES["idle_flood"], "idle")
            if peer is None:
                soak.count("idle_refused")
            else:
                held.append(peer)
        held = [peer for peer in held if not peer.closed]
        await trio.sleep(0.1)
    for peer in held:
        await peer.aclose()


async def passwords(soak: Soak) -> None:
    """Guess the password of a table still seating players (an honest host waits there): every wrong guess costs
    a growing wait, and no guess may succeed."""
    rng = random.Random(soak.seed ^ 2)
    host = await soak.connect(HONEST, "waiting-host")
    if host is None:
        return
    password = f"{rng.getrandbits(64):x}"
    created = await host.request(p.CREATE_TABLE, players=8, password=password)
    if created is None or created["kind"] != p.OK:
        soak.count("guess_target_refused")
        return
    soak.remember(created)
    guessers = [await soak.connect(ADDRESSES["passwords"], f"guess{i}") for i in range(8)]
    while soak.running():
        for guesser in guessers:
            if guesser is None or guesser.closed:
                continue
            reply = await guesser.request(p.JOIN, table=created["table"], password=f"{rng.getrandbits(64):x}")
            reason = "lost" if reply is None else reply.get("reason", reply["kind"])
            soak.count(f"guess_{reason}")
            if reply is not None and reply["kind"] == p.OK:
                soak.hijacks += 1  # a random guess let a stranger in
                await guesser.request(p.LEAVE)
        await trio.sleep(0.02)
    # What the attack costs the table's own people: the wait an honest joiner is told now (capped per table).
    friend = await soak.connect(HONEST, "friend")
    if friend is not None:
        reply = await friend.request(p.JOIN, table=created["table"], password=password)
        if reply is not None and reply["kind"] == p.OK:
            soak.count("guess_friend_joined")
        elif reply is not None and reply.get("reason") == p.RATE_LIMITED:
            soak.count("guess_friend_wait_ms", framing.whole(reply, "wait_ms") or 0)
        await friend.aclose()


async def hijack(soak: Soak) -> None:
    """Take seats without their secrets: random secrets, joins to started tables, actions from no seat."""
    rng = random.Random(soak.seed ^ 3)
    peer = None
    while soak.running():
        if peer is None or peer.closed:
            peer = await soak.connect(ADDRESSES["hijack"], "mallory")
            if peer is None:
                await trio.sleep(1)
                continue
        tables = soak.listing
        if tables:
            table = rng.choice(tables)["table"]
            for kind, fields in (
                (p.REJOIN, {"table": table, "secret": f"{rng.getrandbits(128):032x}"[:22]}),
                (p.JOIN, {"table": table}),
                ("swap", {"give": "AS", "slot": 0, "take": "KS"}),
                ("call", {}),
                (p.START, {}),
            ):
                reply = await peer.request(kind, **fields)
                if reply is not None and reply["kind"] == p.OK and kind != p.JOIN:
                    soak.hijacks += 1
                if reply is not None and reply["kind"] == p.OK and kind == p.JOIN:
                    await peer.request(p.LEAVE)  # a table still seating players: joining is allowed
                soak.count("hijack_attempts")
        await trio.sleep(0.2)


async def silent(soak: Soak) -> None:
    """Half-open peers: hello, then not a byte (no heartbeat, no FIN). The server must let them go."""
    while soak.running():
        peer = await soak.connect(ADDRESSES["silent"], "ghost", heartbeat=False)
        if peer is None:
            await trio.sleep(1)
            continue
        soak.count("silent_opened")
        opened = trio.current_time()
        gone_at = opened + p.HEARTBEAT_TIMEOUT + 5
        while soak.running() and not peer.closed and trio.current_time() < gone_at:
            await trio.sleep(0.5)
        if peer.closed and soak.running():
            soak.count("silent_closed_by_server")
            if "silent" in peer.byes and trio.current_time() - opened <= p.HEARTBEAT_TIMEOUT + 2:
                soak.count("silent_closed_in_time")
        elif soak.running():
            soak.count("silent_kept_too_long")
        await peer.aclose()


async def slow_seat(soak: Soak) -> None:
    """A seated player at a table of fast bots that never reads a byte: let go at its byte budget or its silence."""
    while soak.running():
        peer = await soak.connect(ADDRESSES["slow_seat"], "sloth", rcvbuf=4096, reader=False)
        if peer is None:
            await trio.sleep(1)
            continue
        requests = [
            {"kind": p.CREATE_TABLE, "id": 1, "players": 4, "timing": "fast"},
            *({"kind": p.ADD_BOT, "id": 2 + i, "level": "random"} for i in range(3)),
            {"kind": p.START, "id": 5},
        ]
        try:
            for request in requests:
                await peer.send(request)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        soak.count("slow_seats")
        with trio.move_on_at(min(soak.stop_at, trio.current_time() + p.HEARTBEAT_TIMEOUT + 5)):
            await trio.sleep_forever()
        await peer.aclose()


async def _crash_table(soak: Soak, rng: random.Random) -> Peer | None:
    """A match for the crash scenario: one honest player (who keeps its secret) and three of the server's bots."""
    player = await soak.connect(HONEST, "phoenix")
    if player is None:
        return None
    created = await player.request(p.CREATE_TABLE, players=4)
    if created is None or created["kind"] != p.OK:
        await player.aclose()
        return None
    soak.remember(created)
    player.players = 4
    for _ in range(3):
        await player.request(p.ADD_BOT, level="normal")
    if (await player.request(p.START) or {}).get("kind") != p.OK:
        await player.aclose()
        return None
    assert soak.nursery is not None
    soak.nursery.start_soon(_play, soak, player, random.Random(rng.getrandbits(32)))
    return player


async def crashes(soak: Soak) -> None:
    """kill -9 the server mid-match and start it again on its journal: the crash table's player comes back with
    its secret (a refused rejoin is a lost secret), and no score it saw before the crash is lower after it (R20)."""
    rng = random.Random(soak.seed ^ 0xC4A5)
    player: Peer | None = None
    while soak.running():
        if player is None or player.closed or (player.view or {}).get("phase") == "over":
            if player is not None:
                await player.aclose()
            player = await _crash_table(soak, rng)
            if player is None:
                await soak.sleep(1)
                continue
        await soak.sleep(rng.uniform(0.5, 1.5) * CRASH_EVERY)
        if not soak.running():
            return
        table, secret, seat, scores = player.table, player.secret, player.seat, player.scores
        # A match may end unseen just before the kill (a finished match is not brought back): only a match that
        # no single round could have finished tells a lost secret from a match that simply ended.
        view = player.view or {}
        target = framing.whole(view, "target_score")
        unfinishable = view.get("phase") != "over" and max(scores or [0]) < (1 if target is None else target) - 1
        assert soak.nursery is not None
        await soak.server.restart(soak.nursery)
        soak.count("server_killed")
        await player.aclose()
        back = None
        for _ in range(10):  # the restarted server may take a moment to listen again
            back = await soak.connect(HONEST, "phoenix")
            if back is not None:
                break
            await trio.sleep(0.5)
        if back is None:
            soak.count("crash_reconnect_failed")
            player = None
            continue
        # The first update after the rejoin is compared with the last score seen before the kill.
        back.players, back.seat, back.secret, back.scores = 4, seat, secret, scores
        reply = await back.request(p.REJOIN, table=table, secret=secret)
        if reply is None or reply["kind"] != p.OK:
            if unfinishable:
                soak.secrets_lost += 1
            else:
                soak.count("crash_match_ended")
            await back.aclose()
            player = None
            continue
        soak.count("crash_rejoins")
        player = back
        soak.nursery.start_soon(_play, soak, back, random.Random(rng.getrandbits(32)))


#: Every kind of trouble the soak makes at once, a kill -9 and restart of the server among them.
SCENARIOS: dict[str, Scenario] = {
    "junk": junk,
    "flood": flood,
    "watchers": watchers,
    "table_churn": table_churn,
    "idle_flood": idle_flood,
    "passwords": passwords,
    "hijack": hijack,
    "silent": silent,
    "slow_seat": slow_seat,
    "crashes": crashes,
}


# --- running it --------------------------------------------------------------------------------------------------


async def _lobby_poller(soak: Soak) -> None:
    """Keeps ``soak.listing`` fresh for the scenarios that pick tables (from the honest address: it is a player)."""
    peer = None
    while soak.running():
        if peer is None or peer.closed:
            peer = await soak.connect(HONEST, "lister")
            if peer is None:
                await trio.sleep(1)
                continue
        reply = await peer.request(p.LIST_TABLES)
        if reply is not None and reply["kind"] == p.OK:
            listed = reply.get("tables")
            soak.listing = [line for line in listed if isinstance(line, dict)] if isinstance(listed, list) else []
        await trio.sleep(1)


async def soak_server(seconds: float, seed: int, scenarios: dict[str, Scenario] | None = None) -> dict[str, object]:
    soak = Soak(seconds=seconds, seed=seed)
    async with trio.open_nursery() as nursery:
        soak.nursery = nursery
        await soak.server.start(nursery)
        soak.stop_at = trio.current_time() + seconds
        async with trio.open_nursery() as attack:
            attack.start_soon(_lobby_poller, soak)
            for index in range(BYSTANDER_TABLES):
                attack.start_soon(bystander_table, soak, index)
            for scenario in (SCENARIOS if scenarios is None else scenarios).values():
                attack.start_soon(scenario, soak)
        await soak.server.stop()
        nursery.cancel_scope.cancel()
    return soak.report()


#: The reports that sit beside the game port's, each with its scenarios and ``passed``.
PHASES = ("doors", "descriptors", "directory", "metrics")


async def soak_everything(
    seconds: float, seed: int, doors: bool = True, directory: bool = True, metrics: bool = True
) -> dict[str, object]:
    """The game port's soak; beside it, on servers of their own, the doors' scenarios and the descriptor
    starvation (``quatro_server.tools.soak_doors``), two servers sharing a directory on a real Redis and the metrics
    port flooded (``quatro_server.tools.soak_directory``): their reports under ``doors``, ``descriptors``,
    ``directory`` and ``metrics``. Without ``redis-server`` the directory's report says it was skipped."""
    report: dict[str, object] = {}

    async def game_port() -> None:
        report.update(await soak_server(seconds, seed))

    async def the_doors() -> None:
        report["doors"] = await soak_doors.soak_doors(ServerProcess)

    async def descriptors() -> None:
        report["descriptors"] = await soak_doors.soak_descriptors(ServerProcess)

    async def the_directory() -> None:
        if not soak_directory.available():
            report["directory"] = {"passed": True, "skipped": "redis-server is not on PATH"}
            return
        report["directory"] = await soak_directory.soak_directory(ServerProcess)

    async def the_metrics() -> None:
        report["metrics"] = await soak_directory.soak_metrics(ServerProcess)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(game_port)
        if doors:
            nursery.start_soon(the_doors)
            nursery.start_soon(descriptors)
        if directory:
            nursery.start_soon(the_directory)
        if metrics:
            nursery.start_soon(the_metrics)
    return {key: report[key] for key in [*(k for k in report if k not in PHASES), *(k for k in PHASES if k in report)]}


def failed(report: Mapping[str, object]) -> bool:
    """Any crash, leak, hijack or lost point; any door, descriptor, directory or metrics scenario that did not
    pass."""
    return bool(
        report["crashes"]
        or report["leaks"]
        or report["hijacks"]
        or report["points_lost"]
        or report["secrets_lost"]
        or any(not _part(report[phase]).get("passed") for phase in PHASES if phase in report)
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--minutes",
        type=float,
        default=1.0,
        help="how long to attack the game port (fractions allowed; default 1); the doors' scenarios "
        "and the descriptor starvation run beside it, each on a server of its own",
    )
    parser.add_argument("--no-doors", action="store_true", help="leave out the doors' scenarios")
    parser.add_argument(
        "--no-directory",
        action="store_true",
        help="leave out the directory's scenarios (two servers sharing a redis-server: stopped, restarted empty, "
        "a forged record)",
    )
    parser.add_argument("--no-metrics", action="store_true", help="leave out the metrics port's flood")
    parser.add_argument("--seed", type=int, default=None, help="seed the soak's own choices (default: random)")
    parser.add_argument("--json", action="store_true", help="print the report as one JSON object")


def run(args: argparse.Namespace) -> int:
    seed = args.seed if args.seed is not None else random.randrange(2**32)
    report = trio.run(
        soak_everything, args.minutes * 60, seed, not args.no_doors, not args.no_directory, not args.no_metrics
    )
    if args.json:
        print(json.dumps(report, sort_keys=False))
    else:
        for key, value in report.items():
            part = _part(value)
            if key in PHASES and "skipped" in part:
                print(f"{key:>20}  skipped: {part['skipped']}")
            elif key in PHASES:
                print(f"{key:>20}  {'passed' if part['passed'] else 'FAILED'}")
                for name, result in _part(part["scenarios"]).items():
                    print(f"{name:>28}  {result}")
            else:
                print(f"{key:>20}  {value}")
    return 1 if failed(report) else 0
