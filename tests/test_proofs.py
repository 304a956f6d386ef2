"""A ``moved`` request that carries a secret goes only to a server that proved it holds it (protocol 8, section 21).

The client core's side without a network: after a ``moved``, ``repeat`` sends ``prove`` (never the secret), checks
the proof against what it knows, and only then sends the request; any other answer is the request's, refused
``unproven_move``. The lobby's side in one process: ``prove`` answered from what the server keeps (digests), bound to
the nonce and to the server's address, refused where the table is not, counted as a guess for a password.
"""

from __future__ import annotations

from typing import Any

import pytest
import trio

from quatro_shared import messages as m
from quatro_shared import proofs
from quatro_shared import protocol as p
from quatro_shared.client import MAX_MOVES, Answered, ClientCore, Place
from quatro_shared.framing import FrameDecoder, encode
from quatro_shared.wire import request_from_wire, to_wire

from helpers.lobby_peer import RecordingPeer
from quatro_server.tables.credentials import hash_password, password_proof_key
from quatro_server.tables.lobby import Lobby

SECRET = "s3cret-of-the-seat-XYZ"
PASSWORD = "hunter2-table"
#: Where the ``moved`` sends the client: the address a proof must be bound to.
HOST, PORT = "10.0.0.9", 7009


def frames(data: bytes) -> list[dict[str, Any]]:
    return FrameDecoder().feed(data)


def greeted(core: ClientCore) -> None:
    request_id, _ = core.hello(0.0)
    welcome = {"kind": "ok", "id": request_id, "version": p.PROTOCOL_VERSION, "server": "quatro", "profiles": []}
    core.receive_data(encode({**welcome, "tables": [], "games": ["quatro"]}), 0.0)


def moved(core: ClientCore, body: m.RequestBody, host: str = HOST, port: int = PORT) -> None:
    """``body`` sent and answered ``moved`` to ``host``:``port``; the shell has connected there and said hello."""
    request_id, _ = core.send(body, 0.0)
    [event] = core.receive_data(encode({"kind": "moved", "id": request_id, "table": 7, "host": host, "port": port}), 0)
    assert isinstance(event, Answered) and isinstance(event.reply, m.MovedTo)
    assert core.redirect is not None and core.redirect.connect
    core.connection_lost()
    greeted(core)


def answer(core: ClientCore, request_id: int, reply: dict[str, Any]) -> Answered:
    [event] = core.receive_data(encode({"id": request_id, **reply}), 0.0)
    assert isinstance(event, Answered)
    return event


def right_secret_proof(prove: dict[str, Any], host: str = HOST, port: int = PORT) -> dict[str, Any]:
    return {"kind": "ok", "proofs": [proofs.proof(proofs.secret_key(SECRET), prove["nonce"], host, port)]}


def seated_core() -> ClientCore:
    core = ClientCore("ann")
    greeted(core)
    core.place = Place(7, 2, SECRET)
    return core


# --- the client core ------------------------------------------------------------------------------


def test_a_moved_rejoin_sends_a_prove_first_and_its_secret_only_after_a_right_proof():
    core = seated_core()
    moved(core, m.Rejoin(7, SECRET))
    prove_id, data = core.repeat(0.0)
    assert SECRET.encode() not in data
    [prove] = frames(data)
    assert prove["kind"] == p.PROVE and prove["table"] == 7 and prove["of"] == proofs.OF_SECRET
    assert prove["seat"] == 2  # the core knows its seat: one proof asked for
    assert len(bytes.fromhex(prove["nonce"])) == p.MIN_NONCE_BYTES
    assert core.redirect is None  # nothing to repeat until the proof is in

    event = answer(
        core, prove_id, {**right_secret_proof(prove), "proofs": ["00" * 32, *right_secret_proof(prove)["proofs"]]}
    )
    assert isinstance(event.reply, m.Ok) and isinstance(event.request, m.Prove)
    assert core.redirect is not None and not core.redirect.connect and core.redirect.proven  # on this same link
    rejoin_id, data = core.repeat(0.0)
    [rejoin] = frames(data)
    assert rejoin["kind"] == p.REJOIN and rejoin["secret"] == SECRET and core.redirect is None
    event = answer(core, rejoin_id, {"kind": "ok", "table": 7, "seat": 2})
    assert isinstance(event.reply, m.Ok) and isinstance(event.reply.payload, m.Rejoined)


def test_each_nonce_is_fresh():
    nonces = set()
    for _ in range(5):
        core = seated_core()
        moved(core, m.Rejoin(7, SECRET))
        nonces.add(frames(core.repeat(0.0)[1])[0]["nonce"])
    assert len(nonces) == 5


