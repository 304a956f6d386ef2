"""R15, R16: the reshuffle vote, and the round after a reshuffle."""

from __future__ import annotations

import pytest

from quatro_shared.games.quatro import actions as a
from quatro_shared.games.quatro import events as e
from quatro_shared.games.quatro.actions import Reason
from quatro_shared.games.quatro.cards import has_three_of_a_rank
from quatro_shared.games.quatro.views import Phase
from quatro_shared.tables import Disconnect

from helpers.engine import (
    PLAYER_COUNTS,
    accept,
    assert_cards_conserved,
    events_of,
    open_round,
    refused,
    round_table,
    seen_by,
    swap_any,
)
from quatro_server.games.quatro.engine import view
from quatro_server.timing import FAST

T0 = 1.0
WINDOW = FAST.vote_window
GAP = FAST.vote_gap


def _hands(table):
    return [table.hand(seat) for seat in range(table.players)], list(table.center)


def _ended(emits):
    return events_of(emits, e.VoteEnded)


# --- R15 Reshuffle vote ----------------------------------------------------------------------------


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_r15_every_other_connected_human_must_agree(players):
    bot, gone = 1, players - 1
    table = round_table(players, bots={bot})
    accept(table.act(gone, Disconnect(), 0.5))
    voters = tuple(seat for seat in range(players) if seat not in (0, bot, gone))
    before = _hands(table)

    emits = accept(table.act(0, a.AskReshuffle(), T0))
    assert events_of(emits, e.VoteStarted) == [e.VoteStarted(0, voters)]
    for seat in range(players):
        assert e.VoteStarted(0, voters) in seen_by(table, emits, seat)  # votes are public
    for i, voter in enumerate(voters[:-1]):
        emits = accept(table.act(voter, a.Vote(True), T0 + 0.1 * (i + 1)))
        assert events_of(emits, e.VoteCast) == [e.VoteCast(voter, True)]
        assert _ended(emits) == [] and _hands(table) == before
        assert view(table, 0, T0 + 0.1 * (i + 1)).vote.yes == tuple(sorted(voters[: i + 1]))

    emits = accept(table.act(voters[-1], a.Vote(True), T0 + WINDOW - 0.01))

    assert _ended(emits) == [e.VoteEnded(True, "agreed")]
    assert events_of(emits, e.Dealt)[0].reshuffle
    assert _hands(table) != before
    assert_cards_conserved(table)
    assert len(events_of(emits, e.HandDealt)) == players  # the disconnected seat gets its new hand too


def test_r15_bots_and_the_asker_do_not_vote():
    table = round_table(4, bots={1, 3})
    emits = accept(table.act(0, a.AskReshuffle(), T0))

    assert events_of(emits, e.VoteStarted) == [e.VoteStarted(0, (2,))]
    refused(table.act(1, a.Vote(True), T0), Reason.NOT_A_VOTER)
    refused(table.act(0, a.Vote(True), T0), Reason.NOT_A_VOTER)
    emits = accept(table.act(2, a.Vote(True), T0 + 0.1))  # the one human voter is enough
    assert _ended(emits) == [e.VoteEnded(True, "agreed")]


def test_r15_silence_is_no():
    table = round_table(4)
    before = _hands(table)
    accept(table.act(0, a.AskReshuffle(), T0))
    accept(table.act(1, a.Vote(True), T0 + 0.1))
    accept(table.act(2, a.Vote(True), T0 + 0.2))  # seat 3 says nothing

    assert _ended(table.advance(T0 + WINDOW - 0.01)) == []
    emits = table.advance(T0 + WINDOW)

    assert _ended(emits) == [e.VoteEnded(False, "timeout")]
    assert not events_of(emits, e.Dealt) and _hands(table) == before
    assert not table.reshuffle_used and view(table, 0, T0 + WINDOW).vote is None
    refused(table.act(3, a.Vote(True), T0 + WINDOW), Reason.NO_VOTE)  # too late


