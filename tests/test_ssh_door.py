"""The SSH door, driven in-process with asyncssh's own client: the lobby over SSH, window sizes, the host key
kept across restarts, entry by key, the session limit, idle sessions, one session's end never touching another."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import time
from pathlib import Path

import asyncssh
import pytest

from quatro_shared import exits
from quatro_shared.framing import FrameDecoder, encode
from quatro_shared.protocol import PROTOCOL_VERSION

from helpers.ssh import DoorServer, player_key, start_door
from helpers.tui import run
from quatro_server.doors.gate import CLIENT_MEMORY, MAX_COLUMNS, MAX_ROWS, DoorThread
from quatro_server.doors.ssh import Door, authorized_fingerprints, player_name, ssh_commands
from quatro_server.server import MAX_CONNECTIONS_PER_ADDRESS

pytestmark = pytest.mark.timeout(90)

LOBBY = b"Tables on this server"
WAIT = 15.0


@pytest.fixture
def door(tmp_path):
    server = start_door(tmp_path)
    yield server
    server.stop()


class Terminal:
    """One SSH session with a pseudo-terminal, its output gathered as bytes."""

    def __init__(self, conn: asyncssh.SSHClientConnection, process: asyncssh.SSHClientProcess) -> None:
        self.conn, self.process = conn, process
        self.output = b""

    @classmethod
    async def open(cls, port: int, user: str, key: asyncssh.SSHKey | None = None, size=(100, 30)) -> Terminal:
        # No key: keyboard-interactive with no question (open entry). No agent, no keys from ~/.ssh.
        conn = await asyncssh.connect(
            "127.0.0.1",
            port,
            username=user,
            known_hosts=None,
            agent_path=None,
            client_keys=[key] if key is not None else None,
            password=None if key is not None else "",
        )
        process = await conn.create_process(term_type="xterm-256color", term_size=size, encoding=None)
        return cls(conn, process)

    async def wait_for(self, text: bytes, timeout: float = WAIT, anywhere: bool = False) -> bytes:
        """Read until ``text`` has appeared since the last wait (``anywhere``: at all); returns what was read."""
        start = 0 if anywhere else len(self.output)
        deadline = time.monotonic() + timeout
        while text not in self.output[start:]:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"never saw {text!r}; the tail was {self.output[-400:]!r}")
            try:
                chunk = await asyncio.wait_for(self.process.stdout.read(65536), left)
            except TimeoutError:
                continue
            if not chunk and self.process.stdout.at_eof():
                raise AssertionError(f"the session ended before {text!r}; the tail was {self.output[-400:]!r}")
            self.output += chunk
        return self.output[start:]

    async def ended(self, timeout: float = WAIT) -> int | None:
        async with asyncio.timeout(timeout):
            while chunk := await self.process.stdout.read(65536):
                self.output += chunk
            await self.process.wait()
        return self.process.exit_status

    def close(self) -> None:
        self.conn.close()


async def gone(server: DoorServer, left: int = 0) -> None:
    """Wait until only ``left`` sessions' clients still run."""
    deadline = time.monotonic() + WAIT
    while len(server.clients()) > left:
        assert time.monotonic() < deadline, f"{len(server.clients())} clients still run"
        await asyncio.sleep(0.1)


def test_an_ssh_session_reaches_the_lobby_follows_resizes_and_quits(door: DoorServer):
    async def body():
        started = time.monotonic()
        ann = await Terminal.open(door.ssh_port, "ann")
        assert ann.conn.get_server_host_key().get_fingerprint() == door.fingerprint
        await ann.wait_for(LOBBY)
        assert time.monotonic() - started < 10
        await ann.wait_for(b"\x1b[30;", anywhere=True)  # drawn on the 30 rows asked for (the footer on the last)...
        assert b"\x1b[40;" not in ann.output  # ...and no further
        ann.process.change_terminal_size(120, 40)
        await ann.wait_for(b"\x1b[40;")  # the client redrew itself on 40 rows
        ann.process.stdin.write(b"\x11")  # ctrl+q
        assert await ann.ended() == 0
        ann.close()

    run(body)


def test_the_ssh_user_name_is_the_players_name(door: DoorServer):
    async def body():
        ann = await Terminal.open(door.ssh_port, "ann")
        await ann.wait_for(LOBBY)
        ann.process.stdin.write(b"c")  # create a table: the room shows who sits there
        await ann.wait_for(b"ann (you) (host)")
        ann.close()

    run(body)


