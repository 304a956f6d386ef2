"""R5–R7: the emoji set, picking the team sign, and opening the round."""

from __future__ import annotations

import unicodedata

import pytest

from quatro_shared.games.quatro import actions as a
from quatro_shared.games.quatro import events as e
from quatro_shared.games.quatro.actions import Reason
from quatro_shared.games.quatro.signs import EMOJI, SIGNS
from quatro_shared.games.quatro.views import Phase
from quatro_shared.tables import Disconnect

from helpers.engine import (
    PLAYER_COUNTS,
    RiggedRandom,
    accept,
    events_of,
    new_table,
    open_round,
    refused,
    round_table,
    seen_by,
)
from quatro_server.games.quatro.engine import view
from quatro_server.timing import FAST

# R5, in the order of the rules: (ASCII name, emoji).
SPEC_SIGNS = [
    ("pineapple", "🍍"), ("rocket", "🚀"), ("turtle", "🐢"), ("fox", "🦊"), ("octopus", "🐙"), ("cactus", "🌵"),
    ("mushroom", "🍄"), ("guitar", "🎸"), ("moon", "🌙"), ("fire", "🔥"), ("watermelon", "🍉"), ("bee", "🐝"),
    ("tophat", "🎩"), ("crab", "🦀"), ("doughnut", "🍩"), ("sunflower", "🌻"), ("penguin", "🐧"), ("balloon", "🎈"),
    ("cherries", "🍒"), ("owl", "🦉"), ("whale", "🐳"), ("die", "🎲"), ("rainbow", "🌈"), ("clover", "🍀"),
]  # fmt: skip


# --- R5 Emoji set ----------------------------------------------------------------------------------


def test_r05_twenty_four_sign_emojis_each_one_code_point_two_cells_wide_with_an_ascii_name():
    assert [EMOJI[sign] for sign in SIGNS] == [emoji for _, emoji in SPEC_SIGNS]
    assert len(SIGNS) == len(set(SIGNS)) == 24
    for sign in SIGNS:
        assert sign.isascii() and sign.isalpha() and sign.islower()
        emoji = EMOJI[sign]
        assert len(emoji) == 1 and unicodedata.east_asian_width(emoji) == "W"


def test_r05_the_same_set_serves_the_sign_and_the_channel():
    table = new_table(4)
    table.start(0.0)
    refused(table.act(0, a.PickSign("unicorn"), 0.0), Reason.BAD_ARGUMENT)
    accept(table.act(0, a.PickSign(SIGNS[-1]), 0.0))
    open_round(table, 0.0)
    accept(table.act(0, a.TakeChannel(), 0.0))

    for sign in SIGNS:  # the true sign or any decoy
        accept(table.act(0, a.ChooseEmoji(sign), 0.0))
    refused(table.act(0, a.ChooseEmoji("unicorn"), 0.0), Reason.BAD_ARGUMENT)


# --- R6 Picking the team sign ----------------------------------------------------------------------


def test_r06_the_first_partner_to_pick_sets_the_sign_and_it_cannot_change():
    table = new_table(4)
    table.start(0.0)

    accept(table.act(2, a.PickSign("fox"), 1.0))  # seat 2 is first of team 0
    refused(table.act(0, a.PickSign("owl"), 1.1), Reason.SIGN_SET)  # the partner cannot override it
    refused(table.act(2, a.PickSign("owl"), 1.2), Reason.SIGN_SET)  # nor can the picker change it
    open_round(table, 2.0)

    assert table.signs[0] == "fox"
    assert view(table, 0, 2.0).sign == view(table, 2, 2.0).sign == "fox"


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_r06_the_partner_sees_the_sign_appear_and_nobody_outside_the_team_learns_it(players):
    table = new_table(players)
    table.start(0.0)
    picker, partner = 0, table.partner_of(0)

    emits = accept(table.act(picker, a.PickSign("fox"), 1.0))

    assert seen_by(table, emits, partner) == [e.SignChosen(0, "fox", picker)]
    assert view(table, partner, 1.0).sign == "fox"
    for seat in range(players):
        if table.team_of(seat) != 0:
            assert seen_by(table, emits, seat) == []
            assert view(table, seat, 1.0).sign is None
            assert "fox" not in repr(view(table, seat, 1.0))


def test_r06_two_teams_may_hold_the_same_sign():
    table = new_table(6)
    table.start(0.0)
    for team in range(3):
        accept(table.act(team, a.PickSign("owl"), 1.0))
    open_round(table, 1.0)
    assert table.signs == ["owl", "owl", "owl"]


def test_r06_signs_are_picked_only_before_the_round():
    table = round_table(4)
    refused(table.act(0, a.PickSign("fox"), 1.0), Reason.WRONG_PHASE)


# --- R7 Opening the round --------------------------------------------------------------------------