@pytest.mark.parametrize(
    "reply",
    [
        {"kind": "ok", "proofs": ["00" * 32]},  # a made-up proof
        {"kind": "ok", "proofs": []},
        {"kind": "ok"},  # no proofs at all: unreadable, an error
        {"kind": "ok", "proofs": "nope"},
        {"kind": "refused", "reason": p.NO_SUCH_TABLE, "message": "no table 7"},
        {"kind": "refused", "reason": p.NO_SUCH_SEAT, "message": "no seat"},
        {"kind": "error", "code": p.UNKNOWN_KIND, "message": "what is prove?"},  # a server of protocol 7
    ],
    ids=["wrong", "none", "missing", "malformed", "no_such_table", "no_such_seat", "unknown_kind"],
)
def test_any_answer_but_a_right_proof_refuses_the_rejoin_unproven_move_and_never_sends_the_secret(reply):
    core = seated_core()
    moved(core, m.Rejoin(7, SECRET))
    prove_id, data = core.repeat(0.0)
    event = answer(core, prove_id, reply)
    assert isinstance(event.reply, m.Refused) and event.reply.reason == p.UNPROVEN_MOVE, event.reply
    assert isinstance(event.request, m.Rejoin)  # the answer to the request the caller asked
    assert "nothing secret was sent" in event.reply.message and f"{HOST}:{PORT}" in event.reply.message
    assert core.redirect is None
    with pytest.raises(ValueError):
        core.repeat(0.0)  # nothing left to send
    assert core.place == Place(7, 2, SECRET)  # the seat is still the player's, wherever it really is


def test_a_proof_relayed_from_the_real_server_is_bound_to_its_address_and_refused():
    """A forger asks the table's real server with the client's nonce: that proof names the real server's address."""
    core = seated_core()
    moved(core, m.Rejoin(7, SECRET), host="10.6.6.6", port=6666)  # the forger's listener
    prove_id, data = core.repeat(0.0)
    [prove] = frames(data)
    relayed = right_secret_proof(prove, HOST, PORT)  # what the real server at HOST:PORT answers that nonce
    event = answer(core, prove_id, relayed)
    assert isinstance(event.reply, m.Refused) and event.reply.reason == p.UNPROVEN_MOVE


def test_a_rejoin_of_a_seat_the_core_does_not_know_asks_every_seat_s_proof():
    core = ClientCore("ann")
    greeted(core)
    moved(core, m.Rejoin(7, SECRET))  # a remembered secret (the terminal's plan), no place in this core yet
    prove_id, data = core.repeat(0.0)
    [prove] = frames(data)
    assert "seat" not in prove
    event = answer(core, prove_id, {"kind": "ok", "proofs": ["11" * 32, *right_secret_proof(prove)["proofs"]]})
    assert isinstance(event.reply, m.Ok) and core.redirect is not None


def test_a_moved_password_join_proves_the_password_with_the_servers_salt_then_sends_it():
    stored = hash_password(PASSWORD)
    salt, key = password_proof_key(stored) or ("", b"")
    core = ClientCore("bob")
    greeted(core)
    moved(core, m.Join(7, PASSWORD))
    prove_id, data = core.repeat(0.0)
    assert PASSWORD.encode() not in data
    [prove] = frames(data)
    assert prove["of"] == proofs.OF_PASSWORD and "seat" not in prove
    good = {"kind": "ok", "proofs": [proofs.proof(key, prove["nonce"], HOST, PORT)], "salt": salt}
    answer(core, prove_id, good)
    assert core.redirect is not None and not core.redirect.connect
    _, data = core.repeat(0.0)
    [join] = frames(data)
    assert join["kind"] == p.JOIN and join["password"] == PASSWORD


@pytest.mark.parametrize(
    "salt",
    [None, "plain", "scrypt$4096$8$1", "scrypt$4096$8$1$zz", f"scrypt${2**20}$8$1$00", "bcrypt$4096$8$1$00"],
    ids=["none", "plain", "short", "bad_hex", "too_costly", "other_scheme"],
)
def test_a_password_proof_with_a_salt_the_client_cannot_use_is_unproven(salt):
    core = ClientCore("bob")
    greeted(core)
    moved(core, m.Watch(7, PASSWORD))
    prove_id, data = core.repeat(0.0)
    event = answer(core, prove_id, {"kind": "ok", "proofs": ["00" * 32], "salt": salt})
    assert isinstance(event.reply, m.Refused) and event.reply.reason == p.UNPROVEN_MOVE
    assert isinstance(event.request, m.Watch)


def test_a_request_without_a_secret_follows_moved_as_before():
    for body in (m.Join(7), m.Watch(7), m.Join(7, seat=1)):
        core = ClientCore("cy")
        greeted(core)
        moved(core, body)
        _, data = core.repeat(0.0)
        [sent] = frames(data)
        assert sent["kind"] == body.kind and core.redirect is None


