"""R8–R12: swapping, its cooldown, the contested center, the channel and its cooldown."""

from __future__ import annotations

import pytest

from quatro_shared.games.quatro import actions as a
from quatro_shared.games.quatro import events as e
from quatro_shared.games.quatro.actions import Reason

from helpers.engine import (
    PLAYER_COUNTS,
    accept,
    arrange,
    assert_cards_conserved,
    events_of,
    new_table,
    open_round,
    refused,
    round_table,
    seen_by,
    swap_any,
)
from quatro_server.games.quatro.engine import view
from quatro_server.timing import FAST, STANDARD

T0 = 1.0  # a moment inside the round, which opens at 0


# --- R8 Swapping -----------------------------------------------------------------------------------


def test_r08_a_swap_trades_a_hand_card_and_a_center_slot_in_one_move():
    table = round_table(4)
    arrange(table, {0: ["AS", "KS", "QS", "JS"]}, center=["AH", "KH", "QH", "JH"])

    accept(table.act(0, a.Swap("KS", 2, "QH"), T0))

    assert sorted(table.hand(0)) == sorted(["AS", "QH", "QS", "JS"])
    assert table.center == ["AH", "KH", "KS", "JH"]
    assert_cards_conserved(table)


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_r08_who_swapped_what_went_down_and_what_came_up_are_public(players):
    table = round_table(players)
    give, take = table.hand(1)[0], table.center[3]

    emits = accept(table.act(1, a.Swap(give, 3, take), T0))

    for seat in range(players):
        assert seen_by(table, emits, seat) == [e.Swapped(1, 3, give, take)]
        assert view(table, seat, T0).center[3] == give


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_r08_no_turns_everyone_swaps_at_the_same_moment(players):
    table = round_table(players)
    for seat in range(players):
        accept(swap_any(table, seat, T0, slot=seat % 4))
    assert_cards_conserved(table)


def test_r08_a_swap_puts_down_a_card_of_ones_own_hand_and_only_during_the_round():
    table = round_table(4)
    other = table.hand(1)[0]
    refused(table.act(0, a.Swap(other, 0, table.center[0]), T0), Reason.NOT_IN_HAND)
    refused(table.act(0, a.Swap(table.hand(0)[0], 4, table.center[0]), T0), Reason.BAD_ARGUMENT)

    signing = new_table(4)
    signing.start(0.0)
    refused(signing.act(0, a.Swap("AS", 0, "KS"), T0), Reason.WRONG_PHASE)


# --- R9 Swap cooldown ------------------------------------------------------------------------------


@pytest.mark.parametrize("timing", [FAST, STANDARD], ids=["fast", "standard"])
def test_r09_after_a_swap_the_player_waits_the_swap_cooldown(timing):
    table = round_table(4, timing=timing)
    cooldown = timing.swap_cooldown
    accept(swap_any(table, 0, T0))

    refusal = refused(swap_any(table, 0, T0 + cooldown / 2, slot=1), Reason.COOLDOWN).refusal
    assert refusal.wait == pytest.approx(cooldown / 2)
    assert view(table, 0, T0 + cooldown / 2).swap_wait_ms == round(cooldown / 2 * 1000)

    accept(swap_any(table, 0, T0 + cooldown, slot=1))


def test_r09_no_other_limit():
    table = round_table(4)
    accept(swap_any(table, 0, T0))
    accept(swap_any(table, 1, T0, slot=1))  # the cooldown is the swapper's alone

    now = T0
    for i in range(20):  # one swap every cooldown, as long as the round lasts
        now += FAST.swap_cooldown
        accept(swap_any(table, 0, now, slot=i % 4))


