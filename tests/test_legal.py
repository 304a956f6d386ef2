"""The one table of what each phase accepts, and ``legal``: every action a seat's view offers is one the engine
takes at that moment, in every phase of many random matches; and what a phase does not accept is refused by the
table's reason, whatever the action."""

from __future__ import annotations

import copy
import dataclasses
import random

import pytest

from quatro_server.engine import view
from quatro_shared import actions as a
from quatro_shared.legal import ACCEPTS, legal, phase_refusal
from quatro_shared.views import Phase

from engine_helpers import FAST, new_table, open_round, random_play


@pytest.mark.parametrize("players", [4, 6, 8])
def test_r5_to_r18_every_action_legal_offers_is_taken_by_the_engine(players):
    rng = random.Random(players)
    offered: dict[Phase, int] = {}
    for match in range(6):
        table = new_table(players, seed=match, bots=range(1, players, 2))
        for now, _ in random_play(table, rng, steps=400):
            seat = rng.randrange(players)
            moves = legal(view(table, seat, now))
            for action in rng.sample(moves, min(len(moves), 6)):
                trial = copy.deepcopy(table)
                refusal = trial.act(seat, action, now).refusal
                if refusal is not None and refusal.reason is a.Reason.COOLDOWN and refusal.wait is not None:
                    assert refusal.wait < 0.0005, (seat, action, refusal)  # below the view's millisecond
                    continue
                assert refusal is None, (table.phase, seat, action, refusal)
                offered[table.phase] = offered.get(table.phase, 0) + 1
            if table.phase is Phase.OVER:
                break
    assert offered.get(Phase.SIGNING) and offered.get(Phase.ROUND), offered  # the test saw the phases that matter


_ROUND_ACTIONS = {a.Swap, a.TakeChannel, a.ReleaseChannel, a.ChooseEmoji, a.Call, a.Counter, a.AskReshuffle, a.Vote}
#: What each phase in play says of every player action, written out (R5-R18): None takes it.
_SAYS: dict[Phase, dict[type[a.Action], a.Reason | None]] = {
    Phase.SIGNING: {a.Ready: None, a.PickSign: None, a.NextRound: a.Reason.WRONG_PHASE}
    | dict.fromkeys(_ROUND_ACTIONS, a.Reason.WRONG_PHASE),
    Phase.ROUND: {a.Ready: a.Reason.WRONG_PHASE, a.PickSign: a.Reason.WRONG_PHASE, a.NextRound: a.Reason.WRONG_PHASE}
    | dict.fromkeys(_ROUND_ACTIONS),
    Phase.BREAK: {a.Ready: a.Reason.WRONG_PHASE, a.PickSign: a.Reason.WRONG_PHASE, a.NextRound: None}
    | dict.fromkeys(_ROUND_ACTIONS, a.Reason.ROUND_OVER),  # R17: too late for the round just ended
}


@pytest.mark.parametrize("phase", [Phase.SIGNING, Phase.ROUND, Phase.BREAK])
def test_r17_what_a_phase_does_not_accept_is_refused_by_the_table(phase):
    assert set(_SAYS[phase]) == set(a.PLAYER_ACTIONS)
    assert {action: phase_refusal(phase, action) for action in a.PLAYER_ACTIONS} == _SAYS[phase]
    assert set(ACCEPTS) == {Phase.SIGNING, Phase.ROUND, Phase.BREAK}  # before and after the match: see below


#: One of every player action, values that the rules would refuse included.
_EVERY_ACTION = [
    a.Ready(), a.PickSign("no-such-sign"), a.Swap("AS", 9, "KS"), a.TakeChannel(), a.ReleaseChannel(),
    a.ChooseEmoji("no-such-sign"), a.Call(), a.Counter(99), a.AskReshuffle(), a.Vote(True), a.NextRound(),
]


def test_r20_before_and_after_the_match_every_action_is_refused_whatever_its_values():
    """No phase table is asked before the match (``not_started``) or once it is over (``match_over``, R20): the
    reason comes before the action's own values are judged."""
    assert {type(action) for action in _EVERY_ACTION} == set(a.PLAYER_ACTIONS)
    waiting = new_table(4, seed=1)
    assert waiting.phase is Phase.LOBBY
    over = new_table(4, seed=1, timing=dataclasses.replace(FAST, target_score=1))
    open_round(over)
    assert over.act(0, a.Call(), 0.1).refusal is None  # right or wrong, a team reaches 1
    assert over.phase is Phase.OVER
    for action in _EVERY_ACTION:
        assert waiting.act(0, action, 1.0).refusal == a.Refusal(a.Reason.NOT_STARTED), action
        assert over.act(0, action, over.now).refusal == a.Refusal(a.Reason.MATCH_OVER), action
