"""The typed messages of quatro_shared.messages on the wire: each one round-trips, and requests are checked at the door."""

from __future__ import annotations

import pytest

from quatro_shared import messages as m
from quatro_shared import protocol as p
from quatro_shared.games.quatro.actions import Swap
from quatro_shared.games.quatro.events import PlayerReady
from quatro_shared.games.quatro.update import Update
from quatro_shared.games.quatro.views import OwnTimers
from quatro_shared.tables import TablePhase
from quatro_shared.wire import WireError, push_from_wire, reply_from_wire, request_from_wire, request_to_wire, to_wire

from helpers.engine import new_table
from quatro_server.games.quatro.engine import clock, view

REQUEST_SAMPLES: list[m.LobbyRequest] = [
    m.Hello(p.PROTOCOL_VERSION, "Zoë 👩‍💻"),
    m.ListTables(),
    m.CreateTable(6, "fast", "pw"),
    m.CreateTable(4),
    m.Join(3, "pw", seat=2),
    m.Join(3, team=1),
    m.Rejoin(3, "s3cret"),
    m.Leave(),
    m.Rename("ann"),
    m.AddBot(seat=1, level="hard"),
    m.AddBot(),
    m.RemoveBot(1),
    m.Start(),
    m.Rematch(),
    m.Move(3),
    m.Chat("again?"),
    m.Ping(),
    m.Resync(),
    m.PastMatches(),
    m.PastMatches(offset=20),
    m.Replay(3, 2),
    m.Replay(3, 2, match=1, start=40, password="pw", secret="s3cret"),
    m.Watch(3),
    m.Watch(3, password="s3cret"),
    m.Watchers(False),
    m.Hello(p.PROTOCOL_VERSION, "ann", person="a-random-key-of-ann-0123"),
    m.CreateTable(2, game="quarto", rated=False),
    m.Leaderboard(),
    m.Leaderboard("quarto", 20),
    m.PlayerCard(),
    m.PlayerCard(person="bot:expert"),
    m.PlayerCard(name="ann"),
    m.Prove(3, "ab" * p.MIN_NONCE_BYTES, "secret", seat=1),
    m.Prove(3, "CD" * p.MAX_NONCE_BYTES, "password"),
]

SUMMARY = m.TableSummary(1, "quatro", 4, 2, 1, TablePhase.LOBBY, "standard", False, (0, 0))
SEATING = m.Seating(
    1,
    4,
    TablePhase.PLAYING,
    None,
    {"round_length": 180.0, "target_score": 5},
    "standard",
    tuple(m.SeatInfo(i, None if i == 3 else f"p{i}", "normal" if i == 2 else None, i != 3, i < 2) for i in range(4)),
)

REPLY_SAMPLES: list[tuple[m.Reply, type[m.Payload]]] = [
    (m.Ok(1, m.Welcome(p.PROTOCOL_VERSION, "quatro", ("fast", "standard"), (SUMMARY,))), m.Welcome),
    (m.Ok(2, m.Tables((SUMMARY, SUMMARY))), m.Tables),
    (m.Ok(3, m.Seated(1, 0, "secret")), m.Seated),
    (m.Ok(4, m.Rejoined(1, 0)), m.Rejoined),
    (m.Ok(5, m.Renamed("bob")), m.Renamed),
    (m.Ok(6, m.BotAdded(2)), m.BotAdded),
    (m.Ok(7), m.Done),
    (
        m.Ok(
            10,
            m.Matches(
                (
                    m.MatchSummary(
                        3,
                        0,
                        "quatro",
                        4,
                        ("ann", "normal-bot-1", "", ""),
                        (1,),
                        1_790_000_000,
                        1_790_000_600,
                        (5, 3),
                        False,
                    ),
                ),
                True,
            ),
        ),
        m.Matches,
    ),
    (
        m.Ok(
            11,
            m.ReplayFrames(
                3,
                0,
                2,
                "quatro",
                4,
                ("ann", "normal-bot-1", "bob", "normal-bot-3"),
                (1, 3),
                {"round_length": 180.0},
                90,
                0,
                ({"kind": "update", "table": 3, "seq": 1},),
                (0,),
                (m.ReplayNote(0, ("The truth of round 1", "nobody held four of a kind")),),
            ),
        ),
        m.ReplayFrames,
    ),
    (m.Refused(8, "cooldown", "not yet", 1200), m.Done),
    (m.Refused(9, "taken", "too slow", None), m.Done),
    (m.Error(None, p.HELLO_FIRST, "say hello"), m.Done),
    (
        m.Ok(10, m.Standings("quatro", 0, 1, (m.Standing(1, "bot:expert", "expert bot", True, 16.9, 12, 11),))),
        m.Standings,
    ),
    (
        m.Ok(
            11,
            m.Card(
                "p:" + "0" * 32,
                "ann",
                False,
                (m.GameRecord("quatro", 2, 1.5, 26.1, 8.2, 3, 2, (m.Tally("calls_right", 4),)),),
            ),
        ),
        m.Card,
    ),
    (m.Ok(12, m.Proof(("9a" * 32, "4b" * 32))), m.Proof),
    (m.Ok(13, m.Proof(("9a" * 32,), "scrypt$4096$8$1$" + "00" * 16)), m.Proof),
]


