"""The acceptance table walked whole through a real Lobby: in every state a connection can be in (before hello, in
the lobby, seated before, during and after a match, as the host or not), every request kind either reaches its
handler, or is answered exactly the table's refusal and changes nothing."""

from __future__ import annotations

from typing import Any

import pytest

from quatro_shared import messages as m
from quatro_shared import proofs
from quatro_shared import protocol as p
from quatro_shared.wire import request_from_wire, to_wire

from helpers.lobby_peer import RecordingPeer
from quatro_server import games
from quatro_server.tables import accepts
from quatro_server.tables.accepts import PeerState
from quatro_server.tables.lobby import Lobby
from quatro_server.timing import Timing

#: One well-formed request of every kind a client may send.
FRAMES: dict[str, dict[str, Any]] = {
    p.HELLO: {"version": p.PROTOCOL_VERSION, "name": "ann"},
    p.PING: {},
    p.LIST_TABLES: {},
    p.RENAME: {"name": "zed"},
    p.CHAT: {"text": "hello all"},
    p.CREATE_TABLE: {"players": 4},
    p.JOIN: {"table": 1},
    p.REJOIN: {"table": 1, "secret": "not-a-secret"},
    p.LEAVE: {},
    p.MOVE: {"seat": 3},
    p.ADD_BOT: {},
    p.REMOVE_BOT: {"seat": 1},
    p.START: {},
    p.REMATCH: {},
    p.RESYNC: {},
    p.PAST_MATCHES: {},
    p.REPLAY: {"table": 1, "seat": 0},
    p.WATCH: {"table": 1},
    p.WATCHERS: {"open": False},
    p.LEADERBOARD: {},
    p.PLAYER_CARD: {"person": "bot:expert"},
    p.PROVE: {"table": 1, "nonce": "00" * p.MIN_NONCE_BYTES, "of": proofs.OF_SECRET, "seat": 0},
    "ready": {},
    "pick_sign": {"sign": "rocket"},
    "swap": {"give": "AS", "slot": 0, "take": "KS"},
    "take_channel": {},
    "release_channel": {},
    "choose_emoji": {"sign": None},
    "call": {},
    "counter": {"team": None},
    "ask_reshuffle": {},
    "vote": {"yes": True},
    "next_round": {},
    "give": {"piece": 0},
    "place": {"square": 0},
    "next_game": {},
}

#: Every state, and whether the connection asking is the table's host there.
PLACES = [
    (PeerState.GREETING, False),
    (PeerState.LOBBY, False),
    (PeerState.WAITING, True),
    (PeerState.WAITING, False),
    (PeerState.PLAYING, True),
    (PeerState.PLAYING, False),
    (PeerState.OVER, True),
    (PeerState.OVER, False),
    (PeerState.WATCHING, False),
]


def ask(
    lobby: Lobby, peer: RecordingPeer, kind: str, now: float, greeted: bool = True, **fields: Any
) -> dict[str, Any]:
    request = request_from_wire({"kind": kind, "id": 1, **fields})
    return to_wire(lobby.handle(peer, request, now, greeted=greeted))


def placed(state: PeerState, host: bool) -> tuple[Lobby, RecordingPeer]:
    """A lobby and a connection in ``state``: the host of its table (seat 0), or a guest in seat 2."""
    lobby = Lobby(timing_profiles={"one": Timing(target_score=1)}, seed=5)
    opener, guest = RecordingPeer("ann"), RecordingPeer("bob")
    if state in (PeerState.GREETING, PeerState.LOBBY):
        return lobby, guest
    if state is PeerState.WATCHING:
        assert ask(lobby, opener, p.CREATE_TABLE, 0.0, players=4)["kind"] == p.OK
        assert ask(lobby, guest, p.WATCH, 0.0, table=1)["kind"] == p.OK
        assert accepts.state_of(guest, True, guest in lobby.watching) is state
        return lobby, guest
    assert ask(lobby, opener, p.CREATE_TABLE, 0.0, players=4)["kind"] == p.OK
    assert ask(lobby, guest, p.JOIN, 0.0, table=1, seat=2)["kind"] == p.OK
    for seat in (1, 3):
        assert ask(lobby, opener, p.ADD_BOT, 0.0, seat=seat)["kind"] == p.OK
    if state is not PeerState.WAITING:
        assert ask(lobby, opener, p.START, 0.0)["kind"] == p.OK
        if state is PeerState.OVER:
            for peer in (opener, guest):
                assert ask(lobby, peer, "ready", 0.1)["kind"] == p.OK
            assert ask(lobby, opener, "call", 0.2)["kind"] == p.OK  # right or wrong, a team reaches 1
    peer = opener if host else guest
    assert accepts.state_of(peer, greeted=True) is state
    return lobby, peer


