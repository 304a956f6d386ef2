"""The SSH door (``quatro-server --ssh PORT``): anyone with a plain SSH client reaches the lobby, nothing installed.

Each SSH session gets its own client: the ``quatro join`` program, the same Textual app, started as a child
process on a pseudo-terminal of its own and connected to this server's tables over loopback TCP. The door
pumps bytes between the SSH channel and the pseudo-terminal, and passes window-size changes on (the
kernel tells the app with SIGWINCH). A session's client is a process apart: whatever happens to it, the
server, its tables and the other sessions carry on.

- The SSH user name is the player's name (``ssh ann@HOST``); it can be changed in the lobby.
- The host key is made once and kept in the data directory (``ssh_host_ed25519_key``), so players never
  see it change after a restart.
- Entry is open by default (any key, or none). With an authorized_keys file, only those keys get in. Where
  a client offers a key, the key identifies the person: the same key comes back to the same seat.
- Bounded: at most ``max_sessions`` sessions (the next is told so and closed); a client left without a key
  press outside a match for ``idle_timeout`` seconds closes itself; no forwarding of any kind. Connections still
  in their handshake are capped (``SSH_MAX_HANDSHAKES``, and per address) and get ``SSH_LOGIN_TIMEOUT`` seconds;
  connections from one address are capped in any state; none is taken while the game port's reserve of
  descriptors would be touched (``doors.Gate``). A window is clamped to ``MAX_COLUMNS`` × ``MAX_ROWS`` at login
  and at every resize, and a client's address space to ``CLIENT_MEMORY``.

asyncssh runs on asyncio; the game server runs on trio. The door has a thread and an event loop of its own
(``doors.DoorThread``, shared with the browser door) and talks to the game only through TCP, as any client does.
"""

from __future__ import annotations

import asyncio
import errno
import fcntl
import logging
import os
import signal
import struct
import sys
import termios
from collections.abc import Iterable, Mapping
from pathlib import Path

import asyncssh

from quatro_shared.protocol import MAX_NAME_LEN, printable

from quatro_server.doors.gate import (
    DOOR_BACKLOG,
    SSH_LOGIN_TIMEOUT,
    SSH_MAX_HANDSHAKES,
    SSH_MAX_HANDSHAKES_PER_ADDRESS,
    SSH_MAX_PER_ADDRESS,
    STOP_GRACE,
    Gate,
    bounded_boot,
    clamp_size,
    client_command,
    client_environment,
    door_quiet_log,
)
from quatro_server.doors.gate import SSH_IDLE_TIMEOUT as IDLE_TIMEOUT
from quatro_server.doors.gate import SSH_MAX_SESSIONS as MAX_SESSIONS
from quatro_server.records.identity import door_environment

log = logging.getLogger("quatro.ssh")

#: Seconds to finish the handshake and authenticate after connecting.
LOGIN_TIMEOUT = SSH_LOGIN_TIMEOUT
#: Seconds between keepalives; a client that misses this many in a row is dropped (a dead link is noticed).
KEEPALIVE_INTERVAL = 30.0
KEEPALIVE_COUNT_MAX = 3
#: The host key's file in the data directory.
HOST_KEY_FILE = "ssh_host_ed25519_key"
#: Where the sessions' clients keep their settings and remembered seats, in the data directory.
CLIENTS_DIR = "ssh-clients"
READ_BYTES = 65536

#: Runs ``quatro`` on the pseudo-terminal it was given as stdin/stdout/stderr, which it makes its controlling
#: terminal (the process leads a session of its own): window-size changes then reach it as SIGWINCH.
_CLIENT_BOOT = bounded_boot("""
import fcntl, runpy, sys, termios
fcntl.ioctl(0, termios.TIOCSCTTY, 0)
runpy.run_module("quatro_tui", run_name="__main__")
""")


def host_key(data_dir: Path) -> asyncssh.SSHKey:
    """The door's host key: read from the data directory, or made there once (readable by its owner only)."""
    path = data_dir / HOST_KEY_FILE
    if path.exists():
        return asyncssh.read_private_key(str(path))
    data_dir.mkdir(parents=True, exist_ok=True)
    key = asyncssh.generate_private_key("ssh-ed25519", comment="quatro-server")
    temporary = path.with_suffix(".new")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(key.export_private_key())
    os.replace(temporary, path)
    path.with_name(HOST_KEY_FILE + ".pub").write_bytes(key.export_public_key())
    return key


