"""H1–H3: what each player may know, what a bot sees, and what the server may send."""

from __future__ import annotations

import dataclasses
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quatro_shared.games.quatro import actions as a
from quatro_shared.games.quatro import events as e
from quatro_shared.games.quatro.cards import CENTER_SIZE, HAND_SIZE
from quatro_shared.games.quatro.signs import SIGNS
from quatro_shared.games.quatro.views import Phase, SeatView

from helpers.engine import (
    PLAYER_COUNTS,
    accept,
    cards_in,
    new_table,
    open_round,
    random_play,
    round_table,
    seen_by,
    signs_in,
    swap_any,
)
from quatro_server.games.quatro.engine import Table, view
from quatro_server.timing import FAST

T0 = 1.0


def assert_view_within_h1(table: Table, seat: int, now: float) -> SeatView:
    """The view holds the seat's own hand, the center, public state and its own team's sign; no other
    hand and no other team's sign, until the reveal (the summary) makes them public."""
    seat_view = view(table, seat, now)
    assert isinstance(seat_view, SeatView)
    own_sign = table.signs[table.team_of(seat)]
    assert seat_view.hand == table.hand(seat) and seat_view.sign == own_sign
    if seat_view.summary is None:
        assert cards_in(seat_view) <= set(table.hand(seat)) | set(table.center)
        public_pulses = {state.last_pulse for state in seat_view.seats}
        assert signs_in(seat_view) <= {own_sign, seat_view.channel_sign} | public_pulses
    return seat_view


# --- H1 ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_h1_a_player_sees_own_hand_the_center_and_own_sign_never_another_hand_or_sign(players):
    table = new_table(players)
    table.start(0.0)
    accept(table.act(0, a.PickSign(SIGNS[0]), 0.0))
    for seat in range(players):  # signing: only team 0 knows its sign
        seat_view = assert_view_within_h1(table, seat, 0.0)
        assert seat_view.sign == (SIGNS[0] if table.team_of(seat) == 0 else None)
        assert SIGNS[0] not in signs_in(seat_view) or table.team_of(seat) == 0

    open_round(table, 0.0, signs={team: SIGNS[team] for team in range(1, table.teams)})
    for seat in range(players):  # the round: own hand, the center, own sign
        seat_view = assert_view_within_h1(table, seat, T0)
        assert signs_in(seat_view) == {SIGNS[table.team_of(seat)]}
        partner_hand = set(table.hand(table.partner_of(seat)))
        assert not cards_in(seat_view) & partner_hand  # the partner's hand included

    accept(table.act(0, a.Call(), T0))
    hands = tuple(table.hand(seat) for seat in range(players))
    for seat in range(players):  # after the reveal, everything
        summary = view(table, seat, T0).summary
        assert summary.hands == hands and summary.signs == tuple(SIGNS[: table.teams])


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_h1_views_stay_within_what_a_player_may_know_through_random_play(players):
    rng = random.Random(players)
    table = new_table(players, seed=players, bots={1})
    for now, _ in random_play(table, rng, steps=200):
        for seat in range(players):
            assert_view_within_h1(table, seat, now)


# --- H2 ---------------------------------------------------------------------------------------------


def _as_if_human(seat_view: SeatView) -> SeatView:
    return dataclasses.replace(seat_view, seats=tuple(dataclasses.replace(s, bot=False) for s in seat_view.seats))


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_h2_a_bot_sees_exactly_what_a_human_in_its_seat_would_see(players):
    bot = 1
    with_bot = new_table(players, seed=2, bots={bot})
    all_human = new_table(players, seed=2)
    signs = {team: SIGNS[team] for team in range(with_bot.teams)}
    open_round(with_bot, 0.0, signs)
    open_round(all_human, 0.0, signs)

    def same_views(now):
        bot_view = assert_view_within_h1(with_bot, bot, now)
        assert _as_if_human(bot_view) == _as_if_human(view(all_human, bot, now))
        assert bot_view.seats[bot].bot  # the only difference: the table knows it is a bot

    same_views(T0)
    for table in (with_bot, all_human):
        accept(swap_any(table, 0, T0))
        accept(table.act(bot, a.TakeChannel(), T0))
        accept(table.act(bot, a.ChooseEmoji("fox"), T0))
        accept(swap_any(table, bot, T0 + 0.1, slot=1))
        table.advance(T0 + FAST.pulse_interval)
    same_views(T0 + FAST.pulse_interval)
    for table in (with_bot, all_human):
        accept(table.act(0, a.Call(), T0 + 6.0))
    same_views(T0 + 6.0)


