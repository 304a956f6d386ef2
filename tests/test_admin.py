"""``quatro-server admin``: a real server process, the real command against its admin socket, real clients.

Every server here journals into its own temporary data directory (its admin socket is ``DATA/admin.sock``) and plays
matches of one point (``SHORT``), so that a drain sees its running match end within a second or two.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from quatro_shared import protocol as p
from quatro_shared.framing import FrameDecoder, encode
from quatro_shared.games.quatro import actions as a
from quatro_shared.games.quatro.views import Phase

from helpers.netclient import TestClient
from quatro_server.workers import admin

#: A match of one point, windows long enough for a test never to race them: a call in the first round ends it.
SHORT = """
sign_window = 60.0
swap_cooldown = 0.2
channel_cooldown = 0.2
pulse_interval = 0.5
pulse_shown = 0.4
vote_window = 2.0
vote_gap = 3.0
round_length = 600.0
break_length = 600.0
target_score = 1
"""


class Running:
    """A ``quatro-server`` process on a free loopback port, journalling into ``data``."""

    def __init__(self, proc: trio.Process, port: int, data: Path, log: Path, socket: Path | None) -> None:
        self.proc, self.port, self.data, self.log = proc, port, data, log
        #: Its admin socket, and how the command names it: by the data directory, or by its path when it chose one.
        self.socket = socket or data / admin.SOCKET_NAME
        self.where = ["--data", str(data)] if socket is None else ["--socket", str(socket)]

    def stop(self) -> None:
        if self.proc.returncode is None:
            self.proc.kill()


async def start(tmp: Path, *args: str, data: Path | None = None) -> Running:
    timing = tmp / "short.toml"
    timing.write_text(SHORT)
    data = data or tmp / "data"
    log = tmp / f"server-{len(list(tmp.glob('server-*.log')))}.log"
    proc = await trio.lowlevel.open_process(
        [
            sys.executable,
            "-m",
            "quatro_server",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--no-announce",
            "--data-dir",
            str(data),
            "--timing",
            str(timing),
            *args,
        ],
        stdout=subprocess.PIPE,
        stderr=log.open("wb"),
    )
    out = b""
    with trio.fail_after(20):
        while b"quatro join 127.0.0.1:" not in out:
            chunk = await proc.stdout.receive_some(4096)
            assert chunk, f"server exited early: {out!r} {log.read_text()}"
            out += chunk
    line = next(line for line in out.decode().splitlines() if "quatro join" in line)
    chosen = Path(args[args.index("--admin-socket") + 1]) if "--admin-socket" in args else None
    return Running(proc, int(line.rsplit(":", 1)[1]), data, log, chosen)


async def run_admin(server: Running, *argv: str) -> subprocess.CompletedProcess[bytes]:
    """The real command, as an operator types it."""
    return await trio.run_process(
        [sys.executable, "-m", "quatro_server", "admin", *server.where, *argv],
        capture_stdout=True,
        capture_stderr=True,
        check=False,
    )


async def admin_json(server: Running, *argv: str) -> dict:
    done = await run_admin(server, "--json", *argv)
    assert done.returncode == 0, (done.stdout, done.stderr)
    return json.loads(done.stdout)


async def bot_match(name: str, port: int) -> TestClient:
    """A player at a four-seat table with three bots, its match started."""
    c = await TestClient.connect(port, name)
    assert (await c.request(p.CREATE_TABLE, players=4))["kind"] == p.OK
    for _ in range(3):
        assert (await c.request(p.ADD_BOT, level="easy"))["kind"] == p.OK
    assert (await c.request(p.START))["kind"] == p.OK
    await c.wait_view(lambda v: v.phase is Phase.SIGNING)
    return c


async def push(c: TestClient, kind: str, timeout: float = 5) -> dict:
    """The next push of ``kind`` (others read past)."""
    with trio.fail_after(timeout):
        while True:
            frame = await c.next_frame(timeout)
            assert frame is not None, f"closed before a {kind}"
            if frame["kind"] == kind:
                return frame


async def test_tables_lists_a_bot_match_and_close_ends_it_telling_player_and_watcher_for_good(tmp_path):
    server = await start(tmp_path)
    try:
        ann = await bot_match("ann", server.port)
        bob = await TestClient.connect(server.port, "bob")
        assert (await bob.request(p.WATCH, table=ann.table))["kind"] == p.OK
        listing = await admin_json(server, "tables")
        [table] = listing["tables"]
        assert (table["table"], table["game"], table["phase"], table["watchers"]) == (ann.table, "quatro", "playing", 1)
        assert [(s["name"], s["bot"], s["connected"]) for s in table["seats"]] == [
            ("ann", None, True),
            ("easy-bot-1", "easy", True),
            ("easy-bot-2", "easy", True),
            ("easy-bot-3", "easy", True),
        ]
        assert table["age_s"] >= 0 and listing["draining"] is False
        said = (await run_admin(server, "tables")).stdout.decode()
        assert f"table {ann.table}  quatro  playing" in said and "seat 1: ann (connected)" in said, said

        done = await run_admin(server, "close", str(ann.table), "--reason", "closing for the night")
        assert done.returncode == 0, done.stderr
        assert b"closed; 2 connections told" in done.stdout
        ended = await push(ann, p.SEAT_ENDED)
        assert ended == {
            "kind": "seat_ended",
            "table": ann.table,
            "reason": "closed_by_operator",
            "message": "closing for the night",
        }
        assert ann.core.place is None  # nothing to come back to
        assert (await push(ann, p.LOBBY))["tables"] == []  # in the lobby now, the table gone
        watched = await push(bob, p.WATCH_ENDED)
        assert (watched["reason"], watched["message"]) == ("closed_by_operator", "closing for the night")
        closed = ann.table
        assert (await ann.request(p.CREATE_TABLE, players=4))["kind"] == p.OK  # a lobby connection like any

        again = await run_admin(server, "close", "99")
        assert again.returncode == 1 and b"no table 99" in again.stdout
        server.proc.send_signal(signal.SIGTERM)
        with trio.fail_after(10):
            assert await server.proc.wait() == 0
        assert not server.socket.exists()  # the server takes its socket away with it
        # The journal holds the closed table's end: a restart brings back the one left open, not it.
        server = await start(tmp_path)
        restored = await admin_json(server, "tables")
        assert [t["table"] for t in restored["tables"]] == [closed + 1]
    finally:
        server.stop()


async def test_remove_sends_the_player_to_the_lobby_and_voids_the_secret_in_a_match_or_before(tmp_path):
    server = await start(tmp_path)
    try:
        ann = await bot_match("ann", server.port)
        secret = ann.secret
        done = await run_admin(server, "remove", str(ann.table), "1")
        assert done.returncode == 0, done.stderr
        assert b"stays in the match, disconnected" in done.stdout
        ended = await push(ann, p.SEAT_ENDED)
        assert (ended["reason"], ended["table"]) == ("removed_by_operator", ann.table)
        refused = await ann.request(p.REJOIN, table=ann.table, secret=secret)
        assert refused["reason"] == p.BAD_SECRET
        other = await TestClient.connect(server.port, "ann again")
        assert (await other.request(p.REJOIN, table=ann.table, secret=secret))["reason"] == p.BAD_SECRET
        [table] = (await admin_json(server, "tables"))["tables"]
        assert table["seats"][0] == {"seat": 0, "name": "ann", "bot": None, "taken": True, "connected": False}  # R19

        # Before the match the seat is free again, as for a player who leaves.
        cid = await TestClient.connect(server.port, "cid")
        created = await cid.request(p.CREATE_TABLE, players=4)
        dan = await TestClient.connect(server.port, "dan")
        assert (await dan.request(p.JOIN, table=created["table"]))["seat"] == 1
        done = await run_admin(server, "--json", "remove", str(created["table"]), "2", "--reason", "be nice")
        assert json.loads(done.stdout)["freed"] is True
        assert (await push(dan, p.SEAT_ENDED))["message"] == "be nice"
        seating = await push(cid, p.TABLE)
        assert [s["taken"] for s in seating["seats"]] == [True, False, False, False]
        bots = await run_admin(server, "remove", str(ann.table), "2")
        assert bots.returncode == 1 and b"no player sits at seat 2" in bots.stdout
    finally:
        server.stop()


async def test_a_notice_reaches_the_lobby_and_the_tables(tmp_path):
    server = await start(tmp_path)
    try:
        ann = await bot_match("ann", server.port)
        eve = await TestClient.connect(server.port, "eve")
        done = await run_admin(server, "notice", "back in five minutes")
        assert done.returncode == 0 and b"notice shown to 2 connections" in done.stdout
        for client in (ann, eve):
            assert await push(client, p.NOTICE) == {"kind": "notice", "text": "back in five minutes"}
        bad = await run_admin(server, "notice", "two\nlines")
        assert bad.returncode == 2 and b"printable text" in bad.stdout
    finally:
        server.stop()


async def test_drain_refuses_new_tables_lets_the_running_match_finish_then_exits_0(tmp_path):
    server = await start(tmp_path)
    try:
        ann = await bot_match("ann", server.port)
        eve = await TestClient.connect(server.port, "eve")
        done = await run_admin(server, "drain")
        assert done.returncode == 0, done.stderr
        assert b"1 match running" in done.stdout
        notice = await push(eve, p.NOTICE)
        assert notice["draining"] is True
        assert (await push(eve, p.LOBBY))["draining"] is True
        refused = await eve.request(p.CREATE_TABLE, players=4)
        assert (refused["kind"], refused["reason"]) == (p.REFUSED, "draining")
        assert (await eve.request(p.LIST_TABLES))["draining"] is True
        assert (await run_admin(server, "drain")).returncode == 1  # once is enough
        assert server.proc.returncode is None  # the match runs on
        assert (await ann.act(a.Ready()))["kind"] == p.OK
        await ann.wait_view(lambda v: v.phase is Phase.ROUND)
        assert (await ann.act(a.Call()))["kind"] == p.OK  # a point either way: the match of one point is over
        await ann.wait_view(lambda v: v.phase is Phase.OVER)
        bye = await push(ann, p.BYE)
        assert bye["reason"] == "shutdown" and "every match had ended" in bye["message"]
        with trio.fail_after(10):
            assert await server.proc.wait() == 0
    finally:
        server.stop()


async def test_drain_with_a_timeout_stops_with_matches_still_running_and_tells_them(tmp_path):
    server = await start(tmp_path)
    try:
        ann = await bot_match("ann", server.port)
        with trio.fail_after(15):
            done = await run_admin(server, "drain", "--timeout", "0.5", "--wait")
        assert done.returncode == 0, done.stderr
        assert b"the server has stopped" in done.stdout
        first = await push(ann, p.NOTICE)
        assert first["draining"] is True
        last = await push(ann, p.NOTICE)
        assert "restarting now, before the end of your match" in last["text"] and "comes back" in last["text"]
        assert (await push(ann, p.BYE))["reason"] == "shutdown"
        with trio.fail_after(10):
            assert await server.proc.wait() == 0
        # With a journal the cut match comes back after the restart, and its player's secret works there.
        server = await start(tmp_path)
        back = await TestClient.connect(server.port, "ann")
        assert (await back.request(p.REJOIN, table=ann.table, secret=ann.secret))["kind"] == p.OK
    finally:
        server.stop()


def _raw_admin_as(uid: int, path: Path) -> bytes:
    """What the server answers a ``tables`` request from a process of the Unix user ``uid`` (a forked child that
    drops to it before it connects): the raw bytes, or ``connect:`` and the connect error's name."""
    request = encode({"kind": "tables"})
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:  # the child: plain system calls only, then out
        status = 0
        try:
            os.close(read_end)
            os.setgid(uid)
            os.setuid(uid)
            out = b""
            with socket.socket(socket.AF_UNIX) as sock:
                sock.settimeout(10)
                try:
                    sock.connect(str(path))
                except OSError as exc:
                    out = f"connect:{type(exc).__name__}".encode()
                else:
                    sock.sendall(request)
                    while chunk := sock.recv(65536):
                        out += chunk
            os.write(write_end, out)
        except BaseException as exc:
            os.write(write_end, repr(exc).encode())
            status = 1
        finally:
            os._exit(status)
    os.close(write_end)
    data = b""
    while chunk := os.read(read_end, 65536):
        data += chunk
    os.close(read_end)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0, data
    return data


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run a child as another user")
async def test_only_the_servers_own_account_may_use_the_socket(tmp_path):
    home = Path(os.environ.get("TMPDIR", "/tmp")) / f"quatro-admin-{os.getpid()}"
    home.mkdir(mode=0o711, exist_ok=True)
    home.chmod(0o711)  # another user may reach the socket's file, so that only its own mode and the check stop them
    path = home / "admin.sock"
    server = await start(tmp_path, "--admin-socket", str(path))
    try:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        nobody = 65534
        refused = _raw_admin_as(nobody, path)
        assert refused == b"connect:PermissionError"  # the file's mode
        path.chmod(0o666)  # past the file's mode, the peer's credentials still say who it is
        answer = FrameDecoder().feed(_raw_admin_as(nobody, path))
        assert answer == [
            {
                "kind": "error",
                "code": "not_allowed",
                "message": "only the account that runs the server may use its admin socket",
            }
        ]
        assert (await admin_json(server, "tables"))["tables"] == []  # its owner may
    finally:
        server.stop()
        path.unlink(missing_ok=True)
        home.rmdir()