def test_the_host_key_is_made_once_and_kept(tmp_path):
    first = start_door(tmp_path)
    first.stop()
    again = start_door(tmp_path)
    again.stop()
    assert first.fingerprint == again.fingerprint
    assert (tmp_path / "data" / "ssh_host_ed25519_key").stat().st_mode & 0o777 == 0o600
    other = start_door(tmp_path, data_dir=tmp_path / "elsewhere")
    other.stop()
    assert other.fingerprint != first.fingerprint


def test_with_an_authorized_keys_file_only_those_keys_get_in(tmp_path):
    ben = player_key(tmp_path / "ben")
    stranger = player_key(tmp_path / "stranger")
    keys = tmp_path / "authorized_keys"
    keys.write_text(f"# the players\nno-pty {ben.export_public_key().decode().strip()}\n")
    server = start_door(tmp_path, "--ssh-keys", str(keys))

    async def body():
        for key in (None, stranger):
            with pytest.raises(asyncssh.PermissionDenied):
                await Terminal.open(server.ssh_port, "mallory", key)
        admitted = await Terminal.open(server.ssh_port, "ben", ben)
        await admitted.wait_for(LOBBY)
        admitted.close()

    try:
        run(body)
    finally:
        server.stop()


def test_r19_the_same_key_comes_back_to_the_same_seat_whatever_the_name(door: DoorServer, tmp_path):
    key = player_key(tmp_path / "ben")

    async def body():
        ben = await Terminal.open(door.ssh_port, "ben", key)
        await ben.wait_for(LOBBY)
        ben.process.stdin.write(b"c")
        await ben.wait_for(b"ben (you) (host)")
        ben.close()  # the SSH link drops; the seat stays (R19)
        await gone(door)
        # The same name without the key is not the same person: the lobby, not ben's seat.
        impostor = await Terminal.open(door.ssh_port, "ben")
        await impostor.wait_for(LOBBY)
        impostor.close()
        back = await Terminal.open(door.ssh_port, "benjamin", key)
        await back.wait_for(b"benjamin (you) (host)")  # the same seat, under the name of this login
        back.close()

    run(body)


def test_the_session_limit_turns_the_next_one_away_and_leaves_the_others_alone(tmp_path):
    server = start_door(tmp_path, "--ssh-max-sessions", "1")

    async def body():
        ann = await Terminal.open(server.ssh_port, "ann")
        await ann.wait_for(LOBBY)
        ben = await Terminal.open(server.ssh_port, "ben")
        await ben.wait_for(b"The Quatro server is full (1 players over SSH)")
        assert await ben.ended() == 1
        ben.close()
        ann.process.stdin.write(b"c")
        await ann.wait_for(b"ann (you) (host)")  # ann never noticed
        ann.close()
        await gone(server)  # ann's session is over: there is room again
        cy = await Terminal.open(server.ssh_port, "cy")
        await cy.wait_for(LOBBY)
        cy.close()

    try:
        run(body)
    finally:
        server.stop()


def test_an_idle_session_outside_a_match_is_closed(tmp_path):
    server = start_door(tmp_path, "--ssh-idle", "1")

    async def body():
        ann = await Terminal.open(server.ssh_port, "ann")
        await ann.wait_for(LOBBY)
        await ann.wait_for(b"without a key press", timeout=20)
        assert await ann.ended() == exits.IDLE
        ann.close()

    try:
        run(body)
    finally:
        server.stop()


def test_a_dropped_ssh_link_ends_its_client_and_only_its_own(door: DoorServer):
    async def body():
        ann = await Terminal.open(door.ssh_port, "ann")
        ben = await Terminal.open(door.ssh_port, "ben")
        await ann.wait_for(LOBBY)
        await ben.wait_for(LOBBY)
        assert len(door.clients()) == 2
        ben.conn.abort()  # as a network failure would
        await gone(door, left=1)  # ben's client is gone, ann's is not
        ann.process.stdin.write(b"c")
        await ann.wait_for(b"ann (you) (host)")
        ann.close()

    run(body)


# --- the pieces --------------------------------------------------------------------------------------------


def test_authorized_keys_lines_with_options_and_comments(tmp_path):
    one = player_key(tmp_path / "one")
    two = player_key(tmp_path / "two")
    text = "\n".join(
        [
            "# a comment",
            "",
            one.export_public_key().decode().strip(),
            f'command="echo hi",no-pty {two.export_public_key().decode().strip()} two@laptop',
            "ssh-ed25519 not-base64",
            "garbage",
        ]
    )
    assert authorized_fingerprints(text) == {one.get_fingerprint(), two.get_fingerprint()}


