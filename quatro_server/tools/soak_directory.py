"""The soak's sides: two servers sharing a table directory on a real ``redis-server``, and the metrics port flooded.

directory (two ``quatro-server --directory`` processes, one ``redis-server`` on a Unix socket in a temporary
directory, players on both: tables held by their creators, a match of a player and three bots on each)

    redis_stalled     Redis stopped (SIGSTOP) for ``STALL_SECONDS``: a bystander on each server pings every
                      ``PING_EVERY`` seconds and another creates tables; passes when every ping is answered, the
                      99th percentile on each server within ``PING_BOUND`` and every ``create_table`` answered (a
                      table, or "try again" refused) within ``CREATE_BOUND``
    redis_restarted   Redis killed (SIGKILL) and started again empty on the same socket: tables created on both
                      servers afterwards; passes when no new id is the id of a live table on either server, none is
                      given twice, no lobby lists an id twice, and no ``journal_write_lost`` is logged
    forged_record     a record and a lobby message naming a listener of the soak's own for a live table (what
                      anyone with write access to Redis can do): the table's player comes back through the other
                      server with its seat secret, and a joiner with the table's password; passes when the forger's
                      listener, which keeps every byte it receives, never receives the secret or the password, and
                      the attack was made (a rejoin or join was sent to the forger)

metrics (a server of its own with ``--metrics``)

    metrics_flood     silent connections to the metrics port: ``4 × MAX_CONNECTIONS_PER_ADDRESS`` from one address,
                      then ``MAX_CONNECTIONS_PER_ADDRESS`` from each of ``FLOOD_ADDRESSES`` addresses (far past the
                      endpoint's ``MAX_CONNECTIONS``); meanwhile a scrape and a game-port hello from other addresses.
                      Passes when the hello is answered within ``HELLO_BOUND`` in both waves, the scrape within
                      ``SCRAPE_BOUND`` in the first (the endpoint is not full) and within its request timeout and a
                      second in the second (the endpoint is full until the held connections' time is up), the
                      server's descriptors grow by at most ``MAX_CONNECTIONS`` and a few, and the log has no
                      traceback
"""

from __future__ import annotations

import math
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Awaitable, Callable
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

import msgpack
import trio

from quatro_shared import framing, games
from quatro_shared import messages as m
from quatro_shared import protocol as p
from quatro_shared.client import Answered, ClientCore
from quatro_shared.framing import FrameDecoder, Message, ProtocolError, encode

from quatro_server.workers import metrics as metrics_port

if TYPE_CHECKING:
    from quatro_server.tools.soak_doors import ServerStarter, SoakServer

#: Seconds Redis stays stopped, and how often each server's bystander pings meanwhile.
STALL_SECONDS = 4.0
PING_EVERY = 0.05
#: The stall passes when each server's pings are answered at p99 within PING_BOUND seconds, and every
#: ``create_table`` within CREATE_BOUND (a stalled Redis once held a server's loop for seconds, and a create 15 s).
PING_BOUND = 0.25
CREATE_BOUND = 1.0
#: Tables created on each server once Redis has come back empty: past a block of ids (``ID_BLOCK``), so that both
#: servers take new ones from the new Redis.
NEW_TABLES = 20
#: Tables each server's players hold through the whole scenario (their ids are the ones a new table must not take).
HELD_TABLES = (6, 3)
#: The directory's time to live for the two servers (each tells its tables every third of it).
TTL = 3.0
#: Where each side's players connect from (loopback holds all of 127.0.0.0/8).
PLAYERS = "127.0.8.1"
CREATORS = ("127.0.8.2", "127.0.8.3")
NEWCOMERS = ("127.0.8.4", "127.0.8.5")
BYSTANDERS = "127.0.8.6"
VICTIMS = "127.0.8.7"
PASSWORD = "our-table-pw"
#: Tries of the forged record's rejoin and join (the table's own server still tells its tables, so a server sends
#: a player to the forger most of the time, not every time).
FORGED_TRIES = 8
#: The metrics flood: silent connections from one address, then from each of these many.
FLOOD_ONE = "127.0.9.1"
FLOOD_ADDRESSES = [f"127.0.9.{i}" for i in range(10, 18)]
SCRAPER = "127.0.9.100"
HELLO_FROM = "127.0.9.101"
SCRAPE_BOUND = 1.0
HELLO_BOUND = 1.0
#: Descriptors the metrics server may open beyond MAX_CONNECTIONS during the flood (a scrape, a hello, the log).
DESCRIPTOR_SLACK = 8


