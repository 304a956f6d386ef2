"""The registry of games, Quarto's messages on the wire, and the client core reading a Quarto table's updates.

No sockets here (``test_quarto_server.py`` plays over TCP): the shared wire functions and the sans-I/O client core
are fed the maps and bytes a server sends, and a real ``Lobby`` is driven through its requests.
"""

from __future__ import annotations

import random
from itertools import count
from typing import Any

import pytest

from quatro_shared import games as contracts
from quatro_shared import protocol as p
from quatro_shared.client import ClientCore, ResyncNeeded, Updated
from quatro_shared.framing import encode
from quatro_shared.games.quarto import contract as q
from quatro_shared.games.quatro import actions as a
from quatro_shared.tables import Connect
from quatro_shared.wire import WireError, codec, push_from_wire, request_from_wire, to_wire

from helpers.lobby_peer import RecordingPeer
from quatro_server import games, rules
from quatro_server.games.quarto import bots as quarto_bots
from quatro_server.games.quarto.bots import QuartoBot
from quatro_server.games.quarto.engine import QuartoTable, view
from quatro_server.games.quatro.bots import Bot
from quatro_server.journal import Opening
from quatro_server.tables.lobby import Lobby
from quatro_server.timing import FAST

QUARTO_WIRE = codec(q.CONTRACT)
quarto_action_from_wire, quarto_event_from_wire, quarto_view_from_wire = (
    QUARTO_WIRE.action,
    QUARTO_WIRE.event,
    QUARTO_WIRE.view,
)
QUARTO_ACTION_KINDS, QUARTO_EVENT_KINDS = q.CONTRACT.action_kinds, q.CONTRACT.event_kinds

# --- the registry ------------------------------------------------------------------------------------


def test_the_registry_holds_both_games_in_the_protocols_order_and_their_actions_do_not_overlap():
    assert tuple(games.GAMES) == contracts.names() == ("quatro", "quarto")
    assert games.DEFAULT_GAME is games.GAMES["quatro"]
    quatro, quarto_game = games.GAMES["quatro"], games.GAMES["quarto"]
    assert quatro.action_kinds == a.ACTION_KINDS and quarto_game.action_kinds == q.ACTION_KINDS == QUARTO_ACTION_KINDS
    assert not quatro.action_kinds & quarto_game.action_kinds
    assert games.ACTION_KINDS == quatro.action_kinds | quarto_game.action_kinds
    assert contracts.request_kinds() >= games.ACTION_KINDS
    assert games.game_of(q.Place(3)) is quarto_game and games.game_of(a.Ready()) is quatro
    assert games.game_of(Connect()) is None  # the server's own actions belong to no request


@pytest.mark.parametrize("name", list(games.GAMES))
def test_each_game_makes_a_bot_of_each_of_its_levels(name):
    game = games.GAMES[name]
    assert game.default_level in game.levels
    kind = QuartoBot if name == "quarto" else Bot
    for level in game.levels:
        bot = game.make_bot(level, random.Random(1))
        assert isinstance(bot, kind) and bot.level == level
    with pytest.raises(ValueError):
        game.make_bot("no-such-level", random.Random(1))


@pytest.mark.parametrize("name", list(games.GAMES))
def test_each_game_s_table_and_bots_are_what_the_room_drives_and_its_actions_come_to_the_one_outcome(name):
    """The room, the journal and the simulator speak of ``rules.RulesTable`` and ``rules.SeatBot``, not of a game's
    classes: every game's table and bots have their members, and every engine's ``act`` returns ``rules.Outcome``."""
    game = games.GAMES[name]
    seats = game.seats(4 if game.players_required else None)
    assert isinstance(seats, int)
    opening = Opening(players=seats, bots=frozenset(range(1, seats)), host=0, order=tuple(range(seats)))
    table = game.new_table(opening, FAST, random.Random(3))
    assert isinstance(table, rules.RulesTable) and table.players == seats
    assert table.start(0.0)
    refused = table.act(0, object(), 0.5)  # not an action of any game: refused, never raised
    assert type(refused) is rules.Outcome and not refused.ok and refused.refusal is not None
    assert len(table.scores) == len(game.no_scores(seats)) and tuple(table.winners) == ()
    for level in game.levels:
        assert isinstance(game.make_bot(level, random.Random(1)), rules.SeatBot)


