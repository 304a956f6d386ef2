"""Quarto beside Quatro on one server, over real TCP on 127.0.0.1: tables, bots, whole matches, refusals, rejoin.

The client side is the shared client core (``tests/helpers/netclient.py`` over ``quatro_shared.client``): every
Quarto update it reads is checked and decoded into a ``QuartoView`` and Quarto's events.
"""

from __future__ import annotations

import random

import pytest
import trio

from quatro_shared import protocol as p
from quatro_shared.client import Updated
from quatro_shared.games.quarto import contract as q
from quatro_shared.games.quatro.views import SeatView

from helpers.netclient import TestClient
from quatro_server.bots.netbot import run_bot, run_bots
from quatro_server.games.quarto import bots as quarto_bots
from quatro_server.server import Server
from quatro_server.tables.lobby import Lobby
from quatro_server.timing import FAST, PROFILES


@pytest.fixture(autouse=True)
def quick_bots(monkeypatch):
    """Quarto bots look at the table at a person's pace (about a second); a test's match needs no such patience."""
    monkeypatch.setattr(quarto_bots, "THINK_TIME", (0.0, 0.02))


async def quarto_table(server, name: str = "ann", bot: str | None = "perfect") -> TestClient:
    client = await TestClient.connect(server.port, name)
    created = await client.request(p.CREATE_TABLE, game="quarto")
    assert created["kind"] == p.OK and created["seat"] == 0, created
    if bot is not None:
        added = await client.request(p.ADD_BOT, level=bot)
        assert added["kind"] == p.OK and added["seat"] == 1, added
    return client


async def two_players(server) -> tuple[TestClient, TestClient]:
    ann = await quarto_table(server, "ann", bot=None)
    bob = await TestClient.connect(server.port, "bob")
    joined = await bob.request(p.JOIN, table=ann.table)
    assert joined["kind"] == p.OK and joined["seat"] == 1, joined
    assert (await ann.request(p.START))["kind"] == p.OK
    for client in (ann, bob):
        await client.wait_view(lambda v: isinstance(v, q.QuartoView) and v.phase is q.Phase.PLAYING)
    return ann, bob


def quarto_view(client: TestClient) -> q.QuartoView:
    assert isinstance(client.view, q.QuartoView), client.view
    return client.view


async def test_q6_a_whole_quarto_match_over_tcp_against_perfect_which_never_loses(server):
    """The client plays legal moves at random (``quatro_shared.games.quarto.contract.legal``) through the client core; ``perfect``
    wins or draws every game, the start alternates (Q6), and every update carries the whole view."""
    ann = await quarto_table(server)
    assert (await ann.request(p.START))["kind"] == p.OK
    rng = random.Random(12)
    last = await ann.play_quarto(lambda moves: rng.choice(moves))

    assert last.phase is q.Phase.OVER and last.games == q.DEFAULT_GAMES
    assert last.scores[0] == 0, f"perfect lost a game to random moves: {last.scores}"
    assert sum(last.scores) + last.draws == q.DEFAULT_GAMES
    assert 1 in last.winners
    frames = [f for f in ann.frames if f["kind"] == p.UPDATE]
    assert frames and all(f["game"] == "quarto" and isinstance(f["view"], dict) for f in frames)
    assert frames[0]["snapshot"] is True and [f["seq"] for f in frames] == list(range(1, len(frames) + 1))
    kinds = [event["kind"] for event in ann.events]
    assert kinds.count("quarto_game_started") == q.DEFAULT_GAMES and kinds[-1] == "quarto_match_over"
    starters = [event["starter"] for event in ann.events if event["kind"] == "quarto_game_started"]
    assert all(a != b for a, b in zip(starters, starters[1:])), starters  # Q6: the start alternates
    placed = [event for event in ann.events if event["kind"] == "piece_placed"]
    assert placed and all(event["notation"] == q.format_square(event["square"]) for event in placed)  # Q7


