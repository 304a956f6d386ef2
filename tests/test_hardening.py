"""Held under attack, over real TCP on loopback: each probe of a hostile peer on the same network becomes a test.

Loopback holds all of 127.0.0.0/8, so a test can be several hosts: the attacker connects from 127.0.0.1, an honest
player from 127.0.0.2 (the client binds its socket there). Limits and timeouts are the server's own settings,
shortened per test (``ServerConfig``, the lobby's attributes): no test waits for a real 30 s heartbeat.
"""

from __future__ import annotations

import logging
import socket
from dataclasses import replace
from typing import Any

import pytest
import trio

from quatro_shared import messages as m
from quatro_shared import protocol as p
from quatro_shared.framing import encode
from quatro_shared.games.quatro.views import Phase
from quatro_shared.wire import to_wire

from helpers.netclient import TestClient
from quatro_server import server as server_module
from quatro_server.server import QuietLog, Server
from quatro_server.tables.credentials import digest_secret
from quatro_server.tables.limits import GUESSES_PER_ADDRESS, GUESSES_PER_TABLE, GuessLimiter

ATTACKER = "127.0.0.1"
HONEST = "127.0.0.2"


async def connect_from(
    port: int, local: str, name: str, *, hello: bool = True, rcvbuf: int | None = None
) -> TestClient:
    """A test client whose socket is bound to ``local`` (another host, as far as the server can tell)."""
    sock = trio.socket.socket(trio.socket.AF_INET, trio.socket.SOCK_STREAM)
    if rcvbuf is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)  # before connecting: fixes the TCP window
    await sock.bind((local, 0))
    await sock.connect(("127.0.0.1", port))
    client = TestClient(trio.SocketStream(sock), name)
    if hello:
        reply = await client.request(p.HELLO, version=p.PROTOCOL_VERSION, name=name)
        assert reply["kind"] == p.OK, reply
    return client


def conn_of(server: Server, name: str) -> Any:
    (conn,) = [c for c in server.connections if c.name == name]
    return conn


async def wait_until(predicate, timeout: float = 5.0, step: float = 0.02) -> None:
    with trio.fail_after(timeout):
        while not predicate():
            await trio.sleep(step)


# --- 1. every peer's cost is bounded in bytes --------------------------------------------------------------------


async def test_lobby_watchers_that_never_read_hold_the_latest_list_never_a_backlog(server):
    """30 connections in the lobby stop reading while 200 tables appear (each a 'lobby' push of a growing list, up to
    about 17 KB): each holds at most a couple of lists, well under its byte budget, and is not even dropped."""
    server.lobby.max_tables_per_address = 1000  # this test is about watchers, not about the table flood
    watchers = [await connect_from(server.port, "127.0.0.3", f"w{i}", rcvbuf=4096) for i in range(30)]
    for i in range(30):  # the server's side of each socket takes little too: the queue is what holds the rest
        conn_of(server, f"w{i}").stream.socket.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    watcher_conns = [conn_of(server, f"w{i}") for i in range(30)]
    peak = 0
    for n in range(200):
        creator = await connect_from(server.port, HONEST, f"c{n}")
        assert (await creator.request(p.CREATE_TABLE, players=4))["kind"] == p.OK
        await creator.aclose()  # the creator drops: its seat (and the table) stays
        peak = max(peak, max(c.queued_bytes for c in watcher_conns))
    listing = len(encode(to_wire(m.LobbyList(server.lobby.listing()))))
    assert listing > 15_000, listing  # the list really is large
    await trio.sleep(0.1)
    for conn in watcher_conns:
        assert conn.closed_reason is None, conn.closed_reason  # a watcher that is behind is not dropped...
        assert conn.queued_bytes <= 3 * listing, (conn.queued_bytes, listing)  # ...because it holds one list or two
    assert peak <= min(server.config.max_outbound_bytes, 3 * listing), peak

    # A watcher that reads again gets the latest list, not 200 of them.
    late = watchers[0]
    with trio.fail_after(5):
        while True:
            frame = await late.next_frame()
            if frame["kind"] == p.LOBBY and len(frame["tables"]) == len(server.lobby.listing()):
                break
    lobby_pushes = [f for f in late.frames if f["kind"] == p.LOBBY]
    assert len(lobby_pushes) < 50, len(lobby_pushes)  # of 400 lists announced (a creation and a drop each)
    for w in watchers:
        await w.aclose()


