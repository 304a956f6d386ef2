"""Every core of one machine busy: a supervisor and its worker processes (``quatro-server --workers N``).

One server is one trio thread, and its tables are independent of each other: N processes each holding tables of
their own use N cores. The supervisor faces the players and the workers hold the tables:

- The supervisor opens every listening socket: the public game port, once, and one private game port per worker.
  A worker is started with its sockets inherited (pre-fork) and accepts on both: a client reaching the public port
  meets whichever worker accepts first (the kernel wakes every worker waiting on the shared queue and the first
  to ask takes it, so a worker busy with its tables takes fewer), and a table held by another worker is reached on
  that worker's private port (the directory's ``moved``). A worker restarted after a crash inherits the same
  sockets again: its private port is the one its players were moved to, and connections made meanwhile wait in
  the queue instead of being refused. Port 0 picks a free port once, for every worker.
- The doors (``--ssh``, ``--web``) and the LAN announcement are the supervisor's, as in a single server: one SSH
  host key, one browser visit per visitor, the doors' caps counted once. Their visitors' clients (one process each)
  reach the public game port over loopback like anyone else's, and are spread over the workers with everyone.
- The workers share a table directory (``--directory``): the operator's Redis, or without one a private
  ``redis-server`` the supervisor starts (a Unix socket in the data directory, nothing saved to disk), so that one
  machine and many machines run the same directory code.
- The operator's admin socket (``DATA/admin.sock``) is the supervisor's and answers for the whole server
  (``admin.WholeServer``): it asks each worker on the worker's own socket (``DATA/worker-K/admin.sock``) and merges
  the answers; a drain stops each worker once its matches are over, and then the supervisor.
- A worker keeps its tables in its own journal (``DATA/worker-K``) and the players' records in the server's
  (``DATA``). One that dies is started again (after 0.5 s, doubling up to 30 s while it keeps dying; logged):
  it restores its journal and announces its tables again. SIGTERM or SIGINT to the supervisor stops every worker
  the way a single server stops (each says goodbye to its clients); a supervisor killed outright (``kill -9``)
  leaves no worker behind: each watches its parent and stops once it is gone, and the private Redis is told by
  the kernel (``PR_SET_PDEATHSIG``).

Why these choices, and what they cost, is in docs/operating.md ("One machine, many cores").
"""

from __future__ import annotations

import argparse
import ctypes
import fcntl
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Protocol

import trio

from quatro_shared import protocol as p

from quatro_server.datadir import default_data_dir
from quatro_server.journal.store import LOCK_NAME
from quatro_server.net.addresses import join_addresses
from quatro_server.workers import admin

log = logging.getLogger("quatro.workers")

#: A worker prints this line, its number and its pid once it accepts connections.
READY = "Worker ready:"
#: How a worker is told its supervisor's door token (an environment variable: never on a command line, where any
#: user of the machine could read it).
DOOR_TOKEN_ENV = "QUATRO_WORKER_DOOR_TOKEN"
#: Seconds before a dead worker is started again; doubled at each death in a row, up to BACKOFF_CAP. A worker that
#: ran STEADY_AFTER seconds before it died starts again after BACKOFF_FIRST.
BACKOFF_FIRST = 0.5
BACKOFF_CAP = 30.0
STEADY_AFTER = 30.0
#: Seconds a worker has to be ready (its journal restored, accepting), at the first start.
START_TIMEOUT = 60.0
#: Seconds a worker has to stop after SIGTERM (it says goodbye to its clients first) before it is killed.
STOP_GRACE = 10.0
#: Seconds between a worker's looks at its parent: a supervisor killed outright is noticed within this.
PARENT_CHECK = 0.5
#: Seconds the private redis-server has to answer.
REDIS_START_TIMEOUT = 10.0
#: The longest Unix socket path (``sun_path`` is 108 bytes on Linux, 104 elsewhere).
MAX_SOCKET_PATH = 100
#: The listening queue of each socket (the kernel caps it at net.core.somaxconn), as trio's own listeners.
BACKLOG = 65535
#: Options of ``serve`` that are the supervisor's alone: never handed to a worker.
SUPERVISOR_ONLY = frozenset(
    {
        "workers",
        "worker_index",
        "worker_of",
        "listen_fd",
        "port",
        "data_dir",
        "no_restore",
        "announce",
        "stop_when_idle",
        "ssh",
        "ssh_keys",
        "ssh_max_sessions",
        "ssh_idle",
        "web",
        "web_max_visitors",
        "web_idle",
        "directory",
        "advertise",
        "worker_ports",
        "metrics",
        "help",
    }
)
PR_SET_PDEATHSIG = 1

