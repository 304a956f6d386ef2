"""Protocol 3: a seat's state built from updates equals the server's view, at every step of many random matches.

The server sends a full view only in a snapshot; otherwise the events the seat may see and, when a countdown moved
otherwise than by time passing, the table's countdowns and the seat's own cooldowns. ``quatro_shared.apply.Tracker``
rebuilds the view from them, running the countdowns on between clocks. Here the engine is played at random (the
property tests' driver: plausible play, garbage, disconnections, late callers, deadline jumps), each batch is turned
into the very frames the server sends (``quatro_server.updates.Batch``) and read back as a client reads them, and,
after every step, each seat's state is held against ``engine.view``: every field equal and every countdown within
2 ms (three roundings to the millisecond: the clock's, and the two updates' ``at``) when the step sent the seat an
update; every field but the countdowns
when it did not (those run with time, and a client counts them down itself). A state that drifted from the truth
without a snapshot is a bug in the rules' mirror or in what the server leaves out.
"""

from __future__ import annotations

import random

import pytest

from quatro_server.engine import Table, clock, events_for, own_timers, view
from quatro_server.timing import FAST
from quatro_server.updates import Batch
from quatro_shared import events as e
from quatro_shared import messages as m
from quatro_shared import seating
from quatro_shared.apply import ApplyError, Tracker, apply, without_countdowns
from quatro_shared.framing import FrameDecoder
from quatro_shared.views import Clock, OwnTimers, Phase
from quatro_shared.wire import push_from_wire

from countdowns import assert_same_view
from strategies import Driver, GameSetup, Mix

SEEDS = range(24)


def _setup(seed: int) -> GameSetup:
    r = random.Random(seed)
    players = r.choice((4, 6, 8))
    bots = frozenset(i for i in range(players) if r.random() < 0.25)
    return GameSetup(players, bots, 0, None, seed)


def _received(frame: bytes) -> m.Update:
    (message,) = FrameDecoder().feed(frame)
    update = push_from_wire(message)
    assert isinstance(update, m.Update)
    return update


def _play(seed: int, steps: int) -> tuple[int, int, int]:
    """Play one random match; returns (updates applied, of which without a clock, steps checked), so the test can
    tell it did real work."""
    setup = _setup(seed)
    table: Table = setup.table()
    driver = Driver(table, random.Random(seed * 7919 + 1), Mix(garbage=0.03))
    start = driver.start_step()
    table.start(start.now)
    # The snapshots a match starts with.
    at = round(start.now * 1000)
    trackers = [Tracker(view(table, seat, start.now), at) for seat in range(table.players)]
    applied = clockless = checked = 0
    for _ in range(steps):
        step = driver.step()
        emits = step.play(table)
        now = table.now  # the instant the server's countdowns are taken at (a late caller's is the table's)
        batch = Batch(1, table, emits, step.now) if emits else None
        for seat in range(table.players):
            truth = view(table, seat, now)
            seen = batch.seen_by(seat, seating.team_of(seat, table.players)) if batch is not None else ()
            if seen:
                assert batch is not None
                update = _received(batch.update(seat, applied + 1, seen, False))
                assert list(update.events) == events_for(emits, seat, table.players)
                clockless += update.clock is None
                assert update.at == round(now * 1000)
                assert_same_view(trackers[seat].update(update.events, update.clock, update.own, update.at), truth)
                applied += 1
            else:
                assert without_countdowns(trackers[seat].view) == without_countdowns(truth), (seed, seat, emits)
            checked += 1
        if table.phase is Phase.OVER:
            break
    return applied, clockless, checked


@pytest.mark.parametrize("seed", SEEDS)
def test_state_built_from_updates_equals_the_view_at_every_step(seed: int) -> None:
    applied, clockless, checked = _play(seed, steps=600)
    assert applied > 50 and clockless > 10 and checked > 200


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