async def test_a_waiting_lobby_list_is_superseded_and_every_byte_is_counted():
    from quatro_shared.framing import FrameDecoder

    conn = server_module.Connection(stream=None, address="test", max_outbound_bytes=10_000)  # type: ignore[arg-type]
    conn.send({"kind": p.LOBBY, "tables": [{"table": 1}]})
    conn.send({"kind": p.OK, "id": 1})
    conn.send({"kind": p.LOBBY, "tables": [{"table": 2}]})
    conn.send({"kind": p.LOBBY, "tables": [{"table": 3}]})
    data = conn.take()
    assert conn.queued_bytes == len(data)  # counted until written, not more
    frames = FrameDecoder().feed(data)
    assert frames == [{"kind": p.OK, "id": 1}, {"kind": p.LOBBY, "tables": [{"table": 3}]}]
    conn.send({"kind": p.OK, "id": 2, "pad": "x" * 9_000})
    assert conn.closed_reason is None
    conn.send({"kind": p.OK, "id": 3, "pad": "x" * 2_000})  # one frame past the budget: a slow reader
    assert conn.closed_reason == "slow_reader" and conn.queued_bytes <= 10_000


async def test_a_seated_reader_that_stops_is_dropped_at_the_byte_budget_and_keeps_its_seat(server):
    """The queue is bounded in bytes: a player who stops reading costs at most the budget, then is let go (R19)."""
    server.config = replace(server.config, max_outbound_bytes=16 * 1024)
    ann = await connect_from(server.port, HONEST, "ann", rcvbuf=4096)
    assert (await ann.request(p.CREATE_TABLE, players=4, timing="steady"))["kind"] == p.OK
    conn = conn_of(server, "ann")
    conn.stream.socket.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    noisy = await connect_from(server.port, "127.0.0.3", "noisy")
    assert (await noisy.request(p.JOIN, table=ann.table))["kind"] == p.OK
    peak = 0
    with trio.fail_after(10):
        while conn.closed_reason is None:  # every rename is a 'table' push to ann, who never reads
            await noisy.request(p.RENAME, name=f"n{trio.current_time() % 1000:.3f}"[:24])
            peak = max(peak, conn.queued_bytes)
            await trio.sleep(1 / 40)
    assert conn.closed_reason == "slow_reader"
    assert peak <= 16 * 1024
    await wait_until(lambda: server.lobby.rooms[ann.table].seats[0].peer is None)
    assert server.lobby.rooms[ann.table].seats[0].secret == digest_secret(ann.secret)  # the seat waits for its player


# --- 2. fair shares per address ----------------------------------------------------------------------------------


async def test_an_idle_flood_from_one_address_leaves_room_for_a_player_from_another(server):
    server.config = replace(server.config, max_connections=40, max_connections_per_address=10)
    flood: list[TestClient] = []
    refused = 0
    for i in range(40):  # as many as the whole server holds, from one address, saying hello and then nothing
        c = await connect_from(server.port, ATTACKER, f"idle{i}", hello=False)
        reply = (
            await c.request(p.HELLO, version=p.PROTOCOL_VERSION, name=f"idle{i}") if i < 10 else await c.next_frame()
        )
        if i < 10:
            assert reply["kind"] == p.OK
        else:
            assert reply["kind"] == p.ERROR and reply["code"] == p.TOO_MANY_CONNECTIONS and reply["id"] is None, reply
            assert await c.closed()
            refused += 1
        flood.append(c)
    assert refused == 30 and server.per_origin[ATTACKER] == 10
    player = await connect_from(server.port, HONEST, "player")
    created = await player.request(p.CREATE_TABLE, players=4)
    assert created["kind"] == p.OK
    friend = await connect_from(server.port, "127.0.0.3", "friend")
    assert (await friend.request(p.JOIN, table=player.table))["kind"] == p.OK
    for c in flood:
        await c.aclose()
    await wait_until(lambda: ATTACKER not in server.per_origin)