def test_a_prove_answered_moved_is_followed_and_proved_again_there():
    core = seated_core()
    moved(core, m.Rejoin(7, SECRET), port=7001)
    prove_id, _ = core.repeat(0.0)
    event = answer(core, prove_id, {"kind": "moved", "table": 7, "host": HOST, "port": PORT})
    assert isinstance(event.reply, m.MovedTo) and isinstance(event.request, m.Rejoin)
    assert core.redirect is not None and core.redirect.connect and core.redirect.request == m.Rejoin(7, SECRET)
    core.connection_lost()
    greeted(core)
    prove_id, data = core.repeat(0.0)
    [prove] = frames(data)
    assert prove["kind"] == p.PROVE
    answer(core, prove_id, right_secret_proof(prove))
    assert frames(core.repeat(0.0)[1])[0]["kind"] == p.REJOIN


def test_proves_answered_moved_count_toward_max_moves():
    core = seated_core()
    moved(core, m.Rejoin(7, SECRET), port=7000)
    for hop in range(MAX_MOVES - 1):
        prove_id, _ = core.repeat(0.0)
        answer(core, prove_id, {"kind": "moved", "table": 7, "host": HOST, "port": 7001 + hop})
        core.connection_lost()
        greeted(core)
    prove_id, _ = core.repeat(0.0)
    event = answer(core, prove_id, {"kind": "moved", "table": 7, "host": HOST, "port": 7100})
    assert isinstance(event.reply, m.Refused) and event.reply.reason == p.NO_SUCH_TABLE and core.redirect is None


def test_a_link_lost_during_the_prove_sends_nothing_after_it():
    core = seated_core()
    moved(core, m.Rejoin(7, SECRET))
    prove_id, _ = core.repeat(0.0)
    assert prove_id in core.connection_lost()
    assert core.redirect is None
    greeted(core)
    assert core.receive_data(encode({"kind": "ok", "id": prove_id, "proofs": []}), 0.0)[0].__class__.__name__ == (
        "ServerError"
    )


def test_the_proof_is_the_documented_hmac():
    import hashlib
    import hmac

    nonce = "ab" * 16
    key = hashlib.sha256(SECRET.encode()).digest()
    want = hmac.new(key, bytes.fromhex(nonce) + b"|10.0.0.9:7009", hashlib.sha256).hexdigest()
    assert proofs.proof(proofs.secret_key(SECRET), nonce, HOST, PORT) == want
    assert proofs.address_text("", 7001) == ":7001" and proofs.address_text("::1", 7001) == "[::1]:7001"


# --- the server's side -------------------------------------------------------------------------------


class _Directory:
    """As much of a directory as the lobby reads (one table here, table 99 held elsewhere): this server's address
    as the others give it is what its proofs are bound to."""

    def __init__(self, address: str) -> None:
        self.address = address

    def holder(self, table: int) -> tuple[str, int] | None:
        return ("10.0.0.2", 7002) if table == 99 else None

    def new_id(self) -> int:
        return 1

    def others(self) -> tuple[m.TableSummary, ...]:
        return ()

    def changed(self) -> None:
        pass


def ask(lobby: Lobby, peer: RecordingPeer, kind: str, **fields: Any) -> dict[str, Any]:
    request = request_from_wire({"kind": kind, "id": 1, **fields})
    return to_wire(lobby.handle(peer, request, trio.current_time(), greeted=kind != p.HELLO))


def lobby_with_table(password: str | None = None) -> tuple[Lobby, dict[str, Any]]:
    lobby = Lobby()
    lobby.directory = _Directory(f"{HOST}:{PORT}")  # type: ignore[assignment]
    ann = RecordingPeer("ann")
    ask(lobby, ann, p.HELLO, version=p.PROTOCOL_VERSION, name="ann")
    created = ask(lobby, ann, p.CREATE_TABLE, players=4, **({} if password is None else {"password": password}))
    assert created["kind"] == p.OK, created
    return lobby, created


