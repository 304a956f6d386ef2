"""R13, R14, R17, R20: the call, the counter, the end of a round, and winning the match."""

from __future__ import annotations

import pytest

from quatro_shared.games.quatro import actions as a
from quatro_shared.games.quatro import events as e
from quatro_shared.games.quatro.actions import Reason
from quatro_shared.games.quatro.cards import RANKS
from quatro_shared.games.quatro.signs import SIGNS
from quatro_shared.games.quatro.views import Phase

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
)
from quatro_server.games.quatro.engine import view
from quatro_server.timing import FAST

T0 = 1.0


def _points(table, emits):
    """The points each team scored in this round, from the public reveal."""
    (ended,) = events_of(emits, e.RoundEnded)
    return [ended.scorers.count(team) for team in range(table.teams)]


# --- R13 "Quatro!" ---------------------------------------------------------------------------------


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_r13_partner_holds_four_of_a_kind_the_callers_team_scores_one(players):
    for caller in range(players):
        table = round_table(players)
        arrange(table, {table.partner_of(caller): four_of("Q")})

        emits = accept(table.act(caller, a.Call(), T0))

        team = table.team_of(caller)
        assert _points(table, emits) == [int(t == team) for t in range(table.teams)]
        assert table.scores == [int(t == team) for t in range(table.teams)]
        (ended,) = events_of(emits, e.RoundEnded)
        assert (ended.outcome, ended.by, ended.right) == ("call", caller, True)


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_r13_the_callers_own_four_of_a_kind_does_not_count_every_other_team_scores(players):
    for caller in range(players):
        table = round_table(players)
        arrange(table, {caller: four_of("A")})  # the caller's own hand: never checked

        emits = accept(table.act(caller, a.Call(), T0))

        team = table.team_of(caller)
        assert _points(table, emits) == [int(t != team) for t in range(table.teams)]
        assert table.scores == [int(t != team) for t in range(table.teams)]
        assert events_of(emits, e.RoundEnded)[0].right is False


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_r13_a_wrong_call_scores_for_every_other_team_even_one_holding_four(players):
    table = round_table(players)
    arrange(table, {1: four_of("K")})  # seat 1 is an opponent of seat 0, and holds four

    emits = accept(table.act(0, a.Call(), T0))

    assert _points(table, emits) == [0] + [1] * (table.teams - 1)