def authorized_fingerprints(text: str) -> set[str]:
    """The SHA256 fingerprints of the keys in an authorized_keys file. Options before a key are skipped
    (the door gives every admitted key the same game, so ``command=`` and the like mean nothing here)."""
    found: set[str] = set()
    for line in text.splitlines():
        words = line.strip().split()
        if not words or words[0].startswith("#"):
            continue
        for i, word in enumerate(words):
            if word.startswith(("ssh-", "ecdsa-", "sk-")) and i + 1 < len(words):
                try:
                    found.add(asyncssh.import_public_key(f"{word} {words[i + 1]}").get_fingerprint())
                except (asyncssh.KeyImportError, ValueError):
                    pass
                break
    return found


def player_name(user: str) -> str:
    """The SSH user name as a player's name: cut to the protocol's length; ``player`` if nothing printable is left."""
    name = user.strip()[:MAX_NAME_LEN]
    return name if name and printable(name) else "player"


class Door:
    """The SSH door's settings and its live sessions."""

    def __init__(
        self,
        game_address: str,
        data_dir: Path,
        *,
        keys_file: Path | None = None,
        max_sessions: int = MAX_SESSIONS,
        idle_timeout: float = IDLE_TIMEOUT,
        max_handshakes: int = SSH_MAX_HANDSHAKES,
        max_handshakes_per_address: int = SSH_MAX_HANDSHAKES_PER_ADDRESS,
        max_per_address: int = SSH_MAX_PER_ADDRESS,
        login_timeout: float = LOGIN_TIMEOUT,
        python: str = sys.executable,
        door_token: str = "",
    ) -> None:
        #: Where the sessions' clients join: this server's port, on loopback.
        self.game_address = game_address
        self.data_dir = data_dir
        self.key = host_key(data_dir)
        #: None: open entry. Otherwise only these keys get in.
        self.admitted: set[str] | None = None
        if keys_file is not None:
            self.admitted = authorized_fingerprints(keys_file.read_text())
        self.max_sessions = max_sessions
        self.idle_timeout = idle_timeout
        self.python = python
        self.login_timeout = login_timeout
        #: What this door's clients present to the game port (``doors.DOOR_TOKEN_ENV``).
        self.door_token = door_token
        self.sessions: set[DoorSession] = set()
        self.acceptor: asyncssh.SSHAcceptor | None = None
        self.quiet = door_quiet_log(log)
        #: Every connection (a session's and the room for handshakes), and those not yet logged in.
        self.connections = Gate(max_sessions + max_handshakes, max_per_address, self.quiet, "ssh")
        self.handshakes = Gate(max_handshakes, max_handshakes_per_address, self.quiet, "ssh_handshake")

    @property
    def fingerprint(self) -> str:
        return self.key.get_fingerprint()

    async def listen(self, host: str | None, port: int) -> int:
        """Start accepting SSH connections; returns the port."""
        if not log.isEnabledFor(logging.DEBUG):
            logging.getLogger("asyncssh").setLevel(logging.WARNING)  # a line per packet exchange otherwise
        self.acceptor = await asyncssh.listen(
            host or "",
            port,
            server_factory=lambda: DoorServer(self),
            server_host_keys=[self.key],
            encoding=None,  # bytes both ways: the terminal's own encoding passes through untouched
            line_editor=False,  # every key goes to the client's terminal as typed; the app draws everything
            login_timeout=self.login_timeout,
            backlog=DOOR_BACKLOG,
            keepalive_interval=KEEPALIVE_INTERVAL,
            keepalive_count_max=KEEPALIVE_COUNT_MAX,
            agent_forwarding=False,
            x11_forwarding=False,
            allow_scp=False,
        )
        return self.acceptor.get_port()

    async def close(self) -> None:
        """Stop accepting, end every session (its client is told to hang up)."""
        if self.acceptor is not None:
            self.acceptor.close()
        for session in list(self.sessions):
            session.end()
        await asyncio.gather(*(session.stopped() for session in list(self.sessions)), return_exceptions=True)

    def client_command(self, name: str, person: str) -> list[str]:
        return client_command(
            self.python, self.game_address, idle_timeout=self.idle_timeout, person=person, name=name, boot=_CLIENT_BOOT
        )

    def client_environment(self, term: str, channel_env: dict[str, str]) -> dict[str, str]:
        # The player's locale, where their client sent it (OpenSSH's SendEnv LANG LC_*), else UTF-8.
        extra = {key: channel_env[key] for key in ("LANG", "LC_ALL", "LC_CTYPE", "COLORTERM") if channel_env.get(key)}
        return client_environment(
            self.data_dir / CLIENTS_DIR, {"TERM": term or "xterm-256color", **extra}, door_token=self.door_token
        )


