"""Network bots over real TCP on 127.0.0.1: they join tables, say ready, play rounds and leave, as players do."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import pytest
import trio

from quatro_shared import protocol as p
from quatro_shared.games import CONTRACTS
from quatro_shared.games.quarto import contract as q
from quatro_shared.games.quatro import events as e
from quatro_shared.games.quatro.views import Phase

from helpers.netclient import TestClient
from quatro_server.bots import netbot
from quatro_server.bots.games import BOT_GAMES, bot_game
from quatro_server.bots.netbot import run_bot, run_bots
from quatro_server.rules import SeatBot
from test_bots import seat_view

#: Seconds a test waits for a round to play out: the "quick" profile's 1 s sign window and 3 s round, with room.
ROUND_DEADLINE = 20


async def test_three_network_bots_join_a_players_table_and_play_a_round_with_them(server):
    ann = await TestClient.connect(server.port, "ann")
    assert (await ann.request(p.CREATE_TABLE, players=4, timing="quick"))["kind"] == p.OK
    with trio.fail_after(ROUND_DEADLINE):
        async with trio.open_nursery() as bots:
            results = [
                await bots.start(
                    lambda level=level, seed=seed, task_status=trio.TASK_STATUS_IGNORED: run_bot(
                        "127.0.0.1", server.port, level, table=ann.table, rounds=1, rng=random.Random(seed),
                        task_status=task_status,
                    )
                )
                for seed, level in enumerate(("hard", "normal", "random"))
            ]  # fmt: skip
            assert [r.seat for r in results] == [1, 2, 3]
            while ann.seating is None or not all(s["taken"] for s in ann.seating["seats"]):
                await ann.next_frame()
            assert [s["bot"] for s in ann.seating["seats"]] == [None] * 4  # to the server they are players
            assert (await ann.request(p.START))["kind"] == p.OK
            await ann.wait_view(lambda v: v.phase is Phase.SIGNING)
            assert (await ann.request("ready"))["kind"] == p.OK
            ended = await ann.wait_event("round_ended", timeout=ROUND_DEADLINE)
        # The bots said ready, as players must (R7). (The random bot's reaction, up to 1.2 s, may come after the
        # quick profile's 1 s sign window; hard and normal react within 0.8 s.)
        readies = {event["seat"] for event in ann.events if event["kind"] == "player_ready"}
        assert {0, results[0].seat, results[1].seat} <= readies
        hard_seat = results[0].seat
        assert any(event["kind"] == "channel_taken" and event["seat"] == hard_seat for event in ann.events)
        assert all(r.rounds >= 1 and r.table == ann.table for r in results)
        assert ended["round"] == 1


async def test_four_network_bots_create_fill_and_start_their_own_table(server):
    with trio.fail_after(ROUND_DEADLINE):
        results = await run_bots("127.0.0.1", server.port, 4, "normal", seed=5, timing="quick", rounds=1)
    assert {r.table for r in results} == {results[0].table}
    assert sorted(r.seat for r in results) == [0, 1, 2, 3]
    assert all(r.rounds >= 1 and r.reason == "left" for r in results)
    assert all(len(r.scores) == 2 for r in results)


async def test_a_network_bot_told_a_table_that_does_not_exist_says_so(server):
    with pytest.raises(RuntimeError, match="no_such_table"):
        await run_bot("127.0.0.1", server.port, "normal", table=99)


def test_a_received_view_runs_its_countdowns_down_as_it_ages():
    aged = bot_game(p.QUATRO).aged
    view = seat_view(swap_wait_ms=1500, channel_wait_ms=300, phase_ms=10_000, vote_wait_ms=0)
    later = aged(view, 0.5)
    assert (later.swap_wait_ms, later.channel_wait_ms, later.phase_ms, later.vote_wait_ms) == (1000, 0, 9500, 0)
    assert aged(view, 0) is view
    assert aged(replace(view, phase_ms=None), 1.0).phase_ms is None


def test_the_network_bot_names_no_game_and_reaches_each_game_s_part_through_the_registry():
    """``netbot.py`` is the same code for every game: what differs (the bots, how a view ages, when the match is
    over, what ``--rounds`` counts, which decisions think in a thread) is the game's part in ``BOT_GAMES``."""
    source = (Path(netbot.__file__)).read_text()
    assert "quarto" not in source.lower() and "p.QUATRO" not in source
    assert set(BOT_GAMES) == set(CONTRACTS)
    for name, contract in CONTRACTS.items():
        part = bot_game(name)
        for level in contract.levels:
            assert isinstance(part.make_bot(level, random.Random(1)), SeatBot)
        with pytest.raises(ValueError):
            part.make_bot("no-such-level", random.Random(1))
        assert part.ended([]) == 0


def test_each_game_s_part_says_when_its_match_ends_and_what_its_rounds_are():
    quatro, quarto = bot_game(p.QUATRO), bot_game(q.NAME)
    assert quatro.over(seat_view(phase=Phase.OVER)) and not quatro.over(seat_view(phase=Phase.ROUND))
    assert quatro.ended([e.RoundEnded(1, "draw", None, None, None, (), (0, 0), (), (), (), ()), e.PlayerReady(0)]) == 1
    assert quatro.outside_bots and not quarto.outside_bots
    assert not quatro.slow(quatro.make_bot("expert", random.Random(1)), seat_view())
    assert quarto.slow(quarto.make_bot("perfect", random.Random(1)), None)
    assert not quarto.slow(quarto.make_bot("normal", random.Random(1)), None)
    assert quarto.ended([q.GameEnded(1, 0, (0, 1, 2, 3), ("tall",), (1, 0), 0, ())]) == 1
