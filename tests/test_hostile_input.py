"""A hostile connection gets a clear answer and breaks nothing: while a 4-seat table plays on other
connections, one connection sends broken frames, junk, oversized or deep messages, wrong kinds, wrong
field types, out-of-phase actions, bad ids, floods, or stops reading. Every time it is answered with an
``error`` or ``refused`` naming a code (or it is closed), the server keeps serving fresh clients, and the
table's players keep receiving consecutive updates and can still act.

The table: ann (seat 0, host) and dee (seat 3) are humans; seats 1 and 2 hold normal bots, each partnered
with a human, so no bot ever calls (a normal bot calls only on its partner's pulse). The timing is fast
with the phases stretched (``LONG``) so a round never ends by itself during a test.

An error reply quotes the peer's unknown kind or field name bounded, so that even a 1024-character name
(legal on the wire) gets a reply the client's own decoder accepts
(``test_an_error_reply_stays_within_the_protocol_limits``).
"""

from __future__ import annotations

import logging
import socket
import struct
from dataclasses import dataclass, replace
from typing import Any

import msgpack
import pytest
import trio

from quatro_shared import games
from quatro_shared import protocol as p
from quatro_shared.framing import MAX_DEPTH, MAX_FRAME_BYTES, MAX_STR_LEN, FrameDecoder, ProtocolError
from quatro_shared.games.quatro.views import Phase

from helpers.netclient import TestClient
from quatro_server.server import FLOOD_DISCONNECT, REQUEST_BURST, REQUEST_RATE
from quatro_server.timing import FAST

LONG = "long-hostile"
#: Fast cooldowns, but no phase ends by the clock while a test runs (it never waits for them either).
LONG_TIMING = replace(FAST, sign_window=600.0, round_length=600.0, break_length=600.0)

REPLY_KINDS = (p.OK, p.REFUSED, p.ERROR)


# --- helpers ----------------------------------------------------------------------------------------


def raw_frame(body: bytes) -> bytes:
    """A frame around raw bytes, bypassing ``encode``: what a hostile peer can send."""
    return struct.pack(">I", len(body)) + body


def packed(obj: Any) -> bytes:
    return raw_frame(msgpack.packb(obj, use_bin_type=True))


async def next_reply(client: TestClient, timeout: float = 3) -> dict[str, Any]:
    """The next ``ok``/``refused``/``error`` frame; pushes (lobby, table, update) are skipped."""
    with trio.fail_after(timeout):
        while True:
            frame = await client._read_frame()
            assert frame is not None, "the connection closed instead of replying"
            if frame["kind"] in REPLY_KINDS:
                return frame


async def send_and_reply(client: TestClient, message: dict[str, Any]) -> dict[str, Any]:
    client.pending.clear()  # every frame stays in client.frames; only stale pushes are dropped
    await client.send(message)
    return await next_reply(client)


async def frames_until_closed(client: TestClient, timeout: float = 2) -> list[dict[str, Any]]:
    """Read until the server closes the connection (within ``timeout``); return what came meanwhile."""
    client.pending.clear()
    start = len(client.frames)
    with trio.fail_after(timeout):
        while True:
            try:
                frame = await client._read_frame()
            except trio.BrokenResourceError:  # a reset is a close too
                break
            if frame is None:
                break
    return client.frames[start:]


async def expect_error_and_close(client: TestClient, code: str, timeout: float = 2) -> dict[str, Any]:
    frames = await frames_until_closed(client, timeout)
    errors = [f for f in frames if f["kind"] == p.ERROR]
    assert errors, f"closed without an error frame; got {frames}"
    assert errors[-1]["code"] == code, errors[-1]
    assert isinstance(errors[-1]["message"], str) and errors[-1]["message"]
    return errors[-1]


class Pacer:
    """Keeps a client under the server's rate limit by mirroring its token bucket (with a margin)."""

    def __init__(self, spent: int = 0) -> None:
        self.tokens = REQUEST_BURST - spent
        self.at = trio.current_time()

    async def __call__(self) -> None:
        now = trio.current_time()
        self.tokens = min(REQUEST_BURST, self.tokens + (now - self.at) * REQUEST_RATE)
        self.at = now
        if self.tokens < 10:
            await trio.sleep((10 - self.tokens) / REQUEST_RATE)
            self.tokens, self.at = 10, trio.current_time()
        self.tokens -= 1


def check_seqs(client: TestClient, first: int | None = 1) -> None:
    """A seat's updates are numbered without gaps: +1 per update, from 1 (or from ``first``; None: any start,
    for a connection that took over a seat already playing)."""
    seqs = [f["seq"] for f in client.frames if f["kind"] == p.UPDATE]
    assert seqs, f"{client.name} got no update"
    start = seqs[0] if first is None else first
    assert seqs == list(range(start, start + len(seqs))), (client.name, seqs)


@dataclass
class Game:
    server: Any
    table: int
    ann: TestClient  # seat 0, host
    dee: TestClient  # seat 3
    #: Connections that took a seat over mid-match: their numbering starts where the seat's was.
    rejoined: tuple[TestClient, ...] = ()

    @property
    def room(self):
        return self.server.lobby.rooms[self.table]


@pytest.fixture
async def game(server):
    server.lobby.profiles[LONG] = LONG_TIMING
    ann = await TestClient.connect(server.port, "ann")
    created = await ann.request(p.CREATE_TABLE, players=4, timing=LONG)
    assert created["kind"] == p.OK, created
    for seat in (1, 2):
        assert (await ann.request(p.ADD_BOT, seat=seat, level="normal"))["kind"] == p.OK
    dee = await TestClient.connect(server.port, "dee")
    assert (await dee.request(p.JOIN, table=ann.table, seat=3))["kind"] == p.OK
    assert (await ann.request(p.START))["kind"] == p.OK
    for c in (ann, dee):
        await c.wait_view(lambda v: v.phase is Phase.SIGNING)
        assert (await c.request("ready"))["kind"] == p.OK
    for c in (ann, dee):
        await c.wait_view(lambda v: v.phase is Phase.ROUND and len(v.hand) == 4)
    return Game(server, ann.table, ann, dee)


@pytest.fixture(autouse=True)
def no_server_failure(caplog):
    """A hostile peer may lose its own connection, never crash a handler or a table (those log errors)."""
    caplog.set_level(logging.INFO, logger="quatro")
    yield
    failures = [r for r in caplog.records if r.name.startswith("quatro") and r.levelno >= logging.ERROR]
    assert not failures, [r.getMessage() for r in failures]


