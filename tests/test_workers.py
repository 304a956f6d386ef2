"""``quatro-server --workers N``: a supervisor and its worker processes behind one public port, as real processes on
127.0.0.1: both workers serve the port, a worker killed outright is started again with its tables, SIGTERM stops
everything with a goodbye, and a supervisor killed outright leaves nothing behind."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
import trio

from quatro_shared import protocol as p
from quatro_shared.games.quatro.views import Phase

from helpers.netclient import TestClient
from quatro_server.workers import supervisor as workers
from test_admin import SHORT, push
from test_server import open_round

pytestmark = pytest.mark.skipif(
    workers.shutil.which("redis-server") is None and not os.environ.get("CI"),
    reason="redis-server is not installed (.ci/run installs it)",
)


class Supervisor:
    """A ``quatro-server --workers N`` process: its port, its workers' processes, what it printed."""

    def __init__(self, proc: trio.Process, port: int, out: str) -> None:
        self.proc, self.port, self.out = proc, port, out

    def workers(self) -> dict[int, psutil.Process]:
        """The live workers by number."""
        found = {}
        for child in psutil.Process(self.proc.pid).children():
            try:
                command = child.cmdline()
            except psutil.NoSuchProcess:
                continue
            if "--worker-index" in command:
                found[int(command[command.index("--worker-index") + 1])] = child
        return found

    def private_port(self, worker: psutil.Process) -> int:
        """The private port of ``worker``: the listening socket it holds that is not the public one."""
        ports = {c.laddr.port for c in worker.net_connections("tcp") if c.status == psutil.CONN_LISTEN}
        (port,) = ports - {self.port}
        return port

    def holder(self, client: TestClient) -> int:
        """The number of the worker that holds ``client``'s connection."""
        local = client.stream.socket.getsockname()[1]
        for index, worker in self.workers().items():
            if any(c.raddr and c.raddr.port == local for c in worker.net_connections("tcp")):
                return index
        raise AssertionError(f"no worker holds the connection from port {local}")

    async def wait_workers(self, count: int, seconds: float = 20) -> dict[int, psutil.Process]:
        with trio.fail_after(seconds):
            while len(found := self.workers()) < count:
                await trio.sleep(0.05)
        return found


async def start_supervisor(tmp_path: Path, *args: str, count: int = 2) -> Supervisor:
    proc = await trio.lowlevel.open_process(
        [
            sys.executable,
            "-m",
            "quatro_server",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--workers",
            str(count),
            "--data-dir",
            str(tmp_path / "data"),
            "--timing",
            "fast",
            *args,
        ],
        stdout=subprocess.PIPE,
        stderr=open(tmp_path / "supervisor.log", "wb"),  # noqa: SIM115 - the child holds it
    )
    out = b""
    with trio.fail_after(30):
        while b"quatro join 127.0.0.1:" not in out:
            chunk = await proc.stdout.receive_some(4096)
            assert chunk, f"the supervisor exited early: {out!r} {(tmp_path / 'supervisor.log').read_text()}"
            out += chunk
    line = next(line for line in out.decode().splitlines() if "quatro join" in line)
    supervisor = Supervisor(proc, int(line.rsplit(":", 1)[1]), out.decode())
    await supervisor.wait_workers(count)
    return supervisor


async def stop(supervisor: Supervisor) -> None:
    if supervisor.proc.returncode is None:
        supervisor.proc.send_signal(signal.SIGTERM)
        with trio.move_on_after(15):
            await supervisor.proc.wait()
        if supervisor.proc.returncode is None:
            supervisor.proc.kill()


def log_of(tmp_path: Path) -> str:
    return (tmp_path / "supervisor.log").read_text()


def journalled(worker_dir, table: int) -> bool:
    """Whether the worker's journal holds ``table`` and its first seat yet (its writer commits them, in one
    transaction, a moment after the table is made)."""
    with sqlite3.connect(f"file:{worker_dir / 'journal.sqlite3'}?mode=ro", uri=True) as db:
        return (
            db.execute("SELECT count(*) FROM tables WHERE id = ?", (table,)).fetchone()[0] == 1
            and db.execute("SELECT count(*) FROM seats WHERE table_id = ?", (table,)).fetchone()[0] >= 1
        )