# --- R14 "Counter!" --------------------------------------------------------------------------------


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_r14_a_right_counter_scores_for_the_accusers_team(players):
    accused = 1
    for holder in (accused, accused + players // 2):  # either player of the accused team
        table = round_table(players)
        arrange(table, {holder: four_of("J")})

        emits = accept(table.act(0, a.Counter(accused), T0))

        assert _points(table, emits) == [1] + [0] * (table.teams - 1)
        (ended,) = events_of(emits, e.RoundEnded)
        assert (ended.outcome, ended.by, ended.accused, ended.right) == ("counter", 0, accused, True)


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_r14_a_wrong_counter_scores_for_the_accused_team_even_if_another_team_held_four(players):
    table = round_table(players)
    # Everyone but the accused team (1) holds four: the accuser, its partner, the other teams.
    holders = [seat for seat in range(players) if table.team_of(seat) != 1]
    arrange(table, {seat: four_of(rank) for seat, rank in zip(holders, RANKS)})

    emits = accept(table.act(0, a.Counter(1), T0))

    assert _points(table, emits) == [int(t == 1) for t in range(table.teams)]
    assert events_of(emits, e.RoundEnded)[0].right is False


def test_r14_it_is_the_hand_at_that_instant_that_counts():
    table = round_table(4)
    arrange(table, {1: ["AS", "AH", "AD", "KS"]}, center=["AC", "QS", "QH", "QD"])
    accept(table.act(1, a.Swap("KS", 0, "AC"), T0))  # seat 1 completes its four of a kind

    emits = accept(table.act(0, a.Counter(), T0))  # in the same instant

    assert _points(table, emits) == [1, 0]


def test_r14_a_four_broken_just_before_the_counter_does_not_count():
    table = round_table(4)
    arrange(table, {1: four_of("A")}, center=["KS", "QS", "QH", "QD"])
    accept(table.act(1, a.Swap("AS", 0, "KS"), T0))

    emits = accept(table.act(0, a.Counter(), T0))

    assert _points(table, emits) == [0, 1]


def test_r14_with_four_players_the_only_opposing_team_is_accused():
    for accuser in range(4):
        table = round_table(4)
        opponents = 1 - table.team_of(accuser)
        arrange(table, {opponents: four_of("10")})
        emits = accept(table.act(accuser, a.Counter(), T0))
        (ended,) = events_of(emits, e.RoundEnded)
        assert (ended.accused, ended.right) == (opponents, True)


@pytest.mark.parametrize("players", [6, 8])
def test_r14_with_six_or_eight_players_the_accuser_picks_the_team(players):
    table = round_table(players)
    refused(table.act(0, a.Counter(), T0), Reason.TEAM_REQUIRED)
    for team in range(1, table.teams):
        table = round_table(players)
        arrange(table, {team: four_of("9")})
        emits = accept(table.act(0, a.Counter(team), T0))
        assert events_of(emits, e.RoundEnded)[0].accused == team


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_r14_only_an_opposing_team_may_be_accused(players):
    table = round_table(players)
    refused(table.act(0, a.Counter(0), T0), Reason.NOT_OPPONENT)
    refused(table.act(players // 2, a.Counter(0), T0), Reason.NOT_OPPONENT)
    refused(table.act(0, a.Counter(table.teams), T0), Reason.BAD_ARGUMENT)
    assert table.phase is Phase.ROUND


# --- R17 End of round ------------------------------------------------------------------------------


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_r17_the_round_stops_at_the_first_call_and_later_ones_are_refused(players):
    table = round_table(players)
    accept(table.act(0, a.Call(), T0))
    scores = list(table.scores)

    for seat in range(1, players):
        refused(table.act(seat, a.Call(), T0), Reason.ROUND_OVER)
        refused(table.act(seat, a.Counter(0 if table.team_of(seat) else 1), T0), Reason.ROUND_OVER)
        refused(table.act(seat, a.Swap(table.hand(seat)[0], 0, table.center[0]), T0), Reason.ROUND_OVER)
    assert table.scores == scores and table.phase is Phase.BREAK


def test_r17_the_round_stops_at_the_first_counter_right_or_wrong():
    table = round_table(4)
    accept(table.act(0, a.Counter(), T0))
    refused(table.act(1, a.Counter(), T0), Reason.ROUND_OVER)
    refused(table.act(2, a.Call(), T0 + 0.1), Reason.ROUND_OVER)
    assert sum(table.scores) == 1


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_r17_all_hands_every_four_of_a_kind_and_every_sign_are_revealed(players):
    table = round_table(players)
    arrange(table, {1: four_of("A"), 2: four_of("K")})
    hands = tuple(table.hand(seat) for seat in range(players))
    center = tuple(table.center)

    emits = accept(table.act(1 + players // 2, a.Call(), T0))  # seat 1's partner calls

    (ended,) = events_of(emits, e.RoundEnded)
    assert ended.hands == hands and ended.center == center
    assert ended.fours == (1, 2)
    assert ended.signs == tuple(SIGNS[team] for team in range(table.teams))
    for seat in range(players):
        assert ended in seen_by(table, emits, seat)
        summary = view(table, seat, T0).summary
        assert (summary.hands, summary.fours, summary.signs) == (hands, (1, 2), ended.signs)


# --- R20 Winning -----------------------------------------------------------------------------------


def _play_round(table, now, hands, caller):
    """Open a round at ``now``, set ``hands``, let ``caller`` call, and skip the break (host)."""
    if table.phase is Phase.BREAK:
        accept(table.act(table.host, a.NextRound(), now))
    open_round(table, now)
    arrange(table, hands)
    return accept(table.act(caller, a.Call(), now + 0.5))


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_r20_the_first_team_to_reach_the_target_wins(players):
    table = new_table(players)
    target = FAST.target_score
    for round_ in range(target):
        emits = _play_round(table, round_ * 2.0, {players // 2: four_of("A")}, caller=0)  # team 0 right
        assert table.scores == [round_ + 1] + [0] * (table.teams - 1)
        assert bool(events_of(emits, e.MatchOver)) == (round_ == target - 1)

    assert events_of(emits, e.MatchOver) == [e.MatchOver((0,), tuple(table.scores))]
    assert table.phase is Phase.OVER and table.winners == (0,)
    assert view(table, 3, 100.0).winners == (0,)
    refused(table.act(0, a.NextRound(), 100.0), Reason.MATCH_OVER)
    assert table.advance(1000.0) == []  # no next round


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_r20_a_wrong_call_can_give_the_match_to_several_teams_together(players):
    table = new_table(players)
    for round_ in range(FAST.target_score):  # seat 0 calls wrong every round
        emits = _play_round(table, round_ * 2.0, {}, caller=0)

    others = tuple(range(1, table.teams))
    assert table.scores == [0] + [FAST.target_score] * len(others)
    assert events_of(emits, e.MatchOver) == [e.MatchOver(others, tuple(table.scores))]
    assert table.winners == others  # 1 winner with 4 players, 2 with 6, 3 with 8


@pytest.mark.parametrize("players", [6, 8])
def test_r20_only_the_teams_at_the_top_win(players):
    table = new_table(players)
    _play_round(table, 0.0, {1 + players // 2: four_of("A")}, caller=1)  # team 1 leads 1–0
    for round_ in range(1, FAST.target_score):
        emits = _play_round(table, round_ * 2.0, {}, caller=0)  # wrong: every other team scores

    assert table.scores[1] == FAST.target_score and table.scores[2] == FAST.target_score - 1
    assert table.winners == (1,) and events_of(emits, e.MatchOver)[0].winners == (1,)


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_r20_a_point_once_won_is_never_taken_away(players):
    table = new_table(players, seed=20)
    history = []
    for round_ in range(30):
        if table.phase is Phase.OVER:
            break
        caller = round_ % players
        hands = {table.partner_of(caller): four_of("A")} if round_ % 3 else {}
        emits = _play_round(table, round_ * 2.0, hands, caller)
        (ended,) = events_of(emits, e.RoundEnded)
        history.append(ended.scores)
    for before, after in zip(history, history[1:]):
        assert all(b <= a for b, a in zip(before, after))
    assert table.phase is Phase.OVER