def test_player_names_from_ssh_user_names():
    assert player_name("ann") == "ann"
    assert player_name("a" * 40) == "a" * 24
    assert player_name(" ") == "player"
    assert player_name("\x1b[31m") == "player"


def test_ssh_commands_beside_the_join_addresses():
    assert ssh_commands(2222, ["192.168.1.20:7777", "[fd00::5]:7777", "127.0.0.1:7777"]) == [
        "ssh -p 2222 NAME@192.168.1.20",
        "ssh -p 2222 NAME@fd00::5",
        "ssh -p 2222 NAME@127.0.0.1",
    ]


def test_a_taken_ssh_port_or_a_missing_keys_file_is_said_plainly(tmp_path):
    import socket
    import subprocess
    import sys

    base = [sys.executable, "-m", "quatro_server", "--host", "127.0.0.1", "--port", "0", "--data-dir", str(tmp_path)]
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run([*base, "--ssh", str(port)], capture_output=True, text=True, timeout=30)
    assert result.returncode == 1
    assert f"cannot open the SSH door on port {port}" in result.stderr and "in use" in result.stderr
    result = subprocess.run(
        [*base, "--ssh", "0", "--ssh-keys", str(tmp_path / "none")], capture_output=True, text=True, timeout=30
    )
    assert result.returncode == 2 and "No such file" in result.stderr
    (tmp_path / "empty").write_text("# nobody yet\n")
    result = subprocess.run(
        [*base, "--ssh", "0", "--ssh-keys", str(tmp_path / "empty")], capture_output=True, text=True, timeout=30
    )
    assert result.returncode == 2 and "holds no key" in result.stderr


def _pty_size(pid: int) -> tuple[int, int]:
    """The (rows, columns) of a client's terminal, as the kernel holds them."""
    tty = os.readlink(f"/proc/{pid}/fd/0")
    rows, columns = subprocess.run(
        ["stty", "-F", tty, "size"], capture_output=True, text=True, check=True
    ).stdout.split()
    return int(rows), int(columns)


def _address_space_limit(pid: int) -> int:
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max address space"):
            return int(line.split()[3])
    raise AssertionError("no address space limit line")


def test_a_huge_window_is_clamped_at_login_and_at_a_resize_and_the_clients_memory_is_bounded(door: DoorServer):
    """65535 × 65535 cells would take a client gigabytes: the client is given at most MAX_COLUMNS × MAX_ROWS, at
    login and at every resize (past 65535 too, which no terminal size can hold), and its address space is bounded."""

    async def body():
        wide = await Terminal.open(door.ssh_port, "wide", size=(65535, 65535))
        await wide.wait_for(LOBBY, timeout=30)
        [client] = door.clients()
        assert _pty_size(client) == (MAX_ROWS, MAX_COLUMNS)
        assert _address_space_limit(client) == CLIENT_MEMORY
        wide.process.change_terminal_size(100000, 100000)
        wide.process.change_terminal_size(30, 10)
        deadline = time.monotonic() + WAIT
        while _pty_size(client) != (10, 30):
            assert time.monotonic() < deadline, _pty_size(client)
            await asyncio.sleep(0.1)
        wide.process.change_terminal_size(100000, 70000)
        deadline = time.monotonic() + WAIT
        while _pty_size(client) != (MAX_ROWS, MAX_COLUMNS):
            assert time.monotonic() < deadline, _pty_size(client)
            await asyncio.sleep(0.1)
        wide.close()

    run(body)
    assert not any("Traceback" in line or "struct.error" in line for line in door.log), "".join(door.log)