async def swap_succeeds(client: TestClient) -> dict[str, Any]:
    """A swap from ``client`` goes through (a bot may take the card first, or a cooldown run: then try again)."""
    for _ in range(40):
        client.pending.clear()
        await client.drain(0.01)
        view = client.view
        assert view is not None and view.phase is Phase.ROUND, view
        slot = 0
        reply = await client.request("swap", give=view.hand[0], slot=slot, take=view.center[slot])
        if reply["kind"] == p.OK:
            give, take = view.hand[0], view.center[slot]
            return {"kind": "swapped", "seat": view.seat, "slot": slot, "put_down": give, "taken": take}
        assert reply["kind"] == p.REFUSED and reply["reason"] in ("taken", "cooldown"), reply
        if reply["reason"] == "cooldown":
            await trio.sleep(reply["wait_ms"] / 1000 + 0.005)
        else:
            await client.drain(0.05)  # the swap that took the card is on its way
    raise AssertionError(f"{client.name} never managed a swap")


async def wait_for_event(client: TestClient, event: dict[str, Any], timeout: float = 3) -> None:
    with trio.fail_after(timeout):
        while event not in client.events:
            frame = await client._read_frame()
            assert frame is not None, f"{client.name}: connection closed"


async def assert_undisturbed(game: Game, humans: list[TestClient] | None = None) -> None:
    """A fresh client is served; each human at the table can swap, the others see it; updates have no gaps."""
    fresh = await TestClient.connect(game.server.port, "fresh")
    listing = await fresh.request(p.LIST_TABLES)
    assert listing["kind"] == p.OK
    (row,) = [t for t in listing["tables"] if t["table"] == game.table]
    assert row["phase"] == "playing"
    assert (await fresh.request(p.PING))["kind"] == p.OK
    await fresh.aclose()

    humans = [game.ann, game.dee] if humans is None else humans
    for actor in humans:
        swapped = await swap_succeeds(actor)
        for c in humans:
            await wait_for_event(c, swapped)
    for c in humans:
        c.pending.clear()
        await c.drain(0.05)
        check_seqs(c, None if c in game.rejoined else 1)
        assert c.view.phase is Phase.ROUND
        assert all(s.connected for s in c.view.seats if s.seat in {h.seat for h in humans})


async def hostile(game: Game, name: str = "mallory", hello: bool = True) -> TestClient:
    return await TestClient.connect(game.server.port, name, hello=hello)


# --- framing: broken, junk, too large, too deep, not a map, no kind ---------------------------------------------

# Each of these breaks the framing: the connection is answered with an error naming the code, then closed.
BROKEN_STREAMS = {
    "msgpack_never_used_byte": (raw_frame(b"\xc1"), "malformed"),
    "msgpack_truncated_map": (raw_frame(b"\x82\xa4kind\xa4ping\xa2id"), "malformed"),
    "msgpack_trailing_bytes": (raw_frame(msgpack.packb({"kind": "ping", "id": 1}) + b"\x00"), "malformed"),
    "msgpack_bad_utf8": (raw_frame(b"\x81\xa4kind\xa2\xff\xfe"), "malformed"),
    "junk_http_request": (b"GET / HTTP/1.1\r\nHost: quatro\r\n\r\n", "frame_too_large"),
    "junk_small_prefix_then_text": (b"\x00\x00\x00\x05hello", "malformed"),
    "empty_frame": (b"\x00\x00\x00\x00", "empty_frame"),
    "binary_value": (packed({"kind": "ping", "id": 1, "x": b"\x00\x01"}), "bad_type"),
    "extension_type": (packed({"kind": "ping", "id": 1, "x": msgpack.ExtType(5, b"ab")}), "bad_type"),
    "integer_map_key": (packed({"kind": "ping", "id": 1, 7: "x"}), "bad_type"),
    "string_over_limit": (packed({"kind": "ping", "id": 1, "x": "y" * (MAX_STR_LEN + 1)}), "too_large"),
    "not_a_map_array": (packed(["ping", 1]), "not_a_map"),
    "not_a_map_string": (packed("ping"), "not_a_map"),
    "not_a_map_int": (packed(1), "not_a_map"),
    "not_a_map_nil": (packed(None), "not_a_map"),
    "no_kind": (packed({"id": 1}), "no_kind"),
    "kind_not_a_string": (packed({"kind": 7, "id": 1}), "no_kind"),
    "kind_nil": (packed({"kind": None, "id": 1}), "no_kind"),
}


def nested(depth: int, leaf: Any, as_map: bool) -> Any:
    for _ in range(depth):
        leaf = {"a": leaf} if as_map else [leaf]
    return leaf


DEEP_STREAMS = {
    # The top-level map counts 1, so MAX_DEPTH containers inside it are one level past the limit.
    "arrays_one_past_the_limit": packed({"kind": "ping", "id": 1, "x": nested(MAX_DEPTH, 0, as_map=False)}),
    "maps_one_past_the_limit": packed({"kind": "ping", "id": 1, "x": nested(MAX_DEPTH, 0, as_map=True)}),
    # Far deeper than msgpack's own parser stack: raw bytes, 20,000 nested one-element arrays / maps.
    "arrays_20000_deep": raw_frame(b"\x91" * 20_000 + b"\xc0"),
    "maps_20000_deep": raw_frame(b"\x81\xa1a" * 20_000 + b"\xc0"),
}


@pytest.mark.parametrize("case", sorted(BROKEN_STREAMS))
@pytest.mark.parametrize("greeted", [True, False], ids=["after_hello", "before_hello"])
async def test_broken_frames_get_an_error_and_close_only_their_connection(game, case, greeted):
    data, code = BROKEN_STREAMS[case]
    h = await hostile(game, hello=greeted)
    await h.send_raw(data)
    await expect_error_and_close(h, code)
    await assert_undisturbed(game)


@pytest.mark.parametrize("case", sorted(DEEP_STREAMS))
async def test_deeply_nested_messages_are_refused_too_deep(game, case):
    h = await hostile(game)
    await h.send_raw(DEEP_STREAMS[case])
    await expect_error_and_close(h, "too_deep")
    await assert_undisturbed(game)


def test_the_deep_cases_really_are_one_level_past_the_limit_and_legal_otherwise():
    from quatro_shared.framing import decode

    for as_map in (False, True):
        ok = msgpack.packb({"kind": "ping", "id": 1, "x": nested(MAX_DEPTH - 1, 0, as_map=as_map)})
        assert decode(ok)["kind"] == "ping"  # exactly MAX_DEPTH levels is accepted
    for case in ("arrays_one_past_the_limit", "maps_one_past_the_limit"):
        with pytest.raises(ProtocolError) as caught:
            decode(DEEP_STREAMS[case][4:])
        assert caught.value.code == "too_deep"


@pytest.mark.parametrize(
    "prefix",
    [
        struct.pack(">I", 1 << 30),  # 1 GiB announced, and no body at all
        struct.pack(">I", 0xFFFFFFFF),  # 4 GiB - 1
        b"\x40",  # one byte of a prefix that can only mean 1 GiB or more
        b"\x00\x02\x00",  # three bytes: at least 128 KiB, whatever the fourth
    ],
    ids=["1GiB", "4GiB", "partial_1GiB", "partial_128KiB"],
)
async def test_a_huge_length_prefix_is_refused_at_once_without_waiting_for_the_body(game, prefix):
    h = await hostile(game)
    await h.send_raw(prefix)
    # The server must answer from the prefix alone: the body never comes, so waiting for it would hang here.
    await expect_error_and_close(h, "frame_too_large", timeout=1)
    await assert_undisturbed(game)