def test_every_lobby_request_has_a_sample():
    assert {type(sample) for sample in REQUEST_SAMPLES} == set(m.LOBBY_REQUESTS)
    assert {cls.kind for cls in m.LOBBY_REQUESTS} == set(p.LOBBY_KINDS)


@pytest.mark.parametrize("body", REQUEST_SAMPLES, ids=repr)
def test_every_lobby_request_round_trips(body):
    request = request_from_wire(request_to_wire(7, body))
    assert (request.id, request.kind, request.body, request.invalid) == (7, body.kind, body, None)


def test_a_request_leaves_out_its_absent_optional_fields():
    assert request_to_wire(1, m.Join(3)) == {"kind": "join", "id": 1, "table": 3}


@pytest.mark.parametrize("fields", [{"table": 3, "seat": None}, {"table": 3, "password": None}, {"table": None}])
def test_null_is_not_absent_in_a_lobby_request(fields):
    with pytest.raises(p.RequestError) as caught:
        request_from_wire({"kind": "join", "id": 1, **fields})
    assert caught.value.code == p.BAD_REQUEST


@pytest.mark.parametrize(
    ("frame", "code"),
    [
        ({"kind": "ping", "id": True}, p.BAD_REQUEST),
        ({"kind": "ping", "id": -1}, p.BAD_REQUEST),
        ({"kind": "ping", "id": 2**53 + 1}, p.BAD_REQUEST),
        ({"kind": "ping", "id": 1.0}, p.BAD_REQUEST),
        ({"kind": "ping", "id": 1, "extra": 1}, p.BAD_REQUEST),
        ({"kind": "connect", "id": 1}, p.UNKNOWN_KIND),
        ({"kind": 5, "id": 1}, p.UNKNOWN_KIND),
        ({"kind": "hello", "id": 1, "version": 1, "name": "a\u202eb"}, p.BAD_REQUEST),
        ({"kind": "add_bot", "id": 1, "level": "x" * (p.MAX_LEVEL_LEN + 1)}, p.BAD_REQUEST),
        ({"kind": "create_table", "id": 1, "players": 4, "timing": "x" * (p.MAX_PROFILE_LEN + 1)}, p.BAD_REQUEST),
    ],
)
def test_a_request_that_does_not_fit_is_refused_at_the_door(frame, code):
    with pytest.raises(p.RequestError) as caught:
        request_from_wire(frame)
    assert caught.value.code == code


def test_a_game_action_that_does_not_fit_comes_back_marked_for_the_lobby_to_answer():
    """The lobby answers not_seated before a bad field (protocol section 7), so the door does not answer alone."""
    request = request_from_wire({"kind": "swap", "id": 4, "give": "ZZ", "slot": 1, "take": "QH"})
    assert request.body is None and isinstance(request.invalid, WireError) and request.invalid.code == "bad_field"
    good = request_from_wire({"kind": "swap", "id": 5, "give": "KS", "slot": 1, "take": "QH"})
    assert good.body == Swap("KS", 1, "QH") and good.invalid is None


@pytest.mark.parametrize(("reply", "payload"), REPLY_SAMPLES, ids=repr)
def test_every_reply_round_trips_with_its_requests_payload(reply, payload):
    assert reply_from_wire(to_wire(reply), payload) == reply