def _half_handshake(port: int, local: str) -> socket.socket:
    """A connection that sends its version line and then nothing."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(local, 0))
    sock.sendall(b"SSH-2.0-half\r\n")
    return sock


def _answered(sock: socket.socket) -> bool:
    """The door sent its version line (False: it closed the connection at once)."""
    try:
        return sock.recv(4096).startswith(b"SSH-")
    except ConnectionError:
        return False


def _closed_within(sock: socket.socket, seconds: float) -> bool:
    sock.settimeout(seconds)
    try:
        while sock.recv(65536):
            pass
    except TimeoutError:
        return False
    except ConnectionError:
        pass
    return True


def test_handshakes_are_capped_in_all_and_per_address_and_cut_at_the_login_deadline(tmp_path):
    """Half-done handshakes are capped (here 3 at once, 2 from one address), refused before the key exchange
    costs anything, and closed at the login deadline; a refused one is logged one line at a time, not per attempt."""
    door = Door("127.0.0.1:1", tmp_path, max_handshakes=3, max_handshakes_per_address=2, login_timeout=1.5)
    thread = DoorThread(door, "127.0.0.1", 0, name="SSH door")
    port = thread.start()
    held: list[socket.socket] = []
    try:
        one = [_half_handshake(port, "127.0.8.1") for _ in range(3)]
        held += one
        assert [_answered(sock) for sock in one] == [True, True, False]  # two from one address
        other = [_half_handshake(port, "127.0.8.2") for _ in range(2)]
        held += other
        assert [_answered(sock) for sock in other] == [True, False]  # three in all
        started = time.monotonic()
        assert all(_closed_within(sock, 5) for sock in one[:2] + other[:1])
        assert time.monotonic() - started < 4
        again = _half_handshake(port, "127.0.8.1")  # the deadline freed the places
        held.append(again)
        assert _answered(again)
    finally:
        for sock in held:
            sock.close()
        thread.stop()


def test_ssh_connections_from_one_address_are_capped_in_any_state(tmp_path):
    door = Door("127.0.0.1:1", tmp_path, max_handshakes=10, max_handshakes_per_address=10, max_per_address=2)
    thread = DoorThread(door, "127.0.0.1", 0, name="SSH door")
    port = thread.start()
    held = [_half_handshake(port, "127.0.8.3") for _ in range(3)]
    try:
        assert [_answered(sock) for sock in held] == [True, True, False]
    finally:
        for sock in held:
            sock.close()
        thread.stop()


def test_with_a_door_open_a_local_process_keeps_the_per_address_share_and_the_doors_clients_show_the_token(door):
    """The game port exempts nobody on loopback: a local process gets MAX_CONNECTIONS_PER_ADDRESS connections and
    no more, and an SSH session's client still joins past them (its hello shows the token the door handed it)."""
    held = []

    def hello(sock: socket.socket) -> dict:
        sock.sendall(encode({"kind": "hello", "id": 1, "version": PROTOCOL_VERSION, "name": "local"}))
        decoder = FrameDecoder()
        while True:
            data = sock.recv(65536)
            assert data, "closed before answering"
            for frame in decoder.feed(data):
                if frame.get("id") in (1, None):
                    return frame

    try:
        for _ in range(MAX_CONNECTIONS_PER_ADDRESS):
            sock = socket.create_connection(("127.0.0.1", door.port), timeout=5)
            held.append(sock)
            assert hello(sock)["kind"] == "ok"
        past = socket.create_connection(("127.0.0.1", door.port), timeout=5)
        held.append(past)
        refused = hello(past)
        assert refused["kind"] == "error" and refused["code"] == "too_many_connections", refused

        async def body():
            ann = await Terminal.open(door.ssh_port, "ann")
            await ann.wait_for(LOBBY)
            ann.close()

        run(body)
    finally:
        for sock in held:
            sock.close()


def _environ(pid: int) -> dict[str, str]:
    with open(f"/proc/{pid}/environ", "rb") as f:
        pairs = [item.split(b"=", 1) for item in f.read().split(b"\0") if b"=" in item]
    return {key.decode(): value.decode() for key, value in pairs}


def test_a_key_s_login_plays_as_its_person_and_a_login_without_one_anonymously(door: DoorServer, tmp_path):
    """The door hands its client the person key of the login key's fingerprint (an HMAC under the server's secret, in
    the client's environment, never its arguments); a login without a key is anonymous, whatever its name."""
    from quatro_shared.protocol import PERSON_KEY_ENV

    from quatro_server.records.identity import door_key

    key = player_key(tmp_path / "cy")

    async def body():
        cy = await Terminal.open(door.ssh_port, "cy", key)
        await cy.wait_for(LOBBY)
        (pid,) = door.clients()
        given = _environ(pid)[PERSON_KEY_ENV]
        assert given == door_key(tmp_path / "data", key.get_fingerprint())
        assert given not in open(f"/proc/{pid}/cmdline").read()
        cy.process.stdin.write(b"i")  # her card: known, no rated match yet
        await cy.wait_for(b"No rated match finished yet")
        cy.close()
        await gone(door)
        nobody = await Terminal.open(door.ssh_port, "cy")
        await nobody.wait_for(LOBBY)
        nobody.process.stdin.write(b"i")
        await nobody.wait_for(b"you play anonymously")
        nobody.close()

    run(body)
