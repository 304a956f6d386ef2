"""A player's own client (the terminal client's connection, ``quatro_tui.connection``) when the worker holding its
table is killed outright: it says the connection was lost, and comes back to its seat once the worker is started
again with its journal, through the public port, whichever worker it reaches."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time

import psutil
import pytest

from quatro_shared import messages as m

from helpers.tui import run, until
from quatro_tui.connection import Connection, LinkBack, LinkDropped, SeatLost
from test_workers import journalled

pytestmark = pytest.mark.timeout(90)


def start(tmp_path, *args: str) -> tuple[subprocess.Popen[bytes], int]:
    proc = subprocess.Popen(
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
            "--timing",
            "fast",
            *args,
        ],
        stdout=subprocess.PIPE,
        stderr=open(tmp_path / "supervisor.log", "wb"),  # noqa: SIM115 - the child holds it
    )
    assert proc.stdout is not None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = proc.stdout.readline().decode()
        assert line, (tmp_path / "supervisor.log").read_text()
        if "quatro join 127.0.0.1:" in line:
            return proc, int(line.rsplit(":", 1)[1])
    raise AssertionError("the supervisor did not say where to join")


def holder(supervisor: subprocess.Popen[bytes], local_port: int) -> psutil.Process:
    for child in psutil.Process(supervisor.pid).children():
        try:
            command = child.cmdline()
        except psutil.NoSuchProcess:
            continue
        if "--worker-index" in command and any(
            c.raddr and c.raddr.port == local_port for c in child.net_connections("tcp")
        ):
            return child
    raise AssertionError(f"no worker holds the connection from port {local_port}")


def test_the_player_of_a_killed_worker_is_told_and_comes_back_to_the_seat(tmp_path, redis_url):
    supervisor, port = start(tmp_path, "--directory", redis_url)
    try:

        async def body():
            got = []
            conn = Connection("127.0.0.1", port, "ann", got.append, backoff_first=0.2, backoff_cap=0.5)
            await conn.open()
            reader = asyncio.create_task(conn.run())
            created = await conn.request(m.CreateTable(4))
            assert isinstance(created, m.Ok)
            seat = conn.seat
            assert conn._writer is not None  # noqa: SLF001 - which worker holds it: the socket's own port
            victim = holder(supervisor, conn._writer.get_extra_info("sockname")[1])  # noqa: SLF001
            index = victim.cmdline()[victim.cmdline().index("--worker-index") + 1]
            await until(
                lambda: journalled(tmp_path / "data" / f"worker-{index}", seat.table), what="the table journalled"
            )
            victim.kill()
            dropped = await until(lambda: [x for x in got if isinstance(x, LinkDropped)], what="the link dropped")
            assert dropped[0].why == "the server closed the connection" and not dropped[0].goodbye
            back = await until(
                lambda: [x for x in got if isinstance(x, (LinkBack, SeatLost))], timeout=30, what="back in the seat"
            )
            assert isinstance(back[0], LinkBack), vars(back[0])
            assert conn.seat == seat
            await conn.close()
            reader.cancel()

        run(body)
    finally:
        supervisor.send_signal(signal.SIGTERM)
        try:
            supervisor.wait(15)
        except subprocess.TimeoutExpired:
            supervisor.kill()


def test_the_ssh_door_of_a_supervisor_brings_its_visitors_to_the_workers(tmp_path):
    """--ssh with --workers: the door is the supervisor's (one host key, on the one SSH port), and its visitor's
    client reaches a worker through the public game port: her table is created there and shown to her."""
    from helpers.ssh import start_door
    from test_ssh_door import LOBBY, Terminal

    door = start_door(tmp_path, "--workers", "2")
    try:
        listening = {
            c.laddr.port
            for c in psutil.Process(door.process.pid).net_connections("tcp")
            if c.status == psutil.CONN_LISTEN
        }
        assert {door.port, door.ssh_port} <= listening

        async def body():
            ann = await Terminal.open(door.ssh_port, "ann")
            assert ann.conn.get_server_host_key().get_fingerprint() == door.fingerprint
            await ann.wait_for(LOBBY)
            ann.process.stdin.write(b"c")
            await ann.wait_for(b"ann (you) (host)")
            ann.close()

        run(body)
        commands = []
        for child in psutil.Process(door.process.pid).children():
            try:
                commands.append(child.cmdline())
            except psutil.NoSuchProcess:  # the visitor's client, gone
                continue
        workers = [command for command in commands if "--worker-index" in command]
        assert len(workers) == 2 and all("--ssh" not in command for command in workers)
    finally:
        door.stop()