async def on_each_worker(supervisor: Supervisor, names: tuple[str, str]) -> tuple[TestClient, TestClient]:
    """Two clients of the public port, the first held by one worker and the second by the other."""
    first = await TestClient.connect(supervisor.port, names[0])
    with trio.fail_after(10):
        while True:
            second = await TestClient.connect(supervisor.port, names[1])
            if supervisor.holder(second) != supervisor.holder(first):
                return first, second
            await second.aclose()


async def spread_over_both(supervisor: Supervisor) -> list[TestClient]:
    """Clients of the public port, each held open, until both workers have taken some. Which worker accepts a
    connection is the kernel's choice (the first awake), so a fixed number may all land on one; a worker that takes
    none within 10 s is not accepting."""
    clients: list[TestClient] = []
    held: set[int] = set()
    with trio.fail_after(10):
        while held != {1, 2}:
            c = await TestClient.connect(supervisor.port, f"p{len(clients)}")
            assert (await c.request(p.LIST_TABLES))["kind"] == p.OK
            clients.append(c)
            held.add(supervisor.holder(c))
            if len(clients) % 8 == 0:
                await trio.sleep(0.05)
    return clients


async def listed(client: TestClient, table: int, present: bool = True, seconds: float = 10) -> None:
    """Wait until ``client``'s lobby lists ``table`` (or, ``present`` False, no longer does)."""
    with trio.fail_after(seconds):
        while (table in [t["table"] for t in (await client.request(p.LIST_TABLES))["tables"]]) != present:
            await trio.sleep(0.05)


