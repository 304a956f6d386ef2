"""What the table directory costs: per lobby change, per ``moved`` hand-over, the lobby push across servers, and a
table's capacity per core with the directory on and off.

    python benchmarks/directory.py [--changes 200] [--handovers 50] [--json]
    python benchmarks/directory.py --capacity --tables 50 --seconds 6 --rounds 3   # server_fanout.py, on and off

It starts a private ``redis-server`` (loopback, a free port, no persistence) and two ``quatro-server`` processes
sharing it (``--directory``), and beside them one server without a directory, each on 127.0.0.1:

- **per lobby change**: a client at a table of server A adds a bot and removes it, ``--changes`` times (each one
  lobby change, told to the directory); the CPU time of A (every thread: the event loop, the Redis threads) and of B
  (which hears the change and pushes its lobby) per change, beside the CPU time per change of the server without a
  directory doing the same. The difference is the directory's cost. Each server's CPU time while idle for as long
  (its timers, the directory's heartbeat) is taken off first. ``/proc`` counts in ticks of 10 ms: use a few
  hundred changes.
- **lobby push across servers**: for each change, from A's ``ok`` to the ``lobby`` push at a client in B's lobby
  that shows it (this process's clock; p50 and p99).
- **per hand-over**: a join of a table of A through B (connect, hello, join, ``moved``, connect to A, hello, join
  again) beside the same join made at A directly (connect, hello, join); the difference is the hand-over's cost.
- ``--capacity``: ``benchmarks/server_fanout.py --json`` with and without ``--directory`` (the same load, targets
  alternating with ``--rounds``), and the ratio of the tables one core holds; the directory should cost under 10%.

Figures, not tests: nothing here asserts a threshold. Results go to docs/operating.md by hand.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import trio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from quatro_shared import messages as m  # noqa: E402
from quatro_shared.client import Answered, ClientCore, TablesListed  # noqa: E402
from quatro_shared.games.quarto import contract as q  # noqa: E402

HOST = "127.0.0.1"
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
#: Seconds between two lobby changes: under the server's inbound rate limit (30 requests a second).
PACE = 0.04


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    """A process's CPU time, user and system, every thread (``/proc/PID/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


class Redis:
    def __init__(self, folder: Path) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise SystemExit("benchmarks/directory.py needs redis-server (Debian's package)")
        self.port = free_port()
        self.proc = subprocess.Popen(
            [
                binary,
                "--port",
                str(self.port),
                "--bind",
                HOST,
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(folder),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection((HOST, self.port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.05)
        raise SystemExit("redis-server did not start")

    @property
    def url(self) -> str:
        return f"redis://{HOST}:{self.port}/0"

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(5)


class Server:
    def __init__(self, data: Path, *options: str) -> None:
        self.port = free_port()
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "quatro_server",
                "--host",
                HOST,
                "--port",
                str(self.port),
                "--timing",
                "fast",
                "--no-journal",
                "--trusted-address",
                HOST,
                "--log-level",
                "warning",
                *options,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=data,
        )
        assert self.proc.stdout is not None
        while b"quatro join" not in self.proc.stdout.readline():
            if self.proc.poll() is not None:
                raise SystemExit("a server did not start")

    def cpu(self) -> float:
        return cpu_seconds(self.proc.pid)

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()


class Client:
    """A client through the shared core: requests, their replies, the lobby pushes with when they came."""

    def __init__(self, name: str) -> None:
        self.core = ClientCore(name)
        self.stream: trio.SocketStream | None = None
        self.replies: dict[int, m.Reply] = {}
        self.lobbies: list[tuple[float, tuple[m.TableSummary, ...]]] = []
        self._arrived = trio.Event()

    async def connect(self, port: int) -> None:
        self.stream = await trio.open_tcp_stream(HOST, port)
        self.core.connection_lost()
        await self.ask(self.core.hello)

    async def read(self) -> None:
        assert self.stream is not None
        while data := await self.stream.receive_some(65536):
            now = time.perf_counter()
            for event in self.core.receive_data(data, trio.current_time()):
                if isinstance(event, Answered):
                    self.replies[event.id] = event.reply
                elif isinstance(event, TablesListed):
                    self.lobbies.append((now, event.tables))
            self._arrived.set()

    async def wait(self, request_id: int) -> m.Reply:
        while request_id not in self.replies:
            self._arrived = trio.Event()
            await self._arrived.wait()
        return self.replies.pop(request_id)

    async def ask(self, make: Any) -> m.Reply:
        """Send ``make(now)``'s frame (a core method) and read until its reply (no reader task needed)."""
        assert self.stream is not None
        request_id, data = make(trio.current_time())
        await self.stream.send_all(data)
        while request_id not in self.replies:
            data = await self.stream.receive_some(65536)
            assert data, "the server closed the connection"
            for event in self.core.receive_data(data, trio.current_time()):
                if isinstance(event, Answered):
                    self.replies[event.id] = event.reply
        return self.replies.pop(request_id)

    async def request(self, body: m.RequestBody) -> m.Reply:
        return await self.ask(lambda now: self.core.send(body, now))

    async def join_following(self, table: int) -> m.Reply:
        """A join, following ``moved`` as every client does."""
        reply = await self.request(m.Join(table))
        while self.core.redirect is not None:
            if self.core.redirect.connect:  # a ``moved``; a right proof (a request with a secret) stays on the link
                assert self.stream is not None
                host, port = self.core.redirect.address(HOST)
                await self.stream.aclose()
                await self.connect(port)
            reply = await self.ask(self.core.repeat)
        return reply


def quantile_ms(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(share * len(ordered)))] * 1000, 3)