def filler_frame(size: int) -> bytes:
    """A frame of exactly ``size`` body bytes within every other limit: a ``ping`` padded by an array of strings."""
    padding: list[str] = []
    fields: dict[str, Any] = {"kind": "ping", "id": 1, "pad": padding}
    while size - len(msgpack.packb(fields)) > 2 * MAX_STR_LEN:
        padding.append("z" * MAX_STR_LEN)
    for _ in range(4):  # a string's header grows in steps: one more short string steps over a gap
        padding.append("")
        for length in range(MAX_STR_LEN + 1):
            padding[-1] = "z" * length
            body = msgpack.packb(fields)
            if len(body) == size:
                return raw_frame(body)
            if len(body) > size:
                padding[-1] = ""
                break
    raise AssertionError(f"no filler of {size} bytes")


async def test_a_frame_just_above_64_kib_is_refused_and_one_at_the_limit_is_read(game):
    h = await hostile(game)
    # Exactly at the limit: a well-formed frame, read whole; a ping with unknown fields is a bad request, not a crash.
    await h.send_raw(filler_frame(MAX_FRAME_BYTES))
    reply = await next_reply(h)
    assert reply["kind"] == p.ERROR and reply["code"] == p.BAD_REQUEST and reply["id"] == 1
    assert (await h.request(p.PING))["kind"] == p.OK  # still open

    # One byte more: refused from its prefix alone.
    h2 = await hostile(game, "mallory2")
    big = filler_frame(MAX_FRAME_BYTES + 1)
    await h2.send_raw(big[:4])
    await expect_error_and_close(h2, "frame_too_large", timeout=1)

    # The same with its body sent along: the server stops reading and closes; nothing is held.
    h3 = await hostile(game, "mallory3")
    try:
        await h3.send_raw(big)
    except trio.BrokenResourceError:
        pass  # the server may close before the whole body is out
    frames = await frames_until_closed(h3)
    errors = [f for f in frames if f["kind"] == p.ERROR]
    assert not errors or errors[-1]["code"] == "frame_too_large"
    await assert_undisturbed(game)


async def test_half_a_frame_then_silence_before_hello_is_cut_at_the_hello_timeout(game):
    game.server.config = replace(game.server.config, hello_timeout=0.3)
    silent = await hostile(game, "silent", hello=False)
    slow = await hostile(game, "slowloris", hello=False)
    hello = msgpack.packb({"kind": "hello", "id": 1, "version": p.PROTOCOL_VERSION, "name": "slow"})
    await slow.send_raw(raw_frame(hello)[:10])  # a prefix and a few bytes, then nothing
    for c in (silent, slow):
        await expect_error_and_close(c, p.HELLO_FIRST, timeout=2)
    await assert_undisturbed(game)


# --- requests that frame well but mean nothing ---------------------------------------------------------------------


async def test_unknown_kinds_get_unknown_kind_and_the_connection_stays(game):
    h = await hostile(game)
    kinds = [
        "launch",
        "",
        "OK",
        "ok",
        "refused",
        "update",
        "view",
        "table",
        "lobby",
        "bye",
        "Swap",
        "swap ",
        "_hello",
        "__init__",
        "handle",
        "swapped",
        "round_ended",
        "event",
        "action",
        "connect",
        "disconnect",
        "x" * 200,
    ]
    for i, kind in enumerate(kinds, start=1):
        reply = await send_and_reply(h, {"kind": kind, "id": i})
        assert reply == {"kind": p.ERROR, "id": i, "code": p.UNKNOWN_KIND, "message": reply["message"]}, kind
    assert (await h.request(p.PING))["kind"] == p.OK

    # A seated player cannot send the server-only actions either: nobody is disconnected or reconnected by them.
    ann = game.ann
    for kind in ("disconnect", "connect"):
        reply = await ann.request(kind)
        assert reply["kind"] == p.ERROR and reply["code"] == p.UNKNOWN_KIND, reply
    await ann.drain(0.05)
    assert all(s.connected for s in ann.view.seats)
    assert game.room.table.is_connected(0)
    await assert_undisturbed(game)


@pytest.mark.parametrize(
    ("sender", "message"),
    [
        ("hostile", {"kind": "k" * MAX_STR_LEN, "id": 1}),  # wire.request_from_wire: unknown request kind
        ("hostile", {"kind": p.PING, "id": 1, "f" * MAX_STR_LEN: 1}),  # wire.request_from_wire: unknown field
        ("seated", {"kind": "ready", "id": 1, "f" * MAX_STR_LEN: 1}),  # quatro_shared.wire: extra_field
    ],
    ids=["long_unknown_kind", "long_unknown_request_field", "long_unknown_action_field"],
)
async def test_an_error_reply_stays_within_the_protocol_limits(game, sender, message):
    client = await hostile(game) if sender == "hostile" else game.ann
    client.pending.clear()
    await client.send(message)  # a legal frame: every string is within MAX_STR_LEN
    try:
        reply = await next_reply(client)  # the client's own codec must be able to read the answer
    except ProtocolError as exc:
        raise AssertionError(f"the server's reply breaks the protocol's own limits: {exc}") from None
    assert reply["kind"] == p.ERROR and reply["id"] == 1


# --- wrong field types for every request and action kind --------------------------------------------------------

HELLO_CASES = [
    {"version": "1", "name": "x"},
    {"version": 1.0, "name": "x"},
    {"version": True, "name": "x"},
    {"version": None, "name": "x"},
    {"name": "x"},
    {"version": p.PROTOCOL_VERSION, "name": 5},
    {"version": p.PROTOCOL_VERSION, "name": ""},
    {"version": p.PROTOCOL_VERSION, "name": "x" * (p.MAX_NAME_LEN + 1)},
    {"version": p.PROTOCOL_VERSION},
    {"version": p.PROTOCOL_VERSION, "name": "x", "admin": True},
    {"version": p.PROTOCOL_VERSION, "name": "x", "person": 42},
    {"version": p.PROTOCOL_VERSION, "name": "x", "person": ""},
    {"version": p.PROTOCOL_VERSION, "name": "x", "person": "k" * (p.MAX_SECRET_LEN + 1)},
    {"version": p.PROTOCOL_VERSION, "name": "x", "person": "key\x1b[31m"},
]