async def test_workers_share_the_public_port_and_a_join_on_the_other_worker_is_moved_and_plays(tmp_path):
    """With --workers alone the supervisor's own redis-server holds the directory. Clients of the one public port are
    spread over both workers; a table created on one is in the lobby of a client of the other, whose join is moved
    to the private port of the worker that holds it; four players so seated play. A second server on the same data
    directory is refused, and the private redis-server goes with the supervisor."""
    supervisor = await start_supervisor(tmp_path)
    clients: list[TestClient] = []
    try:
        assert "with 2 workers" in supervisor.out
        # The first address printed is where to join (a benchmark or a script takes the first it sees), the workers'
        # own lines after it.
        first = next(line for line in supervisor.out.splitlines() if "127.0.0.1:" in line)
        assert "quatro join" in first
        assert "redis.sock" in " ".join(supervisor.workers()[1].cmdline())
        clients = await spread_over_both(supervisor)
        for c in clients:
            await c.aclose()
        second = await trio.run_process(
            [
                sys.executable,
                "-m",
                "quatro_server",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--workers",
                "2",
                "--data-dir",
                str(tmp_path / "data"),
            ],
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
        assert second.returncode == 2
        assert b"another quatro-server is using" in second.stderr

        ann, bob = await on_each_worker(supervisor, ("ann", "bob"))
        assert (await ann.request(p.CREATE_TABLE, players=4))["kind"] == p.OK
        holder = supervisor.workers()[supervisor.holder(ann)]
        await listed(bob, ann.table)
        assert (await bob.request(p.JOIN, table=ann.table))["kind"] == p.OK
        assert bob.moves == [("127.0.0.1", supervisor.private_port(holder))]
        clients = [ann, bob]
        for name in ("cid", "dee"):
            c = await TestClient.connect(supervisor.port, name)
            assert (await c.request(p.JOIN, table=ann.table))["kind"] == p.OK
            clients.append(c)
        assert (await ann.request(p.START))["kind"] == p.OK
        for c in clients:
            await c.wait_view(lambda v: v.phase is Phase.SIGNING)
        await open_round(clients)
        view = bob.view
        assert (await bob.request("swap", give=view.hand[0], slot=1, take=view.center[1]))["kind"] == p.OK
        seen = await ann.wait_event("swapped")
        assert seen["seat"] == bob.seat
    finally:
        await stop(supervisor)
    assert not (tmp_path / "data" / "redis.sock").exists()


#: The directory's TTL in the kill test: short, so that the table's listing before the kill is gone in the test's time.
TTL = 3.0


async def test_a_worker_killed_outright_is_started_again_with_its_tables(tmp_path, redis_url):
    """The operator's Redis (--directory): no private one is started. kill -9 of a worker: its player's connection
    ends, the supervisor says so in its log and starts it again after a pause, on the same private port; the table
    comes back from the worker's own journal, the other worker lists it again, and the seat's secret rejoins it
    through the public port, from either worker."""
    supervisor = await start_supervisor(tmp_path, "--directory", redis_url, "--directory-ttl", str(TTL))
    try:
        assert "redis.sock" not in " ".join(supervisor.workers()[1].cmdline())
        ann, bob = await on_each_worker(supervisor, ("ann", "bob"))
        assert (await ann.request(p.CREATE_TABLE, players=4))["kind"] == p.OK
        table, secret = ann.table, ann.secret
        await listed(bob, table)
        index = supervisor.holder(ann)
        victim = supervisor.workers()[index]
        private = supervisor.private_port(victim)
        with trio.fail_after(10):
            while not journalled(tmp_path / "data" / f"worker-{index}", table):
                await trio.sleep(0.05)
        victim.kill()
        killed_at = trio.current_time()
        assert await ann.closed(timeout=5)
        found = await supervisor.wait_workers(2)
        assert found[index].pid != victim.pid
        with trio.fail_after(20):
            while f"worker_ready worker={index}" not in log_of(tmp_path).split("worker_exited")[-1]:
                await trio.sleep(0.05)
        log = log_of(tmp_path)
        assert f"worker_exited worker={index} pid={victim.pid} status=SIGKILL" in log
        assert "restart_in=0.5s" in log and f"worker_restarted worker={index}" in log
        assert supervisor.private_port(found[index]) == private
        # Past the TTL since the kill, what the other worker lists was announced by the restarted worker.
        await trio.sleep_until(killed_at + TTL + 0.5)
        await listed(bob, table, seconds=TTL)
        back = await TestClient.connect(supervisor.port, "ann")
        reply = await back.request(p.REJOIN, table=table, secret=secret)
        assert reply["kind"] == p.OK, reply
        assert back.moves in ([], [("127.0.0.1", private)])
        await back.aclose()
    finally:
        await stop(supervisor)


def free_ports(count: int) -> int:
    """The first of ``count`` consecutive ports free on 127.0.0.1 (as far as one can tell before using them)."""
    import socket

    for _ in range(50):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            first = probe.getsockname()[1]
        if first + count > 65535:
            continue
        try:
            held = []
            for port in range(first, first + count):
                sock = socket.socket()
                held.append(sock)
                sock.bind(("127.0.0.1", port))
        except OSError:
            continue
        finally:
            for sock in held:
                sock.close()
        return first
    raise AssertionError("no consecutive free ports")


async def test_sigterm_to_the_supervisor_stops_every_worker_with_a_goodbye(tmp_path):
    """Also: --worker-ports gives the workers' own ports, for a firewall."""
    first = free_ports(2)
    supervisor = await start_supervisor(tmp_path, "--worker-ports", str(first))
    assert {supervisor.private_port(w) for w in supervisor.workers().values()} == {first, first + 1}
    clients = await spread_over_both(supervisor)
    pids = [w.pid for w in supervisor.workers().values()]
    supervisor.proc.send_signal(signal.SIGTERM)
    for c in clients:
        frame = None
        while frame is None or frame["kind"] != p.BYE:
            frame = await c.next_frame()
            assert frame is not None, "closed without a goodbye"
        assert frame["reason"] == "shutdown"
    with trio.fail_after(15):
        assert await supervisor.proc.wait() == 0
    assert not any(psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE for pid in pids)
    assert "shutdown signal=SIGTERM workers=2" in log_of(tmp_path)


async def test_a_supervisor_killed_outright_leaves_no_worker_behind(tmp_path):
    supervisor = await start_supervisor(tmp_path)
    children = psutil.Process(supervisor.proc.pid).children()
    assert len(children) >= 2
    supervisor.proc.kill()
    await supervisor.proc.wait()
    with trio.fail_after(10):
        while any(c.is_running() and c.status() != psutil.STATUS_ZOMBIE for c in children):
            await trio.sleep(0.05)


def test_workers_auto_is_one_per_core_and_nonsense_is_refused():
    assert workers.worker_count("auto") == len(os.sched_getaffinity(0))
    assert workers.worker_count("3") == 3
    for bad in ("0", "-1", "many"):
        with pytest.raises(argparse.ArgumentTypeError):
            workers.worker_count(bad)


def test_without_redis_server_workers_say_how_to_install_it(tmp_path):
    """--workers without --directory needs redis-server: missing, the server says so and how to install it."""
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "quatro_server",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--workers",
            "2",
            "--data-dir",
            str(tmp_path / "data"),
        ],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, "PATH": str(tmp_path)},
    )
    assert run.returncode == 2
    assert "redis-server" in run.stderr and "apt-get install redis-server" in run.stderr and "--directory" in run.stderr