async def test_prove_answers_the_right_proof_for_the_seat_secret_bound_to_the_servers_address():
    lobby, created = lobby_with_table()
    bob = RecordingPeer("bob")
    ask(lobby, bob, p.HELLO, version=p.PROTOCOL_VERSION, name="bob")
    joined = ask(lobby, bob, p.JOIN, table=created["table"])
    nonce = "c0" * 16
    key0, key1 = proofs.secret_key(created["secret"]), proofs.secret_key(joined["secret"])
    eve = RecordingPeer("eve")
    ask(lobby, eve, p.HELLO, version=p.PROTOCOL_VERSION, name="eve")
    one = ask(lobby, eve, p.PROVE, table=created["table"], nonce=nonce, of=proofs.OF_SECRET, seat=0)
    assert one["kind"] == p.OK and one["proofs"] == [proofs.proof(key0, nonce, HOST, PORT)]
    assert created["secret"] not in str(one) and joined["secret"] not in str(one)
    every = ask(lobby, eve, p.PROVE, table=created["table"], nonce=nonce, of=proofs.OF_SECRET)
    assert every["proofs"] == [proofs.proof(key0, nonce, HOST, PORT), proofs.proof(key1, nonce, HOST, PORT)]
    # Another nonce, another proof; another address (a listener of a forger's), another proof.
    other = ask(lobby, eve, p.PROVE, table=created["table"], nonce="c1" * 16, of=proofs.OF_SECRET, seat=0)
    assert other["proofs"] != one["proofs"]
    assert proofs.proof(key0, nonce, "10.6.6.6", 6666) not in every["proofs"]
    # Nothing changed where it was asked: eve sits nowhere, the seats are as they were.
    assert eve.room is None and ask(lobby, eve, p.REJOIN, table=created["table"], secret="guess")["kind"] == p.REFUSED


async def test_prove_of_a_password_answers_the_scrypt_keys_proof_with_its_salt_and_counts_as_a_guess():
    lobby, created = lobby_with_table(PASSWORD)
    eve = RecordingPeer("eve")
    eve.origin = "10.6.6.6"  # type: ignore[attr-defined]
    ask(lobby, eve, p.HELLO, version=p.PROTOCOL_VERSION, name="eve")
    nonce = "d0" * 16
    reply = ask(lobby, eve, p.PROVE, table=created["table"], nonce=nonce, of=proofs.OF_PASSWORD)
    assert reply["kind"] == p.OK and reply["salt"].startswith("scrypt$") and reply["salt"].count("$") == 4
    key = proofs.password_key(reply["salt"], PASSWORD)
    assert key is not None and reply["proofs"] == [proofs.proof(key, nonce, HOST, PORT)]
    assert PASSWORD not in str(reply)
    # Each password proof counts as a guess from its address: past the free ones, it waits as a wrong password does.
    for _ in range(5):
        last = ask(lobby, eve, p.PROVE, table=created["table"], nonce=nonce, of=proofs.OF_PASSWORD)
    assert last["kind"] == p.REFUSED and last["reason"] == p.RATE_LIMITED and last["wait_ms"] > 0


async def test_prove_where_the_table_is_not_is_moved_or_refused_and_a_table_with_no_password_has_none_to_prove():
    lobby, created = lobby_with_table()
    eve = RecordingPeer("eve")
    ask(lobby, eve, p.HELLO, version=p.PROTOCOL_VERSION, name="eve")
    nonce = "e0" * 16
    gone = ask(lobby, eve, p.PROVE, table=created["table"] + 50, nonce=nonce, of=proofs.OF_SECRET)
    assert gone["kind"] == p.REFUSED and gone["reason"] == p.NO_SUCH_TABLE
    elsewhere = ask(lobby, eve, p.PROVE, table=99, nonce=nonce, of=proofs.OF_SECRET)
    assert elsewhere == {"kind": p.MOVED, "id": 1, "table": 99, "host": "10.0.0.2", "port": 7002}
    none = ask(lobby, eve, p.PROVE, table=created["table"], nonce=nonce, of=proofs.OF_PASSWORD)
    assert none["kind"] == p.REFUSED and none["reason"] == p.BAD_PASSWORD
    for seat in (1, 4, -1):  # a free seat has no secret; 4 and -1 are no seats
        refused = ask(lobby, eve, p.PROVE, table=created["table"], nonce=nonce, of=proofs.OF_SECRET, seat=seat)
        assert refused["kind"] == p.REFUSED and refused["reason"] == p.NO_SUCH_SEAT, (seat, refused)
    request = request_from_wire({"kind": p.PROVE, "id": 2, "table": created["table"], "nonce": nonce, "of": "secret"})
    early = to_wire(lobby.handle(RecordingPeer("gus"), request, trio.current_time(), greeted=False))
    assert early["kind"] == p.ERROR and early["code"] == p.HELLO_FIRST


def test_the_stored_password_hash_is_unchanged_in_form():
    """The journal keeps ``scrypt$N$r$p$salt$key`` as before (journal.md): the proof reads it, nothing new is stored."""
    stored = hash_password(PASSWORD)
    assert stored.count("$") == 5 and len(bytes.fromhex(stored.rsplit("$", 1)[1])) == proofs.PASSWORD_KEY_BYTES