async def terminate(process: trio.Process, grace: float = 5.0) -> None:
    """Ask ``process`` to stop (SIGTERM), and kill it if it has not within ``grace`` seconds."""
    process.terminate()
    with trio.move_on_after(grace):
        await process.wait()
    if process.returncode is None:
        process.kill()
        await process.wait()


def available() -> bool:
    """Whether the directory scenario can run here: it needs a ``redis-server``."""
    return shutil.which("redis-server") is not None


def _p99(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, math.ceil(0.99 * len(ordered)) - 1)] if ordered else math.inf


def _ms(seconds: float) -> float | None:
    return None if math.isinf(seconds) else round(seconds * 1000, 1)


class Pings(TypedDict):
    """A bystander's pings to one server (``_pings``): answered, lost, the 99th percentile and the slowest."""

    pings: int
    lost: int
    p99_ms: float | None
    ping_slowest_ms: float | None


class Creates(TypedDict):
    """A creator's tables at one server (``_creates``): asked, the answers by what they were, the slowest."""

    creates: int
    answers: dict[str, int]
    create_slowest_ms: float | None


class Wave(TypedDict):
    """One flood of the metrics port (``_flood_wave``)."""

    connections: int
    connect_failed: int
    descriptors_before: int
    descriptors_peak: int
    scrape_ms: float | None
    hello_ms: float | None


# --- a player, through the client core ----------------------------------------------------------------------