INSTALL_REDIS = (
    "--workers needs redis-server, which holds the workers' shared table directory, and it is not installed. "
    "Install it (Debian and Ubuntu: sudo apt-get install redis-server; Fedora: sudo dnf install redis; macOS: brew "
    "install redis), or give the address of a Redis server of your own with --directory redis://HOST:PORT/DB. "
    "Without --workers the server needs nothing."
)


def worker_count(text: str) -> int:
    """``--workers``: a number of processes, at least 1, or ``auto``: one per core."""
    if text.strip().lower() == "auto":
        return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
    try:
        count = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is neither a number of workers nor auto") from None
    if count < 1:
        raise argparse.ArgumentTypeError("at least 1 worker")
    return count


def journal_dir(data_dir: Path, index: int) -> Path:
    """Where worker ``index`` keeps its journal: a directory of its own under the server's."""
    return data_dir / f"worker-{index}"


def admin_socket(data_dir: Path, no_journal: bool, asked: Path | None) -> Path | None:
    """The server's admin socket (a supervisor's answers for the whole server): ``--admin-socket``, else beside the
    journal, none with ``--no-journal`` unless asked."""
    return asked or (None if no_journal else admin.default_socket(data_dir))


def worker_admin_socket(data_dir: Path, no_journal: bool, asked: Path | None, index: int) -> Path | None:
    """Worker ``index``'s own admin socket: beside its journal, or the operator's path numbered (``-worker-K``)."""
    if asked is not None:
        return asked.with_name(f"{asked.stem}-worker-{index}{asked.suffix}")
    return None if no_journal else admin.default_socket(journal_dir(data_dir, index))


def refusal(args: argparse.Namespace) -> str | None:
    """Why these serving options cannot run with workers, or None."""
    if args.stop_when_idle is not None:
        return "--stop-when-idle is for a server of one process (quatro play's); leave out --workers"
    if args.advertise:
        return "--advertise names one process; with --workers each worker advertises its own private port"
    if args.tls_cert is not None and (args.ssh is not None or args.web is not None):
        return (
            "the doors of a TLS server join it over a loopback listener of one process: with --workers, put TLS "
            "in a proxy in front (docs/operating.md, TLS), or serve the doors without --workers"
        )
    if args.worker_ports is not None and not 0 < args.worker_ports <= 65536 - args.workers:
        return f"--worker-ports: the first of {args.workers} ports, from 1 to {65536 - args.workers}"
    return None


# --- the worker's side --------------------------------------------------------------------------------------


def die_with_parent(parent: int | None) -> None:
    """A worker started by a supervisor that is already gone stops at once (``watch_parent`` does afterwards)."""
    if parent is not None and os.getppid() != parent:
        raise SystemExit(f"quatro-server: the supervisor (pid {parent}) is gone")


async def watch_parent(parent: int, stop: Callable[[], object]) -> None:
    """Call ``stop`` once the supervisor ``parent`` is gone (this process is then another's child). A parent death
    signal would be simpler, but the kernel sends it when the *thread* that started the worker ends, and trio
    starts processes from its pool of threads, which end when idle."""
    while os.getppid() == parent:
        await trio.sleep(PARENT_CHECK)
    log.warning("supervisor_gone pid=%d", parent)
    stop()


# --- sockets ------------------------------------------------------------------------------------------------


def listening_sockets(host: str | None, port: int) -> list[socket.socket]:
    """Listen on ``host`` (None: every interface, IPv4 and IPv6) at ``port``, as trio's ``open_tcp_listeners``
    does; port 0 picks one free port, the same for every address."""
    addresses = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    sockets: list[socket.socket] = []
    try:
        for family, kind, proto, _, address in addresses:
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            if port == 0 and len(sockets) > 1:
                address = (address[0], sockets[0].getsockname()[1], *address[2:])
            sock.bind(address)
            sock.listen(BACKLOG)
            sock.set_inheritable(True)
    except OSError:
        for sock in sockets:
            sock.close()
        raise
    return sockets


def port_of(sockets: list[socket.socket]) -> int:
    return int(sockets[0].getsockname()[1])


# --- the private directory ----------------------------------------------------------------------------------


class RedisMissing(Exception):
    """redis-server is not installed."""


class RedisFailed(Exception):
    """redis-server did not start, or did not answer."""