async def test_a_lobby_connection_that_only_pings_is_closed_politely_after_the_idle_limit(server):
    server.config = replace(server.config, lobby_idle_limit=0.6)
    idle = await connect_from(server.port, ATTACKER, "idle")
    busy = await connect_from(server.port, HONEST, "busy")
    seated = await connect_from(server.port, HONEST, "seated")
    assert (await seated.request(p.CREATE_TABLE, players=4))["kind"] == p.OK
    start = trio.current_time()
    with trio.fail_after(5):
        while not conn_gone(server, "idle"):  # pings keep the link alive, never the slot
            try:
                await idle.send({"kind": p.PING, "id": 1})
            except trio.BrokenResourceError:
                break
            await busy.request(p.LIST_TABLES)  # a real request is activity
            await trio.sleep(0.1)
    took = trio.current_time() - start
    with trio.fail_after(3):
        while True:
            try:
                if await idle._read_frame() is None:
                    break
            except trio.BrokenResourceError:
                break
    byes = [f for f in idle.frames if f["kind"] == p.BYE]
    assert byes and byes[-1]["reason"] == "idle" and byes[-1]["message"], idle.frames[-3:]
    assert 0.5 <= took < 3, took
    assert not conn_gone(server, "busy") and not conn_gone(server, "seated")  # seated players are never 'idle'


def conn_gone(server: Server, name: str) -> bool:
    return not any(c.name == name for c in server.connections)


async def test_a_table_flood_leaves_create_table_working_for_another_address(server):
    """The probe: connect, create_table, close the socket, again and again. One address holds a few tables; another
    address still creates its own; and the flood's tables, never started and left by everyone, close soon."""
    server.lobby.max_tables = 20
    server.lobby.unstarted_abandon_after = 0.5
    results = []
    for i in range(30):
        c = await connect_from(server.port, ATTACKER, f"flood{i}")
        results.append(await c.request(p.CREATE_TABLE, players=4))
        await c.aclose()
    made = [r for r in results if r["kind"] == p.OK]
    limit = server.lobby.max_tables_per_address
    assert len(made) == limit, [r.get("reason") for r in results]
    assert all(r["reason"] == p.TOO_MANY_TABLES for r in results if r["kind"] != p.OK)
    honest = await connect_from(server.port, HONEST, "honest")
    assert (await honest.request(p.CREATE_TABLE, players=4))["kind"] == p.OK
    # No human is left at the flood's tables and none started: they close within the (shortened) limit.
    flood_tables = {r["table"] for r in made}
    await wait_until(lambda: not flood_tables & set(server.lobby.rooms), timeout=3)
    assert honest.table in server.lobby.rooms  # a table with its player connected stays
    again = await connect_from(server.port, ATTACKER, "again")
    assert (await again.request(p.CREATE_TABLE, players=4))["kind"] == p.OK


# --- 3. the heartbeat ------------------------------------------------------------------------------------------


