"""The metrics endpoint, scraped over real HTTP on loopback while bots play: the figures move as the server works."""

from __future__ import annotations

import random
import urllib.error
import urllib.request

import pytest
import trio
from prometheus_client.parser import text_string_to_metric_families

from quatro_shared import protocol as p

from conftest import QUICK
from helpers.netclient import TestClient
from quatro_server.bots import netbot
from quatro_server.journal import Journal
from quatro_server.server import Server, ServerConfig
from quatro_server.tables.lobby import Lobby
from quatro_server.timing import PROFILES
from quatro_server.workers.metrics import Metrics

HOST = "127.0.0.1"


async def _served(nursery: trio.Nursery, data_dir=None, **config) -> tuple[Server, Metrics, int]:
    """A server on loopback and its metrics endpoint: the server, its metrics, the endpoint's port."""
    lobby = Lobby(timing_profiles={**PROFILES, "quick": QUICK}, seed=random.randrange(2**32))
    lobby.default_timing = "fast"
    if data_dir is not None:
        lobby.restore(Journal.open(data_dir), trio.current_time())
    server = Server(lobby, ServerConfig(**config))
    metrics = Metrics()
    metrics.watch(server)
    nursery.start_soon(metrics.measure_loop, 0.05)
    listeners = await nursery.start(server.serve, HOST, 0)
    server.port = listeners[0].socket.getsockname()[1]
    scraped = await nursery.start(metrics.serve, HOST, 0)
    return server, metrics, scraped[0].socket.getsockname()[1]


async def scrape(port: int, path: str = "/metrics") -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of the endpoint, by name and labels, fetched with a real HTTP client."""

    def fetch() -> str:
        with urllib.request.urlopen(f"http://{HOST}:{port}{path}", timeout=5) as answer:
            assert answer.headers["Content-Type"].startswith("text/plain; version=0.0.4")
            return answer.read().decode()

    text = await trio.to_thread.run_sync(fetch)
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def total(samples: dict, name: str, **labels: str) -> float:
    """The sum of ``name``'s samples whose labels include ``labels``."""
    return sum(v for (n, ls), v in samples.items() if n == name and set(labels.items()) <= set(ls))


async def test_the_figures_move_while_bots_play_and_a_refusal_shows_under_its_reason(nursery, tmp_path):
    server, _, port = await _served(nursery, tmp_path / "data")
    before = await scrape(port)
    assert total(before, "quatro_tables") == 0 and total(before, "quatro_messages_sent_total") == 0

    seated = trio.Event()

    async def play() -> None:
        await netbot.run_bot(HOST, server.port, "easy", against="easy", timing="quick", rounds=1)
        seated.set()

    nursery.start_soon(play)
    with trio.fail_after(10):
        while not server.lobby.rooms or not any(room.table for room in server.lobby.rooms.values()):
            await trio.sleep(0.02)
    await trio.sleep(0.5)
    during = await scrape(port)
    assert total(during, "quatro_tables", game=p.QUATRO) == 1
    assert total(during, "quatro_tables", phase="lobby") == 0  # its match has begun
    assert total(during, "quatro_seats", game=p.QUATRO, kind="bot") == 3
    assert total(during, "quatro_seats", game=p.QUATRO, kind="human") == 1
    assert total(during, "quatro_seats_connected", game=p.QUATRO) == 1
    assert total(during, "quatro_connections", state="seated") == 1
    assert total(during, "quatro_messages_received_total") >= 5  # hello, create, bots, start, moves
    assert total(during, "quatro_messages_sent_total") > total(before, "quatro_messages_sent_total")
    with trio.fail_after(30):
        await seated.wait()  # a round played, and the bot gone
    after = await scrape(port)
    assert total(after, "quatro_messages_sent_total") > total(during, "quatro_messages_sent_total")
    assert total(after, "quatro_messages_received_total") > total(during, "quatro_messages_received_total")
    assert total(after, "quatro_disconnects_total", reason="eof") >= 1
    assert total(after, "quatro_journal_commit_seconds_count") > 0  # the match was journalled, each commit timed
    assert "quatro_journal_behind" in {n for n, _ in after}
    assert total(after, "quatro_loop_lag_seconds_count") > 0

    # A client of another protocol version is refused: it shows under its reason.
    stranger = await TestClient.connect(server.port, "old", hello=False)
    refused = await stranger.request(p.HELLO, version=0, name="old")
    assert refused["kind"] == p.REFUSED and refused["reason"] == p.INCOMPATIBLE_VERSION, refused
    assert await stranger.closed()
    with trio.fail_after(5):
        while total(await scrape(port), "quatro_refusals_total", reason="incompatible_version") != 1:
            await trio.sleep(0.05)