async def test_the_client_core_yields_quarto_views_and_events_for_a_quarto_table(server):
    ann = await quarto_table(server)
    updates: list[Updated] = []
    original = ann._track

    def track(event):
        if isinstance(event, Updated):
            updates.append(event)
        original(event)

    ann._track = track
    await ann.request(p.START)
    await ann.wait_view(lambda v: isinstance(v, q.QuartoView) and v.turn == 0)
    assert updates
    for update in updates:
        assert isinstance(update.view, q.QuartoView) and not isinstance(update.view, SeatView)
        assert update.view.seat == 0 and update.view.seats[1].bot
        assert all(isinstance(event, q.Event) for event in update.events)
    assert isinstance(updates[0].events[0], q.MatchStarted)


async def test_quarto_refusals_over_tcp_out_of_turn_wrong_step_and_quatro_actions(server):
    ann, bob = await two_players(server)
    view = quarto_view(ann)
    mover, waiter = (ann, bob) if view.turn == 0 else (bob, ann)

    async def refused(client: TestClient, kind: str, reason: str, **fields) -> dict:
        reply = await client.request(kind, **fields)
        assert reply["kind"] == p.REFUSED and reply["reason"] == reason, (kind, fields, reply)
        assert reply["message"], reply
        return reply

    await refused(waiter, "give", q.Reason.NOT_YOUR_TURN, piece=3)  # Q3: the other seat gives first
    await refused(mover, "place", q.Reason.WRONG_STEP, square=0)  # the starter's first turn is a give alone (Q2)
    await refused(mover, "give", q.Reason.BAD_ARGUMENT, piece=16)
    await refused(mover, "next_game", q.Reason.WRONG_PHASE)
    swap = await refused(mover, "swap", q.Reason.UNKNOWN_ACTION, give="AS", slot=0, take="KS")
    assert "Quatro" in swap["message"] and "Quarto" in swap["message"]
    await refused(mover, "ready", q.Reason.UNKNOWN_ACTION)

    assert (await mover.request("give", piece=5))["kind"] == p.OK
    await refused(mover, "give", q.Reason.NOT_YOUR_TURN, piece=6)
    await refused(waiter, "give", q.Reason.WRONG_STEP, piece=6)  # place the piece you were given first
    assert (await waiter.request("place", square=0))["kind"] == p.OK
    await refused(waiter, "place", q.Reason.WRONG_STEP, square=1)
    await refused(waiter, "give", q.Reason.PIECE_UNAVAILABLE, piece=5)  # Q1: on the board already
    assert (await waiter.request("give", piece=6))["kind"] == p.OK
    await refused(mover, "place", q.Reason.SQUARE_TAKEN, square=0)
    await mover.drain()
    await waiter.drain()
    for client in (ann, bob):
        view = quarto_view(client)
        assert view.board[0] == 5 and view.in_hand == 6 and view.moves == ("TLRH", "a1 SDRH")


async def test_a_quarto_action_at_a_quatro_table_is_refused_clearly(server):
    ann = await TestClient.connect(server.port, "ann")
    assert (await ann.request(p.CREATE_TABLE, players=4))["kind"] == p.OK
    for _ in range(3):
        await ann.request(p.ADD_BOT)
    await ann.request(p.START)
    await ann.wait_view(lambda v: isinstance(v, SeatView))
    reply = await ann.request("place", square=3)
    assert reply["kind"] == p.REFUSED and reply["reason"] == "unknown_action", reply
    assert "Quarto" in reply["message"] and "Quatro" in reply["message"]