def test_seat_counts_per_game():
    quatro, quarto_game = games.GAMES["quatro"], games.GAMES["quarto"]
    assert [quatro.seats(n) for n in (4, 6, 8)] == [4, 6, 8]
    assert all(isinstance(quatro.seats(n), str) for n in (None, 2, 5, 10))
    assert quarto_game.seats(None) == quarto_game.seats(2) == 2
    assert all(isinstance(quarto_game.seats(n), str) for n in (1, 3, 4))
    assert quatro.players_required and not quarto_game.players_required
    assert quatro.journal is not quarto_game.journal  # each game writes its own matches to the journal
    assert q.LEVELS is quarto_bots.LEVELS and q.DEFAULT_LEVEL == quarto_bots.DEFAULT_LEVEL


# --- a real lobby ------------------------------------------------------------------------------------


def _asker(lobby: Lobby):
    ids = count(1)

    def ask(peer: RecordingPeer, kind: str, now: float = 0.0, **fields: Any) -> dict[str, Any]:
        return to_wire(lobby.handle(peer, request_from_wire({"kind": kind, "id": next(ids), **fields}), now))

    return ask


def test_a_quarto_room_plays_by_its_game_and_its_bots_move_on_the_tick():
    lobby = Lobby(seed=3)
    ask = _asker(lobby)
    ann = RecordingPeer("ann")
    assert ask(ann, p.CREATE_TABLE, game="quarto")["kind"] == p.OK
    room = lobby.rooms[1]
    assert room.game is games.GAMES["quarto"] and room.players == 2 and room.recorder is None
    assert ask(ann, p.ADD_BOT, level="random")["seat"] == 1
    assert ask(ann, p.START, now=1.0)["kind"] == p.OK
    assert isinstance(room.table, QuartoTable)
    for now in range(2, 400):
        table = room.table
        if table.phase is q.Phase.OVER:
            break
        me = view(table, 0, float(now))
        for action in q.legal(me)[:1]:
            assert (
                ask(ann, action.kind, now=float(now), **{k: v for k, v in to_wire(action).items() if k != "kind"})[
                    "kind"
                ]
                == p.OK
            )
        room.tick(float(now) + 0.5)  # the bot's look: its wake comes within its think time
        room.tick(float(now) + 2.0)
    assert room.table.phase is q.Phase.OVER
    assert room.summary().phase == "over" and room.summary().game == "quarto"
    updates = [frame for frame in ann.sent if frame.get("kind") == p.UPDATE]
    assert updates and all(frame["game"] == "quarto" and "view" in frame for frame in updates)
    assert [frame["seq"] for frame in updates] == list(range(1, len(updates) + 1))
    assert room.expired(500.0) is False  # ann is still here
    assert ask(ann, p.REMATCH, now=500.0)["kind"] == p.OK and room.table.phase is q.Phase.PLAYING


def test_a_quatro_room_is_built_exactly_as_before_the_registry():
    lobby = Lobby(seed=3)
    ask = _asker(lobby)
    ann = RecordingPeer("ann")
    ask(ann, p.CREATE_TABLE, players=4)
    room = lobby.rooms[1]
    assert room.game is games.DEFAULT_GAME and room.summary().game == "quatro"
    assert room.seating().game == "quatro" and room.summary().scores == (0, 0)
    for _ in range(3):
        ask(ann, p.ADD_BOT, level="perfect")  # a Quarto level: not Quatro's
    assert not any(s.bot for s in room.seats)
    assert ask(ann, p.ADD_BOT)["kind"] == p.OK and room.seats[1].bot.level == "normal"


# --- the wire ----------------------------------------------------------------------------------------


def _table(seed: int = 5) -> QuartoTable:
    table = QuartoTable(rng=random.Random(seed), bots={1})
    table.start(0.0)
    return table