async def test_connections_by_state_and_a_full_server_refused(nursery):
    server, _, port = await _served(nursery, max_connections=2)
    ann = await TestClient.connect(server.port, "ann")
    quiet = await TestClient.connect(server.port, "quiet", hello=False)
    samples = await scrape(port)
    assert total(samples, "quatro_connections", state="lobby") == 1
    assert total(samples, "quatro_connections", state="hello") == 1
    late = await TestClient.connect(server.port, "late", hello=False)
    assert await late.closed()
    samples = await scrape(port)
    assert total(samples, "quatro_refusals_total", reason="server_full") == 1
    await ann.aclose()
    await quiet.aclose()


async def test_two_servers_in_one_process_keep_their_own_figures(nursery):
    first, _, first_port = await _served(nursery)
    second, _, second_port = await _served(nursery)
    ann = await TestClient.connect(first.port, "ann")
    assert (await ann.request(p.CREATE_TABLE, players=4))["kind"] == p.OK
    assert total(await scrape(first_port), "quatro_tables") == 1
    assert total(await scrape(second_port), "quatro_tables") == 0
    assert total(await scrape(second_port), "quatro_messages_received_total") == 0


async def test_the_endpoint_answers_its_path_only(nursery):
    _, _, port = await _served(nursery)
    assert await scrape(port, "/")  # the figures at / too, for a quick look with curl
    with pytest.raises(urllib.error.HTTPError) as missing:
        await scrape(port, "/admin")
    assert missing.value.code == 404
    # A client that opens a connection and sends nothing holds no more than the request timeout; the next is answered.
    idle = await trio.open_tcp_stream(HOST, port)
    assert await scrape(port)
    await idle.aclose()


async def test_a_flood_of_silent_connections_is_bounded_and_a_real_scrape_is_answered_meanwhile(
    nursery, caplog, monkeypatch
):
    """Silent connections to the endpoint once took the process to its descriptor limit (the request timeout started
    only with a scrape slot): now at most MAX_CONNECTIONS are held, each for REQUEST_TIMEOUT from its accept; one more
    is closed at once with one log line (no traceback), a scraper from another address is answered meanwhile, and
    the game port's descriptors stay as they were."""
    import logging
    import os

    from quatro_server.workers import metrics as metrics_module

    monkeypatch.setattr(metrics_module, "REQUEST_TIMEOUT", 1.0)
    _, _, port = await _served(nursery)
    held = metrics_module.MAX_CONNECTIONS_PER_ADDRESS
    before = len(os.listdir("/proc/self/fd"))
    silent = []
    with caplog.at_level(logging.INFO, logger="quatro.metrics"):
        for _ in range(3 * held):  # three times what one address may hold
            silent.append(await trio.open_tcp_stream(HOST, port))
        await trio.sleep(0.2)
        open_now = len(os.listdir("/proc/self/fd")) - before
        # The test's own ends of the connections count here too: the server's side holds at most ``held`` of them.
        assert open_now <= len(silent) + held + 4, open_now

        def scrape_from(address: str) -> int:
            import socket

            with socket.create_connection((HOST, port), timeout=5, source_address=(address, 0)) as sock:
                sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
                return len(sock.recv(65536))

        assert await trio.to_thread.run_sync(scrape_from, "127.0.0.2") > 0  # another address: answered at once
    refused = [r for r in caplog.records if "metrics_refused" in r.getMessage()]
    assert len(refused) == 1 and "reason=per_address" in refused[0].getMessage() and not refused[0].exc_info
    with trio.fail_after(5):  # the held ones are let go within the request timeout of their accept
        for stream in silent:
            assert await stream.receive_some(1) == b""
    for stream in silent:
        await stream.aclose()
    assert await scrape(port)


def test_metrics_address_on_the_command_line():
    from quatro_server.cli import _metrics_address

    assert _metrics_address("9100") == ("127.0.0.1", 9100)
    assert _metrics_address("0.0.0.0:9100") == ("0.0.0.0", 9100)
    assert _metrics_address("[::1]:9100") == ("::1", 9100)
    with pytest.raises(ValueError, match="name a port"):
        _metrics_address("example.org")


def test_a_metrics_port_already_taken_stops_the_server_saying_so():
    import socket
    import subprocess
    import sys

    with socket.socket() as taken:
        taken.bind((HOST, 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "quatro_server",
                "--host",
                HOST,
                "--port",
                "0",
                "--no-journal",
                "--metrics",
                str(port),
            ],
            capture_output=True,
            text=True,
            timeout=30,
        )
    assert done.returncode == 1
    assert f"quatro-server: cannot serve metrics on {HOST}:{port}: Address already in use" in done.stderr, done.stderr