async def test_hello_with_wrong_field_types_is_a_bad_request_and_a_good_hello_still_works(game):
    h = await hostile(game, hello=False)
    for i, fields in enumerate(HELLO_CASES, start=1):
        reply = await send_and_reply(h, {"kind": p.HELLO, "id": i, **fields})
        assert reply["kind"] == p.ERROR and reply["code"] == p.BAD_REQUEST and reply["id"] == i, (fields, reply)
    assert (await h.request(p.HELLO, version=p.PROTOCOL_VERSION, name="late"))["kind"] == p.OK
    # After hello, a second one with bad fields is still just a bad request.
    reply = await send_and_reply(h, {"kind": p.HELLO, "id": 99, "version": "1", "name": "x"})
    assert reply["kind"] == p.ERROR and reply["code"] == p.BAD_REQUEST
    await assert_undisturbed(game)


def lobby_cases(table: int) -> list[tuple[dict[str, Any], str, str]]:
    """(request fields with kind, expected reply kind, expected code or reason) for an unseated connection."""
    E, R, BAD = p.ERROR, p.REFUSED, p.BAD_REQUEST
    return [
        ({"kind": p.LIST_TABLES, "all": True}, E, BAD),
        ({"kind": p.CREATE_TABLE, "players": 5}, R, BAD),
        ({"kind": p.CREATE_TABLE, "players": 4.0}, E, BAD),
        ({"kind": p.CREATE_TABLE, "players": "4"}, E, BAD),
        ({"kind": p.CREATE_TABLE, "players": True}, E, BAD),
        ({"kind": p.CREATE_TABLE, "players": None}, E, BAD),
        ({"kind": p.CREATE_TABLE}, E, BAD),
        ({"kind": p.CREATE_TABLE, "players": 0}, R, BAD),
        ({"kind": p.CREATE_TABLE, "players": -4}, R, BAD),
        ({"kind": p.CREATE_TABLE, "players": 2**53}, R, BAD),
        ({"kind": p.CREATE_TABLE, "players": 4, "timing": 3}, E, BAD),
        ({"kind": p.CREATE_TABLE, "players": 4, "timing": "glacial"}, R, p.BAD_TIMING),
        ({"kind": p.CREATE_TABLE, "players": 4, "password": ""}, E, BAD),
        ({"kind": p.CREATE_TABLE, "players": 4, "password": 1234}, E, BAD),
        ({"kind": p.CREATE_TABLE, "players": 4, "seats": 4}, E, BAD),
        ({"kind": p.JOIN, "table": str(table)}, E, BAD),
        ({"kind": p.JOIN, "table": float(table)}, E, BAD),
        ({"kind": p.JOIN, "table": True}, E, BAD),
        ({"kind": p.JOIN}, E, BAD),
        ({"kind": p.JOIN, "table": table, "seat": "0"}, E, BAD),
        ({"kind": p.JOIN, "table": table, "team": True}, E, BAD),
        ({"kind": p.JOIN, "table": table, "password": 1}, E, BAD),
        ({"kind": p.JOIN, "table": 2**53}, R, p.NO_SUCH_TABLE),
        ({"kind": p.JOIN, "table": -1}, R, p.NO_SUCH_TABLE),
        ({"kind": p.JOIN, "table": table}, R, p.MATCH_STARTED),
        ({"kind": p.REJOIN, "table": str(table), "secret": "s"}, E, BAD),
        ({"kind": p.REJOIN, "table": table, "secret": 5}, E, BAD),
        ({"kind": p.REJOIN, "table": table, "secret": ""}, E, BAD),
        ({"kind": p.REJOIN, "table": table, "secret": "s" * (p.MAX_SECRET_LEN + 1)}, E, BAD),
        ({"kind": p.REJOIN, "table": table}, E, BAD),
        ({"kind": p.REJOIN, "table": table, "secret": "guess"}, R, p.BAD_SECRET),
        ({"kind": p.LEAVE, "now": True}, E, BAD),
        ({"kind": p.LEAVE}, R, p.NOT_SEATED),
        ({"kind": p.RENAME, "name": 7}, E, BAD),
        ({"kind": p.RENAME, "name": ""}, E, BAD),
        ({"kind": p.RENAME, "name": "n" * (p.MAX_NAME_LEN + 1)}, E, BAD),
        ({"kind": p.RENAME}, E, BAD),
        ({"kind": p.ADD_BOT, "seat": "1"}, E, BAD),
        ({"kind": p.ADD_BOT, "level": 3}, E, BAD),
        ({"kind": p.ADD_BOT, "seat": True}, E, BAD),
        ({"kind": p.ADD_BOT}, R, p.NOT_SEATED),
        ({"kind": p.REMOVE_BOT}, E, BAD),
        ({"kind": p.REMOVE_BOT, "seat": "1"}, E, BAD),
        ({"kind": p.REMOVE_BOT, "seat": 1}, R, p.NOT_SEATED),
        ({"kind": p.START, "force": True}, E, BAD),
        ({"kind": p.START}, R, p.NOT_SEATED),
        ({"kind": p.REMATCH, "seats": [1, 0]}, E, BAD),
        ({"kind": p.REMATCH}, R, p.NOT_SEATED),
        ({"kind": p.MOVE}, E, BAD),
        ({"kind": p.MOVE, "seat": "2"}, E, BAD),
        ({"kind": p.MOVE, "seat": 1}, R, p.NOT_SEATED),
        ({"kind": p.CHAT}, E, BAD),
        ({"kind": p.CHAT, "text": ""}, E, BAD),
        ({"kind": p.CHAT, "text": "x" * (p.MAX_CHAT_LEN + 1)}, E, BAD),
        ({"kind": p.CHAT, "text": "\x1b[31mred"}, E, BAD),
        ({"kind": p.PING, "payload": "x"}, E, BAD),
        ({"kind": p.RESYNC, "seq": 3}, E, BAD),
        ({"kind": p.RESYNC}, R, p.NOT_SEATED),
        ({"kind": p.PAST_MATCHES, "offset": "20"}, E, BAD),
        ({"kind": p.PAST_MATCHES, "offset": None}, E, BAD),
        ({"kind": p.PAST_MATCHES, "page": 2}, E, BAD),
        ({"kind": p.PAST_MATCHES}, R, p.NO_JOURNAL),
        ({"kind": p.REPLAY, "seat": 0}, E, BAD),
        ({"kind": p.REPLAY, "table": str(table), "seat": 0}, E, BAD),
        ({"kind": p.REPLAY, "table": table, "seat": True}, E, BAD),
        ({"kind": p.REPLAY, "table": table, "seat": 0, "password": ""}, E, BAD),
        ({"kind": p.REPLAY, "table": table, "seat": 0, "secret": 5}, E, BAD),
        ({"kind": p.REPLAY, "table": table, "seat": 0}, R, p.NO_JOURNAL),
        ({"kind": p.WATCH}, E, BAD),
        ({"kind": p.WATCH, "table": "1"}, E, BAD),
        ({"kind": p.WATCH, "table": 10**6}, R, p.NO_SUCH_TABLE),
        ({"kind": p.WATCH, "table": table, "password": ""}, E, BAD),
        ({"kind": p.WATCH, "table": table, "seat": 1}, E, BAD),
        ({"kind": p.WATCHERS}, E, BAD),
        ({"kind": p.WATCHERS, "open": 1}, E, BAD),
        ({"kind": p.WATCHERS, "open": False}, R, p.NOT_SEATED),
        ({"kind": p.LEADERBOARD, "game": 7}, E, BAD),
        ({"kind": p.LEADERBOARD, "offset": "0"}, E, BAD),
        ({"kind": p.LEADERBOARD, "offset": -1}, R, BAD),
        ({"kind": p.LEADERBOARD, "game": "chess"}, R, p.UNKNOWN_GAME),
        ({"kind": p.LEADERBOARD, "limit": 10**6}, E, BAD),
        ({"kind": p.PLAYER_CARD, "person": ""}, E, BAD),
        ({"kind": p.PLAYER_CARD, "person": "p" * (p.MAX_PERSON_LEN + 1)}, E, BAD),
        ({"kind": p.PLAYER_CARD, "name": 3}, E, BAD),
        ({"kind": p.PLAYER_CARD, "person": "p:nobody"}, R, p.NO_SUCH_PLAYER),
        ({"kind": p.PLAYER_CARD}, R, p.NO_SUCH_PLAYER),
        ({"kind": p.CREATE_TABLE, "players": 4, "rated": "no"}, E, BAD),
        # ``prove`` (protocol 8): a nonce that is no nonce, a proof of nothing, a seat that is no seat.
        ({"kind": p.PROVE, "table": table, "of": "secret"}, E, BAD),
        ({"kind": p.PROVE, "table": table, "nonce": NONCE}, E, BAD),
        ({"kind": p.PROVE, "nonce": NONCE, "of": "secret"}, E, BAD),
        ({"kind": p.PROVE, "table": str(table), "nonce": NONCE, "of": "secret"}, E, BAD),
        ({"kind": p.PROVE, "table": table, "nonce": "ab" * (p.MIN_NONCE_BYTES - 1), "of": "secret"}, E, BAD),
        ({"kind": p.PROVE, "table": table, "nonce": "ab" * (p.MAX_NONCE_BYTES + 1), "of": "secret"}, E, BAD),
        ({"kind": p.PROVE, "table": table, "nonce": "zz" * p.MIN_NONCE_BYTES, "of": "secret"}, E, BAD),
        ({"kind": p.PROVE, "table": table, "nonce": "a" * (2 * p.MIN_NONCE_BYTES + 1), "of": "secret"}, E, BAD),
        ({"kind": p.PROVE, "table": table, "nonce": 7, "of": "secret"}, E, BAD),
        ({"kind": p.PROVE, "table": table, "nonce": NONCE, "of": "everything"}, E, BAD),
        ({"kind": p.PROVE, "table": table, "nonce": NONCE, "of": None}, E, BAD),
        ({"kind": p.PROVE, "table": table, "nonce": NONCE, "of": "secret", "seat": "0"}, E, BAD),
        ({"kind": p.PROVE, "table": table, "nonce": NONCE, "of": "secret", "seat": None}, E, BAD),
        ({"kind": p.PROVE, "table": table, "nonce": NONCE, "of": "secret", "secret": "guess"}, E, BAD),
        ({"kind": p.PROVE, "table": 10**6, "nonce": NONCE, "of": "secret"}, R, p.NO_SUCH_TABLE),
        ({"kind": p.PROVE, "table": table, "nonce": NONCE, "of": "secret", "seat": 99}, R, p.NO_SUCH_SEAT),
        ({"kind": p.PROVE, "table": table, "nonce": NONCE, "of": "secret", "seat": -1}, R, p.NO_SUCH_SEAT),
        ({"kind": p.PROVE, "table": table, "nonce": NONCE, "of": "secret", "seat": 1}, R, p.NO_SUCH_SEAT),
        ({"kind": p.PROVE, "table": table, "nonce": NONCE, "of": "password"}, R, p.BAD_PASSWORD),
        # Game actions from a connection with no seat: refused before anything else.
        ({"kind": "swap", "give": "AS", "slot": "x", "take": "KS"}, R, p.NOT_SEATED),
        ({"kind": "call"}, R, p.NOT_SEATED),
        ({"kind": "counter", "team": True}, R, p.NOT_SEATED),
    ]


