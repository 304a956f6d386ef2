"""``quatro join tls://HOST``: the client reaches a TLS server's lobby when it trusts the certificate, and a
certificate it cannot trust ends on a screen that says so and what to do, never a traceback or "server gone"."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers.certs import Cert, self_signed
from helpers.tui import run, until
from quatro_tui.app import Join, QuatroApp
from quatro_tui.screens.link import LinkScreen
from quatro_tui.screens.lobby import LobbyScreen

HOST = "127.0.0.1"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory) -> tuple[int, Cert]:
    """``quatro-server --tls-cert --tls-key`` as a process of its own: its port and certificate."""
    cert = self_signed(tmp_path_factory.mktemp("tls"))
    port = _free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "quatro_server",
            "serve",
            "--host",
            HOST,
            "--port",
            str(port),
            "--timing",
            "fast",
            "--log-level",
            "warning",
            "--no-journal",
            "--tls-cert",
            str(cert.cert),
            "--tls-key",
            str(cert.key),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 20
    while True:
        try:
            socket.create_connection((HOST, port), timeout=0.5).close()
            break
        except OSError:
            if time.monotonic() > deadline or process.poll() is not None:
                process.kill()
                raise
            time.sleep(0.05)
    yield port, cert
    process.terminate()
    process.wait(10)


def _told(app: QuatroApp) -> str:
    return "\n".join(str(w.render()) for w in app.screen.query("Static"))


def test_a_tls_join_with_the_certificate_trusted_reaches_the_lobby(tls_server):
    port, cert = tls_server

    async def body():
        app = QuatroApp(Join(HOST, port, "ann", tls=True, tls_ca=str(cert.cert)))
        async with app.run_test(size=(80, 24)) as pilot:
            await until(lambda: isinstance(app.screen, LobbyScreen), timeout=15, what="the lobby over TLS")
            assert app.conn is not None and app.conn.tls is not None
            await pilot.press("ctrl+q")

    run(body)


@pytest.mark.parametrize("trusted", ["another CA", "the system's store"])
def test_a_certificate_the_client_cannot_trust_ends_on_a_screen_saying_so(tls_server, tmp_path, trusted):
    port, _ = tls_server
    other = self_signed(tmp_path / "other", name="other")
    ca = str(other.cert) if trusted == "another CA" else None

    async def body():
        app = QuatroApp(Join(HOST, port, "ann", tls=True, tls_ca=ca))
        async with app.run_test(size=(80, 24)) as pilot:
            await until(lambda: isinstance(app.screen, LinkScreen), timeout=15, what="the certificate refused")
            assert app.screen.title_text == "The server's certificate is not trusted."
            text = await until(lambda: "--tls-ca" in _told(app) and _told(app), what="its words")
            assert f"The certificate of tls://{HOST}:{port} is not trusted: self-signed certificate" in text, text
            assert (f"the CA in {ca}" if ca else "this computer's trusted authorities") in text, text
            assert "join with --tls-ca FILE" in text and "do not play there" in text, text
            assert "r try again" in text and "q quit" in text and "back to the lobby" not in text, text
            assert "Traceback" not in text and "shut down" not in text, text
            await pilot.press("q")
        assert app.return_code in (0, None)

    run(body)


def test_quatro_join_reads_a_tls_address_and_a_ca_file(tmp_path, monkeypatch):
    from quatro_tui import cli

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    cert = self_signed(tmp_path / "ca")
    app = cli.make_app(["join", "tls://game.example.org:8000", "--tls-ca", str(cert.cert), "--name", "ann"])
    assert isinstance(app, QuatroApp) and isinstance(app.plan, Join)
    assert (app.plan.host, app.plan.port, app.plan.tls, app.plan.tls_ca) == (
        "game.example.org",
        8000,
        True,
        str(cert.cert),
    )
    plain = cli.make_app(["join", "game.example.org", "--name", "ann"])
    assert isinstance(plain, QuatroApp) and isinstance(plain.plan, Join) and not plain.plan.tls
    missing = Path(tmp_path / "none.pem")
    assert cli.make_app(["join", "tls://game.example.org", "--tls-ca", str(missing), "--name", "ann"]) == 2


def test_a_dropped_tls_link_comes_back_to_its_seat_over_tls(tls_server):
    """The client's own reconnection (R19) speaks TLS again, with the same verification."""
    import asyncio

    from quatro_shared import messages as m
    from quatro_shared.tls import Endpoint, client_context

    from quatro_tui.connection import Connection, LinkBack

    port, cert = tls_server

    async def body():
        told: list[object] = []
        context = client_context(Endpoint(HOST, port, True, str(cert.cert)))
        conn = Connection(HOST, port, "ann", told.append, tls=context, backoff_first=0.05)
        await conn.open()
        reading = asyncio.create_task(conn.run())
        created = await conn.request(m.CreateTable(4))
        assert isinstance(created, m.Ok) and conn.seat is not None
        conn.abort()
        await until(lambda: any(isinstance(message, LinkBack) for message in told), what="the link back")
        assert conn.connected and conn.seat is not None and conn.seat.table == created.payload.table
        assert conn._writer is not None and conn._writer.get_extra_info("ssl_object") is not None
        await conn.close()
        reading.cancel()

    run(body)


