"""What the server's doors share: the SSH door (ssh_door.py) and the browser door (web_door.py).

A door lets people play without installing anything. Behind every door, each visitor gets a client of their
own: the ``quatro join`` program, started as a child process, connected to this server's tables over loopback
TCP like any other client. The door runs on an asyncio loop of its own, on a thread beside the trio server
(``DoorThread``), and talks to the game only through TCP.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import resource
import secrets
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from quatro_shared.addresses import format_address
from quatro_shared.protocol import DOOR_TOKEN_ENV

from quatro_server.server import ACCEPT_CAPACITY_ERRNOS, QuietLog

log = logging.getLogger("quatro.doors")

#: Seconds a client gets to leave after its visitor went (SIGHUP, or a quit request) before it is killed.
STOP_GRACE = 2.0
#: The variables a client inherits from the server's environment; nothing else of the server's passes on.
INHERITED = ("PATH", "HOME", "USER", "LOGNAME", "TZ")


# The doors' bounds live here, beside what the doors share, so that the server's command line can state them
# without importing a door (asyncssh, aiohttp and textual-serve cost a server that opens no door 27 MB and 0.2 s).
#: SSH sessions at once. Each runs a client process of about 40 MB resident, 29 MB of it its own
#: (docs/performance.md): 50 of them take about 1.5 to 2 GB, and a LAN evening rarely fills more than a few tables.
SSH_MAX_SESSIONS = 50
#: Seconds without a key press, outside a match, before an SSH session's client closes itself.
SSH_IDLE_TIMEOUT = 600.0
#: Browser pages at once. Each runs a client process of about 40 MB resident (docs/performance.md).
WEB_MAX_VISITORS = 30
#: Browser pages at once from one address: one machine cannot take every place.
WEB_MAX_PER_ADDRESS = 8
#: Seconds without a key press, outside a match, before a visitor's client closes itself.
WEB_IDLE_TIMEOUT = 600.0
#: SSH connections still in their handshake or login, at once and from one address; and the seconds one gets to
#: finish (the key exchange and the login; a person typing a key's passphrase takes a few seconds). OpenSSH's
#: MaxStartups is 10 by default; a door whose sessions cost a process each holds a few more, never a flood.
SSH_MAX_HANDSHAKES = 32
SSH_MAX_HANDSHAKES_PER_ADDRESS = 8
SSH_LOGIN_TIMEOUT = 15.0
#: SSH connections from one address, in any state (a household behind one router plays a few tables).
SSH_MAX_PER_ADDRESS = 16
#: The browser door's connections (the page, its files, its websocket), at once and from one address. A browser
#: opens about six to one server while a page loads; after that each page keeps its websocket alone.
WEB_MAX_CONNECTIONS = 256
WEB_MAX_CONNECTIONS_PER_ADDRESS = 64
#: Seconds a browser connection gets to send a whole request's headers, from when it opened or its last answer;
#: an idle keep-alive connection is closed then too (a page's websocket, once open, is not a request any more).
WEB_HEADER_TIMEOUT = 10.0
#: The largest terminal a visitor's client is given, in cells (a larger window is drawn into this much of it):
#: a client's memory grows with its screen, and 65535 × 65535 cells would take gigabytes.
MAX_COLUMNS = 400
MAX_ROWS = 200
#: The address space a visitor's client may take (RLIMIT_AS, set in the child before the client starts): three
#: times what one reaches at the largest window (about 250 MiB, 45 MiB of it resident, at 400 × 200); past it the
#: client fails alone, and its visit ends.
CLIENT_MEMORY = 768 * 1024 * 1024
#: Descriptors the doors leave to the game port: a door takes no new connection while fewer than this share of the
#: process's limit (RLIMIT_NOFILE) is free, and never fewer than DESCRIPTOR_RESERVE_MIN.
DESCRIPTOR_RESERVE_SHARE = 0.25
DESCRIPTOR_RESERVE_MIN = 64
#: The share of the descriptors above the reserve that one door may hold connections on: neither door starves the other.
DOOR_DESCRIPTOR_SHARE = 0.5
#: A door's listening backlog. asyncio accepts up to this many waiting connections at once before any of them meets
#: the door's gate, so it bounds how far past the gate a burst can reach (two doors' backlogs fit in the reserve).
DOOR_BACKLOG = 16


class Door(Protocol):
    """A door's listening side, as ``DoorThread`` runs it."""

    #: Where its visitors' clients join: this server's port, on loopback.
    game_address: str

    async def listen(self, host: str | None, port: int) -> int:
        """Start accepting; returns the port."""

    async def close(self) -> None:
        """Stop accepting and end every visitor's client."""