#: A well-formed ``prove`` nonce: the hex of 16 bytes.
NONCE = "5a" * p.MIN_NONCE_BYTES


def check_reply(reply: dict[str, Any], request_id: int, kind: str, code: str) -> str | None:
    """None when ``reply`` is the expected answer; otherwise what is wrong."""
    if reply.get("id") != request_id or reply["kind"] != kind:
        return f"expected {kind} {code}, got {reply}"
    got = reply.get("code") if kind == p.ERROR else reply.get("reason")
    if got != code:
        return f"expected {kind} {code}, got {reply}"
    if not isinstance(reply.get("message"), str) or not reply["message"]:
        return f"no message in {reply}"
    return None


async def test_lobby_requests_with_wrong_field_types_get_a_clear_answer(game):
    h = await hostile(game)
    pace = Pacer(spent=1)
    wrong = []
    for i, (message, kind, code) in enumerate(lobby_cases(game.table), start=1):
        await pace()
        reply = await send_and_reply(h, {**message, "id": i})
        if problem := check_reply(reply, i, kind, code):
            wrong.append((message, problem))
    assert not wrong, wrong
    assert len(game.server.lobby.rooms) == 1  # nothing was created by the bad requests
    await assert_undisturbed(game)


def action_cases() -> list[dict[str, Any]]:
    """Game actions with a wrong field: each must be an ``error`` (the wire's code), and change nothing."""
    swap = {"kind": "swap", "give": "AS", "slot": 0, "take": "KS"}
    return [
        {"kind": "ready", "now": 1},
        {"kind": "pick_sign", "sign": 5},
        {"kind": "pick_sign", "sign": "unicorn"},
        {"kind": "pick_sign", "sign": None},
        {"kind": "pick_sign"},
        {**swap, "slot": "x"},
        {**swap, "slot": True},
        {**swap, "slot": 1.0},
        {**swap, "slot": None},
        {**swap, "give": 5},
        {**swap, "give": "ZZ"},
        {**swap, "give": ["AS"]},
        {**swap, "take": None},
        {**swap, "take": {"card": "KS"}},
        {"kind": "swap", "give": "AS", "slot": 0},
        {**swap, "seat": 1},
        {"kind": "take_channel", "sign": "fox"},
        {"kind": "release_channel", "force": True},
        {"kind": "choose_emoji", "sign": 5},
        {"kind": "choose_emoji", "sign": "unicorn"},
        {"kind": "choose_emoji"},
        {"kind": "call", "partner": 2},
        {"kind": "call", "seat": 2},
        {"kind": "counter", "team": True},
        {"kind": "counter", "team": "1"},
        {"kind": "counter", "team": 1.0},
        {"kind": "counter", "team": [1]},
        {"kind": "counter", "team": 1, "seat": 1},
        {"kind": "ask_reshuffle", "now": True},
        {"kind": "vote", "yes": "yes"},
        {"kind": "vote", "yes": 1},
        {"kind": "vote", "yes": None},
        {"kind": "vote"},
        {"kind": "next_round", "round": 2},
        # Quarto's actions: their fields are judged at the edge too, whatever table the sender sits at.
        {"kind": "place", "square": "a1"},
        {"kind": "place", "square": True},
        {"kind": "place", "square": 1.0},
        {"kind": "place"},
        {"kind": "place", "square": 3, "piece": 2},
        {"kind": "give", "piece": "TDRH"},
        {"kind": "give", "piece": None},
        {"kind": "give"},
        {"kind": "next_game", "game": 2},
    ]