async def test_the_lobby_lists_both_games_and_a_quarto_table_has_two_seats(server):
    ann = await TestClient.connect(server.port, "ann")
    bob = await TestClient.connect(server.port, "bob")
    welcome = await TestClient.connect(server.port, "cy", hello=False)
    hello = await welcome.request(p.HELLO, version=p.PROTOCOL_VERSION, name="cy")
    assert hello["games"] == ["quatro", "quarto"]
    assert (await ann.request(p.CREATE_TABLE, players=4))["kind"] == p.OK
    assert (await bob.request(p.CREATE_TABLE, game="quarto", players=2))["kind"] == p.OK
    assert bob.seating["game"] == "quarto" and bob.seating["players"] == 2 and len(bob.seating["seats"]) == 2
    listed = (await welcome.request(p.LIST_TABLES))["tables"]
    by_game = {t["game"]: t for t in listed}
    assert set(by_game) == {"quatro", "quarto"}
    assert by_game["quarto"]["players"] == 2 and by_game["quarto"]["scores"] == [0, 0]
    assert by_game["quarto"]["phase"] == "lobby" and by_game["quatro"]["players"] == 4
    await bob.request(p.ADD_BOT, level="normal")
    await bob.request(p.START)
    await bob.wait_view(lambda v: isinstance(v, q.QuartoView))
    listed = (await welcome.request(p.LIST_TABLES))["tables"]
    quarto_row = next(t for t in listed if t["game"] == "quarto")
    assert quarto_row["phase"] == "playing" and quarto_row["bot_seats"] == [1]  # a game under way, in the lobby's words


async def test_create_table_and_add_bot_refusals_name_the_game(server):
    ann = await TestClient.connect(server.port, "ann")
    cases = [
        ({"game": "chess"}, p.REFUSED, p.UNKNOWN_GAME),
        ({"game": "quarto", "players": 4}, p.REFUSED, p.BAD_REQUEST),
        ({"game": 5}, p.ERROR, p.BAD_REQUEST),
        ({"game": ""}, p.ERROR, p.BAD_REQUEST),
        ({"game": None, "players": 4}, p.ERROR, p.BAD_REQUEST),
        ({}, p.ERROR, p.BAD_REQUEST),  # a Quatro table (the default) needs its players
    ]
    for fields, kind, code in cases:
        reply = await ann.request(p.CREATE_TABLE, **fields)
        assert reply["kind"] == kind and reply.get("reason", reply.get("code")) == code, (fields, reply)
    assert (await ann.request(p.CREATE_TABLE, game="quarto"))["kind"] == p.OK
    reply = await ann.request(p.ADD_BOT, level="expert")
    assert reply["kind"] == p.REFUSED and reply["reason"] == p.BAD_LEVEL and "perfect" in reply["message"], reply
    reply = await ann.request(p.ADD_BOT, seat=2)
    assert reply["kind"] == p.REFUSED and reply["reason"] == p.BAD_REQUEST, reply
    added = await ann.request(p.ADD_BOT)
    assert added["kind"] == p.OK and ann.seating["seats"][1]["bot"] == q.DEFAULT_LEVEL
    assert (await ann.request(p.ADD_BOT))["reason"] == p.TABLE_FULL
    reply = await ann.request("place", square=0)
    assert reply["kind"] == p.REFUSED and reply["reason"] == q.Reason.NOT_STARTED, reply


async def test_hostile_quarto_frames_get_an_error_and_disturb_nobody(server):
    ann, bob = await two_players(server)
    watcher = await TestClient.connect(server.port, "eve")
    before_ann, before_bob = len(ann.frames), len(bob.frames)
    hostile = [
        {"kind": "place", "square": "b3"},
        {"kind": "place", "square": 2**63},
        {"kind": "place", "square": -1},
        {"kind": "place", "square": [1]},
        {"kind": "give", "piece": "TDRH"},
        {"kind": "give", "piece": 3, "seat": 0},
        {"kind": "give"},
        {"kind": "next_game", "ready": True},
        {"kind": "quarto_game_ended"},
        {"kind": "connect"},
    ]
    for message in hostile:
        reply = await bob.request(message["kind"], **{k: v for k, v in message.items() if k != "kind"})
        assert reply["kind"] in (p.ERROR, p.REFUSED), (message, reply)
        if reply["kind"] == p.REFUSED:
            assert reply["reason"] in {r.value for r in q.Reason}, (message, reply)
    await bob.send_raw(b"\x00\x00\x00\x03\xc1\xc1\xc1")  # a frame that is not msgpack: the connection is closed
    assert await bob.closed()
    await ann.drain(0.2)
    assert all(f["kind"] in (p.UPDATE, p.TABLE) for f in ann.frames[before_ann:])  # bob's seat shows as gone, no more
    view = quarto_view(ann)
    assert view.phase is q.Phase.PLAYING and view.board == (None,) * 16 and not view.seats[1].connected
    assert len(bob.frames) >= before_bob
    assert (await watcher.request(p.PING))["kind"] == p.OK
    # The server goes on: bob comes back with his secret and the game continues where it was.
    back = await TestClient.connect(server.port, "bob")
    assert (await back.request(p.REJOIN, table=bob.table, secret=bob.secret))["kind"] == p.OK
    await back.wait_view(lambda v: isinstance(v, q.QuartoView) and v.seats[1].connected)