def test_every_request_kind_has_a_row_and_a_handler():
    lobby = Lobby()
    assert set(FRAMES) == set(p.LOBBY_KINDS) | games.ACTION_KINDS
    assert set(lobby._handlers) == set(FRAMES)
    for state in PeerState:
        assert set(accepts.ACCEPTS[state]) == set(p.LOBBY_KINDS) | {accepts.ACTION}


#: What a server about to restart refuses wherever the table would take it: whatever would begin a match.
BEGINS_A_MATCH = {p.CREATE_TABLE, p.JOIN, p.START, p.REMATCH}


@pytest.mark.parametrize("draining", [False, True], ids=["serving", "draining"])
@pytest.mark.parametrize(("state", "host"), PLACES, ids=[f"{s.value}-{'host' if h else 'guest'}" for s, h in PLACES])
def test_each_state_takes_what_its_table_says_and_refuses_the_rest_in_the_table_s_words(state, host, draining):
    """Taken requests reach their handler (a stand-in that answers ok); a refused one gets the table's reason and
    message, and leaves the connection where it was. A seated connection's action of another game is refused by
    its table's game (``unknown_action``) before the state is asked. A draining server refuses ``draining`` what
    would begin a match and the table takes; what the table refuses is refused for the table's reason still."""
    for kind, fields in FRAMES.items():
        lobby, peer = placed(state, host)
        lobby.draining = draining
        reached: list[str] = []

        def stand_in(peer: Any, request: m.Request, now: float, kind: str = kind) -> m.Reply:
            reached.append(request.kind)
            return m.Ok(request.id)

        lobby._handlers[kind] = stand_in
        where = (peer.room, peer.seat, lobby.watching.get(peer))
        reply = ask(lobby, peer, kind, 1.0, greeted=state is not PeerState.GREETING, **fields)
        verdict = accepts.ACCEPTS[state][accepts.ACTION if kind in games.ACTION_KINDS else kind]  # the table itself
        if state in accepts.SEATED and kind in games.ACTION_KINDS - games.DEFAULT_GAME.action_kinds:
            assert reply["kind"] == p.REFUSED and reply["reason"] == "unknown_action", (kind, reply)
            assert reached == []
            continue
        if verdict is accepts.HOST:
            verdict = accepts.TAKE if host else accepts.NOT_HOST
        if draining and verdict is accepts.TAKE and kind in BEGINS_A_MATCH:
            verdict = accepts.DRAINING
            assert verdict.reason == "draining" and "restart" in verdict.message
        if isinstance(verdict, accepts.Refusal):
            assert reached == [], (kind, state)
            expected = (
                {"kind": p.ERROR, "id": 1, "code": verdict.reason, "message": verdict.message}
                if verdict.error
                else {"kind": p.REFUSED, "id": 1, "reason": verdict.reason, "message": verdict.message, "wait_ms": None}
            )
            assert reply == expected, (kind, state)
            assert (peer.room, peer.seat, lobby.watching.get(peer)) == where
        else:
            assert reached == [kind], (kind, state, reply)
            assert reply == {"kind": p.OK, "id": 1}


def test_one_message_for_each_refusal_reason_of_the_lobby():
    """Refusals said both by the table and by a handler (a started table one joins, R19) say the same words."""
    lobby, host = placed(PeerState.PLAYING, host=True)
    newcomer = RecordingPeer("cy")
    joined = ask(lobby, newcomer, p.JOIN, 1.0, table=1)
    moved = ask(lobby, host, p.MOVE, 1.0, seat=3)
    assert joined["reason"] == moved["reason"] == p.MATCH_STARTED
    assert joined["message"] == moved["message"] == accepts.MATCH_STARTED.message
    for kind, fields in (
        (p.CREATE_TABLE, {"players": 4}),
        (p.JOIN, {"table": 1}),
        (p.REJOIN, {"table": 1, "secret": "x"}),
    ):
        assert ask(lobby, host, kind, 1.0, **fields)["message"] == accepts.ALREADY_SEATED.message
    loner = RecordingPeer("dee")
    for kind in (p.LEAVE, p.START, "swap", p.RESYNC):
        assert ask(lobby, loner, kind, 1.0, **FRAMES[kind])["message"] == accepts.NOT_SEATED.message