async def test_every_action_with_a_wrong_field_is_an_error_and_changes_nothing(game):
    ann = game.ann
    table = game.room.table
    hand_before, round_before = table.hand(0), table.round
    pace = Pacer(spent=6)
    wrong = []
    for i, message in enumerate(action_cases(), start=1000):
        await pace()
        reply = await send_and_reply(ann, {**message, "id": i})
        wire_codes = ("bad_field", "missing_field", "extra_field")
        if reply["kind"] != p.ERROR or reply["id"] != i or reply["code"] not in wire_codes:
            wrong.append((message, reply))
        elif not reply["message"]:
            wrong.append((message, "empty message"))
    assert not wrong, wrong
    # A call or counter with a wrong field did not end the round; no bad swap moved a card; no sign got set by ann.
    assert table.phase is Phase.ROUND and table.round == round_before
    assert table.hand(0) == hand_before
    assert not any(ev["kind"] in ("round_ended", "vote_started") for ev in ann.events)
    assert not any(ev["kind"] == "swapped" and ev["seat"] == 0 for ev in ann.events)
    await assert_undisturbed(game)


def test_every_request_and_action_kind_has_wrong_field_cases():
    """New kinds must come with their hostile cases: the lists above cover every kind the protocol knows."""
    covered = {p.HELLO} | {m["kind"] for m, _, _ in lobby_cases(1)} | {m["kind"] for m in action_cases()}
    every_kind = set(games.request_kinds())
    assert covered >= every_kind, every_kind - covered


async def test_seat_numbers_out_of_range_are_refused_never_wrapped_around(game):
    """Negative or huge seats and teams must not index a list from its end (or past it)."""
    host = await hostile(game, "hostess")
    guest = await hostile(game, "guest")
    created = await host.request(p.CREATE_TABLE, players=4, timing=LONG)
    assert created["kind"] == p.OK
    table = created["table"]
    cases = [
        (guest, {"kind": p.JOIN, "table": table, "seat": -1}, p.REFUSED, p.BAD_REQUEST),
        (guest, {"kind": p.JOIN, "table": table, "seat": 4}, p.REFUSED, p.BAD_REQUEST),
        (guest, {"kind": p.JOIN, "table": table, "seat": 2**53}, p.REFUSED, p.BAD_REQUEST),
        (guest, {"kind": p.JOIN, "table": table, "seat": 0}, p.REFUSED, p.SEAT_TAKEN),
        (guest, {"kind": p.JOIN, "table": table, "team": -1}, p.REFUSED, p.BAD_REQUEST),
        (guest, {"kind": p.JOIN, "table": table, "team": 2}, p.REFUSED, p.BAD_REQUEST),
        (host, {"kind": p.ADD_BOT, "seat": -1}, p.REFUSED, p.BAD_REQUEST),
        (host, {"kind": p.ADD_BOT, "seat": 4}, p.REFUSED, p.BAD_REQUEST),
        (host, {"kind": p.ADD_BOT, "seat": 0}, p.REFUSED, p.SEAT_TAKEN),
        (host, {"kind": p.ADD_BOT, "level": "godlike"}, p.REFUSED, p.BAD_LEVEL),
        (host, {"kind": p.REMOVE_BOT, "seat": -1}, p.REFUSED, p.NOT_A_BOT),
        (host, {"kind": p.REMOVE_BOT, "seat": 4}, p.REFUSED, p.NOT_A_BOT),
        (host, {"kind": p.REMOVE_BOT, "seat": 0}, p.REFUSED, p.NOT_A_BOT),
        (host, {"kind": p.START}, p.REFUSED, p.SEATS_EMPTY),
    ]
    wrong = []
    for i, (client, message, kind, code) in enumerate(cases, start=1):
        reply = await send_and_reply(client, {**message, "id": i})
        if problem := check_reply(reply, i, kind, code):
            wrong.append((message, problem))
    assert not wrong, wrong
    room = game.server.lobby.rooms[table]
    assert [s.empty for s in room.seats] == [False, True, True, True] and room.table is None
    await assert_undisturbed(game)


# --- actions out of phase, or out of place ---------------------------------------------------------------------------