async def test_r19_a_quarto_seat_is_kept_through_a_dropped_connection_and_rejoined_with_its_secret(server):
    ann = await quarto_table(server, bot="normal")
    await ann.request(p.START)
    view = await ann.wait_view(lambda v: isinstance(v, q.QuartoView) and v.turn == 0)
    move = q.legal(view)[0]
    assert (await ann.act(move))["kind"] == p.OK
    moves_before = quarto_view(ann).moves
    await ann.aclose()  # the connection drops: the seat waits (no move clock by default)
    back = await TestClient.connect(server.port, "ann")
    assert (await back.request(p.REJOIN, table=ann.table, secret="not-the-secret"))["reason"] == p.BAD_SECRET
    rejoined = await back.request(p.REJOIN, table=ann.table, secret=ann.secret)
    assert rejoined["kind"] == p.OK and rejoined["seat"] == 0
    first = next(f for f in back.frames if f["kind"] == p.UPDATE)
    assert first["snapshot"] is True and first["game"] == "quarto"
    view = await back.wait_view(lambda v: isinstance(v, q.QuartoView) and v.turn == 0)
    assert view.moves[: len(moves_before)] == moves_before and view.seats[0].connected
    last = await back.play_quarto()
    assert last.phase is q.Phase.OVER


async def test_a_quarto_rematch_plays_again_with_the_same_seats(server):
    ann = await quarto_table(server, bot="random")
    await ann.request(p.START)
    assert (await ann.request(p.REMATCH))["reason"] == p.NOT_OVER
    first = await ann.play_quarto()
    assert first.phase is q.Phase.OVER
    assert (await ann.request(p.CHAT, text="good games"))["kind"] == p.OK  # nothing hidden: the chat stays open
    assert (await ann.request(p.REMATCH))["kind"] == p.OK
    view = await ann.wait_view(lambda v: isinstance(v, q.QuartoView) and v.phase is q.Phase.PLAYING)
    assert view.scores == (0, 0) and view.game == 1 and view.seats[1].bot
    update = [f for f in ann.frames if f["kind"] == p.UPDATE and f["events"]][-1]
    assert update["snapshot"] is True


async def test_resync_at_a_quarto_table_sends_the_whole_view(server):
    ann = await quarto_table(server)
    await ann.request(p.START)
    await ann.wait_view(lambda v: isinstance(v, q.QuartoView))
    count = len(ann.frames)
    assert (await ann.request(p.RESYNC))["kind"] == p.OK
    update = next(f for f in ann.frames[count:] if f["kind"] == p.UPDATE)
    assert update["snapshot"] is True and update["events"] == [] and update["view"]["seat"] == 0


async def test_a_network_bot_plays_quatro_and_never_sits_at_a_quarto_table(server):
    ann = await quarto_table(server, bot=None)  # an open Quarto table with a free seat
    with pytest.raises(RuntimeError, match="plays quarto"):
        await run_bot("127.0.0.1", server.port, "normal", table=ann.table)
    async with trio.open_nursery() as nursery:
        result = await nursery.start(
            lambda task_status: run_bot("127.0.0.1", server.port, "normal", task_status=task_status)
        )
        assert result.table != ann.table  # it made a Quatro table of its own
        nursery.cancel_scope.cancel()
    listed = (await ann.request(p.LIST_TABLES))["tables"]
    assert next(t for t in listed if t["table"] == ann.table)["taken"] == 1