async def test_r18_r19_a_silent_host_loses_the_role_within_the_heartbeat_timeout_and_keeps_the_seat(server):
    """A host whose network vanished without a FIN: no byte arrives from it any more. The others are told it is
    gone (seat kept, R19) and the host role passes (R18) once HEARTBEAT_TIMEOUT passes, here shortened to 0.6 s."""
    timeout = 0.6
    server.config = replace(server.config, heartbeat_timeout=timeout)
    ann = await connect_from(server.port, HONEST, "ann")
    ann.heartbeat_interval = 0.1
    assert (await ann.request(p.CREATE_TABLE, players=4, timing="steady"))["kind"] == p.OK
    bob = await connect_from(server.port, "127.0.0.3", "bob")
    bob.heartbeat_interval = 0.1  # bob's client keeps its heartbeat: only ann goes silent
    assert (await bob.request(p.JOIN, table=ann.table))["kind"] == p.OK
    for seat in (2, 3):
        assert (await ann.request(p.ADD_BOT, seat=seat))["kind"] == p.OK
    assert (await ann.request(p.START))["kind"] == p.OK
    await bob.wait_view(lambda v: v.phase is Phase.SIGNING and v.host == 0)
    secret = ann.secret
    # From now on nothing comes from ann: the test never reads or writes on its socket (a half-open peer).
    silent_from = trio.current_time()
    view = await bob.wait_view(lambda v: v.host == 1 and not v.seats[0].connected, timeout=timeout + 3)
    took = trio.current_time() - silent_from
    assert timeout * 0.8 <= took < timeout + 2, took
    assert view.host == 1
    room = server.lobby.rooms[ann.table]
    assert room.seats[0].secret == digest_secret(secret) and room.seats[0].peer is None
    # The server told ann why, politely, in case it was only a client that forgot to ping.
    frames = []
    with trio.fail_after(3):
        while (frame := await ann.next_frame()) is not None:
            frames.append(frame)
    assert any(f["kind"] == p.BYE and f["reason"] == "silent" for f in frames)
    # R19: the seat waits; its player comes back with the secret.
    back = await connect_from(server.port, HONEST, "ann")
    back.heartbeat_interval = 0.1
    assert (await back.request(p.REJOIN, table=ann.table, secret=secret))["kind"] == p.OK
    await bob.wait_view(lambda v: v.seats[0].connected)


async def test_a_client_that_pings_is_never_taken_for_gone(server):
    server.config = replace(server.config, heartbeat_timeout=0.5)
    c = await connect_from(server.port, HONEST, "steady")
    c.heartbeat_interval = 0.15
    await c.drain(1.5)  # only the test client's own heartbeat goes out meanwhile
    assert not conn_gone(server, "steady")
    assert (await c.request(p.PING))["kind"] == p.OK


async def test_every_socket_gets_tcp_keepalive():
    sock = trio.socket.socket(trio.socket.AF_INET, trio.socket.SOCK_STREAM)

    class Stream:
        pass

    stream = Stream()
    stream.socket = sock
    server_module._keepalive(stream)
    assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 1
    if hasattr(socket, "TCP_KEEPIDLE"):
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE) == server_module.KEEPALIVE_IDLE
    sock.close()


# --- 4. passwords that resist guessing --------------------------------------------------------------------------


async def test_password_guesses_from_one_address_are_slowed_with_a_growing_delay(server):
    owner = await connect_from(server.port, HONEST, "owner")
    assert (await owner.request(p.CREATE_TABLE, players=4, password="open sesame"))["kind"] == p.OK
    guesser = await connect_from(server.port, ATTACKER, "guesser")
    answers = []
    for i in range(40):  # a burst of guesses, as fast as the connection's own rate limit allows
        reply = await guesser.request(p.JOIN, table=owner.table, password=f"guess{i}")
        answers.append(reply.get("reason"))
    # A few misses are free, then one more is judged (and missed), then everything waits.
    assert answers[: GUESSES_PER_ADDRESS + 1] == [p.BAD_PASSWORD] * (GUESSES_PER_ADDRESS + 1), answers
    assert set(answers[GUESSES_PER_ADDRESS + 1 :]) == {p.RATE_LIMITED}, answers
    # While blocked, even the right password is not looked at.
    reply = await guesser.request(p.JOIN, table=owner.table, password="open sesame")
    assert reply["kind"] == p.REFUSED and reply["reason"] == p.RATE_LIMITED and reply["wait_ms"] > 0, reply
    # The wait grows: after it, one more miss blocks for twice as long.
    await trio.sleep(reply["wait_ms"] / 1000 + 0.05)
    assert (await guesser.request(p.JOIN, table=owner.table, password="nope"))["reason"] == p.BAD_PASSWORD
    longer = await guesser.request(p.JOIN, table=owner.table, password="nope")
    assert longer["reason"] == p.RATE_LIMITED and longer["wait_ms"] > 1500, longer
    # Another address is not slowed by this one (the table has not seen GUESSES_PER_TABLE misses yet).
    friend = await connect_from(server.port, "127.0.0.3", "friend")
    assert (await friend.request(p.JOIN, table=owner.table, password="open sesame"))["kind"] == p.OK