async def test_out_of_phase_actions_are_refused_with_their_reason(game):
    server = game.server
    ann, dee = game.ann, game.dee
    view = ann.view
    not_mine = next(card for card in game.room.table.deck if card not in view.hand)
    own_team = view.team
    during_round = [
        ({"kind": "ready"}, p.REFUSED, "wrong_phase"),
        ({"kind": "pick_sign", "sign": "fox"}, p.REFUSED, "wrong_phase"),
        ({"kind": "next_round"}, p.REFUSED, "wrong_phase"),
        ({"kind": "vote", "yes": True}, p.REFUSED, "no_vote"),
        ({"kind": "vote", "yes": False}, p.REFUSED, "no_vote"),
        ({"kind": "release_channel"}, p.REFUSED, "channel_not_held"),
        ({"kind": "choose_emoji", "sign": "fox"}, p.REFUSED, "channel_not_held"),
        ({"kind": "choose_emoji", "sign": None}, p.REFUSED, "channel_not_held"),
        ({"kind": "swap", "give": not_mine, "slot": 0, "take": view.center[0]}, p.REFUSED, "not_in_hand"),
        ({"kind": "swap", "give": view.hand[0], "slot": 4, "take": view.center[0]}, p.REFUSED, "bad_argument"),
        ({"kind": "swap", "give": view.hand[0], "slot": -1, "take": view.center[0]}, p.REFUSED, "bad_argument"),
        ({"kind": "swap", "give": view.hand[0], "slot": 2**63 - 1, "take": view.center[0]}, p.REFUSED, "bad_argument"),
        ({"kind": "counter", "team": own_team}, p.REFUSED, "not_opponent"),
        ({"kind": "counter", "team": 2}, p.REFUSED, "bad_argument"),
        ({"kind": "counter", "team": -1}, p.REFUSED, "bad_argument"),
        ({"kind": p.START}, p.REFUSED, p.MATCH_STARTED),
        ({"kind": p.ADD_BOT}, p.REFUSED, p.MATCH_STARTED),
        ({"kind": p.REMOVE_BOT, "seat": 1}, p.REFUSED, p.MATCH_STARTED),
        ({"kind": p.JOIN, "table": game.table}, p.REFUSED, p.ALREADY_SEATED),
        ({"kind": p.CREATE_TABLE, "players": 4}, p.REFUSED, p.ALREADY_SEATED),
        ({"kind": p.REJOIN, "table": game.table, "secret": dee.secret}, p.REFUSED, p.ALREADY_SEATED),
        ({"kind": p.HELLO, "version": p.PROTOCOL_VERSION, "name": "again"}, p.ERROR, p.ALREADY_HELLO),
    ]
    pace = Pacer(spent=6)
    wrong = []
    for i, (message, kind, code) in enumerate(during_round, start=1):
        await pace()
        reply = await send_and_reply(ann, {**message, "id": i})
        if problem := check_reply(reply, i, kind, code):
            wrong.append((message, problem))
    # dee is no host: next_round in a round is still first of all the wrong phase
    reply = await send_and_reply(dee, {"kind": "next_round", "id": 77})
    if problem := check_reply(reply, 77, p.REFUSED, "wrong_phase"):
        wrong.append(("dee next_round", problem))
    assert not wrong, wrong
    assert game.room.table.phase is Phase.ROUND and game.room.seats[3].peer is not None

    # Another connection, at a table of its own: actions in the lobby, during signing, then after the round ended.
    h = await hostile(game, "hal")
    pace = Pacer(spent=1)
    reply = await send_and_reply(h, {"kind": "call", "id": 1})
    assert check_reply(reply, 1, p.REFUSED, p.NOT_SEATED) is None, reply
    created = await h.request(p.CREATE_TABLE, players=4, timing=LONG)
    assert created["kind"] == p.OK
    some_swap = {"kind": "swap", "give": "AS", "slot": 0, "take": "KS"}
    lobby_phase = [
        {"kind": "call"},
        some_swap,
        {"kind": "vote", "yes": True},
        {"kind": "ready"},
        {"kind": "pick_sign", "sign": "fox"},
        {"kind": "next_round"},
    ]
    signing = [
        {"kind": "call"},
        {"kind": "counter"},
        {"kind": "swap", "give": "AS", "slot": 0, "take": "KS"},
        {"kind": "take_channel"},
        {"kind": "release_channel"},
        {"kind": "choose_emoji", "sign": "fox"},
        {"kind": "ask_reshuffle"},
        {"kind": "vote", "yes": True},
        {"kind": "next_round"},
    ]
    after_round = [
        {"kind": "call"},
        {"kind": "counter"},
        {"kind": "swap", "give": "AS", "slot": 0, "take": "KS"},
        {"kind": "take_channel"},
        {"kind": "ask_reshuffle"},
        {"kind": "vote", "yes": True},
    ]
    for i, message in enumerate(lobby_phase, start=100):
        await pace()
        reply = await send_and_reply(h, {**message, "id": i})
        if problem := check_reply(reply, i, p.REFUSED, "not_started"):
            wrong.append(("lobby", message, problem))
    for _ in range(3):
        await pace()
        assert (await h.request(p.ADD_BOT, level="normal"))["kind"] == p.OK
    assert (await h.request(p.START))["kind"] == p.OK
    await h.wait_view(lambda v: v.phase is Phase.SIGNING)
    for i, message in enumerate(signing, start=200):
        await pace()
        reply = await send_and_reply(h, {**message, "id": i})
        if problem := check_reply(reply, i, p.REFUSED, "wrong_phase"):
            wrong.append(("signing", message, problem))
    await pace()
    assert (await h.request("ready"))["kind"] == p.OK
    await h.wait_view(lambda v: v.phase is Phase.ROUND)
    await pace()
    assert (await h.request("call"))["kind"] == p.OK  # a legal call: the round of hal's table ends (R17)
    await h.wait_view(lambda v: v.phase in (Phase.BREAK, Phase.OVER))
    for i, message in enumerate(after_round, start=300):
        await pace()
        reply = await send_and_reply(h, {**message, "id": i})
        if problem := check_reply(reply, i, p.REFUSED, "round_over"):
            wrong.append(("after the round", message, problem))
    assert not wrong, wrong
    assert len(server.lobby.rooms) == 2
    await assert_undisturbed(game)


# --- request ids ---------------------------------------------------------------------------------------------------


async def test_requests_without_a_valid_id_are_bad_requests_and_never_acted_on(game):
    h = await hostile(game)
    bad_ids = [-1, -(2**63), p.MAX_REQUEST_ID + 1, 2**64 - 1, "1", 1.0, 1.5, None, [1], {"n": 1}, True, False]
    for bad in bad_ids:
        reply = await send_and_reply(h, {"kind": p.PING, "id": bad})
        assert reply["kind"] == p.ERROR and reply["code"] == p.BAD_REQUEST, (bad, reply)
        if not isinstance(bad, int):
            assert reply["id"] is None, (bad, reply)
    reply = await send_and_reply(h, {"kind": p.PING})
    assert reply == {"kind": p.ERROR, "id": None, "code": p.BAD_REQUEST, "message": reply["message"]}
    for good in (0, p.MAX_REQUEST_ID):  # the bounds are included
        assert await send_and_reply(h, {"kind": p.PING, "id": good}) == {"kind": p.OK, "id": good}

    # A seated player's real swap without an id (or with a bad one) is not played: it could never be answered.
    ann = game.ann
    table = game.room.table
    ann.pending.clear()
    await ann.drain(0.05)
    view = ann.view
    hand = table.hand(0)
    for bad in (None, -5, "7", 2**64 - 1):
        message = {"kind": "swap", "give": view.hand[0], "slot": 0, "take": view.center[0]}
        if bad is not None:
            message["id"] = bad
        reply = await send_and_reply(ann, message)
        assert reply["kind"] == p.ERROR and reply["code"] == p.BAD_REQUEST, (bad, reply)
    assert table.hand(0) == hand
    assert not any(ev["kind"] == "swapped" and ev["seat"] == 0 for ev in ann.events)
    assert (await h.request(p.PING))["kind"] == p.OK
    await assert_undisturbed(game)


# --- floods ----------------------------------------------------------------------------------------------------------


def pings(first_id: int, count: int) -> bytes:
    return b"".join(packed({"kind": p.PING, "id": i}) for i in range(first_id, first_id + count))