def _die_with_me() -> None:
    """In a child about to run another program: the kernel stops it (SIGTERM) when the supervisor dies. Called
    from the supervisor's main thread, before any other thread exists (see ``watch_parent`` for why)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # not Linux: the directory outlives a supervisor killed outright; nothing on disk, nothing else lost


class PrivateRedis:
    """A redis-server of the supervisor's own: a Unix socket in the data directory (or, when that path is too long
    for a socket, in a private temporary directory), readable by this user only, nothing saved, its log beside it."""

    def __init__(self, data_dir: Path) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RedisMissing(INSTALL_REDIS)
        data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.temporary: str | None = None
        where = data_dir
        if len(str(data_dir / "redis.sock")) > MAX_SOCKET_PATH:
            self.temporary = tempfile.mkdtemp(prefix="quatro-")
            where = Path(self.temporary)
        self.path = where / "redis.sock"
        self.path.unlink(missing_ok=True)  # a socket left by a supervisor killed outright
        self.log_file = data_dir / "redis.log"
        self.process = subprocess.Popen(
            [
                binary,
                "--port",
                "0",
                "--unixsocket",
                str(self.path),
                "--unixsocketperm",
                "700",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(where),
                "--logfile",
                str(self.log_file),
                "--loglevel",
                "warning",
                "--daemonize",
                "no",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=_die_with_me,
            close_fds=True,
        )
        try:
            self._wait_ready()
        except RedisFailed:
            self.stop()
            raise

    @property
    def url(self) -> str:
        return f"unix://{self.path}?db=0"

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + REDIS_START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RedisFailed(f"redis-server exited with status {self.process.returncode}: {self._log_tail()}")
            try:
                with socket.socket(socket.AF_UNIX) as probe:
                    probe.settimeout(1)
                    probe.connect(str(self.path))
                    probe.sendall(b"PING\r\n")
                    if probe.recv(64).startswith(b"+PONG"):
                        return
            except OSError:
                pass
            time.sleep(0.02)
        raise RedisFailed(f"redis-server did not answer within {REDIS_START_TIMEOUT:g} s: {self._log_tail()}")

    def _log_tail(self) -> str:
        try:
            return " / ".join(self.log_file.read_text(errors="replace").strip().splitlines()[-3:]) or "(no log)"
        except OSError:
            return "(no log)"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.path.unlink(missing_ok=True)
        if self.temporary is not None:
            shutil.rmtree(self.temporary, ignore_errors=True)


# --- the supervisor -----------------------------------------------------------------------------------------


class OpenFront(Protocol):
    """Says where to join, opens the doors and announces the server (``cli._open_front``, its first arguments given)."""

    def __call__(self, headline: str, port: int, nursery: trio.Nursery) -> Awaitable[None]: ...


class Stoppable(Protocol):
    def stop(self) -> None: ...


@dataclass(eq=False)
class Worker:
    """One worker: its number, its private sockets (kept for its life and every restart), its process."""

    index: int
    private: list[socket.socket]
    process: trio.Process | None = None
    started_at: float = 0.0
    backoff: float = BACKOFF_FIRST
    restarts: int = 0
    ready: trio.Event = field(default_factory=trio.Event)
    #: It stopped of itself while the server drains (its matches over): not started again.
    drained: bool = False

    @property
    def private_port(self) -> int:
        return port_of(self.private)


def worker_options(actions: list[argparse.Action], args: argparse.Namespace) -> list[str]:
    """The operator's serving options as a worker takes them: every option given, but the supervisor's own."""
    words: list[str] = []
    for action in actions:
        if action.dest in SUPERVISOR_ONLY or not action.option_strings or action.help == argparse.SUPPRESS:
            continue
        value = getattr(args, action.dest, None)
        option = max(action.option_strings, key=len)
        if isinstance(action, argparse.BooleanOptionalAction):
            if value is not None:
                words.append(action.option_strings[0] if value else f"--no-{action.option_strings[0][2:]}")
        elif isinstance(action, argparse._StoreTrueAction):  # noqa: SLF001 - argparse names no public class for it
            if value:
                words.append(option)
        elif isinstance(action, argparse._AppendAction):  # noqa: SLF001
            for item in value or ():
                words += [option, str(item)]
        elif value is not None:
            words += [option, str(value)]
    return words


class Supervisor:
    """Starts the workers, starts again any that dies, stops them all on SIGTERM or SIGINT."""

    def __init__(
        self,
        args: argparse.Namespace,
        options: list[str],
        public: list[socket.socket],
        directory: str,
        door_token: str | None,
    ) -> None:
        self.args, self.options, self.public, self.directory = args, options, public, directory
        self.data_dir: Path = args.data_dir or default_data_dir()
        self.env = dict(os.environ)
        if door_token:
            self.env[DOOR_TOKEN_ENV] = door_token
        first = args.worker_ports
        self.workers = [
            Worker(k, listening_sockets(args.host, 0 if first is None else first + k - 1))
            for k in range(1, args.workers + 1)
        ]
        self.stopping = False
        self.failed: str | None = None
        #: The whole server drains (``quatro-server admin drain``): a worker whose matches are over stops for good,
        #: and once every worker has, so does the supervisor (``all_drained``).
        self.draining = False
        self.drain_deadline: float | None = None
        self.all_drained = trio.Event()
        #: The whole server's admin socket (``admin.WholeServer``), if it has one.
        self.operator: admin.AdminListener | None = None
        #: The workers' lines printed before the supervisor's own (where to join): held until those are printed, so
        #: that the first address on the supervisor's output is the public one.
        self.early: list[str] | None = []

    def command(self, worker: Worker, first: bool) -> list[str]:
        fds = [sock.fileno() for sock in (*self.public, *worker.private)]
        command = [
            sys.executable,
            "-m",
            "quatro_server",
            "serve",
            *self.options,
            "--port",
            str(port_of(self.public)),
            "--data-dir",
            str(self.data_dir),
            "--no-announce",
            "--worker-index",
            str(worker.index),
            "--worker-of",
            str(os.getpid()),
        ]
        for fd in fds:
            command += ["--listen-fd", str(fd)]
        command += ["--directory", self.directory, "--advertise", advertised(self.args.host, worker.private_port)]
        if self.args.metrics is not None:  # an endpoint a worker: worker K on PORT+K-1 (PORT 0: each a free one)
            host, _, port = self.args.metrics.rpartition(":")
            port_k = int(port) + worker.index - 1 if int(port) else 0
            command += ["--metrics", f"{host}:{port_k}" if host else str(port_k)]
        if first and self.args.no_restore:
            command.append("--no-restore")  # the first start only: a worker started again restores its tables
        return command

    async def start(self, worker: Worker, nursery: trio.Nursery, first: bool) -> None:
        fds = [sock.fileno() for sock in (*self.public, *worker.private)]
        worker.ready = trio.Event()
        worker.process = await trio.lowlevel.open_process(
            self.command(worker, first),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            pass_fds=fds,
            env=self.env,
            # A group of its own: a Ctrl-C at the terminal reaches the supervisor alone, which stops every worker in
            # its order (a worker that got it too would seem to have died, and be started again).
            process_group=0,
        )
        worker.started_at = trio.current_time()
        nursery.start_soon(self.relay, worker, worker.process)

    async def relay(self, worker: Worker, process: trio.Process) -> None:
        """A worker's standard output, line by line onto the supervisor's, marked with its number; its ready line
        sets ``worker.ready``."""
        assert process.stdout is not None
        pending = b""
        async with process.stdout:
            while True:
                try:
                    data = await process.stdout.receive_some(65536)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    data = b""
                if not data:
                    return
                pending += data
                *lines, pending = pending.split(b"\n")
                for raw in lines:
                    line = raw.decode(errors="replace")
                    if line.startswith(READY):
                        worker.ready.set()
                        log.info(
                            "worker_ready worker=%d pid=%d private_port=%d restarts=%d",
                            worker.index,
                            process.pid,
                            worker.private_port,
                            worker.restarts,
                        )
                    elif line.strip():
                        self.say(f"worker {worker.index}: {line}")

    def say(self, line: str) -> None:
        if self.early is not None:
            self.early.append(line)
        else:
            print(line, flush=True)

    async def first_start(self, nursery: trio.Nursery) -> bool:
        """Start every worker and wait until each is ready; False (``failed`` says why) if any is not."""
        for worker in self.workers:
            await self.start(worker, nursery, first=True)
        with trio.move_on_after(START_TIMEOUT):
            for worker in self.workers:
                assert worker.process is not None
                async with trio.open_nursery() as waiting:

                    async def died(w: Worker = worker, scope: trio.CancelScope = waiting.cancel_scope) -> None:
                        assert w.process is not None
                        status = await w.process.wait()
                        self.failed = f"worker {w.index} exited with status {status} before it was ready"
                        scope.cancel()

                    async def ready(w: Worker = worker, scope: trio.CancelScope = waiting.cancel_scope) -> None:
                        await w.ready.wait()
                        scope.cancel()

                    waiting.start_soon(died)
                    waiting.start_soon(ready)
                if self.failed is not None:
                    return False
            return True
        self.failed = f"a worker was not ready within {START_TIMEOUT:g} s"
        return False

    # --- the whole server's admin socket (``admin.Fleet``) ---

    def worker_socket(self, worker: Worker) -> Path | None:
        return worker_admin_socket(self.data_dir, self.args.no_journal, self.args.admin_socket, worker.index)

    def worker_sockets(self) -> list[tuple[int, Path]]:
        """Every worker still serving (not drained) that has an admin socket."""
        return [(w.index, path) for w in self.workers if not w.drained and (path := self.worker_socket(w)) is not None]

    def drain(self, timeout: float | None) -> None:
        self.draining = True
        self.drain_deadline = None if timeout is None else trio.current_time() + timeout
        log.info("draining workers=%d timeout=%s", len(self.workers), timeout)

    async def drain_again(self, worker: Worker) -> None:
        """A worker started again while the server drains (it crashed mid-match) drains too, within what is left of
        the operator's timeout."""
        with trio.move_on_after(START_TIMEOUT):
            await worker.ready.wait()
            path = self.worker_socket(worker)
            left = None if self.drain_deadline is None else max(0.0, self.drain_deadline - trio.current_time())
            reply = "no admin socket" if path is None else await admin.reply_or_why(path, admin.Drain(left))
            if isinstance(reply, str) or reply.get("kind") != p.OK:
                log.warning("drain_lost worker=%d reply=%s", worker.index, reply)

    async def keep(self, worker: Worker, nursery: trio.Nursery) -> None:
        """Start ``worker`` again whenever it dies, waiting longer while it keeps dying; not one that stopped of
        itself, its matches over, while the server drains."""
        while True:
            assert worker.process is not None
            status = await worker.process.wait()
            if self.stopping:
                return
            if self.draining and status == 0:
                worker.drained = True
                log.info("worker_drained worker=%d pid=%d", worker.index, worker.process.pid)
                if all(w.drained for w in self.workers):
                    self.all_drained.set()
                return
            ran = trio.current_time() - worker.started_at
            if ran >= STEADY_AFTER:
                worker.backoff = BACKOFF_FIRST
            log.warning(
                "worker_exited worker=%d pid=%d status=%s ran=%.1fs restart_in=%.1fs",
                worker.index,
                worker.process.pid,
                _status(status),
                ran,
                worker.backoff,
            )
            await trio.sleep(worker.backoff)
            worker.backoff = min(BACKOFF_CAP, worker.backoff * 2)
            if self.stopping:
                return
            worker.restarts += 1
            await self.start(worker, nursery, first=False)
            log.info("worker_restarted worker=%d pid=%d restarts=%d", worker.index, worker.process.pid, worker.restarts)
            if self.draining:
                nursery.start_soon(self.drain_again, worker)

    async def stop_all(self) -> None:
        """SIGTERM to every worker (each says goodbye to its clients), then wait; kill any that does not stop."""
        self.stopping = True
        running = [w.process for w in self.workers if w.process is not None and w.process.returncode is None]
        for process in running:
            process.send_signal(signal.SIGTERM)
        with trio.move_on_after(STOP_GRACE):
            for process in running:
                await process.wait()
        for process in running:
            if process.returncode is None:
                log.warning("worker_killed pid=%d (it did not stop within %g s)", process.pid, STOP_GRACE)
                process.kill()
                await process.wait()

    async def run(self, open_front: OpenFront, redis: PrivateRedis | None, timing: str) -> int:
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async with trio.open_nursery() as nursery:
                try:
                    if not await self.first_start(nursery):
                        await self.stop_all()
                        return 1
                    try:
                        await open_front(
                            f"Quatro server listening with {len(self.workers)} workers (timing: {timing}).",
                            port_of(self.public),
                            nursery,
                        )
                    except Exception as exc:  # a door that cannot listen: the server does not run without it
                        self.failed = str(exc)
                        await self.stop_all()
                        return 1
                    early, self.early = self.early or [], None
                    for line in early:
                        self.say(line)
                    for worker in self.workers:
                        nursery.start_soon(self.keep, worker, nursery)
                    if redis is not None:
                        nursery.start_soon(self.watch_redis, redis, nursery.cancel_scope)
                    if self.operator is not None:
                        nursery.start_soon(self.operator.serve_answers, admin.WholeServer(self))
                        self.say(admin.started_line(self.operator.path, self.data_dir))
                    with trio.CancelScope() as waiting:
                        nursery.start_soon(self._stop_when_drained, waiting)
                        async for signum in signals:
                            log.info("shutdown signal=%s workers=%d", signal.Signals(signum).name, len(self.workers))
                            break
                    await self.stop_all()
                finally:
                    self.stopping = True
                    nursery.cancel_scope.cancel()
        if self.failed is not None:
            return 1
        return 0

    async def _stop_when_drained(self, waiting: trio.CancelScope) -> None:
        await self.all_drained.wait()
        log.info("drained workers=%d", len(self.workers))
        waiting.cancel()

    async def watch_redis(self, redis: PrivateRedis, scope: trio.CancelScope) -> None:
        """The private directory gone, the workers cannot find each other's tables: stop, and say why."""
        while redis.process.poll() is None:
            await trio.sleep(1)
        if not self.stopping:
            self.failed = (
                f"the private redis-server exited (status {redis.process.returncode}); its log: {redis.log_file}"
            )
            log.error("directory_gone %s", self.failed)
            await self.stop_all()
            scope.cancel()