async def test_password_guesses_from_many_addresses_are_slowed_per_table(server):
    owner = await connect_from(server.port, HONEST, "owner")
    assert (await owner.request(p.CREATE_TABLE, players=8, password="pw"))["kind"] == p.OK
    answers = []
    for i in range(GUESSES_PER_TABLE + 5):  # one guess from each of many addresses
        c = await connect_from(server.port, f"127.0.1.{i + 1}", f"g{i}")
        answers.append((await c.request(p.JOIN, table=owner.table, password=f"x{i}"))["reason"])
        await c.aclose()
    assert answers[: GUESSES_PER_TABLE + 1] == [p.BAD_PASSWORD] * (GUESSES_PER_TABLE + 1), answers
    assert set(answers[GUESSES_PER_TABLE + 1 :]) == {p.RATE_LIMITED}, answers


async def test_a_started_table_answers_match_started_before_looking_at_the_password(server):
    owner = await connect_from(server.port, HONEST, "owner")
    assert (await owner.request(p.CREATE_TABLE, players=4, password="pw", timing="steady"))["kind"] == p.OK
    for _ in range(3):
        assert (await owner.request(p.ADD_BOT))["kind"] == p.OK
    assert (await owner.request(p.START))["kind"] == p.OK
    guesser = await connect_from(server.port, ATTACKER, "guesser")
    for i in range(GUESSES_PER_ADDRESS + 5):
        reply = await guesser.request(p.JOIN, table=owner.table, password=f"guess{i}")
        assert reply["reason"] == p.MATCH_STARTED, reply  # nothing to learn, and no miss counted
    assert server.lobby.guesses_by_address.wait(ATTACKER, trio.current_time()) == 0


def test_the_guess_limiter_grows_caps_forgets_and_stays_bounded():
    limiter = GuessLimiter(free=2, delay=1.0, cap=8.0, memory=100.0, records=3)
    for _ in range(2):
        limiter.missed("a", 0.0)
    assert limiter.wait("a", 0.0) == 0
    waits = []
    for i in range(6):
        limiter.missed("a", 0.0)
        waits.append(limiter.wait("a", 0.0))
    assert waits == [1.0, 2.0, 4.0, 8.0, 8.0, 8.0]
    assert limiter.wait("a", 100.0) == 0  # forgotten after the memory
    for key in "bcde":
        limiter.missed(key, 1.0)
    assert len(limiter._misses) == 3  # bounded: the oldest are forgotten


# --- 5. quiet logs and names -------------------------------------------------------------------------------------


async def test_refusals_are_not_logged_at_info(server, caplog):
    caplog.set_level(logging.DEBUG, logger="quatro")
    owner = await connect_from(server.port, HONEST, "owner")
    assert (await owner.request(p.CREATE_TABLE, players=4, password="pw", timing="steady"))["kind"] == p.OK
    for _ in range(3):
        assert (await owner.request(p.ADD_BOT))["kind"] == p.OK
    assert (await owner.request(p.START))["kind"] == p.OK
    caplog.clear()
    other = await connect_from(server.port, ATTACKER, "other")
    for i in range(20):
        await owner.request("next_round")  # refused: wrong phase
        await other.request(p.JOIN, table=owner.table, password="x")  # refused: match started
        await other.request(p.START)  # refused: not seated
    info = [r for r in caplog.records if r.name.startswith("quatro") and r.levelno >= logging.INFO]
    assert not info, [r.getMessage() for r in info]
    assert any("refused" in r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG)