def client_command(
    python: str,
    game_address: str,
    *,
    idle_timeout: float,
    person: str = "",
    name: str = "",
    boot: str | None = None,
    ask_name: bool = False,
) -> list[str]:
    """A visitor's client: ``quatro join`` to this server, fixed by the door (nothing of it is the visitor's
    choice but their name and who they are, each passed as one argument, never through a shell)."""
    command = [python, "-c", boot] if boot is not None else [python, "-m", "quatro_tui"]
    command += ["join", game_address, "--idle-exit", str(idle_timeout)]
    if name:
        command += ["--name", name]
    if ask_name:
        command.append("--ask-name")
    return command + (["--person", person] if person else [])


def client_environment(
    config_home: Path, extra: Mapping[str, str] | None = None, *, door_token: str = ""
) -> dict[str, str]:
    """A client's environment: a few of the server's variables, ``extra`` (the terminal's), a UTF-8 locale
    unless ``extra`` names one (the client falls back to ASCII without), its own settings directory, and the
    server's door token (``DOOR_TOKEN_ENV``) where the server gave its doors one."""
    env = {key: value for key, value in os.environ.items() if key in INHERITED}
    env.update(extra or {})
    env.setdefault("LANG", "C.UTF-8")
    env["XDG_CONFIG_HOME"] = str(config_home)
    if door_token:
        env[DOOR_TOKEN_ENV] = door_token
    return env


def new_door_token() -> str:
    """A door token, made afresh at each start of the server: only the doors' own clients are told it."""
    return secrets.token_urlsafe(24)


def clamp_size(columns: int, rows: int, minimum: tuple[int, int] = (1, 1)) -> tuple[int, int]:
    """A terminal's size as a visitor's client gets it: within ``minimum`` and (MAX_COLUMNS, MAX_ROWS)."""
    return max(minimum[0], min(MAX_COLUMNS, columns)), max(minimum[1], min(MAX_ROWS, rows))


def bounded_boot(boot: str, memory: int = CLIENT_MEMORY) -> str:
    """A client's start-up code, which first bounds the client's address space (RLIMIT_AS) to ``memory`` bytes:
    past it an allocation fails in that client alone. (Set in the child itself: a ``preexec_fn`` is unsafe in a
    process with threads, and the doors run on threads.)"""
    return (
        f"import resource as _r\n"
        f"try:\n    _r.setrlimit(_r.RLIMIT_AS, ({memory}, {memory}))\n"
        f"except (ValueError, OSError):\n    pass\n" + boot
    )


def descriptors_free() -> int:
    """Descriptors this process may still open under its soft RLIMIT_NOFILE (a large number where it is
    unlimited or cannot be counted)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return 1 << 30
    try:
        used = len(os.listdir("/proc/self/fd")) - 1  # the listing's own descriptor
    except OSError:
        return 1 << 30
    return soft - used


def descriptor_reserve() -> int:
    """The descriptors the doors leave free for the game port."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return DESCRIPTOR_RESERVE_MIN
    return max(DESCRIPTOR_RESERVE_MIN, int(soft * DESCRIPTOR_RESERVE_SHARE))


