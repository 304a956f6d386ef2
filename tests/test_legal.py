"""The one table of what each phase accepts, and ``legal``: every action a seat's view offers is one the engine
takes at that moment, in every phase of many random matches; and what a phase does not accept is refused by the
table's reason, whatever the action."""

from __future__ import annotations

import copy
import random

import pytest

from quatro_server.engine import view
from quatro_shared import actions as a
from quatro_shared.legal import ACCEPTS, legal, phase_refusal
from quatro_shared.views import Phase

from engine_helpers import new_table, random_play


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


@pytest.mark.parametrize("phase", [Phase.SIGNING, Phase.ROUND, Phase.BREAK])
def test_r17_what_a_phase_does_not_accept_is_refused_by_the_table(phase):
    for action in a.PLAYER_ACTIONS:
        reason = phase_refusal(phase, action)
        if action in ACCEPTS[phase]:
            assert reason is None
        elif phase is Phase.BREAK and action in ACCEPTS[Phase.ROUND]:
            assert reason is a.Reason.ROUND_OVER  # R17: too late for the round just ended
        else:
            assert reason is a.Reason.WRONG_PHASE
    assert set().union(*ACCEPTS.values()) == set(a.PLAYER_ACTIONS)  # every player action belongs to some phase
