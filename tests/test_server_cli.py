"""``quatro-server`` as a real process: it prints where to join, warns when seeded, and says goodbye on SIGTERM/SIGINT."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest
import trio

from quatro_shared import protocol as p

from helpers.netclient import TestClient
from quatro_server import cli


async def start_server(*args: str) -> tuple[trio.Process, int, str]:
    """Start ``quatro-server`` on a free loopback port; return the process, its port and what it printed to stdout.
    Without ``--data-dir`` it keeps no journal (tests never touch the user's data directory)."""
    journal = [] if "--data-dir" in args else ["--no-journal"]
    proc = await trio.lowlevel.open_process(
        [sys.executable, "-m", "quatro_server", "--host", "127.0.0.1", "--port", "0", *journal, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out = b""
    with trio.fail_after(20):
        while b"quatro join 127.0.0.1:" not in out:
            chunk = await proc.stdout.receive_some(4096)
            assert chunk, f"server exited early: {out!r}"
            out += chunk
    line = next(line for line in out.decode().splitlines() if "quatro join" in line)
    return proc, int(line.rsplit(":", 1)[1]), out.decode()


async def read_stderr(proc: trio.Process) -> str:
    err = b""
    with trio.move_on_after(5):
        while chunk := await proc.stderr.receive_some(65536):
            err += chunk
    return err.decode()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
async def test_shutdown_signal_says_goodbye_to_every_client(signum):
    proc, port, _ = await start_server("--timing", "fast")
    try:
        a = await TestClient.connect(port, "ann")
        b = await TestClient.connect(port, "bob")
        await a.request(p.CREATE_TABLE, players=4)
        proc.send_signal(signum)
        for client in (a, b):
            frame = None
            while frame is None or frame["kind"] != p.BYE:
                frame = await client.next_frame()
                assert frame is not None, "closed without a goodbye"
            assert frame["reason"] == "shutdown"
            assert await client.closed()
        with trio.fail_after(10):
            assert await proc.wait() == 0
        err = await read_stderr(proc)
        assert "shutdown signal=" in err
    finally:
        if proc.returncode is None:
            proc.kill()


async def test_seeded_server_says_loudly_that_shuffles_are_predictable():
    proc, port, _ = await start_server("--seed", "42")
    try:
        c = await TestClient.connect(port, "ann")
        assert (await c.request(p.LIST_TABLES))["kind"] == p.OK
        proc.send_signal(signal.SIGTERM)
        with trio.fail_after(10):
            await proc.wait()
        err = await read_stderr(proc)
        assert "WARNING" in err and "predictable" in err
    finally:
        if proc.returncode is None:
            proc.kill()


async def test_logs_are_one_event_a_line_on_stderr():
    """One event a line; a connection's life is told at debug level (an info log stays quiet under a flood)."""
    proc, port, _ = await start_server("--log-level", "debug")
    try:
        c = await TestClient.connect(port, "ann")
        await c.request(p.CREATE_TABLE, players=4)
        await c.send_raw(b"\x00\x00\x00\x02\xc1\xc1")  # a malformed frame
        assert await c.closed()
        proc.send_signal(signal.SIGTERM)
        with trio.fail_after(10):
            await proc.wait()
        err = await read_stderr(proc)
        for event in ("connection_open", "hello", "table_created", "connection_closing", "connection_closed"):
            assert f" {event} " in err, event
        assert all(line.count(" quatro.") == 1 for line in err.splitlines()), err
    finally:
        if proc.returncode is None:
            proc.kill()


def test_a_bad_timing_profile_is_a_clear_error(tmp_path):
    bad = tmp_path / "t.toml"
    bad.write_text("round_lenght = 10\n")
    result = subprocess.run(
        [sys.executable, "-m", "quatro_server", "--timing", str(bad)], capture_output=True, text=True
    )
    assert result.returncode == 2 and "round_lenght" in result.stderr


def test_the_servers_help_shows_the_serving_and_door_options_beside_the_commands(capsys):
    with pytest.raises(SystemExit) as done:
        cli.main(["--help"])
    assert done.value.code == 0
    shown = capsys.readouterr().out
    for option in (
        "--port PORT",
        "--host HOST",
        "--ssh PORT",
        "--web PORT",
        "--web-idle SECONDS",
        "--data-dir DIR",
        "--trusted-address IP",
    ):
        assert option in shown, f"{option} is not in quatro-server --help"
    for command in cli.SUBCOMMANDS:
        assert f"    {command} " in shown
    assert shown.index("commands:") < shown.index("\n  --port PORT")
    # Shown there, parsed by serve: the defaults are serve's, and a subcommand's namespace holds nothing of serving.
    served = cli._parser().parse_args(["serve"])
    assert (served.port, served.ssh, served.web, served.no_journal, served.trusted_address) == (
        7777,
        None,
        None,
        False,
        [],
    )
    assert not hasattr(cli._parser().parse_args(["replay", "1"]), "web")


async def test_max_tables_and_max_connections_set_the_servers_limits():
    """``--max-tables 1 --max-connections 3``: a second table is refused ``server_full``, and a fourth connection
    is told the server is full and closed, while the three already there are served as before."""
    proc, port, _ = await start_server("--max-tables", "1", "--max-connections", "3")
    clients: list[TestClient] = []
    try:
        for name in ("ann", "bob", "cid"):
            clients.append(await TestClient.connect(port, name))
        ann, bob, _cid = clients
        assert (await ann.request(p.CREATE_TABLE, players=4))["kind"] == p.OK
        refused = await bob.request(p.CREATE_TABLE, players=4)
        assert (refused["kind"], refused["reason"]) == (p.REFUSED, p.SERVER_FULL), refused
        fourth = await TestClient.connect(port, "dee", hello=False)
        frame = await fourth.next_frame()
        assert frame is not None and frame["kind"] == p.ERROR and frame["code"] == p.SERVER_FULL, frame
        assert await fourth.closed()
        assert (await bob.request(p.JOIN, table=ann.table))["kind"] == p.OK
    finally:
        for c in clients:
            await c.aclose()
        proc.kill()
        await proc.wait()


def test_max_tables_and_max_connections_refuse_a_count_below_one():
    for option in ("--max-tables", "--max-connections"):
        done = subprocess.run(
            [sys.executable, "-m", "quatro_server", option, "0"], capture_output=True, text=True, timeout=30
        )
        assert done.returncode == 2
        assert f"argument {option}: 0 is not at least 1" in done.stderr