def test_r07_the_round_opens_as_soon_as_every_connected_player_is_ready():
    table = new_table(4)
    table.start(10.0)
    for seat in (0, 1, 2):
        emits = accept(table.act(seat, a.Ready(), 11.0))
        assert events_of(emits, e.PlayerReady) == [e.PlayerReady(seat)]
        assert table.phase is Phase.SIGNING

    emits = accept(table.act(3, a.Ready(), 12.0))

    assert table.phase is Phase.ROUND and events_of(emits, e.RoundOpened) == [e.RoundOpened(1)]
    assert table.phase_ends_at == 12.0 + FAST.round_length  # the round's clock starts at the opening


def test_r07_the_round_opens_when_the_sign_window_ends():
    table = new_table(4)
    table.start(10.0)
    accept(table.act(0, a.Ready(), 11.0))

    assert table.advance(10.0 + FAST.sign_window - 0.01) == []
    emits = table.advance(10.0 + FAST.sign_window)

    assert table.phase is Phase.ROUND and events_of(emits, e.RoundOpened) == [e.RoundOpened(1)]
    assert table.phase_ends_at == 10.0 + FAST.sign_window + FAST.round_length


def test_r07_bots_are_always_ready():
    table = new_table(4, bots={1, 3})
    table.start(0.0)
    assert [s.ready for s in view(table, 0, 0.0).seats] == [False, True, False, True]

    accept(table.act(0, a.Ready(), 1.0))
    emits = accept(table.act(2, a.Ready(), 1.0))

    assert events_of(emits, e.RoundOpened)


def test_r07_a_disconnected_player_is_not_waited_for():
    table = new_table(4)
    table.start(0.0)
    for seat in (0, 1, 2):
        accept(table.act(seat, a.Ready(), 1.0))

    emits = accept(table.act(3, Disconnect(), 2.0))

    assert table.phase is Phase.ROUND and events_of(emits, e.RoundOpened)


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_r07_a_team_with_no_sign_gets_one_by_lot_told_to_that_team_alone(players):
    table = new_table(players, seed=7)
    table.start(0.0)
    accept(table.act(0, a.PickSign("fox"), 0.0))

    emits = open_round(table, 1.0)

    assert table.signs[0] == "fox"
    for team in range(1, table.teams):
        drawn = table.signs[team]
        assert drawn in SIGNS
        assert [(emit.event, emit.team) for emit in emits if isinstance(emit.event, e.SignChosen)].count(
            (e.SignChosen(team, drawn, None), team)
        ) == 1
        for seat in range(players):
            told = e.SignChosen(team, drawn, None) in seen_by(table, emits, seat)
            assert told == (table.team_of(seat) == team)


def _next_round(table, now):
    accept(table.act(0, a.Call(), now))
    accept(table.act(table.host, a.NextRound(), now))


def test_r07_the_sign_drawn_by_lot_avoids_the_teams_sign_of_the_previous_round():
    rng = RiggedRandom(first_choice=True)  # a lot that would always draw the first sign it may
    table = new_table(4, rng=rng)
    open_round(table, 0.0, signs={0: SIGNS[0]})  # team 0 picks it; team 1 draws it
    assert table.signs == [SIGNS[0], SIGNS[0]]

    _next_round(table, 1.0)
    open_round(table, 2.0)

    assert table.signs == [SIGNS[1], SIGNS[1]]


def test_r07_the_drawn_sign_never_repeats_last_rounds_over_many_seeds():
    for seed in range(40):
        table = new_table(4, seed=seed)
        open_round(table, 0.0, signs={0: SIGNS[seed % 24]})
        before = list(table.signs)
        _next_round(table, 1.0)
        open_round(table, 2.0)
        assert all(now != then for now, then in zip(table.signs, before)), (seed, before, table.signs)


def test_r07_signs_are_picked_anew_every_round():
    table = new_table(4)
    open_round(table, 0.0, signs={0: "fox", 1: "owl"})
    _next_round(table, 1.0)

    assert table.phase is Phase.SIGNING and table.signs == [None, None]
    assert view(table, 0, 1.0).sign is None
    accept(table.act(0, a.PickSign("fox"), 1.5))  # the same sign again is allowed: it is a new pick


def test_r07_the_cards_are_dealt_when_the_round_opens_not_before():
    table = new_table(4)
    emits = table.start(0.0)
    accept(table.act(0, a.PickSign("fox"), 0.5))

    assert all(table.hand(seat) == () for seat in range(4)) and table.center == []
    assert view(table, 0, 0.5).hand == () and view(table, 0, 0.5).center == ()
    assert not events_of(emits, e.HandDealt) and not events_of(emits, e.Dealt)

    emits = open_round(table, 1.0)

    assert len(events_of(emits, e.HandDealt)) == 4 and len(events_of(emits, e.Dealt)) == 1
    kinds = [type(emit.event) for emit in emits]
    assert kinds.index(e.RoundOpened) < kinds.index(e.Dealt)