async def test_repeated_lines_are_written_once_per_interval_with_a_count(autojump_clock, caplog):
    caplog.set_level(logging.DEBUG, logger="quatro")
    quiet = QuietLog(logging.getLogger("quatro.test"), every=10.0)
    for _ in range(500):
        quiet("accept_failed", logging.WARNING, "accept_failed error=%s", "EMFILE")
        await trio.sleep(0.1)  # 50 s of failures, every 100 ms
    lines = [r.getMessage() for r in caplog.records if r.name == "quatro.test"]
    assert 5 <= len(lines) <= 6, lines
    assert all("suppressed=" in line for line in lines[1:]), lines
    assert sum(int(line.split("suppressed=")[1]) for line in lines[1:]) + len(lines) <= 500


async def test_accept_failing_for_lack_of_file_descriptors_logs_quietly_and_recovers(autojump_clock, caplog):
    """EMFILE from accept(): the server waits a moment and retries, logging a line now and then, no traceback."""
    import errno

    from quatro_server.tables.lobby import Lobby

    caplog.set_level(logging.DEBUG)

    class Exhausted:
        def __init__(self) -> None:
            self.calls = 0

        async def __aenter__(self):
            return self

        async def __aexit__(self, *exc):
            return False

        async def accept(self):
            self.calls += 1
            await trio.lowlevel.checkpoint()
            raise OSError(errno.EMFILE, "Too many open files")

    srv = Server(Lobby())
    listener = Exhausted()
    async with trio.open_nursery() as nursery:
        srv._nursery = nursery
        nursery.start_soon(srv._accept, listener)
        await trio.sleep(30)
        nursery.cancel_scope.cancel()
    assert listener.calls >= 250  # it kept trying, every ACCEPT_RETRY
    lines = [r for r in caplog.records if "accept" in r.getMessage()]
    assert 1 <= len(lines) <= 4, [r.getMessage() for r in lines]
    assert not any(r.exc_info for r in lines)  # no traceback


async def test_attacker_names_are_logged_bounded_and_quoted(server, caplog):
    caplog.set_level(logging.DEBUG, logger="quatro")
    name = "%s%d'\"" + "x" * 18
    c = await connect_from(server.port, ATTACKER, name)
    assert c is not None
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("hello ")]
    assert lines and all(repr(name)[:20] in line for line in lines), lines


BLANK_LOOKING = {
    "hangul_filler": "\u3164",
    "hangul_fillers": "\u3164\u3164\u3164",
    "braille_blank": "\u2800",
    "braille_blank_and_space": "\u2800 \u2800",
    "hangul_choseong_filler": "\u115f",
    "hangul_jungseong_filler": "\u1160",
    "halfwidth_hangul_filler": "\uffa0",
    "combining_grapheme_joiner": "\u034f",
    "lone_combining_accent": "\u0301",
    "variation_selector": "\ufe0f",
    "word_joiner": "\u2060",
    "khmer_inherent_vowel": "\u17b4",
    "mongolian_selector": "\u180b",
    "tag_character": "\U000e0041",
    "soft_hyphen": "\u00ad",
}


@pytest.mark.parametrize("name", list(BLANK_LOOKING.values()), ids=list(BLANK_LOOKING))
async def test_blank_looking_names_are_refused(server, name):
    c = await connect_from(server.port, ATTACKER, "x", hello=False)
    reply = await c.request(p.HELLO, version=p.PROTOCOL_VERSION, name=name)
    assert reply["kind"] == p.ERROR and reply["code"] == p.BAD_REQUEST, reply
    ok = await c.request(p.HELLO, version=p.PROTOCOL_VERSION, name="ann")
    assert (await c.request(p.RENAME, name=name))["code"] == p.BAD_REQUEST
    assert ok["kind"] == p.OK