async def lobby_changes(a: Server, b: Server | None, changes: int) -> dict[str, Any]:
    """``changes`` lobby changes at a table of ``a`` (a bot added, removed); with ``b``, a client in ``b``'s lobby
    times the push that shows each."""
    host = Client("host")
    await host.connect(a.port)
    created = await host.request(m.CreateTable(None, game=q.NAME))
    assert isinstance(created, m.Ok) and isinstance(created.payload, m.Seated)
    table = created.payload.table
    latencies: list[float] = []
    async with trio.open_nursery() as nursery:
        watcher = None
        if b is not None:
            watcher = Client("watcher")
            await watcher.connect(b.port)
            nursery.start_soon(watcher.read)
        await trio.sleep(0.5)
        # The servers idle for as long as the changes take: what they cost doing nothing, taken off below.
        idle_a, idle_b = a.cpu(), (b.cpu() if b is not None else 0.0)
        await trio.sleep(changes * PACE + 0.3)
        idle_a, idle_b = a.cpu() - idle_a, (b.cpu() - idle_b if b is not None else 0.0)
        cpu_a, cpu_b = a.cpu(), (b.cpu() if b is not None else 0.0)
        for i in range(changes):
            body: m.RequestBody = m.AddBot(level="random") if i % 2 == 0 else m.RemoveBot(1)
            reply = await host.request(body)
            assert isinstance(reply, m.Ok), reply
            sent = time.perf_counter()
            taken = 2 if i % 2 == 0 else 1
            if watcher is not None:
                with trio.fail_after(5):
                    while True:
                        seen = [
                            at
                            for at, tables in watcher.lobbies
                            if any(t.table == table and t.taken == taken for t in tables)
                        ]
                        if seen:
                            latencies.append(max(0.0, seen[-1] - sent))
                            watcher.lobbies.clear()
                            break
                        watcher._arrived = trio.Event()
                        await watcher._arrived.wait()
            await trio.sleep(PACE)
        await trio.sleep(0.3)  # what the last change set off, done
        used_a = a.cpu() - cpu_a - idle_a
        used_b = (b.cpu() - cpu_b - idle_b) if b is not None else 0.0
        nursery.cancel_scope.cancel()
    out: dict[str, Any] = {"holder_ms_per_change": round(used_a * 1000 / changes, 3)}
    if b is not None:
        out["other_ms_per_change"] = round(used_b * 1000 / changes, 3)
        out["push_p50_ms"], out["push_p99_ms"] = quantile_ms(latencies, 0.5), quantile_ms(latencies, 0.99)
    return out


async def handovers(a: Server, b: Server, count: int) -> dict[str, Any]:
    """Joins of tables of ``a`` made through ``b`` (moved) and at ``a`` directly: wall time of each."""
    moved: list[float] = []
    direct: list[float] = []
    for i in range(count):
        host = Client("host")
        await host.connect(a.port)
        created = await host.request(m.CreateTable(None, game=q.NAME))
        assert isinstance(created, m.Ok) and isinstance(created.payload, m.Seated)
        table = created.payload.table
        if i % 2 == 0:
            await trio.sleep(0.05)  # the table reaches b's directory
        joiner = Client("joiner")
        start = time.perf_counter()
        await joiner.connect(b.port if i % 2 == 0 else a.port)
        reply = await joiner.join_following(table)
        elapsed = time.perf_counter() - start
        assert isinstance(reply, m.Ok) and isinstance(reply.payload, m.Seated), reply
        (moved if i % 2 == 0 else direct).append(elapsed)
        for client in (joiner, host):
            assert client.stream is not None
            await client.stream.aclose()
    return {
        "join_direct_p50_ms": quantile_ms(direct, 0.5),
        "join_moved_p50_ms": quantile_ms(moved, 0.5),
        "handover_ms": round((statistics.median(moved) - statistics.median(direct)) * 1000, 3),
    }