def test_stop_when_idle_is_refused_with_workers(tmp_path):
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "quatro_server",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--workers",
            "2",
            "--no-journal",
            "--stop-when-idle",
            "5",
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert run.returncode == 2 and "--stop-when-idle" in run.stderr


def test_a_worker_is_handed_the_operators_options_but_the_supervisors_own():
    from quatro_server.cli import _serving_actions

    actions = _serving_actions()
    args = argparse.ArgumentParser()
    for action in actions:
        args._add_action(action)  # noqa: SLF001
    parsed = args.parse_args(
        [
            "--workers",
            "2",
            "--port",
            "7000",
            "--timing",
            "fast",
            "--ssh",
            "0",
            "--seed",
            "4",
            "--trusted-address",
            "10.0.0.1",
            "--trusted-address",
            "10.0.0.2",
            "--no-journal",
            "--no-restore",
        ]
    )
    words = workers.worker_options(actions, parsed)
    assert words[words.index("--timing") + 1] == "fast" and words[words.index("--seed") + 1] == "4"
    assert words.count("--trusted-address") == 2 and "--no-journal" in words
    for own in ("--workers", "--port", "--ssh", "--no-restore", "--data-dir"):
        assert own not in words


async def test_a_worker_that_cannot_start_stops_the_supervisor_with_its_reason(tmp_path):
    """Worker 1's journal is locked by another process: it exits at once, and so does the supervisor, saying why."""
    import fcntl

    (tmp_path / "data" / "worker-1").mkdir(parents=True)
    with open(tmp_path / "data" / "worker-1" / "journal.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        run = await trio.run_process(
            [
                sys.executable,
                "-m",
                "quatro_server",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--workers",
                "2",
                "--data-dir",
                str(tmp_path / "data"),
            ],
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
    assert run.returncode == 1
    err = run.stderr.decode()
    assert "another quatro-server is using" in err and "worker 1 exited with status 2 before it was ready" in err
    assert b"quatro join" not in run.stdout


async def test_the_private_directory_dying_stops_the_server_and_says_so(tmp_path):
    supervisor = await start_supervisor(tmp_path)
    (redis,) = [c for c in psutil.Process(supervisor.proc.pid).children() if "redis-server" in c.name()]
    workers_before = list(supervisor.workers().values())
    redis.kill()
    with trio.fail_after(20):
        assert await supervisor.proc.wait() == 1
    assert "the private redis-server exited" in log_of(tmp_path)
    assert not any(w.is_running() and w.status() != psutil.STATUS_ZOMBIE for w in workers_before)


def test_a_worker_started_again_restores_its_tables_even_under_no_restore():
    """--no-restore (quatro play's: the last run's tables are closed) holds for the first start only: a worker
    started again after a crash must bring its tables back. Each worker advertises its own private port."""
    from quatro_server.cli import _parser, _serving_actions

    args = _parser().parse_args(
        ["serve", "--host", "127.0.0.1", "--port", "0", "--workers", "2", "--no-restore", "--no-journal"]
    )
    public = workers.listening_sockets("127.0.0.1", 0)
    supervisor = workers.Supervisor(
        args, workers.worker_options(_serving_actions(), args), public, "unix:///r.sock", None
    )
    try:
        worker = supervisor.workers[1]
        first, again = supervisor.command(worker, first=True), supervisor.command(worker, first=False)
        assert "--no-restore" in first and "--no-restore" not in again
        assert again[again.index("--advertise") + 1] == f"127.0.0.1:{worker.private_port}"
        assert again[again.index("--worker-index") + 1] == "2"
        fds = [int(again[i + 1]) for i, word in enumerate(again) if word == "--listen-fd"]
        assert fds == [public[0].fileno(), worker.private[0].fileno()]
    finally:
        for sock in [*public, *(s for w in supervisor.workers for s in w.private)]:
            sock.close()


async def test_each_worker_answers_on_its_own_admin_socket_and_serves_its_own_metrics(tmp_path):
    """Two workers never share an operator's endpoint: worker K's admin socket is beside its journal, and
    ``--metrics PORT`` gives worker K the port PORT+K-1, each scraped over HTTP with its own figures."""
    import json
    import socket as socket_module
    import urllib.request

    for _ in range(50):  # a free port whose next one is free too, for the two endpoints
        probe_port = 20000 + int.from_bytes(os.urandom(2), "big") % 30000
        try:
            with socket_module.socket() as a, socket_module.socket() as b:
                a.bind(("127.0.0.1", probe_port))
                b.bind(("127.0.0.1", probe_port + 1))
            break
        except OSError:
            continue
    supervisor = await start_supervisor(tmp_path, "--metrics", f"127.0.0.1:{probe_port}")
    try:
        for index in (1, 2):
            sock = tmp_path / "data" / f"worker-{index}" / "admin.sock"
            with trio.fail_after(20):
                while not sock.exists():
                    await trio.sleep(0.05)
            done = await trio.run_process(
                [sys.executable, "-m", "quatro_server", "admin", "--socket", str(sock), "--json", "tables"],
                capture_stdout=True,
                capture_stderr=True,
                check=False,
            )
            assert done.returncode == 0, (done.stdout, done.stderr)
            assert json.loads(done.stdout)["tables"] == []

        def scrape(port: int) -> str:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as answer:
                return answer.read().decode()

        client = await TestClient.connect(supervisor.port, "ann")
        holder = supervisor.holder(client)
        assert (await client.request(p.CREATE_TABLE, players=4))["kind"] == p.OK
        with trio.fail_after(20):
            while True:
                try:
                    figures = {k: await trio.to_thread.run_sync(scrape, probe_port + k - 1) for k in (1, 2)}
                except OSError:
                    await trio.sleep(0.1)
                    continue
                if 'phase="lobby"} 1.0' in figures[holder]:
                    break
                await trio.sleep(0.1)
        other = 3 - holder
        assert 'phase="lobby"} 1.0' not in figures[other]  # the table is one worker's, and so are its figures
        await client.aclose()
    finally:
        await stop(supervisor)


async def whole(supervisor_data: Path, *argv: str) -> subprocess.CompletedProcess[bytes]:
    """``quatro-server admin --data DATA ...``, as the README and the start-up line name it: the whole server."""
    return await trio.run_process(
        [sys.executable, "-m", "quatro_server", "admin", "--data", str(supervisor_data), *argv],
        capture_stdout=True,
        capture_stderr=True,
        check=False,
    )


async def whole_json(data: Path, *argv: str) -> dict:
    done = await whole(data, "--json", *argv)
    assert done.returncode == 0, (done.stdout, done.stderr)
    return json.loads(done.stdout)


async def printed(supervisor: Supervisor, words: str, seconds: float = 10) -> str:
    """Read the supervisor's output on until it holds ``words``."""
    with trio.fail_after(seconds):
        while words not in supervisor.out:
            chunk = await supervisor.proc.stdout.receive_some(4096)
            assert chunk, f"the supervisor's output ended before {words!r}: {supervisor.out!r}"
            supervisor.out += chunk.decode()
    return supervisor.out


async def test_one_admin_entry_answers_for_every_worker(tmp_path):
    """``quatro-server admin --data DATA``, as the start-up line says: the tables of every worker in one list, each
    marked with its worker; close and remove reach the worker that holds the table; a notice reaches every worker's
    players (it once said "no admin socket... is the server running?" while it ran)."""
    data = tmp_path / "data"
    supervisor = await start_supervisor(tmp_path)
    try:
        out = await printed(supervisor, "Admin socket:")
        assert f"Admin socket: {data / 'admin.sock'} (quatro-server admin --data {data} tables)" in out
        assert out.count("Admin socket:") == 1  # the workers' own sockets are the supervisor's business
        ann, bob = await on_each_worker(supervisor, ("ann", "bob"))
        for client in (ann, bob):
            assert (await client.request(p.CREATE_TABLE, players=4))["kind"] == p.OK
        holders = {ann.table: supervisor.holder(ann), bob.table: supervisor.holder(bob)}
        listing = await whole_json(data, "tables")
        assert {t["table"]: t["worker"] for t in listing["tables"]} == holders
        assert (listing["workers"], listing["connections"], listing["silent"]) == (2, 2, [])
        text = (await whole(data, "tables")).stdout.decode()
        assert text.startswith("2 tables, 2 connections, 2 workers\n"), text
        assert f"table {bob.table}  quatro  lobby" in text and f"worker {holders[bob.table]}" in text

        told = await whole(data, "notice", "back in five minutes")
        assert told.returncode == 0 and b"notice shown to 2 connections" in told.stdout
        for client in (ann, bob):
            assert await push(client, p.NOTICE) == {"kind": "notice", "text": "back in five minutes"}

        closed = await whole(data, "close", str(bob.table), "--reason", "closing for the night")
        assert closed.returncode == 0 and b"1 connection told" in closed.stdout, closed.stdout
        ended = await push(bob, p.SEAT_ENDED)
        assert (ended["reason"], ended["message"]) == ("closed_by_operator", "closing for the night")
        removed = await whole_json(data, "remove", str(ann.table), "1")
        assert (removed["table"], removed["freed"], removed["worker"]) == (ann.table, True, holders[ann.table])
        assert (await push(ann, p.SEAT_ENDED))["reason"] == "removed_by_operator"
        assert (await whole_json(data, "tables"))["tables"] == []
        missing = await whole(data, "close", "999")
        assert missing.returncode == 1 and b"refused: no table 999" in missing.stdout
        await ann.aclose()
        await bob.aclose()
    finally:
        await stop(supervisor)


async def test_drain_of_the_whole_server_stops_each_worker_once_its_matches_end_and_then_the_supervisor(tmp_path):
    """``drain --timeout T --wait`` through the one entry: every worker drains; the one with nothing running stops
    at once and is not started again, the one with a match stops at T, and then the supervisor exits 0 (its socket
    gone, so --wait returns). A worker killed while the server drains comes back for its players and drains too."""
    data = tmp_path / "data"
    timing = tmp_path / "short.toml"
    timing.write_text(SHORT)  # a match that waits for ann in its signing: it runs until the drain's timeout
    supervisor = await start_supervisor(tmp_path, "--timing", str(timing))
    try:
        await printed(supervisor, "Admin socket:")
        ann, eve = await on_each_worker(supervisor, ("ann", "eve"))
        assert (await ann.request(p.CREATE_TABLE, players=4))["kind"] == p.OK
        for _ in range(3):
            assert (await ann.request(p.ADD_BOT, level="easy"))["kind"] == p.OK
        assert (await ann.request(p.START))["kind"] == p.OK
        await ann.wait_view(lambda v: v.phase is Phase.SIGNING)
        busy = supervisor.holder(ann)
        with trio.fail_after(10):
            while not journalled(data / f"worker-{busy}", ann.table):
                await trio.sleep(0.05)
        done: list[subprocess.CompletedProcess[bytes]] = []
        with trio.fail_after(30):
            started = trio.current_time()
            async with trio.open_nursery() as nursery:

                async def drain_and_wait() -> None:
                    done.append(await whole(data, "drain", "--timeout", "3", "--wait"))

                nursery.start_soon(drain_and_wait)
                assert (await push(eve, p.BYE, timeout=10))["reason"] == "shutdown"  # nothing ran there: it stops now
                again = await whole(data, "drain")
                assert again.returncode == 1 and b"draining already" in again.stdout
                victim = supervisor.workers()[busy]
                victim.kill()  # mid-drain: started again for ann's match, and drained again within what is left
            assert await supervisor.proc.wait() == 0
        (drained,) = done
        assert drained.returncode == 0, (drained.stdout, drained.stderr)
        assert b"1 match running" in drained.stdout and b"the server has stopped" in drained.stdout
        assert trio.current_time() - started >= 3 - 0.5  # the busy worker kept its match to the timeout
        log = log_of(tmp_path)
        assert f"worker_restarted worker={busy}" in log and f"worker_drained worker={busy}" in log
        assert f"worker_drained worker={3 - busy}" in log and f"worker_restarted worker={3 - busy}" not in log
        assert "drain_lost" not in log
        assert not (data / "admin.sock").exists()
        await eve.aclose()
        await ann.aclose()
    finally:
        await stop(supervisor)


def test_tls_with_a_door_is_refused_with_workers(tmp_path):
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "quatro_server",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--workers",
            "2",
            "--no-journal",
            "--tls-cert",
            "cert.pem",
            "--tls-key",
            "key.pem",
            "--ssh",
            "0",
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert run.returncode == 2 and "proxy" in run.stderr, run.stderr