def test_r15_one_no_ends_the_vote_at_once():
    table = round_table(4)
    before = _hands(table)
    accept(table.act(0, a.AskReshuffle(), T0))
    accept(table.act(1, a.Vote(True), T0 + 0.1))

    emits = accept(table.act(2, a.Vote(False), T0 + 0.2))

    assert events_of(emits, e.VoteCast) == [e.VoteCast(2, False)]
    assert _ended(emits) == [e.VoteEnded(False, "refused")]
    assert _hands(table) == before
    refused(table.act(3, a.Vote(True), T0 + 0.3), Reason.NO_VOTE)


def test_r15_a_voter_who_disconnects_counts_as_silent_and_the_vote_ends_at_once():
    table = round_table(4)
    before = _hands(table)
    accept(table.act(0, a.AskReshuffle(), T0))
    accept(table.act(1, a.Vote(True), T0 + 0.1))
    accept(table.act(2, a.Vote(True), T0 + 0.2))

    emits = accept(table.act(3, Disconnect(), T0 + 0.3))

    assert _ended(emits) == [e.VoteEnded(False, "voter_left")]
    assert _hands(table) == before and not table.reshuffle_used


def test_r15_a_voter_who_already_said_yes_and_leaves_still_ends_the_vote():
    table = round_table(4)
    accept(table.act(0, a.AskReshuffle(), T0))
    accept(table.act(1, a.Vote(True), T0 + 0.1))
    emits = accept(table.act(1, Disconnect(), T0 + 0.2))
    assert _ended(emits) == [e.VoteEnded(False, "voter_left")]


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_r15_with_no_other_connected_human_the_request_passes_at_once(players):
    table = round_table(players, bots=range(1, players - 1))
    accept(table.act(players - 1, Disconnect(), 0.5))  # the only other human is away

    emits = accept(table.act(0, a.AskReshuffle(), T0))

    assert events_of(emits, e.VoteStarted) == [e.VoteStarted(0, ())]
    assert _ended(emits) == [e.VoteEnded(True, "agreed")]
    assert events_of(emits, e.Dealt)[0].reshuffle and table.reshuffle_used


def test_r15_at_most_one_reshuffle_per_round():
    table = round_table(4, bots={1, 2, 3})
    accept(table.act(0, a.AskReshuffle(), T0))

    refused(table.act(0, a.AskReshuffle(), T0 + GAP + 1.0), Reason.RESHUFFLE_USED)
    assert view(table, 0, T0 + GAP + 1.0).reshuffle_used

    accept(table.act(0, a.Call(), T0 + GAP + 1.0))
    accept(table.act(0, a.NextRound(), T0 + GAP + 1.0))
    open_round(table, T0 + GAP + 1.0)
    emits = accept(table.act(0, a.AskReshuffle(), T0 + GAP + 2.0))  # a new round, a new reshuffle
    assert _ended(emits) == [e.VoteEnded(True, "agreed")]


def test_r15_a_spent_reshuffle_shows_through_the_break_and_the_sign_phase_until_the_next_round_opens():
    """What protocol.md says of the view's reshuffle_used: it resets when a round opens, not when one ends."""
    table = round_table(4, bots={1, 2, 3})
    accept(table.act(0, a.AskReshuffle(), T0))
    accept(table.act(0, a.Call(), T0 + 1.0))
    assert table.phase is Phase.BREAK and view(table, 0, T0 + 1.0).reshuffle_used
    accept(table.act(0, a.NextRound(), T0 + 1.0))
    assert table.phase is Phase.SIGNING and view(table, 0, T0 + 1.0).reshuffle_used
    open_round(table, T0 + 2.0)
    assert not view(table, 0, T0 + 2.0).reshuffle_used


def test_r15_a_failed_vote_does_not_spend_the_rounds_reshuffle():
    table = round_table(4)
    accept(table.act(0, a.AskReshuffle(), T0))
    accept(table.act(1, a.Vote(False), T0 + 0.5))
    assert not view(table, 0, T0 + 0.5).reshuffle_used
    refused(table.act(0, a.AskReshuffle(), T0 + 1.0), Reason.VOTE_COOLDOWN)  # the gap, not the round's one reshuffle
    accept(table.act(0, a.AskReshuffle(), T0 + 0.5 + GAP))