# --- R10 Contested center --------------------------------------------------------------------------


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_r10_two_swaps_for_one_slot_at_the_same_moment_the_first_to_arrive_wins(players):
    table = round_table(players)
    expected = table.center[0]
    first, second = 0, 1
    second_hand = table.hand(second)

    accept(table.act(first, a.Swap(table.hand(first)[0], 0, expected), T0))
    outcome = table.act(second, a.Swap(second_hand[0], 0, expected), T0)

    refused(outcome, Reason.TAKEN)
    assert outcome.refusal.wait is None
    assert outcome.events == []
    assert table.hand(second) == second_hand
    assert view(table, second, T0).swap_wait_ms == 0  # it cost nothing: no cooldown started
    accept(table.act(second, a.Swap(second_hand[0], 1, table.center[1]), T0))  # free to swap elsewhere at once
    assert_cards_conserved(table)


def test_r10_a_stale_expectation_is_refused_even_much_later():
    table = round_table(4)
    stale = table.center[2]
    accept(swap_any(table, 0, T0, slot=2))
    refused(table.act(3, a.Swap(table.hand(3)[0], 2, stale), T0 + 5.0), Reason.TAKEN)


# --- R11 The channel -------------------------------------------------------------------------------

P = FAST.pulse_interval


def _pulses(emits):
    return events_of(emits, e.Pulse)


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_r11_taking_control_is_visible_to_the_whole_table_at_once(players):
    table = round_table(players)
    emits = accept(table.act(1, a.TakeChannel(), T0))
    for seat in range(players):
        assert seen_by(table, emits, seat) == [e.ChannelTaken(1)]
        assert view(table, seat, T0).seats[1].channel_held


def test_r11_pulses_fall_every_interval_from_the_take_and_show_the_current_emoji_to_everyone():
    table = round_table(4)
    accept(table.act(1, a.TakeChannel(), T0))
    accept(table.act(1, a.ChooseEmoji("fox"), T0 + 0.1))
    accept(table.act(1, a.ChooseEmoji("owl"), T0 + P - 0.1))  # changed at will: the pulse shows the latest

    assert _pulses(table.advance(T0 + P - 0.01)) == []
    assert table.next_deadline() == T0 + P
    emits = table.advance(T0 + P)

    assert _pulses(emits) == [e.Pulse(1, "owl")]
    for seat in range(4):  # partner (seat 3) included
        assert seen_by(table, emits, seat) == [e.Pulse(1, "owl")]
        assert view(table, seat, T0 + P).seats[1].last_pulse == "owl"
    assert _pulses(table.advance(T0 + 2 * P - 0.01)) == []
    assert _pulses(table.advance(T0 + 2 * P)) == [e.Pulse(1, "owl")]
    assert _pulses(table.advance(T0 + 4 * P)) == [e.Pulse(1, "owl")] * 2


def test_r11_nothing_is_sent_before_an_emoji_is_chosen_and_the_choice_is_the_choosers_alone():
    table = round_table(4)
    accept(table.act(1, a.TakeChannel(), T0))
    assert table.advance(T0 + 3 * P) == []

    emits = accept(table.act(1, a.ChooseEmoji("fox"), T0 + 3 * P + 0.5))

    assert [emit.seat for emit in emits] == [1]  # told to the chooser alone
    for seat in (0, 2, 3):
        assert seen_by(table, emits, seat) == []
        assert view(table, seat, T0 + 3 * P + 0.5).channel_sign is None


def test_r11_a_pulse_with_no_emoji_chosen_shows_nothing_and_the_beat_stays_on_the_take():
    """Taken at T0, chosen at T0 + 2.5 P: the pulses at T0 + P and T0 + 2P showed nothing, and the first
    emoji falls at T0 + 3P, not at the next call to advance and not twice."""
    table = round_table(4)
    accept(table.act(1, a.TakeChannel(), T0))
    accept(table.act(1, a.ChooseEmoji("fox"), T0 + 2.5 * P))

    assert table.next_deadline() == T0 + 3 * P
    assert _pulses(table.advance(T0 + 2.5 * P + 0.01)) == []
    assert view(table, 0, T0 + 2.5 * P + 0.01).seats[1].last_pulse is None
    assert _pulses(table.advance(T0 + 3 * P)) == [e.Pulse(1, "fox")]
    assert view(table, 0, T0 + 3 * P).seats[1].last_pulse_ms == 0