def _status(status: int) -> str:
    return signal.Signals(-status).name if status < 0 else str(status)


def advertised(host: str | None, port: int) -> str:
    """The address a worker's tables are listed at in the directory: its private port, at the one address it listens
    on, or (on every interface) at whichever address of this machine the client reached the public port by."""
    if host in (None, "", "0.0.0.0", "::"):
        return f":{port}"
    return join_addresses(host, port)[0]


def _lock(data_dir: Path) -> IO[str] | None:
    """The server's data directory, for this supervisor alone (the journal's lock: no single server shares it)."""
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    lock = open(data_dir / LOCK_NAME, "a")  # noqa: SIM115 - held for the life of the supervisor
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        lock.close()
        return None
    return lock


def supervise(
    args: argparse.Namespace,
    actions: list[argparse.Action],
    timing: str,
    door_token: str | None,
    open_front: OpenFront,
    front: Stoppable,
) -> int:
    """Serve with ``args.workers`` workers until SIGTERM or SIGINT; the exit status."""
    data_dir: Path = args.data_dir or default_data_dir()
    lock = None
    if not args.no_journal:
        lock = _lock(data_dir)
        if lock is None:
            print(
                f"quatro-server: another quatro-server is using {data_dir}; give each server its own --data-dir",
                file=sys.stderr,
            )
            return 2
    redis: PrivateRedis | None = None
    directory: str | None = args.directory
    public: list[socket.socket] = []
    supervisor: Supervisor | None = None
    operator: admin.AdminListener | None = None
    try:
        where = admin_socket(data_dir, args.no_journal, args.admin_socket)
        if where is not None:
            try:
                operator = admin.listen(where, asked=args.admin_socket is not None)
            except admin.AdminUnavailable as exc:
                print(f"quatro-server: {exc}", file=sys.stderr)
                return 2
        if directory is None:
            try:
                redis = PrivateRedis(data_dir)
            except (RedisMissing, RedisFailed) as exc:
                print(f"quatro-server: {exc}", file=sys.stderr)
                return 2
            directory = redis.url
        try:
            public = listening_sockets(args.host, args.port)
            supervisor = Supervisor(args, worker_options(actions, args), public, directory, door_token)
            supervisor.operator = operator
        except OSError as exc:
            ports = f"port {args.port}" + (
                ""
                if args.worker_ports is None
                else f" and ports {args.worker_ports}-{args.worker_ports + args.workers - 1}"
            )
            print(f"quatro-server: cannot listen on {ports}: {exc.strerror or exc}", file=sys.stderr)
            return 1
        try:
            status = trio.run(supervisor.run, open_front, redis, timing)
        except KeyboardInterrupt:
            status = 0
        if supervisor.failed is not None:
            print(f"quatro-server: {supervisor.failed}", file=sys.stderr)
        return status
    finally:
        front.stop()
        if operator is not None:
            operator.remove()
        if redis is not None:
            redis.stop()
        for sock in public:
            sock.close()
        if supervisor is not None:
            for worker in supervisor.workers:
                for sock in worker.private:
                    sock.close()
        if lock is not None:
            lock.close()