@pytest.mark.parametrize("name", ["한글", "ㅎ", "⠁", "ann\u3164", "e\u0301", "❤️", "zoë"])
def test_names_with_something_visible_are_welcome(name):
    assert p.printable(name)


async def test_a_trusted_address_is_exempt_from_the_per_address_shares(server):
    """An operator's load generator or relaying gateway (``--trusted-address``) is not one host among many."""
    server.config = replace(server.config, max_connections_per_address=2, trusted_addresses=frozenset({ATTACKER}))
    server.lobby.max_tables_per_address = 1
    trusted = [await connect_from(server.port, ATTACKER, f"t{i}") for i in range(4)]
    for c in trusted[:2]:
        assert (await c.request(p.CREATE_TABLE, players=4))["kind"] == p.OK
    others = [await connect_from(server.port, HONEST, f"o{i}") for i in range(2)]
    assert (await others[0].request(p.CREATE_TABLE, players=4))["kind"] == p.OK
    assert (await others[1].request(p.CREATE_TABLE, players=4))["reason"] == p.TOO_MANY_TABLES
    third = await connect_from(server.port, HONEST, "o2", hello=False)
    refused = await third.next_frame()
    assert refused["kind"] == p.ERROR and refused["code"] == p.TOO_MANY_CONNECTIONS


DOOR_TOKEN = "t" * 32


async def test_a_doors_client_shows_the_door_token_and_every_other_local_process_keeps_the_per_address_limits(server):
    """With a door open, the doors' clients come from loopback: the ones whose hello shows the door token are
    counted under the doors' caps (their connections and tables); any other local process keeps the limits."""
    server.config = replace(
        server.config,
        max_connections_per_address=2,
        door_token=DOOR_TOKEN,
        door_addresses=frozenset({ATTACKER}),
        max_door_pending=3,
    )
    server.lobby.max_tables_per_address = 1
    plain = [await connect_from(server.port, ATTACKER, f"p{i}") for i in range(2)]
    assert (await plain[0].request(p.CREATE_TABLE, players=4))["kind"] == p.OK
    assert (await plain[1].request(p.CREATE_TABLE, players=4))["reason"] == p.TOO_MANY_TABLES
    doors = []
    for i in range(4):  # past the address's share: each may say hello, and shows the token
        c = await connect_from(server.port, ATTACKER, f"d{i}", hello=False)
        assert (await c.request(p.HELLO, version=p.PROTOCOL_VERSION, name=f"d{i}", door=DOOR_TOKEN))["kind"] == p.OK
        doors.append(c)
    for c in doors[:2]:
        assert (await c.request(p.CREATE_TABLE, players=4))["kind"] == p.OK  # the doors' tables are theirs to cap
    assert server.per_origin[ATTACKER] == 2 and server.door_pending == 0
    for token in (None, "w" * 32):  # a third plain connection, or one with a wrong token: refused at its hello
        third = await connect_from(server.port, ATTACKER, "p3", hello=False)
        fields = {} if token is None else {"door": token}
        reply = await third.request(p.HELLO, version=p.PROTOCOL_VERSION, name="p3", **fields)
        assert reply["kind"] == p.ERROR and reply["code"] == p.TOO_MANY_CONNECTIONS, reply
    await wait_until(lambda: server.door_pending == 0, timeout=3)
    # Another address is not the doors': past its share it is refused at once, token or not.
    others = [await connect_from(server.port, HONEST, f"o{i}") for i in range(2)]
    fourth = await connect_from(server.port, HONEST, "o2", hello=False)
    refused = await fourth.next_frame()
    assert refused["kind"] == p.ERROR and refused["code"] == p.TOO_MANY_CONNECTIONS
    for c in [*plain, *doors, *others]:
        await c.aclose()


