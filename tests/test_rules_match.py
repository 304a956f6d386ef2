"""R18, R19: the draw, the break and the host; disconnection."""

from __future__ import annotations

import dataclasses

import pytest

from quatro_shared.games.quatro import actions as a
from quatro_shared.games.quatro import events as e
from quatro_shared.games.quatro.actions import Reason
from quatro_shared.games.quatro.views import Phase
from quatro_shared.tables import Connect, Disconnect

from helpers.engine import (
    PLAYER_COUNTS,
    accept,
    arrange,
    events_of,
    four_of,
    new_table,
    open_round,
    refused,
    round_table,
    seen_by,
    swap_any,
)
from quatro_server.games.quatro.engine import view
from quatro_server.timing import FAST, STANDARD

T0 = 1.0


# --- R18 Draw and break ----------------------------------------------------------------------------


@pytest.mark.parametrize("timing", [FAST, STANDARD], ids=["fast", "standard"])
def test_r18_no_call_or_counter_within_the_round_length_is_a_draw(timing):
    table = new_table(4, timing=timing)
    open_round(table, 10.0)

    assert events_of(table.advance(10.0 + timing.round_length - 0.01), e.RoundEnded) == []
    accept(swap_any(table, 0, 10.0 + timing.round_length - 0.01))  # still playing
    emits = table.advance(10.0 + timing.round_length)

    (ended,) = events_of(emits, e.RoundEnded)
    assert (ended.outcome, ended.scorers, ended.scores) == ("draw", (), (0, 0))
    assert table.scores == [0, 0] and table.phase is Phase.BREAK
    refused(table.act(0, a.Call(), 10.0 + timing.round_length), Reason.ROUND_OVER)


#: FAST, with a break unlike every other duration, so that only the break length can end a break.
ODD_BREAK = dataclasses.replace(FAST, break_length=4.5)


@pytest.mark.parametrize("timing", [STANDARD, ODD_BREAK], ids=["standard", "odd_break"])
@pytest.mark.parametrize("how", ["call", "draw"])
def test_r18_a_break_follows_every_round_then_the_next_round_signs(how, timing):
    table = round_table(4, timing=timing)
    ended_at = T0 if how == "call" else timing.round_length
    if how == "call":
        accept(table.act(0, a.Call(), T0))
    else:
        table.advance(ended_at)

    assert table.phase is Phase.BREAK
    assert view(table, 0, ended_at).phase_ms == round(timing.break_length * 1000)
    assert events_of(table.advance(ended_at + timing.break_length - 0.01), e.SigningStarted) == []
    emits = table.advance(ended_at + timing.break_length)

    assert events_of(emits, e.SigningStarted) == [e.SigningStarted(2)]
    assert table.phase is Phase.SIGNING and table.round == 2


def test_r18_the_host_may_start_the_next_round_earlier_and_only_the_host():
    table = round_table(4, host=2)
    refused(table.act(2, a.NextRound(), T0), Reason.WRONG_PHASE)  # not during a round
    accept(table.act(0, a.Call(), T0))

    refused(table.act(0, a.NextRound(), T0 + 0.1), Reason.NOT_HOST)
    emits = accept(table.act(2, a.NextRound(), T0 + 0.2))

    assert events_of(emits, e.SigningStarted) == [e.SigningStarted(2)]
    assert table.phase is Phase.SIGNING


def test_r18_the_host_is_the_player_who_opened_the_table():
    table = new_table(6, host=4)
    assert table.host == 4
    assert all(view(table, seat, 0.0).host == 4 for seat in range(6))