async def test_the_move_clock_when_a_profile_sets_one_plays_a_silent_seats_step_by_lot(nursery):
    """Time is an input: the room's timer task fires the engine's deadline (the move clock, off by default)."""
    lobby = Lobby(timing_profiles={**PROFILES, "clocked": FAST.changed(quarto_move_clock=0.3)}, seed=4)
    srv = Server(lobby)
    listeners = await nursery.start(srv.serve, "127.0.0.1", 0)
    port = listeners[0].socket.getsockname()[1]
    ann = await TestClient.connect(port, "ann")
    assert (await ann.request(p.CREATE_TABLE, game="quarto", timing="clocked"))["kind"] == p.OK
    assert (await ann.request(p.ADD_BOT, level="random"))["kind"] == p.OK
    assert (await ann.request(p.START))["kind"] == p.OK
    first = await ann.wait_view(lambda v: isinstance(v, q.QuartoView) and v.phase is q.Phase.PLAYING)
    assert first.clock_ms is not None and 0 < first.clock_ms <= 300
    given = await ann.wait_event("piece_given", timeout=10)
    while given["seat"] != 0:  # the bot's own moves come first when it starts
        given = await ann.wait_event("piece_given", timeout=10)
    assert given["by_lot"] is True  # ann said nothing: her give was drawn for her


async def test_a_network_quarto_bot_plays_a_whole_match_against_the_servers_perfect_bot(server, monkeypatch):
    """``quatro-server bot --game quarto --level perfect --against perfect``: a real client over TCP creates a Quarto
    table, fills the other seat with the server's ``perfect``, starts, and plays every game of the match (its own
    search in a worker thread, the server's in the server's).

    What is proven here is the match played through both threads, not ``perfect``'s strength (the tests of
    ``quarto_bots`` hold that): two ``perfect``s each try a budgeted exact search at 10 to 12 empty squares and
    guard their turns up to 13, about two seconds a turn for each, minutes a match. Here both search to the end
    from 9 empty squares, and above that guard their turns within a tenth of the budget: every kind of decision
    is still made, in a worker thread, quickly."""
    monkeypatch.setattr(quarto_bots, "TRY_EXACT_EMPTY", 9)
    monkeypatch.setattr(quarto_bots, "GUARD_BUDGET", quarto_bots.GUARD_BUDGET // 10)
    with trio.fail_after(120):
        result = await run_bot(
            "127.0.0.1", server.port, "perfect", game="quarto", against="perfect", rng=random.Random(3)
        )
    assert result.reason == "over", result
    assert result.seat == 0 and result.rounds == q.DEFAULT_GAMES
    assert len(result.scores) == 2 and sum(result.scores) <= q.DEFAULT_GAMES and result.winners  # wins and draws add up


async def test_two_network_quarto_bots_fill_one_quarto_table_and_play_it(server):
    results = await run_bots("127.0.0.1", server.port, 2, "normal", seed=5, game="quarto", rounds=1)
    assert {r.table for r in results} == {results[0].table} and {r.seat for r in results} == {0, 1}
    assert all(r.rounds >= 1 for r in results), results


async def test_a_network_quarto_bot_never_sits_at_a_quatro_table(server):
    ann = await TestClient.connect(server.port, "ann")
    assert (await ann.request(p.CREATE_TABLE, players=4))["kind"] == p.OK
    with pytest.raises(RuntimeError, match="plays quatro"):
        await run_bot("127.0.0.1", server.port, "random", game="quarto", table=ann.table)


def test_the_network_bots_command_checks_quarto_levels_and_against(capsys):
    import argparse

    from quatro_server.bots import netbot

    parser = argparse.ArgumentParser()
    netbot.add_arguments(parser)
    for argv, said in (
        (["--level", "expert"], "quarto bot levels: random, normal, perfect"),
        (["--against", "godlike"], "--against: quarto bot levels"),
        (["--against", "perfect", "--count", "2"], "one bot, no --table"),
    ):
        assert netbot.run(parser.parse_args(["127.0.0.1:1", "--game", "quarto", *argv])) == 2
        assert said in capsys.readouterr().err