async def test_connections_waiting_to_show_the_door_token_are_capped(server):
    server.config = replace(
        server.config,
        max_connections_per_address=1,
        door_token=DOOR_TOKEN,
        door_addresses=frozenset({ATTACKER}),
        max_door_pending=2,
    )
    first = await connect_from(server.port, ATTACKER, "p0")
    waiting = [await connect_from(server.port, ATTACKER, f"w{i}", hello=False) for i in range(2)]
    await wait_until(lambda: server.door_pending == 2, timeout=3)
    past = await connect_from(server.port, ATTACKER, "w2", hello=False)
    refused = await past.next_frame()
    assert refused["kind"] == p.ERROR and refused["code"] == p.TOO_MANY_CONNECTIONS
    for c in [first, *waiting, past]:
        await c.aclose()


def test_a_door_keeps_the_game_ports_reserve_of_descriptors_and_its_own_share(monkeypatch, caplog):
    """A door takes no connection while fewer descriptors are free than the game port's reserve, nor past its
    share of those above it; each refusal is counted, and logged one line a while."""
    from quatro_server.doors import gate as doors

    caplog.set_level(logging.WARNING)
    clock = [0.0]
    gate = doors.Gate(100, 100, QuietLog(logging.getLogger("quatro.test"), clock=lambda: clock[0]), "web")
    free = [1000]
    monkeypatch.setattr(doors, "descriptors_free", lambda: free[0])
    monkeypatch.setattr(doors, "descriptor_reserve", lambda: 64)
    monkeypatch.setattr(doors, "door_share", lambda: 3)
    assert [gate.admit("10.0.0.1") for _ in range(4)] == [None, None, None, "descriptors"]  # its share
    gate.release("10.0.0.1")
    free[0] = 63
    assert [gate.admit("10.0.0.1") for _ in range(50)] == ["descriptors"] * 50  # the reserve is the game port's
    free[0] = 64
    assert gate.admit("10.0.0.1") is None
    assert gate.refused == {"descriptors": 51}
    assert len([r for r in caplog.records if "web_refused" in r.getMessage()]) == 1


def test_the_doors_share_and_reserve_follow_the_descriptor_limit(monkeypatch):
    from quatro_server.doors import gate as doors

    monkeypatch.setattr(doors.resource, "getrlimit", lambda what: (1024, 4096))
    assert doors.descriptor_reserve() == 256 and doors.door_share() == 384
    monkeypatch.setattr(doors.resource, "getrlimit", lambda what: (128, 4096))
    assert doors.descriptor_reserve() == 64 and doors.door_share() == 32
    assert doors.descriptors_free() > 0


def test_a_doors_loop_out_of_descriptors_logs_one_line_a_while_never_a_traceback(caplog):
    """asyncio's accept loop reports every failed accept; the door's loop says it once a while, with a count."""
    import asyncio
    import errno
    import itertools

    from quatro_server.doors import gate as doors

    caplog.set_level(logging.INFO)
    loop = asyncio.new_event_loop()
    clock = itertools.count()
    try:
        doors.quiet_loop_errors(
            loop, QuietLog(logging.getLogger("quatro.test"), every=10, clock=lambda: next(clock) / 10), "ssh"
        )
        for _ in range(500):
            loop.call_exception_handler(
                {
                    "message": "socket.accept() out of system resource",
                    "exception": OSError(errno.EMFILE, "Too many open files"),
                }
            )
    finally:
        loop.close()
    lines = [r for r in caplog.records if "accept_failed" in r.getMessage()]
    assert len(lines) == 5 and not any(r.exc_info for r in lines)  # 500 failures over 50 s: a line every 10 s
    assert "EMFILE" in lines[0].getMessage() and "suppressed=99" in lines[1].getMessage()