def test_a_plain_join_at_a_tls_port_says_it_speaks_tls_and_how_to_join(tls_server):
    """A plain hello at a TLS port gets no frame back (the server's TLS layer hangs up): the client checks whether
    the port speaks TLS and says so, with the command that joins, the address as the person typed it."""
    port, _ = tls_server

    async def body():
        app = QuatroApp(Join(HOST, port, "ann", address=f"{HOST}:{port}"))
        async with app.run_test(size=(80, 24)):
            await until(lambda: app.return_code is not None, timeout=15, what="the join to end")
        return app

    app = run(body)
    told = str(app.return_value)
    assert app.return_code == 1, told
    assert f"{HOST}:{port} speaks TLS" in told and f"quatro join tls://{HOST}:{port}" in told, told
    assert "closed the connection" not in told, told


def test_the_lost_server_words_keep_the_tls_address_as_typed(tmp_path, monkeypatch):
    """A TLS server that says goodbye and does not come back is named by its address with ``tls://``, as typed."""
    from quatro_tui import connection

    monkeypatch.setattr(connection, "RESTART_PATIENCE", 1.0)
    cert = self_signed(tmp_path / "tls")
    port = _free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "quatro_server",
            "serve",
            "--host",
            HOST,
            "--port",
            str(port),
            "--timing",
            "fast",
            "--log-level",
            "warning",
            "--no-journal",
            "--tls-cert",
            str(cert.cert),
            "--tls-key",
            str(cert.key),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection((HOST, port), timeout=0.5).close()
                break
            except OSError:
                assert time.monotonic() < deadline and process.poll() is None
                time.sleep(0.05)
        typed = f"tls://{HOST}:{port}"
        seen: list[str] = []

        async def body():
            app = QuatroApp(Join(HOST, port, "ann", tls=True, tls_ca=str(cert.cert), address=typed))
            async with app.run_test(size=(80, 24)):
                await until(lambda: isinstance(app.screen, LobbyScreen), timeout=15, what="the lobby over TLS")
                process.terminate()
                await until(
                    lambda: isinstance(app.screen, LinkScreen) and "said goodbye" in _told(app),
                    timeout=15,
                    what="the goodbye",
                )
                seen.append(_told(app))
                await until(
                    lambda: isinstance(app.screen, LinkScreen) and "has not come back" in _told(app),
                    timeout=15,
                    what="the server gone",
                )
                seen.append(_told(app))

        run(body)
        for text in seen:
            assert f"The server at {typed} said goodbye" in text, text
    finally:
        process.kill()
        process.wait(10)