def test_r18_when_the_host_leaves_the_longest_seated_connected_human_becomes_host():
    # Seat 3 opened the table; then seats 5 (a bot), 0, 4, 1 and 2 sat down, in that order.
    table = new_table(6, bots={5}, host=3, seat_order=[3, 5, 0, 4, 1, 2])
    table.start(0.0)

    emits = accept(table.act(3, Disconnect(), 1.0))
    assert table.host == 0  # not the bot (5), not the lowest seat number
    for seat in range(6):
        assert e.HostChanged(0) in seen_by(table, emits, seat)

    accept(table.act(0, Disconnect(), 2.0))
    assert table.host == 4
    accept(table.act(3, Connect(), 3.0))  # coming back does not take the host back
    assert table.host == 4
    for seat in (4, 1, 2, 3):
        accept(table.act(seat, Disconnect(), 4.0))
    assert table.host is None  # no human connected
    accept(table.act(1, Connect(), 5.0))
    assert table.host == 1


def test_r18_a_host_that_is_a_bot_is_not_a_host():
    table = new_table(4, bots={0, 1}, host=0, seat_order=[0, 1, 3, 2])
    assert table.host == 3


def test_r18_the_new_host_may_start_the_next_round():
    table = round_table(4, host=0, seat_order=[0, 2, 1, 3])
    accept(table.act(1, a.Call(), T0))
    accept(table.act(0, Disconnect(), T0 + 0.1))

    refused(table.act(1, a.NextRound(), T0 + 0.2), Reason.NOT_HOST)
    accept(table.act(2, a.NextRound(), T0 + 0.2))


# --- R19 Disconnection -----------------------------------------------------------------------------


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_r19_a_disconnected_player_keeps_seat_and_hand_and_nobody_plays_for_them(players):
    table = round_table(players)
    hand = table.hand(1)

    emits = accept(table.act(1, Disconnect(), T0))

    for seat in range(players):
        assert seen_by(table, emits, seat) == [e.SeatDisconnected(1)]
        assert not view(table, seat, T0).seats[1].connected
    refused(swap_any(table, 1, T0 + 0.1), Reason.DISCONNECTED)
    refused(table.act(1, a.Call(), T0 + 0.1), Reason.DISCONNECTED)
    refused(table.act(1, a.TakeChannel(), T0 + 0.1), Reason.DISCONNECTED)
    emits = table.advance(FAST.round_length)  # the round runs its course without them
    assert not [ev for ev in events_of(emits, e.Swapped) if ev.seat == 1]
    (ended,) = events_of(emits, e.RoundEnded)
    assert ended.hands[1] == hand


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_r19_the_partner_of_a_disconnected_player_can_still_call(players):
    table = round_table(players)
    arrange(table, {1: four_of("A")})
    accept(table.act(1, Disconnect(), T0))

    emits = accept(table.act(table.partner_of(1), a.Call(), T0 + 0.1))

    assert events_of(emits, e.RoundEnded)[0].right is True and table.scores[1] == 1


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_r19_opponents_can_still_counter_a_disconnected_player(players):
    table = round_table(players)
    arrange(table, {1: four_of("A")})
    accept(table.act(1, Disconnect(), T0))
    accept(table.act(table.partner_of(1), Disconnect(), T0))

    emits = accept(table.act(0, a.Counter(1), T0 + 0.1))

    assert events_of(emits, e.RoundEnded)[0].right is True and table.scores[0] == 1


def test_r19_the_round_opens_without_them_and_they_are_dealt_in():
    table = new_table(4)
    table.start(0.0)
    accept(table.act(2, Disconnect(), 0.5))

    emits = open_round(table, 1.0)

    assert table.phase is Phase.ROUND and len(table.hand(2)) == 4
    assert e.HandDealt(2, table.hand(2)) in seen_by(table, emits, 2)


def test_r19_they_come_back_to_the_same_seat_and_find_the_game_as_it_is():
    table = round_table(4)
    hand = table.hand(1)
    accept(table.act(1, Disconnect(), T0))
    accept(swap_any(table, 0, T0 + 0.5))  # the round goes on meanwhile

    emits = accept(table.act(1, Connect(), T0 + 1.0))

    for seat in range(4):
        assert seen_by(table, emits, seat) == [e.SeatConnected(1)]
    back = view(table, 1, T0 + 1.0)
    assert back.hand == hand and back.center == tuple(table.center) and back.phase is Phase.ROUND
    assert back.seats[1].connected
    accept(swap_any(table, 1, T0 + 1.1))