class Player:
    """One client of a server over TCP, through ``quatro_shared.client``: requests answered in turn (pushes between
    are read and let go), ``moved`` followed as every client follows it (a request carrying a secret is proved
    first). One task uses a player at a time."""

    def __init__(self, stream: trio.SocketStream, name: str, local: str) -> None:
        self.stream, self.name, self.local = stream, name, local
        self.core = ClientCore(name)
        #: Where ``moved`` sent this player, in order (host, port).
        self.moves: list[tuple[str, int]] = []

    @classmethod
    async def connect(cls, port: int, name: str, local: str) -> Player:
        player = cls(await _open(local, port), name, local)
        reply = await player.ask(None)
        if not isinstance(reply, m.Ok):
            await player.aclose()
            raise OSError(f"hello refused: {reply}")
        return player

    async def ask(self, body: m.RequestBody | None, timeout: float = 10.0) -> m.Reply | None:
        """Send ``body`` (None: ``hello``) and return its answer; None when the link closed or time ran out."""
        with trio.move_on_after(timeout):
            now = trio.current_time()
            request_id, data = self.core.hello(now) if body is None else self.core.send(body, now)
            await self.stream.send_all(data)
            while True:
                data = await self.stream.receive_some(65536)
                if not data:
                    return None
                for event in self.core.receive_data(data, trio.current_time()):
                    if not isinstance(event, Answered) or event.id != request_id:
                        continue
                    if self.core.redirect is None:
                        return event.reply
                    request_id = await self._follow()
        return None

    async def _follow(self) -> int:
        """The core's redirect followed: a new link and a hello where it names (then the request, or a ``prove``
        first), or the request itself on this link once proven."""
        redirect = self.core.redirect
        assert redirect is not None
        if redirect.connect:
            host, port = redirect.address(self.stream.socket.getpeername()[0])
            await self.stream.aclose()
            self.core.connection_lost()
            self.moves.append((host, port))
            self.stream = await _open(self.local, port, host)
            hello_id, data = self.core.hello(trio.current_time())
            await self.stream.send_all(data)
            answered = False
            while not answered:
                data = await self.stream.receive_some(65536)
                if not data:
                    raise trio.BrokenResourceError("the server a moved named closed the link")
                answered = any(
                    isinstance(e, Answered) and e.id == hello_id
                    for e in self.core.receive_data(data, trio.current_time())
                )
        request_id, data = self.core.repeat(trio.current_time())
        await self.stream.send_all(data)
        return request_id

    async def aclose(self) -> None:
        with suppress(trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            await self.stream.aclose()


async def _open(local: str, port: int, host: str = "127.0.0.1") -> trio.SocketStream:
    sock = trio.socket.socket(trio.socket.AF_INET, trio.socket.SOCK_STREAM)
    try:
        await sock.bind((local, 0))
        await sock.connect((host, port))
    except OSError:
        sock.close()
        raise
    return trio.SocketStream(sock)


# --- the servers' Redis -------------------------------------------------------------------------------------


class Redis:
    """A ``redis-server`` on a Unix socket in a temporary directory, nothing saved: what an operator's Redis without
    persistence is. ``restart`` kills it and starts an empty one on the same socket."""

    def __init__(self) -> None:
        self.folder = tempfile.TemporaryDirectory(prefix="quatro-soak-redis-")
        self.path = Path(self.folder.name) / "redis.sock"
        self.process: trio.Process | None = None

    @property
    def url(self) -> str:
        return f"unix://{self.path}?db=0"

    async def start(self) -> None:
        binary = shutil.which("redis-server")
        assert binary is not None
        self.path.unlink(missing_ok=True)
        self.process = await trio.lowlevel.open_process(
            [binary, "--port", "0", "--unixsocket", str(self.path), "--save", "", "--appendonly", "no"]
            + ["--dir", self.folder.name, "--loglevel", "warning"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        with trio.fail_after(10):
            while True:
                with suppress(OSError):
                    stream = await trio.open_unix_socket(str(self.path))
                    await stream.send_all(b"PING\r\n")
                    answer = await stream.receive_some(64)
                    await stream.aclose()
                    if answer.startswith(b"+PONG"):
                        return
                await trio.sleep(0.02)

    def signal(self, number: int) -> None:
        assert self.process is not None
        with suppress(ProcessLookupError):
            os.kill(self.process.pid, number)

    async def restart(self) -> None:
        assert self.process is not None
        self.signal(signal.SIGCONT)
        self.process.kill()
        await self.process.wait()
        await self.start()

    async def stop(self) -> None:
        if self.process is not None and self.process.returncode is None:
            self.signal(signal.SIGCONT)
            await terminate(self.process)
        self.folder.cleanup()

    def write(self, key: str, value: bytes, channel: str, message: bytes) -> None:
        """A key set (for 3 s) and a message published, in the calling thread (an attacker's client: redis-py, as
        the servers' own)."""
        import redis

        client = redis.Redis.from_url(self.url, socket_timeout=5)
        try:
            client.set(key, value, px=3000)
            client.publish(channel, message)
        finally:
            client.close()


# --- the forger ---------------------------------------------------------------------------------------------


class Forger:
    """A listener of the attacker's on 127.0.0.1 that speaks just enough of the protocol to be followed: ``hello``
    answered as a server would, ``prove`` with a proof of nothing, anything else refused. It keeps every byte."""

    def __init__(self) -> None:
        self.received = bytearray()
        self.kinds: list[str] = []
        self.port = 0

    async def serve(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
        self.port = int(listeners[0].socket.getsockname()[1])
        task_status.started()
        await trio.serve_listeners(self._handle, listeners)

    async def _handle(self, stream: trio.SocketStream) -> None:
        decoder = FrameDecoder()
        with suppress(trio.BrokenResourceError, trio.ClosedResourceError, ProtocolError, OSError):
            async with stream:
                while data := await stream.receive_some(65536):
                    self.received.extend(data)
                    for frame in decoder.feed(data):
                        self.kinds.append(str(frame.get("kind")))
                        await stream.send_all(encode(self._answer(frame)))

    @staticmethod
    def _answer(frame: Message) -> dict[str, object]:
        request_id = frame.get("id")
        if frame.get("kind") == p.HELLO:
            welcome = {"version": p.PROTOCOL_VERSION, "server": "soak", "profiles": ["fast"], "tables": []}
            return {"kind": p.OK, "id": request_id, **welcome, "games": list(games.names())}
        if frame.get("kind") == p.PROVE:
            return {"kind": p.OK, "id": request_id, "proofs": [os.urandom(32).hex()], "salt": "scrypt$16$1$1$00"}
        return {"kind": p.REFUSED, "id": request_id, "reason": "nope", "message": "thank you", "wait_ms": None}

    def got(self, value: str) -> bool:
        return value.encode() in self.received


async def _forge(redis: Redis, address: str, summary: dict[str, object], stop: trio.Event) -> None:
    """The forged record and its word on the lobby's channel, said every 0.05 s (faster than a server's heartbeat)
    until ``stop``: as far as the servers are told, ``summary``'s table is at ``address``."""
    record = msgpack.packb({"server": address, "summary": summary})
    told = msgpack.packb({"server": address, "set": [summary], "gone": [], "whole": False})
    while not stop.is_set():
        await trio.to_thread.run_sync(redis.write, f"quatro:table:{summary['table']}", record, "quatro:lobby", told)
        with trio.move_on_after(0.05):
            await stop.wait()


# --- the directory scenario ---------------------------------------------------------------------------------


class Side:
    """One of the two servers, with its players."""

    def __init__(self, server: SoakServer, index: int) -> None:
        self.server, self.index = server, index
        self.holders: list[Player] = []
        self.held: dict[int, str] = {}  # table -> its creator's secret
        self.match: Player | None = None

    @property
    def port(self) -> int:
        return int(self.server.port)


async def _hold_tables(side: Side, count: int) -> None:
    for n in range(count):
        holder = await Player.connect(side.port, f"holder{side.index}-{n}", PLAYERS)
        reply = await holder.ask(m.CreateTable(players=4))
        if isinstance(reply, m.Ok) and isinstance(reply.payload, m.Seated):
            side.holders.append(holder)
            side.held[reply.payload.table] = reply.payload.secret
        else:
            await holder.aclose()


async def _start_match(side: Side, local: str = PLAYERS) -> tuple[int, str] | None:
    """A player and three bots at a match on ``side``: the table and the player's secret."""
    player = await Player.connect(side.port, f"player{side.index}", local)
    created = await player.ask(m.CreateTable(players=4))
    if not (isinstance(created, m.Ok) and isinstance(created.payload, m.Seated)):
        await player.aclose()
        return None
    for _ in range(3):
        await player.ask(m.AddBot(level="normal"))
    await player.ask(m.Start())
    side.match = player
    side.held[created.payload.table] = created.payload.secret
    return created.payload.table, created.payload.secret


async def _keep(sides: list[Side]) -> None:
    """A ping from every held player (their heartbeat, and their pushes read)."""
    for side in sides:
        for player in [*side.holders, *([side.match] if side.match else [])]:
            await player.ask(m.Ping(), timeout=5)


async def _pings(side: Side, until: Callable[[], bool]) -> Pings:
    bystander = await Player.connect(side.port, f"bystander{side.index}", BYSTANDERS)
    took: list[float] = []
    lost = 0
    try:
        while not until():
            started = trio.current_time()
            reply = await bystander.ask(m.Ping(), timeout=STALL_SECONDS + 10)
            if reply is None:
                lost += 1
            else:
                took.append(trio.current_time() - started)
            await trio.sleep(max(0.0, PING_EVERY - (trio.current_time() - started)))
    finally:
        await bystander.aclose()
    return {"pings": len(took), "lost": lost, "p99_ms": _ms(_p99(took)), "ping_slowest_ms": _ms(max(took, default=0.0))}


async def _creates(side: Side, until: Callable[[], bool]) -> Creates:
    creator = await Player.connect(side.port, f"creator{side.index}", CREATORS[side.index])
    took: list[float] = []
    answers: dict[str, int] = {}
    try:
        while not until():
            started = trio.current_time()
            reply = await creator.ask(m.CreateTable(players=4), timeout=CREATE_BOUND + 15)
            took.append(trio.current_time() - started)
            what = "lost" if reply is None else ("created" if isinstance(reply, m.Ok) else str(reply.kind))
            if isinstance(reply, m.Refused):
                what = reply.reason
            answers[what] = answers.get(what, 0) + 1
            if isinstance(reply, m.Ok):
                await creator.ask(m.Leave())
            await trio.sleep(0.2)
    finally:
        await creator.aclose()
    return {"creates": len(took), "answers": answers, "create_slowest_ms": _ms(max(took, default=0.0))}


async def redis_stalled(sides: list[Side], redis: Redis) -> dict[str, object]:
    pings: dict[int, Pings] = {}
    creates: dict[int, Creates] = {}
    stop_at = trio.current_time() + 0.5 + STALL_SECONDS

    def over() -> bool:
        return trio.current_time() >= stop_at

    async def ping(side: Side) -> None:
        pings[side.index] = await _pings(side, over)

    async def create(side: Side) -> None:
        creates[side.index] = await _creates(side, over)

    async with trio.open_nursery() as nursery:
        for side in sides:
            nursery.start_soon(ping, side)
            nursery.start_soon(create, side)
        await trio.sleep(0.5)  # the bystanders' first pings, then Redis stops answering
        redis.signal(signal.SIGSTOP)
        await trio.sleep_until(stop_at)
        redis.signal(signal.SIGCONT)
    servers = {}
    passed = True
    for side in sides:
        ping_ms, create_ms = pings[side.index]["p99_ms"], creates[side.index]["create_slowest_ms"]
        ok = (
            pings[side.index]["lost"] == 0
            and ping_ms is not None
            and ping_ms < PING_BOUND * 1000
            and creates[side.index]["creates"] > 0
            and "lost" not in creates[side.index]["answers"]
            and create_ms is not None
            and create_ms < CREATE_BOUND * 1000
        )
        passed = passed and ok
        servers[f"server_{side.index}"] = {**pings[side.index], **creates[side.index]}
    return {
        "passed": passed,
        "stopped_s": STALL_SECONDS,
        **servers,
        "ping_p99_bound_ms": PING_BOUND * 1000,
        "create_bound_ms": CREATE_BOUND * 1000,
    }


async def _listed_ids(side: Side) -> list[int]:
    looker = await Player.connect(side.port, f"looker{side.index}", NEWCOMERS[side.index])
    try:
        reply = await looker.ask(m.ListTables())
    finally:
        await looker.aclose()
    if isinstance(reply, m.Ok) and isinstance(reply.payload, m.Tables):
        return [summary.table for summary in reply.payload.tables]
    return []


async def redis_restarted(sides: list[Side], redis: Redis) -> dict[str, object]:
    live = {table for side in sides for table in side.held}
    lost_before = sum(side.server.marks.get("journal_write_lost", 0) for side in sides)
    await redis.restart()  # killed, and started empty on the same socket
    await trio.sleep(0.5)
    new: dict[int, list[int]] = {side.index: [] for side in sides}
    refused: dict[str, int] = {}

    async def create(side: Side) -> None:
        creator = await Player.connect(side.port, f"newcomer{side.index}", NEWCOMERS[side.index])
        try:
            with trio.move_on_after(30):
                while len(new[side.index]) < NEW_TABLES:
                    reply = await creator.ask(m.CreateTable(players=4))
                    if isinstance(reply, m.Ok) and isinstance(reply.payload, m.Seated):
                        new[side.index].append(reply.payload.table)
                        await creator.ask(m.Leave())
                    else:
                        why = "lost" if reply is None else getattr(reply, "reason", reply.kind)
                        refused[why] = refused.get(why, 0) + 1
                        await trio.sleep(0.3)  # "try again in a moment": the servers reach the new Redis
                    await trio.sleep(0.05)
        finally:
            await creator.aclose()

    async with trio.open_nursery() as nursery:
        for side in sides:
            nursery.start_soon(create, side)
    given = [table for tables in new.values() for table in tables]
    collisions = len([table for table in given if table in live]) + (len(given) - len(set(given)))
    await trio.sleep(TTL / 3 + 0.5)  # each server has told its tables to the new Redis, and heard the other's
    listed_twice = 0
    for side in sides:
        listed = await _listed_ids(side)
        listed_twice += len(listed) - len(set(listed))
    lost = sum(side.server.marks.get("journal_write_lost", 0) for side in sides) - lost_before
    created = all(len(tables) == NEW_TABLES for tables in new.values())
    return {
        "passed": created and collisions == 0 and listed_twice == 0 and lost == 0,
        "live_tables": sorted(live),
        "new_tables": {f"server_{index}": tables for index, tables in new.items()},
        "refused_meanwhile": refused,
        "id_collisions": collisions,
        "listed_twice": listed_twice,
        "journal_writes_lost": lost,
    }


async def forged_record(sides: list[Side], redis: Redis, forger: Forger) -> dict[str, object]:
    """A live table at server 0: its player drops, the forger claims the table, the player comes back through server
    1 with its secret; a table at server 0 still seating players, claimed too, joined through server 1 with its
    password."""
    one, other = sides
    started = await _start_match(one, VICTIMS)
    host = await Player.connect(one.port, "host", VICTIMS)
    seating = await host.ask(m.CreateTable(players=4, password=PASSWORD))
    if started is None or not (isinstance(seating, m.Ok) and isinstance(seating.payload, m.Seated)):
        await host.aclose()
        return {"passed": False, "error": f"the tables to forge could not be made: {started} {seating}"}
    table, secret = started
    one.holders.append(host)
    waiting = seating.payload.table
    assert one.match is not None
    await one.match.aclose()  # the player's link drops: its seat waits for its secret
    one.match = None
    answers: dict[str, int] = {}
    moved_to_forger = 0
    forged = 0
    stop = trio.Event()
    async with trio.open_nursery() as nursery:
        for target in (table, waiting):
            summary = await _summary(other, target)
            if summary is None:
                continue
            forged += 1
            nursery.start_soon(_forge, redis, f"127.0.0.1:{forger.port}", summary, stop)
        await trio.sleep(0.5)
        for attempt in range(FORGED_TRIES):
            for request in (m.Rejoin(table, secret), m.Join(waiting, PASSWORD)):
                player = await Player.connect(other.port, f"back{attempt}", PLAYERS)
                reply = await player.ask(request)
                what = "lost" if reply is None else getattr(reply, "reason", None) or str(reply.kind)
                key = f"{request.kind}_{what}"
                answers[key] = answers.get(key, 0) + 1
                moved_to_forger += any(port == forger.port for _, port in player.moves)
                if isinstance(reply, m.Ok):
                    await player.ask(m.Leave())  # an honest hand-over (server 0 proved it): the seat is let go
                await player.aclose()
        stop.set()
    leaked = int(forger.got(secret))
    passwords_leaked = int(forger.got(PASSWORD))
    requests = [kind for kind in forger.kinds if kind not in (p.HELLO, p.PROVE)]
    return {
        "passed": forged == 2 and moved_to_forger > 0 and leaked == 0 and passwords_leaked == 0 and not requests,
        "records_forged": forged,
        "tries": 2 * FORGED_TRIES,
        "sent_to_forger": moved_to_forger,
        "answers": answers,
        "forger_received": {kind: forger.kinds.count(kind) for kind in sorted(set(forger.kinds))},
        "secrets_leaked": leaked,
        "passwords_leaked": passwords_leaked,
    }


async def _summary(side: Side, table: int) -> dict[str, object] | None:
    """The table's line in ``side``'s lobby, as the wire carries it (what a forger copies)."""
    looker = await Player.connect(side.port, "looker", NEWCOMERS[side.index])
    try:
        with trio.move_on_after(10):
            while True:
                request_id, data = looker.core.send(m.ListTables(), trio.current_time())
                await looker.stream.send_all(data)
                decoder = FrameDecoder()
                while True:
                    frames = decoder.feed(await looker.stream.receive_some(65536))
                    found = [f for f in frames if f.get("id") == request_id]
                    if found:
                        break
                listed = found[0].get("tables")
                lines = [
                    line
                    for line in (listed if isinstance(listed, list) else [])
                    if isinstance(line, dict) and line.get("table") == table
                ]
                if lines:
                    return dict(lines[0])
                await trio.sleep(0.1)
    finally:
        await looker.aclose()
    return None


async def soak_directory(starter: ServerStarter) -> dict[str, object]:
    """The directory scenarios one after another, on two servers sharing one Redis (``starter`` makes a server,
    as ``quatro_server.tools.soak.ServerProcess``)."""
    redis = Redis()
    await redis.start()
    servers = [
        starter(["--directory", redis.url, "--directory-ttl", str(TTL)], marks=("journal_write_lost",))
        for _ in range(2)
    ]
    results: dict[str, dict[str, object]] = {}
    forger = Forger()
    try:
        async with trio.open_nursery() as nursery:
            for server in servers:
                await server.start(nursery)
            await nursery.start(forger.serve)
            sides = [Side(server, index) for index, server in enumerate(servers)]
            for side, count in zip(sides, HELD_TABLES, strict=True):
                await _hold_tables(side, count)
                await _start_match(side)
            scenarios: list[tuple[str, Awaitable[dict[str, object]]]] = [
                ("redis_stalled", redis_stalled(sides, redis)),
                ("redis_restarted", redis_restarted(sides, redis)),
                ("forged_record", forged_record(sides, redis, forger)),
            ]
            for name, scenario in scenarios:
                try:
                    results[name] = await scenario
                except Exception as exc:  # noqa: BLE001 - the scenario could not run: it failed
                    results[name] = {"passed": False, "error": f"{type(exc).__name__}: {exc}"[:300]}
                await _keep(sides)
            for server in servers:
                await server.stop()
            nursery.cancel_scope.cancel()
    finally:
        await redis.stop()
    crashes = sum(server.deaths + server.tracebacks for server in servers)
    forged = results.get("forged_record", {})
    restarted = results.get("redis_restarted", {})
    return {
        "passed": all(result.get("passed") for result in results.values()) and crashes == 0 and len(results) == 3,
        "crashes": crashes,
        "secrets_leaked": framing.count(forged, "secrets_leaked") + framing.count(forged, "passwords_leaked"),
        "id_collisions": restarted.get("id_collisions", 0),
        "journal_writes_lost": sum(server.marks.get("journal_write_lost", 0) for server in servers),
        "server_errors": [error for server in servers for error in server.errors][:5],
        "server_log_tail": [line for server in servers for line in server.log_tail[-4:]],
        "scenarios": results,
    }


# --- the metrics scenario -----------------------------------------------------------------------------------


def _descriptors(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


async def _scrape(port: int) -> float:
    """A scrape of ``/metrics`` from SCRAPER: seconds until its answer, tried again every 0.1 s while the endpoint
    closes it unanswered (full); inf if none within 15 s."""
    started = trio.current_time()
    with trio.move_on_after(15):
        while True:
            with suppress(OSError, trio.BrokenResourceError, trio.ClosedResourceError):
                stream = await _open(SCRAPER, port)
                async with stream:
                    await stream.send_all(b"GET /metrics HTTP/1.1\r\nHost: soak\r\n\r\n")
                    answer = await stream.receive_some(65536)
                    if answer.startswith(b"HTTP/1.1 200"):
                        return trio.current_time() - started
            await trio.sleep(0.1)
    return math.inf


async def _hello(port: int) -> float:
    started = trio.current_time()
    with trio.move_on_after(15), suppress(OSError, trio.BrokenResourceError):
        player = await Player.connect(port, "probe", HELLO_FROM)
        await player.aclose()
        return trio.current_time() - started
    return math.inf


async def _flood_wave(server: SoakServer, addresses: list[str], each: int) -> Wave:
    assert server.process is not None  # the soak started it
    pid = server.process.pid
    before = _descriptors(pid)
    held: list[trio.SocketStream] = []
    failed = 0
    for address in addresses:
        for _ in range(each):
            try:
                held.append(await _open(address, server.metrics_port))
            except OSError:
                failed += 1
    await trio.sleep(0.3)
    peak = _descriptors(pid)
    scrape_s, hello_s = await _scrape(server.metrics_port), await _hello(server.port)
    peak = max(peak, _descriptors(pid))
    for stream in held:
        await trio.aclose_forcefully(stream)
    return {
        "connections": len(held),
        "connect_failed": failed,
        "descriptors_before": before,
        "descriptors_peak": peak,
        "scrape_ms": _ms(scrape_s),
        "hello_ms": _ms(hello_s),
    }


async def soak_metrics(starter: ServerStarter) -> dict[str, object]:
    """The metrics endpoint flooded with silent connections, from one address and then from many."""
    from quatro_server.tools.soak_doors import free_port

    port = free_port()
    server = starter(["--metrics", f"127.0.0.1:{port}"], ready=b"/metrics", log_level="info")
    server.metrics_port = port
    cap, per_address = metrics_port.MAX_CONNECTIONS, metrics_port.MAX_CONNECTIONS_PER_ADDRESS
    async with trio.open_nursery() as nursery:
        await server.start(nursery)
        one = await _flood_wave(server, [FLOOD_ONE], 4 * per_address)
        await trio.sleep(metrics_port.REQUEST_TIMEOUT + 0.5)  # the held ones let go
        many = await _flood_wave(server, FLOOD_ADDRESSES, per_address)
        await trio.sleep(0.5)
        await server.stop()
        nursery.cancel_scope.cancel()
    grew = max(
        one["descriptors_peak"] - one["descriptors_before"], many["descriptors_peak"] - many["descriptors_before"]
    )
    crashes = server.deaths + len(server.errors)
    full_wait = metrics_port.REQUEST_TIMEOUT + 1.0
    passed = (
        one["scrape_ms"] is not None
        and one["scrape_ms"] < SCRAPE_BOUND * 1000
        and many["scrape_ms"] is not None
        and many["scrape_ms"] < full_wait * 1000
        and all(w["hello_ms"] is not None and w["hello_ms"] < HELLO_BOUND * 1000 for w in (one, many))
        and grew <= cap + DESCRIPTOR_SLACK
        and server.tracebacks == 0
        and crashes == 0
    )
    return {
        "passed": passed,
        "crashes": crashes,
        "tracebacks": server.tracebacks,
        "scenarios": {
            "metrics_flood": {
                "passed": passed,
                "one_address": one,
                "many_addresses": many,
                "descriptors_grew": grew,
                "descriptor_bound": cap + DESCRIPTOR_SLACK,
                "caps": {
                    "connections": cap,
                    "per_address": per_address,
                    "request_timeout_s": metrics_port.REQUEST_TIMEOUT,
                },
                "scrape_bound_ms": SCRAPE_BOUND * 1000,
                "scrape_bound_when_full_ms": full_wait * 1000,
                "hello_bound_ms": HELLO_BOUND * 1000,
                "log_bytes": server.log_bytes,
            }
        },
    }