class DoorServer(asyncssh.SSHServer):
    """One SSH connection: who it is (its user name, and its key where it offered one)."""

    def __init__(self, door: Door) -> None:
        self.door = door
        self.fingerprint = ""
        self.peer = "?"
        self.address = "?"
        #: Counted in the door's gates until it goes (``connection``), and until it has logged in (``handshake``).
        self.counted = False
        self.handshaking = False

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        peer = conn.get_extra_info("peername")
        self.peer = f"{peer[0]}:{peer[1]}" if peer else "?"
        self.address = str(peer[0]) if peer else "?"
        # Refused before the key exchange, which is what costs: the socket is closed at once.
        if self.door.connections.admit(self.address) is not None:
            conn.abort()
            return
        self.counted = True
        if self.door.handshakes.admit(self.address) is not None:
            conn.abort()
            return
        self.handshaking = True

    def auth_completed(self) -> None:
        self._handshake_over()

    def connection_lost(self, exc: Exception | None) -> None:
        self._handshake_over()
        if self.counted:
            self.counted = False
            self.door.connections.release(self.address)

    def _handshake_over(self) -> None:
        if self.handshaking:
            self.handshaking = False
            self.door.handshakes.release(self.address)

    def begin_auth(self, username: str) -> bool:
        return True  # always ask: a client that has a key then offers it, and the key identifies the person

    def public_key_auth_supported(self) -> bool:
        return True

    def validate_public_key(self, username: str, key: asyncssh.SSHKey) -> bool:
        fingerprint = key.get_fingerprint()
        if self.door.admitted is not None and fingerprint not in self.door.admitted:
            return False
        self.fingerprint = fingerprint
        return True

    def kbdint_auth_supported(self) -> bool:
        return self.door.admitted is None  # open entry: a client without a key gets in without a question

    def get_kbdint_challenge(self, username: str, lang: str, submethods: str) -> bool:
        return True

    def password_auth_supported(self) -> bool:
        return False

    def session_requested(self) -> DoorSession:
        return DoorSession(self.door, self)