def capacity(url: str, args: argparse.Namespace) -> dict[str, Any]:
    """server_fanout.py with and without the directory, alternating: the server's CPU µs per delivered message, of
    its event loop's thread (``us_per_msg``, what ``tables_per_core`` is worked out from) and of the whole process
    (``process_us_per_msg``: the directory's Redis threads too); the capacity per core goes as their inverse."""
    runs: dict[str, list[dict[str, float]]] = {"off": [], "on": []}
    for _ in range(args.rounds):
        for mode in ("off", "on"):
            command = [
                sys.executable,
                str(ROOT / "benchmarks" / "server_fanout.py"),
                "--tables",
                str(args.tables),
                "--seconds",
                str(args.seconds),
                "--warmup",
                str(args.warmup),
                "--pace",
                str(args.pace),
                "--relays",
                "none",
                "--json",
            ]
            if mode == "on":
                command += ["--directory", url]
            done = subprocess.run(command, capture_output=True, text=True, check=True, cwd=ROOT)
            size = json.loads(done.stdout)["sizes"][0]
            runs[mode].append(
                {key: float(size[key]) for key in ("us_per_msg", "process_us_per_msg", "tables_per_core", "p99_ms")}
            )

    def median(mode: str, key: str) -> float:
        return round(statistics.median(run[key] for run in runs[mode]), 2)

    out: dict[str, Any] = {"tables": args.tables, "rounds": runs}
    for key in ("us_per_msg", "process_us_per_msg", "tables_per_core", "p99_ms"):
        out[f"{key}_off"], out[f"{key}_on"] = median("off", key), median("on", key)
    out["capacity_on_over_off"] = round(out["us_per_msg_off"] / out["us_per_msg_on"], 3)
    out["process_capacity_on_over_off"] = round(out["process_us_per_msg_off"] / out["process_us_per_msg_on"], 3)
    return out


async def measure(args: argparse.Namespace, url: str, data: Path) -> dict[str, Any]:
    a = Server(data, "--directory", url)
    b = Server(data, "--directory", url)
    alone = Server(data)
    try:
        figures: dict[str, Any] = {"changes": args.changes, "handovers": args.handovers}
        with_directory = await lobby_changes(a, b, args.changes)
        without = await lobby_changes(alone, None, args.changes)
        figures["with_directory"] = with_directory
        figures["without_directory"] = without
        figures["directory_ms_per_change"] = round(
            with_directory["holder_ms_per_change"] - without["holder_ms_per_change"], 3
        )
        figures.update(await handovers(a, b, args.handovers))
        return figures
    finally:
        for server in (a, b, alone):
            server.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--changes", type=int, default=200, help="lobby changes to time")
    parser.add_argument("--handovers", type=int, default=50, help="joins to time, half of them moved")
    parser.add_argument(
        "--capacity", action="store_true", help="also run server_fanout.py with the directory on and off"
    )
    parser.add_argument("--tables", type=int, default=50, help="--capacity: tables of 8 seats")
    parser.add_argument("--seconds", type=float, default=6.0, help="--capacity: measured window of each run")
    parser.add_argument("--warmup", type=float, default=2.0, help="--capacity: seconds of load before the window")
    parser.add_argument("--rounds", type=int, default=1, help="--capacity: runs of each, alternating (the median)")
    parser.add_argument("--pace", type=float, default=3.0, help="--capacity: times the standard timing's pace")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON document")
    args = parser.parse_args()
    data = Path(tempfile.mkdtemp(prefix="quatro-directory-bench-"))
    redis = Redis(data)
    try:
        figures = trio.run(measure, args, redis.url, data)
        if args.capacity:
            figures["capacity"] = capacity(redis.url, args)
    finally:
        redis.stop()
        shutil.rmtree(data, ignore_errors=True)
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    w, wo = figures["with_directory"], figures["without_directory"]
    print(
        f"lobby change: holder {w['holder_ms_per_change']} ms CPU with the directory, "
        f"{wo['holder_ms_per_change']} ms without: the directory {figures['directory_ms_per_change']} ms; "
        f"the other server {w['other_ms_per_change']} ms"
    )
    print(f"lobby push across servers: p50 {w['push_p50_ms']} ms, p99 {w['push_p99_ms']} ms")
    print(
        f"join: direct {figures['join_direct_p50_ms']} ms, moved {figures['join_moved_p50_ms']} ms: "
        f"the hand-over {figures['handover_ms']} ms"
    )
    if "capacity" in figures:
        c = figures["capacity"]
        print(
            f"capacity at {c['tables']} tables: {c['us_per_msg_off']} µs per message without the directory, "
            f"{c['us_per_msg_on']} with ({c['capacity_on_over_off']}x the tables per core); the whole process "
            f"{c['process_us_per_msg_off']} / {c['process_us_per_msg_on']} µs ({c['process_capacity_on_over_off']}x); "
            f"p99 {c['p99_ms_off']} / {c['p99_ms_on']} ms"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
