"""Protocol 2: a seat's state built from events equals the server's view, at every step of many random matches.

The server sends a full view only in a snapshot; otherwise the events the seat may see, the table's countdowns
and the seat's own cooldowns. ``quatro_shared.apply`` rebuilds the view from them. Here the engine is played at
random (the property tests' driver: plausible play, garbage, disconnections, late callers, deadline jumps) and,
after every step, each seat's state is held against ``engine.view``: exactly, countdowns included, when the step
sent the seat an update; every field but the countdowns when it did not (those run with time, and a client
counts them down itself). A state that drifted from the truth without a snapshot is a bug in the rules' mirror.
"""

from __future__ import annotations

import random

import pytest

from quatro_server.engine import Table, clock, events_for, own_timers, view
from quatro_server.timing import FAST
from quatro_shared import events as e
from quatro_shared.apply import ApplyError, apply, without_countdowns
from quatro_shared.views import Clock, OwnTimers, Phase

from strategies import Driver, GameSetup, Mix

SEEDS = range(24)


def _setup(seed: int) -> GameSetup:
    r = random.Random(seed)
    players = r.choice((4, 6, 8))
    bots = frozenset(i for i in range(players) if r.random() < 0.25)
    return GameSetup(players, bots, 0, None, seed)


def _play(seed: int, steps: int) -> tuple[int, int]:
    """Play one random match; returns (updates applied, steps checked) so the test can tell it did real work."""
    setup = _setup(seed)
    table: Table = setup.table()
    driver = Driver(table, random.Random(seed * 7919 + 1), Mix(garbage=0.03))
    start = driver.start_step()
    table.start(start.now)
    states = [view(table, seat, start.now) for seat in range(table.players)]  # the snapshots a match starts with
    applied = checked = 0
    for _ in range(steps):
        step = driver.step()
        emits = step.play(table)
        now = step.now
        public = clock(table, now)
        for seat in range(table.players):
            truth = view(table, seat, now)
            seen = events_for(emits, seat, table.players)
            if seen:
                states[seat] = apply(states[seat], seen, public, own_timers(table, seat, now))
                assert states[seat] == truth, (seed, seat, seen)
                applied += 1
            else:
                assert without_countdowns(states[seat]) == without_countdowns(truth), (seed, seat, emits)
            checked += 1
        if table.phase is Phase.OVER:
            break
    return applied, checked


@pytest.mark.parametrize("seed", SEEDS)
def test_state_built_from_events_equals_the_view_at_every_step(seed: int) -> None:
    applied, checked = _play(seed, steps=600)
    assert applied > 50 and checked > 200


def test_countdowns_come_from_the_update_and_free_cooldowns_may_be_left_out() -> None:
    table = Table(4, timing=FAST, rng=random.Random(3))
    table.start(0.0)
    before = view(table, 0, 0.0)
    later = apply(before, [], clock(table, 1.5), None)
    assert later == view(table, 0, 1.5) and later.phase_ms == before.phase_ms - 1500  # type: ignore[operator]
    assert own_timers(table, 0, 1.5) == OwnTimers(0, 0)


def test_an_event_that_cannot_follow_the_state_is_an_apply_error() -> None:
    table = Table(4, timing=FAST, rng=random.Random(3))
    table.start(0.0)
    state = view(table, 0, 0.0)
    with pytest.raises(ApplyError):
        apply(state, [e.Swapped(0, 2, "AS", "KS")], None, None)  # no center, no such card in hand
    with pytest.raises(ApplyError):
        apply(state, [], Clock(None, (None,), (None,)), None)  # a clock for another table size
