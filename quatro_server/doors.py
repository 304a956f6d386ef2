"""What the server's doors share: the SSH door (ssh_door.py) and the browser door (web_door.py).

A door lets people play without installing anything. Behind every door, each visitor gets a client of their
own: the ``quatro join`` program, started as a child process, connected to this server's tables over loopback
TCP like any other client. The door runs on an asyncio loop of its own, on a thread beside the trio server
(``DoorThread``), and talks to the game only through TCP.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from quatro_server.addresses import with_port

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


class Door(Protocol):
    """A door's listening side, as ``DoorThread`` runs it."""

    #: Where its visitors' clients join: this server's port, on loopback.
    game_address: str

    async def listen(self, host: str | None, port: int) -> int:
        """Start accepting; returns the port."""

    async def close(self) -> None:
        """Stop accepting and end every visitor's client."""


def client_command(python: str, game_address: str, *, idle_timeout: float, person: str = "", name: str = "",
                   boot: str | None = None, ask_name: bool = False) -> list[str]:
    """A visitor's client: ``quatro join`` to this server, fixed by the door (nothing of it is the visitor's
    choice but their name and who they are, each passed as one argument, never through a shell)."""
    command = [python, "-c", boot] if boot is not None else [python, "-m", "quatro_tui"]
    command += ["join", game_address, "--idle-exit", str(idle_timeout)]
    if name:
        command += ["--name", name]
    if ask_name:
        command.append("--ask-name")
    return command + (["--person", person] if person else [])


def client_environment(config_home: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """A client's environment: a few of the server's variables, ``extra`` (the terminal's), a UTF-8 locale
    unless ``extra`` names one (the client falls back to ASCII without), and its own settings directory."""
    env = {key: value for key, value in os.environ.items() if key in INHERITED}
    env.update(extra or {})
    env.setdefault("LANG", "C.UTF-8")
    env["XDG_CONFIG_HOME"] = str(config_home)
    return env


def loopback(host: str | None, port: int) -> str:
    """This server's address on this machine, for the doors' clients."""
    if host in (None, "", "0.0.0.0"):
        return f"127.0.0.1:{port}"
    if host == "::":
        return f"[::1]:{port}"
    return with_port(host, port)


def trusted_for_doors(host: str | None) -> set[str]:
    """The addresses the doors' clients come from: loopback, or the one address the server listens on. Many
    people arrive from there, so the door's own caps bound them, not the per-address share meant for one
    remote host."""
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
