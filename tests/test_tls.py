"""TLS on the game port: a join over TLS plays, a certificate the client cannot trust is refused (and said so), a
plain client and a silent one are refused within the hello window, and no secret crosses the wire in the clear."""

from __future__ import annotations

import random
import ssl
import time
from functools import partial

import pytest
import trio

from quatro_shared import protocol as p
from quatro_shared.framing import encode
from quatro_shared.tls import Endpoint, parse_endpoint

from conftest import QUICK
from helpers.certs import Cert, self_signed
from helpers.netclient import TestClient
from quatro_server.bots import netbot
from quatro_server.net.tls import TlsConfigError, server_context
from quatro_server.server import Server, ServerConfig
from quatro_server.tables.lobby import Lobby
from quatro_server.timing import PROFILES

HOST = "127.0.0.1"


@pytest.fixture
def cert(tmp_path) -> Cert:
    return self_signed(tmp_path / "server")


async def _tls_server(nursery: trio.Nursery, cert: Cert, **config) -> Server:
    lobby = Lobby(timing_profiles={**PROFILES, "quick": QUICK}, seed=random.randrange(2**32))
    lobby.default_timing = "fast"
    srv = Server(lobby, ServerConfig(tls=server_context(cert.cert, cert.key), **config))
    listeners = await nursery.start(srv.serve, HOST, 0)
    srv.port = listeners[0].socket.getsockname()[1]
    return srv


@pytest.fixture
async def tls_server(nursery, cert) -> Server:
    return await _tls_server(nursery, cert, hello_timeout=1.0)


async def _tls_client(port: int, name: str, ca: str) -> TestClient:
    stream = await netbot.connect(HOST, port, Endpoint(HOST, port, True, ca))
    client = TestClient(stream, name)  # type: ignore[arg-type]
    reply = await client.request(p.HELLO, version=p.PROTOCOL_VERSION, name=name)
    assert reply["kind"] == p.OK, reply
    return client


async def _ended(server: Server, reason: str, timeout: float = 5.0, count: int = 1) -> None:
    with trio.fail_after(timeout):
        while server.ended.get(reason, 0) < count:
            await trio.sleep(0.01)


def test_tls_addresses_are_read_as_typed():
    assert parse_endpoint("tls://example.org") == Endpoint("example.org", p.DEFAULT_PORT, True)
    assert parse_endpoint("tls://[::1]:8000") == Endpoint("::1", 8000, True)
    assert parse_endpoint("example.org:7000") == Endpoint("example.org", 7000, False)
    assert parse_endpoint("example.org", ca="ca.pem") == Endpoint("example.org", p.DEFAULT_PORT, True, "ca.pem")
    assert str(parse_endpoint("tls://[::1]:8000")) == "tls://[::1]:8000"
    with pytest.raises(ValueError, match="tls://"):
        parse_endpoint("https://example.org")


def test_a_certificate_and_key_that_do_not_load_are_said_so(tmp_path, cert):
    with pytest.raises(TlsConfigError, match="no such file"):
        server_context(tmp_path / "none.pem", cert.key)
    other = self_signed(tmp_path / "other", name="other")
    with pytest.raises(TlsConfigError, match="not a certificate and its key"):
        server_context(cert.cert, other.key)


async def test_a_tls_join_plays_a_round_with_the_self_signed_certificate_trusted(tls_server, cert):
    result = await netbot.run_bot(
        HOST,
        tls_server.port,
        "easy",
        against="easy",
        timing="quick",
        rounds=1,
        tls=Endpoint(HOST, tls_server.port, True, str(cert.cert)),
    )
    assert result.rounds >= 1 and result.table is not None, result
    assert tls_server.ended.get("tls_handshake", 0) == 0


async def test_a_certificate_the_client_cannot_trust_is_refused_and_said_so(tls_server, tmp_path):
    other = self_signed(tmp_path / "other", name="other")
    for endpoint, against in (
        (Endpoint(HOST, tls_server.port, True, str(other.cert)), f"the CA in {other.cert}"),
        (Endpoint(HOST, tls_server.port, True), "this computer's trusted authorities"),
    ):
        with pytest.raises(netbot.TlsRefused) as refused:
            await netbot.connect(HOST, tls_server.port, endpoint)
        text = str(refused.value)
        assert f"The certificate of tls://{HOST}:{tls_server.port} is not trusted" in text, text
        assert against in text and "--tls-ca FILE" in text and "Nothing was sent" in text, text
    await _ended(tls_server, "tls_handshake", count=2)  # the server saw both handshakes fail: refused
    assert not tls_server.connections