async def test_a_live_servers_socket_is_refused_to_another_and_a_stale_one_replaced(tmp_path):
    path = tmp_path / "ops.sock"
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(str(path))  # a server that died without a word leaves the file, and nobody listening on it
    stale.close()
    server = await start(tmp_path, "--admin-socket", str(path), "--no-journal")
    try:
        assert (await admin_json(server, "tables"))["connections"] == 0
        second = await trio.run_process(
            [
                sys.executable,
                "-m",
                "quatro_server",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--no-announce",
                "--no-journal",
                "--admin-socket",
                str(path),
            ],
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
        assert second.returncode == 2
        assert b"another server is running with the admin socket" in second.stderr
        assert (await admin_json(server, "tables"))["connections"] == 0  # the first serves on
    finally:
        server.stop()


def test_a_server_without_a_journal_opens_no_admin_socket_unless_asked(tmp_path):
    from quatro_server import cli

    args = cli._parser().parse_args(["serve", "--no-journal"])
    assert args.admin_socket is None
    missing = subprocess.run(
        [sys.executable, "-m", "quatro_server", "admin", "--socket", str(tmp_path / "none.sock"), "tables"],
        capture_output=True,
        check=False,
    )
    assert missing.returncode == 2 and b"no admin socket at" in missing.stderr


async def test_a_data_directory_too_deep_for_a_socket_path_serves_on_without_one(tmp_path):
    deep = tmp_path / ("d" * 110)  # a Unix socket's path holds 107 bytes at most
    server = await start(tmp_path, data=deep)
    try:
        client = await TestClient.connect(server.port, "ann")
        assert (await client.request(p.CREATE_TABLE, players=4))["kind"] == p.OK
        assert "serving without it (choose one with --admin-socket)" in server.log.read_text()
    finally:
        server.stop()