class DoorSession(asyncssh.SSHServerSession[bytes]):
    """One SSH session: a client process on a pseudo-terminal, and the bytes between it and the channel."""

    def __init__(self, door: Door, server: DoorServer) -> None:
        self.door, self.server = door, server
        self.chan: asyncssh.SSHServerChannel[bytes] | None = None
        self.term = ""
        self.size = (80, 24)
        self.master: int | None = None
        self.process: asyncio.subprocess.Process | None = None
        self.task: asyncio.Task[None] | None = None
        self.reading = False
        self._done = asyncio.Event()

    # --- what the SSH client asks for ---------------------------------------------------------------

    def connection_made(self, chan: asyncssh.SSHServerChannel[bytes]) -> None:
        self.chan = chan

    def pty_requested(
        self, term_type: str, term_size: tuple[int, int, int, int], term_modes: Mapping[int, int]
    ) -> bool:
        self.term = term_type
        if term_size[0] and term_size[1]:
            self.size = clamp_size(term_size[0], term_size[1])
        return True

    def shell_requested(self) -> bool:
        return True

    def exec_requested(self, command: str) -> bool:
        return True  # ``ssh -t HOST anything``: the game is the only thing this door runs

    def subsystem_requested(self, subsystem: str) -> bool:
        return False  # no sftp, nothing else

    def session_started(self) -> None:
        self.task = asyncio.get_running_loop().create_task(self._run())

    def data_received(self, data: bytes, datatype: int | None) -> None:
        if self.master is None:
            return
        try:
            os.write(self.master, data)
        except OSError:
            pass  # the client is gone or not reading keys: nothing to deliver them to

    def terminal_size_changed(self, width: int, height: int, pixwidth: int, pixheight: int) -> None:
        if width and height:
            self.size = clamp_size(width, height)
            if self.master is not None:
                _set_size(self.master, self.size)

    def eof_received(self) -> bool:
        self.end()
        return False

    def pause_writing(self) -> None:
        self._stop_reading()  # the SSH client is slow: stop reading the screen until its window reopens

    def resume_writing(self) -> None:
        self._start_reading()

    def connection_lost(self, exc: Exception | None) -> None:
        self.end()

    # --- the client process ---------------------------------------------------------------------

    async def _run(self) -> None:
        assert self.chan is not None
        chan = self.chan
        try:
            if not self.term:
                _exit(chan, 1, b"Quatro needs a terminal: connect with ssh -t.\r\n")
                return
            if len(self.door.sessions) >= self.door.max_sessions:
                log.info("ssh_full peer=%s", self.server.peer)
                full = f"The Quatro server is full ({self.door.max_sessions} players over SSH). Try again later.\r\n"
                _exit(chan, 1, full.encode())
                return
            self.door.sessions.add(self)
            user = chan.get_extra_info("username") or ""
            name = player_name(user)
            master, slave = os.openpty()
            self.master = master
            os.set_blocking(master, False)
            _set_size(master, self.size)
            try:
                self.process = await asyncio.create_subprocess_exec(
                    *self.door.client_command(name, self.server.fingerprint),
                    stdin=slave,
                    stdout=slave,
                    stderr=slave,
                    env=self.door.client_environment(self.term, dict(chan.get_environment()))
                    | door_environment(self.door.data_dir, self.server.fingerprint),  # who they are: their key's person
                    start_new_session=True,
                    close_fds=True,
                )
            finally:
                os.close(slave)
            log.info(
                "ssh_session_started peer=%s name=%r key=%s pid=%d sessions=%d",
                self.server.peer,
                name,
                self.server.fingerprint or "-",
                self.process.pid,
                len(self.door.sessions),
            )
            if chan.is_closing():
                self.end()  # the player left while their client was starting
            self._start_reading()
            status = await self.process.wait()
            self._flush()
            _exit(chan, max(status, 0))
        except Exception as exc:  # this session only; a shortage (descriptors, memory) fails many: one line a while
            self.door.quiet(
                "ssh_session_failed",
                logging.WARNING,
                "ssh_session_failed peer=%s error=%s %s",
                self.server.peer,
                type(exc).__name__,
                str(exc)[:200],
            )
            _exit(chan, 1, b"\r\nThe game could not start here; the server goes on. Try again.\r\n")
        finally:
            self._close()

    def _start_reading(self) -> None:
        if self.master is not None and not self.reading:
            asyncio.get_running_loop().add_reader(self.master, self._pump)
            self.reading = True

    def _stop_reading(self) -> None:
        if self.master is not None and self.reading:
            asyncio.get_running_loop().remove_reader(self.master)
            self.reading = False

    def _pump(self) -> None:
        """The client drew something: on to the SSH client."""
        assert self.master is not None
        try:
            data = os.read(self.master, READ_BYTES)
        except BlockingIOError:
            return
        except OSError as exc:
            if exc.errno != errno.EIO:  # EIO: the client closed the terminal (it is exiting)
                log.warning("ssh_pty_error error=%s", exc)
            self._stop_reading()
            return
        if self.chan is not None and data and not self.chan.is_closing():
            self.chan.write(data)

    def _flush(self) -> None:
        """What the client wrote just before it exited (its last message)."""
        while self.master is not None:
            try:
                data = os.read(self.master, READ_BYTES)
            except OSError:
                return
            if not data:
                return
            if self.chan is not None and not self.chan.is_closing():
                self.chan.write(data)

    def end(self) -> None:
        """The SSH side is gone (or the door closes): the client hangs up, and is killed if it lingers."""
        process = self.process
        if process is None or process.returncode is not None:
            if self.task is None or self.task.done():
                self._close()
            return
        try:
            os.killpg(process.pid, signal.SIGHUP)
        except ProcessLookupError:
            return
        asyncio.get_running_loop().call_later(STOP_GRACE, self._kill)

    def _kill(self) -> None:
        process = self.process
        if process is not None and process.returncode is None:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def _close(self) -> None:
        self._stop_reading()
        if self.master is not None:
            os.close(self.master)
            self.master = None
        if self in self.door.sessions:
            self.door.sessions.discard(self)
            log.info("ssh_session_ended peer=%s sessions=%d", self.server.peer, len(self.door.sessions))
        self._done.set()

    async def stopped(self) -> None:
        await self._done.wait()


def _exit(chan: asyncssh.SSHServerChannel[bytes], status: int, message: bytes = b"") -> None:
    """End the session with ``status`` (and a last line), unless the SSH client has already gone."""
    if chan.is_closing():
        return
    try:
        if message:
            chan.write(message)
        chan.exit(status)
    except (OSError, asyncssh.Error):
        pass


def _set_size(fd: int, size: tuple[int, int]) -> None:
    """Tell the pseudo-terminal its size (columns, rows); the kernel signals the client (SIGWINCH)."""
    columns, rows = size
    try:
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    except OSError:
        pass


def ssh_commands(port: int, addresses: Iterable[str]) -> list[str]:
    """The commands players type, one per address (``HOST:PORT`` as the join lines have them)."""
    out = []
    for address in addresses:
        host = address.rsplit(":", 1)[0].strip("[]")
        out.append(f"ssh -p {port} NAME@{host}")
    return out