def test_quarto_actions_round_trip_and_their_fields_are_checked_at_the_edge():
    for action in (q.Place(0), q.Place(15), q.Give(7), q.NextGame()):
        assert quarto_action_from_wire(to_wire(action)) == action
        request = request_from_wire({**to_wire(action), "id": 9})
        assert request.body == action and request.kind == action.kind
    for bad in ({"kind": "place", "square": "a1"}, {"kind": "give"}, {"kind": "give", "piece": 1, "seat": 0}):
        request = request_from_wire({**bad, "id": 1})
        assert request.body is None and isinstance(request.invalid, WireError)
    with pytest.raises(WireError):
        quarto_action_from_wire({"kind": "swap", "give": "AS", "slot": 0, "take": "KS"})


def test_every_quarto_event_and_the_view_round_trip():
    samples = [
        q.MatchStarted(4, 1),
        q.GameStarted(2, 0),
        q.PieceGiven(0, 12, "b3 SLQF"),
        q.PiecePlaced(1, 9, 12, "b3", True),
        q.GameEnded(1, 0, (0, 5, 10, 15), ("tall",), (1, 0), 0, ("SLQH", "a1 TDRF", "d4")),
        q.GameEnded(2, None, None, (), (1, 0), 1, ()),
        q.PlayerReady(1),
        q.MatchOver((0, 1), (2, 2), 0),
        q.SeatConnected(0),
        q.SeatDisconnected(1),
    ]
    assert {event.kind for event in samples} == QUARTO_EVENT_KINDS
    for event in samples:
        assert quarto_event_from_wire(to_wire(event)) == event
    table = _table()
    for seat in (0, 1):
        seat_view = view(table, seat, 0.0)
        assert quarto_view_from_wire(to_wire(seat_view)) == seat_view
    with pytest.raises(WireError):
        quarto_event_from_wire(
            {
                "kind": "quarto_game_ended",
                "game": 1,
                "winner": 0,
                "line": None,
                "shared": [],
                "scores": [1],
                "draws": 0,
                "moves": [],
            }
        )  # scores is a pair


def test_a_quarto_update_decodes_as_one_and_a_quatro_update_never_does():
    table = _table()
    update = q.QuartoUpdate(1, 1, True, (q.MatchStarted(4, 0),), view(table, 0, 0.0))
    wire = to_wire(update)
    assert wire["game"] == "quarto" and wire["kind"] == "update"
    assert push_from_wire(wire) == update
    unknown = {**wire, "events": [{"kind": "quarto_fireworks"}, *wire["events"]], "extra": 1}
    assert push_from_wire(unknown) == update  # what a newer server adds is skipped, never the update
    without_game = {key: value for key, value in wire.items() if key != "game"}
    with pytest.raises(WireError):
        push_from_wire(without_game)  # read as Quatro's, whose view it is not


# --- the client core ---------------------------------------------------------------------------------


def _frame(message: object) -> bytes:
    return encode(to_wire(message))


def test_the_client_core_replaces_its_view_with_each_quarto_update():
    table = QuartoTable(rng=random.Random(2))
    events = table.start(0.0)
    core = ClientCore("ann")
    core.place = None
    (first,) = core.receive_data(_frame(q.QuartoUpdate(1, 1, True, tuple(events), view(table, 0, 0.0))), 0.0)
    assert isinstance(first, Updated) and isinstance(first.view, q.QuartoView)
    assert first.events == tuple(events) and all(isinstance(e, q.Event) for e in first.events)
    mover = table.game.turn
    outcome = table.act(mover, q.Give(5), 1.0)
    (second,) = core.receive_data(_frame(q.QuartoUpdate(1, 2, False, tuple(outcome.events), view(table, 0, 1.0))), 1.0)
    assert isinstance(second, Updated) and second.view.in_hand == 5 and core.view == second.view and core.seq == 2
    assert core.drift == 0
    # A gap loses events only: the view is whole, so the core goes on and counts it.
    core.place = object()  # seated: gaps count
    outcome = table.act(1 - mover, q.Place(0), 2.0)
    (third,) = core.receive_data(_frame(q.QuartoUpdate(1, 5, False, tuple(outcome.events), view(table, 0, 2.0))), 2.0)
    assert isinstance(third, Updated) and not isinstance(third, ResyncNeeded)
    assert third.view.board[0] == 5 and core.seq == 5 and core.drift == 1