async def test_a_certificate_for_another_name_is_refused(nursery, tmp_path):
    elsewhere = self_signed(tmp_path / "elsewhere", name="elsewhere", hosts=("game.example.org",))
    srv = await _tls_server(nursery, elsewhere)
    with pytest.raises(netbot.TlsRefused, match="not trusted: .*(mismatch|match)"):
        await netbot.connect(HOST, srv.port, Endpoint(HOST, srv.port, True, str(elsewhere.cert)))


async def test_a_plain_client_at_a_tls_port_is_refused_at_once(tls_server, cert):
    stream = await trio.open_tcp_stream(HOST, tls_server.port)
    began = time.monotonic()
    await stream.send_all(encode({"kind": p.HELLO, "id": 1, "version": p.PROTOCOL_VERSION, "name": "plain"}))
    with trio.fail_after(3):
        rest = b""
        while chunk := await stream.receive_some(65536):
            rest += chunk
    assert p.OK.encode() not in rest and b"tables" not in rest  # nothing of the lobby in the clear
    assert time.monotonic() - began < 0.9  # not the hello window: at once
    await _ended(tls_server, "tls_handshake")
    # The port still serves TLS.
    client = await _tls_client(tls_server.port, "ann", str(cert.cert))
    assert (await client.request(p.LIST_TABLES))["kind"] == p.OK


async def test_a_handshake_never_finished_is_dropped_within_the_hello_window(tls_server):
    """A peer that opens a connection and says nothing holds its slot no longer than the hello timeout (1 s here),
    is refused ``tls_handshake``, and gives its address's share back."""
    streams = [await trio.open_tcp_stream(HOST, tls_server.port) for _ in range(3)]
    with trio.fail_after(2):
        while len(tls_server.connections) < 3:
            await trio.sleep(0.01)
    assert HOST in tls_server.per_origin
    began = time.monotonic()
    with trio.fail_after(3):
        for stream in streams:
            assert await stream.receive_some(1024) == b""  # closed by the server, nothing said in the clear
    assert 0.5 < time.monotonic() - began < 2.0
    assert tls_server.ended["tls_handshake"] == 3
    with trio.fail_after(2):
        while tls_server.connections:
            await trio.sleep(0.01)
    assert HOST not in tls_server.per_origin


async def _relay(nursery: trio.Nursery, to_port: int, seen: bytearray) -> int:
    """A loopback relay to ``to_port`` that keeps every byte it carries, both ways: what a wire tap would see."""

    async def pump(source: trio.SocketStream, sink: trio.SocketStream) -> None:
        try:
            while data := await source.receive_some(65536):
                seen.extend(data)
                await sink.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        finally:
            await trio.aclose_forcefully(sink)

    async def carry(client: trio.SocketStream) -> None:
        upstream = await trio.open_tcp_stream(HOST, to_port)
        async with trio.open_nursery() as inner:
            inner.start_soon(pump, client, upstream)
            inner.start_soon(pump, upstream, client)

    listeners = await nursery.start(partial(trio.serve_tcp, carry, 0, host=HOST))
    return int(listeners[0].socket.getsockname()[1])


async def _secrets_crossing(port: int, connect) -> tuple[str, str]:
    """Ann opens a table with a password, Bob joins it with the password and comes back to his seat with its secret:
    their seat secrets, which crossed both ways, and the password."""
    ann = await connect(port, "ann")
    created = await ann.request(p.CREATE_TABLE, players=4, password="hunter2-table-pw")
    bob = await connect(port, "bob")
    joined = await bob.request(p.JOIN, table=created["table"], password="hunter2-table-pw")
    assert created["kind"] == joined["kind"] == p.OK, (created, joined)
    again = await connect(port, "bob")  # Bob's secret goes the other way too: a new connection takes the seat back
    rejoined = await again.request(p.REJOIN, table=created["table"], secret=joined["secret"], takeover=True)
    assert rejoined["kind"] == p.OK, rejoined
    return created["secret"], joined["secret"]