def test_r15_only_one_vote_at_a_time():
    table = round_table(4)
    accept(table.act(0, a.AskReshuffle(), T0))
    refused(table.act(1, a.AskReshuffle(), T0 + 0.1), Reason.VOTE_PENDING)


def test_r15_the_vote_gap_runs_from_the_end_of_one_vote_to_the_start_of_the_next():
    table = round_table(4)
    accept(table.act(0, a.AskReshuffle(), T0))
    ended_at = T0 + WINDOW
    assert _ended(table.advance(ended_at)) == [e.VoteEnded(False, "timeout")]

    # Counted from the end (a timeout here), not the start: T0 + GAP is still too early.
    refusal = refused(table.act(1, a.AskReshuffle(), T0 + GAP), Reason.VOTE_COOLDOWN).refusal
    assert refusal.wait == pytest.approx(ended_at + GAP - (T0 + GAP))
    assert view(table, 1, T0 + GAP).vote_wait_ms == round((ended_at - T0) * 1000)
    refused(table.act(2, a.AskReshuffle(), ended_at + GAP - 0.01), Reason.VOTE_COOLDOWN)

    accept(table.act(2, a.AskReshuffle(), ended_at + GAP))
    refused_at = ended_at + GAP + 0.5
    accept(table.act(0, a.Vote(False), refused_at))  # a "no" ends it: the gap starts again there

    refused(table.act(3, a.AskReshuffle(), refused_at + GAP - 0.01), Reason.VOTE_COOLDOWN)
    accept(table.act(3, a.AskReshuffle(), refused_at + GAP))


def test_r15_play_goes_on_during_the_vote():
    table = round_table(4)
    accept(table.act(0, a.AskReshuffle(), T0))

    accept(swap_any(table, 1, T0 + 0.1))
    accept(table.act(2, a.TakeChannel(), T0 + 0.1))
    accept(table.act(2, a.ChooseEmoji("fox"), T0 + 0.1))
    assert events_of(table.advance(T0 + 0.1 + FAST.pulse_interval), e.Pulse) == [e.Pulse(2, "fox")]
    assert table.phase is Phase.ROUND and view(table, 0, T0 + 0.1 + FAST.pulse_interval).vote is not None

    emits = accept(table.act(3, a.Call(), T0 + 1.0))  # a call ends the round, and the vote with it

    assert _ended(emits) == [e.VoteEnded(False, "round_over")]
    assert events_of(emits, e.RoundEnded)


# --- R16 After a reshuffle -------------------------------------------------------------------------


def test_r16_after_a_reshuffle_the_round_carries_on_with_only_the_cards_changed():
    table = round_table(4, bots={1, 2, 3})  # seat 0's request passes at once
    accept(table.act(0, a.TakeChannel(), T0))
    accept(table.act(0, a.ChooseEmoji("fox"), T0))
    teams = [table.team_of(seat) for seat in range(4)]
    signs, ends_at, round_, scores = list(table.signs), table.phase_ends_at, table.round, list(table.scores)
    before = _hands(table)

    emits = accept(table.act(0, a.AskReshuffle(), T0 + 0.1))

    assert _hands(table) != before
    assert_cards_conserved(table)
    assert not any(has_three_of_a_rank(table.hand(seat)) for seat in range(4))  # R4 again
    assert table.phase is Phase.ROUND and table.round == round_
    assert [table.team_of(seat) for seat in range(4)] == teams
    assert table.signs == signs and table.scores == scores
    assert not events_of(emits, e.RoundEnded) and not events_of(emits, e.SignChosen)
    seat_view = view(table, 0, T0 + 0.1)
    assert seat_view.channel_held and seat_view.channel_sign == "fox"  # channels as they were
    assert events_of(table.advance(T0 + FAST.pulse_interval), e.Pulse) == [e.Pulse(0, "fox")]  # same beat
    assert table.phase_ends_at == ends_at  # same round timer
    assert events_of(table.advance(ends_at - 0.01), e.RoundEnded) == []
    (draw,) = events_of(table.advance(ends_at), e.RoundEnded)
    assert draw.outcome == "draw"