def door_share() -> int:
    """Connections one door may hold by the descriptors: its share of those above the game port's reserve."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return 1 << 30
    return max(1, int((soft - descriptor_reserve()) * DOOR_DESCRIPTOR_SHARE))


class Gate:
    """A door's connections: at most ``total`` at once, ``per_address`` from one address, at most its share of the
    descriptors (``door_share``), and none while the game port's reserve of descriptors would be touched. ``admit``
    says why not (None: admitted, then ``release`` it)."""

    def __init__(self, total: int, per_address: int, quiet: QuietLog, name: str) -> None:
        self.total, self.per_address, self.quiet, self.name = total, per_address, quiet, name
        self.open = 0
        self.by_address: dict[str, int] = {}
        self.refused: dict[str, int] = {}

    def admit(self, address: str) -> str | None:
        if self.open >= self.total:
            why = "full"
        elif self.by_address.get(address, 0) >= self.per_address:
            why = "per_address"
        elif self.open >= door_share() or descriptors_free() < descriptor_reserve():
            why = "descriptors"
        else:
            self.open += 1
            self.by_address[address] = self.by_address.get(address, 0) + 1
            return None
        self.refused[why] = self.refused.get(why, 0) + 1
        self.quiet(
            f"{self.name}_refused_{why}",
            logging.WARNING,
            "%s_refused reason=%s open=%d refused=%d",
            self.name,
            why,
            self.open,
            self.refused[why],
        )
        return why

    def release(self, address: str) -> None:
        self.open -= 1
        left = self.by_address.get(address, 1) - 1
        if left > 0:
            self.by_address[address] = left
        else:
            self.by_address.pop(address, None)


def quiet_loop_errors(loop: asyncio.AbstractEventLoop, quiet: QuietLog, name: str) -> None:
    """The door's loop reports what its own code did not catch (asyncio's accept loop out of descriptors, a
    protocol's failure) as one line at most every few seconds with a count, never a traceback per retry."""

    def report(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        if isinstance(exc, OSError) and exc.errno in ACCEPT_CAPACITY_ERRNOS:
            quiet(
                f"{name}_accept_failed",
                logging.WARNING,
                "accept_failed door=%s error=%s (%s)",
                name,
                errno.errorcode.get(exc.errno or 0, exc.errno),
                os.strerror(exc.errno or 0),
            )
        elif isinstance(exc, (ConnectionError, TimeoutError)):
            quiet(f"{name}_connection_lost", logging.INFO, "connection_lost door=%s error=%s", name, type(exc).__name__)
        else:
            what = type(exc).__name__ if exc is not None else ""
            quiet(
                f"{name}_loop_error",
                logging.ERROR,
                "door_error door=%s message=%r error=%s %s",
                name,
                str(context.get("message", ""))[:200],
                what,
                str(exc)[:200] if exc is not None else "",
            )

    loop.set_exception_handler(report)


def door_quiet_log(logger: logging.Logger) -> QuietLog:
    """The game port's quiet log, on the door's thread's clock."""
    return QuietLog(logger, clock=time.monotonic)


def loopback(host: str | None, port: int) -> str:
    """This server's address on this machine, for the doors' clients."""
    if host in (None, "", "0.0.0.0"):
        return f"127.0.0.1:{port}"
    if host == "::":
        return f"[::1]:{port}"
    return format_address(host, port)


def door_addresses(host: str | None) -> set[str]:
    """The addresses the doors' clients come from: loopback, or the one address the server listens on. Many
    people arrive from there; those whose ``hello`` carries the door token are bounded by the doors' own caps,
    not the per-address share meant for one host (which every other connection from there keeps)."""
    return {"127.0.0.1", "::1"} | ({host} if host not in (None, "", "0.0.0.0", "::") else set())


class DoorThread:
    """A door on a thread with its own asyncio loop, beside the trio server. ``start`` returns the port."""

    def __init__(self, door: Door, host: str | None, port: int, name: str = "door") -> None:
        self.door, self.host, self.port, self.name = door, host, port, name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._main, name=name, daemon=True)

    def start(self, timeout: float = 15.0) -> int:
        self._thread.start()
        if not self._ready.wait(timeout):
            raise OSError(f"the {self.name} did not start")
        if self._error is not None:
            raise self._error
        return self.port

    def _main(self) -> None:
        try:
            asyncio.run(self._serve())
        except BaseException as exc:  # noqa: BLE001 - reported to start(), or logged once running
            if not self._ready.is_set():
                self._error = exc
                self._ready.set()
            else:
                log.exception("door_failed door=%s", self.name)

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        quiet_loop_errors(self._loop, door_quiet_log(log), self.name.split()[0].lower())
        self._stop = asyncio.Event()
        self.port = await self.door.listen(self.host, self.port)
        self._ready.set()
        await self._stop.wait()
        await self.door.close()

    def stop(self, timeout: float = STOP_GRACE + 1) -> None:
        """Close the door: every visitor's client is told to leave. Safe from any thread, and more than once."""
        if self._loop is not None and self._stop is not None and not self._loop.is_closed():
            try:
                self._loop.call_soon_threadsafe(self._stop.set)
            except RuntimeError:
                return  # the loop has already stopped
            self._thread.join(timeout)