async def test_no_secret_or_password_crosses_a_tls_connection_in_the_clear(nursery, tls_server, server, cert):
    """Over TLS the tap sees neither seat secret nor the table's password; over the plain port, the same exchange
    shows them all (the tap would see them if they were there)."""
    tapped = bytearray()
    relay = await _relay(nursery, tls_server.port, tapped)
    secrets = await _secrets_crossing(relay, lambda port, name: _tls_client(port, name, str(cert.cert)))
    assert len(tapped) > 1000  # the whole exchange went through the tap
    for secret in (*secrets, "hunter2-table-pw"):
        assert secret.encode() not in tapped, secret
    assert b"ann" not in tapped and b"create_table" not in tapped

    plain = bytearray()
    relay = await _relay(nursery, server.port, plain)
    secrets = await _secrets_crossing(relay, TestClient.connect)
    for secret in (*secrets, "hunter2-table-pw"):
        assert secret.encode() in plain, secret


async def test_the_doors_listener_admits_the_door_token_alone(nursery, cert):
    """With TLS on, the doors' clients join over a plain loopback listener of their own: a client there without the
    door token is refused, one with it is let in; the game port stays TLS only."""
    lobby = Lobby(timing_profiles=dict(PROFILES), seed=1)
    lobby.default_timing = "fast"
    srv = Server(
        lobby,
        ServerConfig(tls=server_context(cert.cert, cert.key), door_token="tok-123", door_addresses=frozenset({HOST})),
    )
    door_listeners = await trio.open_tcp_listeners(0, host=HOST)
    door_port = door_listeners[0].socket.getsockname()[1]
    await nursery.start(lambda task_status: srv.serve(HOST, 0, door_listeners=door_listeners, task_status=task_status))
    stranger = await TestClient.connect(door_port, "eve", hello=False)
    refused = await stranger.request(p.HELLO, version=p.PROTOCOL_VERSION, name="eve")
    assert refused["kind"] == p.ERROR and refused["code"] == p.BAD_REQUEST and "doors" in refused["message"], refused
    assert await stranger.closed()
    assert srv.ended["not_a_door"] == 1
    door_client = await TestClient.connect(door_port, "ann", hello=False)
    welcome = await door_client.request(p.HELLO, version=p.PROTOCOL_VERSION, name="ann", door="tok-123")
    assert welcome["kind"] == p.OK, welcome


def test_the_client_context_verifies_by_default():
    from quatro_shared.tls import client_context

    assert client_context(Endpoint(HOST, 1)) is None
    context = client_context(Endpoint(HOST, 1, True))
    assert context is not None
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    assert context.minimum_version >= ssl.TLSVersion.TLSv1_2


async def test_a_tls_client_at_a_plain_port_is_told_the_server_does_not_speak_tls(server):
    with pytest.raises(netbot.TlsRefused, match="did not speak TLS .*join without tls://"):
        await netbot.connect(HOST, server.port, Endpoint(HOST, server.port, True))


async def test_quatro_replay_over_tls_verifies_the_certificate_too(tls_server, cert, tmp_path):
    from quatro_shared.tls import client_context

    from quatro_tui.replay.tape import ReplayError, fetch

    other = self_signed(tmp_path / "other", name="other")
    wrong = Endpoint(HOST, tls_server.port, True, str(other.cert))
    with pytest.raises(ReplayError, match=f"not trusted: .*the CA in {other.cert}"):
        await trio.to_thread.run_sync(
            lambda: fetch(HOST, tls_server.port, "ann", 1, 0, tls=client_context(wrong), tls_ca=wrong.ca)
        )
    right = Endpoint(HOST, tls_server.port, True, str(cert.cert))
    with pytest.raises(ReplayError, match="no such table|no journal|journal"):  # past the handshake: the server's words
        await trio.to_thread.run_sync(lambda: fetch(HOST, tls_server.port, "ann", 1, 0, tls=client_context(right)))


async def test_without_tls_a_connection_is_the_plain_socket_it_always_was(server):
    """The default: no SSLStream, the socket read and written directly, no listener for the doors."""
    client = await TestClient.connect(server.port, "ann")
    (conn,) = server.connections
    assert conn.secured and not conn.door_only and conn.fd >= 0 and conn.outbox.fd == conn.fd
    assert type(conn.stream) is trio.SocketStream
    await client.aclose()