def test_r11_clearing_the_emoji_stops_the_pulses_until_one_is_chosen_again():
    table = round_table(4)
    accept(table.act(1, a.TakeChannel(), T0))
    accept(table.act(1, a.ChooseEmoji("fox"), T0))
    assert _pulses(table.advance(T0 + P)) == [e.Pulse(1, "fox")]
    accept(table.act(1, a.ChooseEmoji(None), T0 + P + 0.1))
    assert _pulses(table.advance(T0 + 3 * P)) == []

    accept(table.act(1, a.ChooseEmoji("owl"), T0 + 3.5 * P))

    assert _pulses(table.advance(T0 + 4 * P)) == [e.Pulse(1, "owl")]


def test_r11_releasing_control_clears_the_choice():
    table = round_table(4)
    accept(table.act(1, a.TakeChannel(), T0))
    accept(table.act(1, a.ChooseEmoji("fox"), T0))
    released_at = T0 + FAST.channel_cooldown

    emits = accept(table.act(1, a.ReleaseChannel(), released_at))

    for seat in range(4):
        assert seen_by(table, emits, seat) == [e.ChannelReleased(1)]
    assert view(table, 1, released_at).channel_sign is None
    assert _pulses(table.advance(released_at + 3 * P)) == []
    retaken_at = released_at + 3 * P
    accept(table.act(1, a.TakeChannel(), retaken_at))
    assert view(table, 1, retaken_at).channel_sign is None
    assert _pulses(table.advance(retaken_at + 2 * P)) == []  # the old choice does not come back


def test_r11_an_emoji_is_chosen_only_while_in_control():
    table = round_table(4)
    refused(table.act(1, a.ChooseEmoji("fox"), T0), Reason.CHANNEL_NOT_HELD)
    refused(table.act(1, a.ReleaseChannel(), T0), Reason.CHANNEL_NOT_HELD)
    accept(table.act(1, a.TakeChannel(), T0))
    refused(table.act(1, a.TakeChannel(), T0 + 1.0), Reason.CHANNEL_HELD)


# --- R12 Channel cooldown --------------------------------------------------------------------------


@pytest.mark.parametrize("timing", [FAST, STANDARD], ids=["fast", "standard"])
def test_r12_between_two_changes_of_control_the_player_waits_the_channel_cooldown(timing):
    table = round_table(4, timing=timing)
    cooldown = timing.channel_cooldown
    accept(table.act(1, a.TakeChannel(), T0))

    refusal = refused(table.act(1, a.ReleaseChannel(), T0 + cooldown / 2), Reason.COOLDOWN).refusal
    assert refusal.wait == pytest.approx(cooldown / 2)
    released_at = T0 + cooldown
    accept(table.act(1, a.ReleaseChannel(), released_at))

    refused(table.act(1, a.TakeChannel(), released_at + cooldown / 2), Reason.COOLDOWN)
    accept(table.act(1, a.TakeChannel(), released_at + cooldown))


def test_r12_choosing_an_emoji_is_not_a_change_of_control():
    table = round_table(4)
    cooldown = FAST.channel_cooldown
    accept(table.act(1, a.TakeChannel(), T0))

    for i in range(5):  # as often as wished, cooldown or not
        accept(table.act(1, a.ChooseEmoji(["fox", "owl"][i % 2]), T0 + i * cooldown / 10))
    assert view(table, 1, T0 + cooldown / 2).channel_wait_ms == round(cooldown / 2 * 1000)

    accept(table.act(1, a.ReleaseChannel(), T0 + cooldown))  # the choices did not restart the cooldown


def test_r12_the_cooldown_is_ones_own():
    table = new_table(4)
    open_round(table)
    accept(table.act(0, a.TakeChannel(), T0))
    accept(table.act(1, a.TakeChannel(), T0))
    accept(table.act(2, a.TakeChannel(), T0))