def test_an_ok_carries_its_payload_beside_kind_and_id():
    assert to_wire(m.Ok(3, m.Seated(1, 0, "s"))) == {"kind": "ok", "id": 3, "table": 1, "seat": 0, "secret": "s"}
    assert to_wire(m.Ok(4)) == {"kind": "ok", "id": 4}
    assert to_wire(m.refused(5, "cooldown", "not yet", 1.2344)) == {
        "kind": "refused",
        "id": 5,
        "reason": "cooldown",
        "message": "not yet",
        "wait_ms": 1234,
    }


def test_every_request_kind_has_a_reply_payload():
    assert set(m.REPLY_PAYLOADS) == set(p.LOBBY_KINDS)
    assert m.GAME_ACTION_PAYLOAD is m.Done


def test_every_push_round_trips():
    table = new_table(4)
    table.start(0.0)
    pushes = [
        Update(1, 3, True, 0, (PlayerReady(0),), view(table, 0, 0.0)),
        Update(1, 4, False, 0, (PlayerReady(1),), clock=clock(table, 0.5), own=OwnTimers(120, 0)),
        SEATING,
        m.LobbyList((SUMMARY,)),
        m.Bye(m.BYE_SHUTDOWN, "going away"),
        m.ChatLine(3, 1, "bob", "again?"),
        m.ChatLine(None, None, "eve", "anyone for a game?"),
        m.WatchEnded(3, p.CLOSED_TO_WATCHERS, "the host closed this table to watchers"),
        m.LobbyList((SUMMARY,), draining=True),
        m.Notice("back in five minutes"),
        m.Notice("the server will restart soon", draining=True),
        m.SeatEnded(3, p.CLOSED_BY_OPERATOR, "closing for the night"),
        m.Recent(3, p.QUATRO, (PlayerReady(0), PlayerReady(1))),
    ]
    assert {type(push) for push in pushes} == {*m.PUSHES, Update}
    for push in pushes:
        assert push_from_wire(to_wire(push)) == push


def test_a_recent_push_is_read_as_its_games_events_and_bounded():
    wire = to_wire(m.Recent(3, p.QUATRO, (PlayerReady(0),)))
    assert wire == {"kind": "recent", "table": 3, "game": "quatro", "events": [{"kind": "player_ready", "seat": 0}]}
    for bad in (
        {**wire, "game": "chess"},
        {**wire, "table": "3"},
        {**wire, "events": {"kind": "player_ready"}},
        {**wire, "events": [{"kind": "placed", "seat": 0}]},
        {**wire, "events": wire["events"] * (p.MAX_RECENT_EVENTS + 1)},
    ):
        with pytest.raises(WireError):
            push_from_wire(bad)


def test_draining_is_left_out_of_the_lobby_push_unless_the_server_drains():
    assert "draining" not in to_wire(m.LobbyList((SUMMARY,)))
    assert to_wire(m.LobbyList((), draining=True))["draining"] is True
    assert to_wire(m.Notice("hi")) == {"kind": "notice", "text": "hi"}


def test_a_client_skips_keys_it_does_not_know_in_the_servers_messages():
    wire = to_wire(SEATING)
    wire["spectators"] = 3
    wire["seats"][0]["avatar"] = "fox"
    assert push_from_wire(wire) == SEATING
    listing = to_wire(m.LobbyList((SUMMARY,)))
    listing["tables"][0]["region"] = "eu"
    assert push_from_wire(listing) == m.LobbyList((SUMMARY,))


@pytest.mark.parametrize(
    "broken",
    [
        {"kind": "table", "table": "1"},
        {"kind": "lobby", "tables": [{"table": 1}]},
        {"kind": "bye", "reason": 3, "message": ""},
        {"kind": "lobby", "tables": [dict(to_wire(SUMMARY), phase="nap")]},
        {"kind": "table", **{k: v for k, v in to_wire(SEATING).items() if k != "kind"}, "timing": {"x": "slow"}},
        {"kind": "meteor"},
    ],
)
def test_a_push_that_does_not_fit_raises_a_wire_error(broken):
    with pytest.raises(WireError):
        push_from_wire(broken)
