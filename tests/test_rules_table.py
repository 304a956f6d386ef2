"""R1–R4: seats and teams, the deck, the deal, and no three of a kind at the deal."""

from __future__ import annotations

import dataclasses
import random

import pytest

from quatro_shared.games.quatro import actions as a
from quatro_shared.games.quatro import events as e
from quatro_shared.games.quatro.cards import has_three_of_a_rank, rank_of, suit_of

from helpers.engine import (
    PLAYER_COUNTS,
    RiggedRandom,
    accept,
    assert_cards_conserved,
    events_of,
    new_table,
    open_round,
    seen_by,
)
from quatro_server.games.quatro.engine import Table, view

# --- R1 Seats and teams ----------------------------------------------------------------------------


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_r01_partner_sits_across_the_table_and_partners_form_a_team(players):
    table = new_table(players)
    half = players // 2

    assert table.teams == half  # 2, 3 or 4 teams
    for seat in range(players):
        assert table.partner_of(seat) == (seat + half) % players
        assert table.team_of(seat) == table.team_of(table.partner_of(seat))
        seat_view = view(table, seat, 0.0)
        assert (seat_view.team, seat_view.partner) == (table.team_of(seat), (seat + half) % players)
    for team in range(half):
        assert table.team_seats(team) == (team, team + half)
        assert table.team_of(team) == table.team_of(team + half) == team


@pytest.mark.parametrize("players", [0, 1, 2, 3, 5, 7, 9, 10])
def test_r01_only_four_six_or_eight_players(players):
    with pytest.raises(ValueError):
        Table(players, rng=random.Random(0))


# --- R2 Deck ---------------------------------------------------------------------------------------

RANKS_BY_PLAYERS = {
    4: ["A", "K", "Q", "J", "10"],
    6: ["A", "K", "Q", "J", "10", "9", "8"],
    8: ["A", "K", "Q", "J", "10", "9", "8", "7", "6"],
}


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_r02_deck_has_one_more_rank_than_players_four_copies_each(players):
    table = new_table(players)

    assert len(table.deck) == 4 * (players + 1) == {4: 20, 6: 28, 8: 36}[players]
    assert len(set(table.deck)) == len(table.deck)  # every card has its own identity
    ranks = sorted({rank_of(card) for card in table.deck}, key=RANKS_BY_PLAYERS[8].index)
    assert ranks == RANKS_BY_PLAYERS[players]
    for rank in ranks:
        assert sorted(suit_of(card) for card in table.deck if rank_of(card) == rank) == sorted("SHDC")


# --- R3 Deal ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_r03_four_cards_each_and_the_rest_face_up_in_four_center_slots(players):
    table = new_table(players, seed=3)
    emits = open_round(table)

    assert_cards_conserved(table)  # no draw pile, no discard pile: every card is in a hand or the center
    (dealt,) = events_of(emits, e.Dealt)
    assert list(dealt.center) == table.center
    for seat in range(players):
        assert dealt in seen_by(table, emits, seat)  # the center lies face up for everyone
        assert view(table, seat, 0.0).center == tuple(table.center)
        (own,) = [ev for ev in seen_by(table, emits, seat) if isinstance(ev, e.HandDealt)]
        assert own == e.HandDealt(seat, table.hand(seat))


def test_r03_shuffles_use_the_operating_systems_randomness_by_default():
    assert isinstance(Table(4).rng, random.SystemRandom)


# --- R4 No three of a kind at the deal -------------------------------------------------------------


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_r04_a_deal_with_three_of_a_rank_is_redone_and_the_table_is_told_how_often(players):
    rng = RiggedRandom(seed=4, bad_shuffles=3)  # the first three shuffles give seat 0 three aces
    table = new_table(players, rng=rng)
    emits = open_round(table)

    assert not any(has_three_of_a_rank(table.hand(seat)) for seat in range(players))
    assert_cards_conserved(table)
    (dealt,) = events_of(emits, e.Dealt)
    assert dealt.redeals == rng.shuffles - 1 >= 3  # every shuffle but the last was redone
    assert not dealt.reshuffle
    # The count is public; which rank, and whose hand, are not part of it.
    assert {f.name for f in dataclasses.fields(e.Dealt)} == {"center", "redeals", "reshuffle"}
    for seat in range(players):
        assert dealt in seen_by(table, emits, seat)


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_r04_a_reshuffle_obeys_the_same_rule(players):
    rng = RiggedRandom(seed=5)
    table = new_table(players, rng=rng, bots=range(1, players))  # seat 0 alone: its reshuffle passes at once
    open_round(table)
    rng.bad_shuffles, shuffled_before = 2, rng.shuffles

    emits = accept(table.act(0, a.AskReshuffle(), 1.0))

    (dealt,) = events_of(emits, e.Dealt)
    assert dealt.reshuffle and dealt.redeals == rng.shuffles - shuffled_before - 1 >= 2
    assert not any(has_three_of_a_rank(table.hand(seat)) for seat in range(players))
    assert_cards_conserved(table)


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_r04_no_fresh_deal_ever_holds_three_of_a_rank(players):
    """Over many seeds, neither the opening deal nor a reshuffle leaves three of a rank in a hand,
    though an unchecked shuffle would do so often."""
    redone = 0
    for seed in range(150):
        table = new_table(players, seed=seed, bots=range(1, players))
        emits = open_round(table)
        emits += accept(table.act(0, a.AskReshuffle(), 1.0))
        for hand_dealt in events_of(emits, e.HandDealt):
            assert not has_three_of_a_rank(hand_dealt.hand), (seed, hand_dealt)
        redone += sum(dealt.redeals for dealt in events_of(emits, e.Dealt))
    assert redone > 0  # the rule was exercised, not just lucky