# --- H3 ---------------------------------------------------------------------------------------------


def assert_events_within_h1(table: Table, events: list[e.Event], seat: int) -> None:
    """Before each round's reveal, the events a seat receives hold no other seat's hand or emoji choice and
    no other team's sign, in any field; every card in them is the seat's own or one the table saw in the center,
    which the seat can follow deal by deal and swap by swap."""
    team = table.team_of(seat)
    revealed = True
    known_cards: set[str] = set()
    known_signs: set[str] = set()
    center: list[str] = []
    for event in events:
        if isinstance(event, e.SigningStarted):
            revealed, known_cards, known_signs = False, set(), set()
        if revealed:
            continue
        if isinstance(event, e.RoundEnded):
            revealed = True
            continue
        if isinstance(event, e.HandDealt):
            assert event.seat == seat and len(event.hand) == HAND_SIZE, event
            assert not set(event.hand) & set(center), event
            known_cards |= set(event.hand)
        elif isinstance(event, e.SignChosen):
            assert event.team == team, event
            known_signs.add(event.sign)
        elif isinstance(event, e.EmojiChosen):
            assert event.seat == seat, event
            known_signs.add(event.sign)
        elif isinstance(event, e.Pulse):
            known_signs.add(event.sign)
        elif isinstance(event, e.Dealt):
            assert len(event.center) == CENTER_SIZE, event  # the center, and nothing more
            center = list(event.center)
            known_cards |= set(center)
        elif isinstance(event, e.Swapped):
            assert center[event.slot] == event.taken, event  # it came from the center, which the seat saw
            center[event.slot] = event.put_down  # put down face up: public (R8)
            known_cards.add(event.put_down)
        assert cards_in(event) <= known_cards, event
        assert signs_in(event) <= known_signs, event


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_h3_events_sent_to_a_seat_never_hold_another_hand_sign_or_emoji_choice_before_the_reveal(players):
    table = new_table(players, seed=3)
    emits = table.start(0.0)
    emits += accept(table.act(0, a.PickSign(SIGNS[0]), 0.1))  # the last team's sign is drawn by lot
    emits += accept(table.act(1, a.PickSign(SIGNS[1]), 0.1))
    emits += open_round(table, 0.2)
    for seat in range(players):
        emits += accept(swap_any(table, seat, T0, slot=seat % 4))
        emits += accept(table.act(seat, a.TakeChannel(), T0))
        emits += accept(table.act(seat, a.ChooseEmoji(SIGNS[-1 - seat]), T0))  # decoys
    emits += accept(table.act(0, a.AskReshuffle(), T0 + 0.1))
    emits += accept(table.act(1, a.Vote(False), T0 + 0.2))
    emits += table.advance(T0 + 2 * FAST.pulse_interval)
    emits += accept(table.act(2, a.Call(), T0 + 2 * FAST.pulse_interval))
    assert any(isinstance(emit.event, e.RoundEnded) for emit in emits)

    for seat in range(players):
        events = seen_by(table, emits, seat)
        assert_events_within_h1(table, events, seat)
        assert {ev.seat for ev in events if isinstance(ev, e.HandDealt)} == {seat}
        assert {ev.team for ev in events if isinstance(ev, e.SignChosen)} == {table.team_of(seat)}


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), players=st.sampled_from(PLAYER_COUNTS))
def test_h3_no_event_stream_leaks_through_random_play(seed, players):
    rng = random.Random(seed)
    table = new_table(players, seed=seed, bots={players - 1})
    emits = []
    for _, step in random_play(table, rng, steps=300):
        emits += step
    for seat in range(players):
        assert_events_within_h1(table, seen_by(table, emits, seat), seat)


def test_h3_a_fresh_round_is_dealt_in_private_even_to_a_player_who_sees_every_public_event():
    table = round_table(4)
    emits = accept(table.act(0, a.Call(), T0))
    emits += accept(table.act(0, a.NextRound(), T0))
    emits += open_round(table, T0)
    assert table.phase is Phase.ROUND
    for seat in range(4):
        assert_events_within_h1(table, seen_by(table, emits, seat), seat)