async def test_a_burst_past_the_limit_is_refused_rate_limited_and_then_served_again(game):
    h = await hostile(game)  # hello spent one token
    extra = min(20, FLOOD_DISCONNECT // 2)
    total = REQUEST_BURST + extra
    await h.send_raw(pings(1, total))
    replies = [await next_reply(h) for _ in range(total)]
    assert [r["id"] for r in replies] == list(range(1, total + 1))  # one reply per request, in order
    served = [r for r in replies if r["kind"] == p.OK]
    limited = [r for r in replies if r["kind"] != p.OK]
    assert all(r["kind"] == p.REFUSED and r["reason"] == p.RATE_LIMITED and r["message"] for r in limited), limited
    # The burst (less hello's token, plus what refilled meanwhile) is served; the rest is refused.
    assert REQUEST_BURST - 1 <= len(served) < REQUEST_BURST + extra // 2, len(served)
    assert len(limited) >= extra // 2
    assert replies[0]["kind"] == p.OK and replies[-1]["kind"] == p.REFUSED
    await trio.sleep(3 / REQUEST_RATE)  # a few tokens come back
    assert (await h.request(p.PING))["kind"] == p.OK  # not disconnected
    await assert_undisturbed(game)


async def test_a_persistent_flood_is_disconnected(game):
    h = await hostile(game)
    # Far more than burst + the disconnect threshold, in one write: a refill during processing cannot save it.
    await h.send_raw(pings(1, REQUEST_BURST + 3 * FLOOD_DISCONNECT))
    frames = await frames_until_closed(h, timeout=3)
    replies = [f for f in frames if f["kind"] in REPLY_KINDS]
    limited = [r for r in replies if r["kind"] == p.REFUSED]
    assert len(limited) >= FLOOD_DISCONNECT - 1
    assert all(r["reason"] == p.RATE_LIMITED for r in limited)
    last = replies[-1]
    assert last["kind"] == p.ERROR and last["code"] == p.RATE_LIMITED, last
    assert len(replies) < REQUEST_BURST + 3 * FLOOD_DISCONNECT  # it was cut before the end of the flood
    assert not any(c.name == "mallory" for c in game.server.connections)
    await assert_undisturbed(game)


async def test_a_seated_player_who_floods_is_disconnected_keeps_the_seat_and_can_come_back(game):
    ann, dee = game.ann, game.dee
    table = game.room.table
    hand = table.hand(3)
    flood = b"".join(
        packed({"kind": kind, "id": i, **fields})
        for i, (kind, fields) in enumerate(
            [("vote", {"yes": True}), ("release_channel", {}), (p.PING, {})] * (REQUEST_BURST + 2 * FLOOD_DISCONNECT),
            start=1,
        )
    )
    await dee.send_raw(flood)
    frames = await frames_until_closed(dee, timeout=3)
    errors = [f for f in frames if f["kind"] == p.ERROR]
    assert errors and errors[-1]["code"] == p.RATE_LIMITED
    assert any(f["kind"] == p.REFUSED and f["reason"] == p.RATE_LIMITED for f in frames)

    # The table goes on without dee (R19): the seat is kept, shown disconnected, hand untouched.
    await ann.wait_view(lambda v: not v.seats[3].connected, timeout=3)
    assert table.phase is Phase.ROUND and table.hand(3) == hand
    await assert_undisturbed(game, [ann])

    back = await TestClient.connect(game.server.port, "dee")
    assert (await back.request(p.REJOIN, table=game.table, secret=dee.secret))["kind"] == p.OK
    view = await back.wait_view(lambda v: v.phase is Phase.ROUND)
    assert view.hand == hand and view.seat == 3
    await ann.wait_view(lambda v: v.seats[3].connected)
    game.dee, game.rejoined = back, (back,)
    await assert_undisturbed(game)


# --- a client that stops reading -------------------------------------------------------------------------------------


async def connect_small_buffer(port: int, name: str, rcvbuf: int = 4096) -> TestClient:
    sock = trio.socket.socket(trio.socket.AF_INET, trio.socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)  # before connecting: fixes the TCP window
    await sock.connect(("127.0.0.1", port))
    client = TestClient(trio.SocketStream(sock), name)
    reply = await client.request(p.HELLO, version=p.PROTOCOL_VERSION, name=name)
    assert reply["kind"] == p.OK
    return client


async def public_noise(client: TestClient, pace: Pacer) -> None:
    """One try at a public event from ``client``: a swap, or a change of channel control (cooldowns may refuse)."""
    client.pending.clear()
    view = client.view
    reply = await client.request("swap", give=view.hand[0], slot=1, take=view.center[1])
    assert reply["kind"] == p.OK or reply["reason"] in ("taken", "cooldown"), reply
    await pace()
    toggle = "release_channel" if client.view.channel_held else "take_channel"
    reply = await client.request(toggle)
    assert reply["kind"] == p.OK or reply["reason"] == "cooldown", reply
    await pace()


async def test_a_client_that_never_reads_is_dropped_while_the_table_goes_on(game):
    server = game.server
    ann, dee = game.ann, game.dee
    # The queue's budget is read when a connection is made: only connections made from now on get the short one.
    config = server.config
    server.config = replace(config, max_outbound_bytes=8 * 1024)
    slow = await connect_small_buffer(server.port, "slow")
    server.config = config
    (slow_conn,) = [c for c in server.connections if c.name == "slow"]
    # The kernel's buffers are small too (test-side only), so a few dozen updates fill everything.
    slow_conn.stream.socket.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    # slow takes dee's seat over (with dee's secret), then never reads again.
    assert (await slow.request(p.REJOIN, table=game.table, secret=dee.secret, takeover=True))["kind"] == p.OK
    assert await dee.closed()  # dee was told "replaced" and closed

    # ann (and the bots) make public events: every seat gets an update for each.
    pace = Pacer(spent=10)
    with trio.fail_after(20):
        while slow_conn.closed_reason is None:
            await public_noise(ann, pace)
    assert slow_conn.closed_reason == "slow_reader"
    await ann.wait_view(lambda v: not v.seats[3].connected, timeout=3)  # within the flush grace
    with trio.fail_after(3):
        while slow_conn in server.connections:
            await trio.sleep(0.05)
    assert game.room.seats[3].peer is None and not game.room.table.is_connected(3)
    assert game.room.table.phase is Phase.ROUND
    await assert_undisturbed(game, [ann])

    # The seat waits for its player (R19): the secret still works.
    back = await TestClient.connect(server.port, "dee")
    assert (await back.request(p.REJOIN, table=game.table, secret=dee.secret))["kind"] == p.OK
    await back.wait_view(lambda v: v.phase is Phase.ROUND and len(v.hand) == 4)
    await ann.wait_view(lambda v: v.seats[3].connected)
    game.dee, game.rejoined = back, (back,)
    await assert_undisturbed(game)
    await slow.aclose()


def test_the_hostile_frames_are_what_they_claim():
    """Guards for the fixtures above: the 'junk' really fails where the tests expect it to."""
    decoder = FrameDecoder()
    with pytest.raises(ProtocolError) as caught:
        decoder.feed(BROKEN_STREAMS["junk_http_request"][0])
    assert caught.value.code == "frame_too_large"
    assert len(filler_frame(MAX_FRAME_BYTES)) == MAX_FRAME_BYTES + 4
