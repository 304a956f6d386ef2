"""The server's update frames, assembled from pre-encoded parts (``quatro_server.updates``), are byte for byte the
message the protocol describes, for every seat of every batch of many random matches.

``Batch.update`` builds a frame from bytes shared by every seat that sees the same events (the events, the table's
clock) and packs only ``seq`` and the seat's own cooldowns per seat. Here the same update is written the plain way
(a dict of ``to_wire`` values, keys in the protocol's order, fields at their default left out; protocol 3: no clock
when the seat is shown only swaps and pulses on their beat, whatever else the batch held, and then cooldowns for the
swappers alone) and encoded with
``quatro_shared.framing.encode``: any drift in the fast path (a cooldown of the wrong seat, a stale clock, a clock
left out of a batch that moved a countdown, a ``seq`` past the one-byte range, an events array of the wrong
audience) shows as different bytes.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from quatro_server.engine import Emit, Table, clock, own_timers, view
from quatro_server.updates import Batch
from quatro_shared import events as e
from quatro_shared import seating
from quatro_shared.framing import encode
from quatro_shared.views import Phase
from quatro_shared.wire import to_wire

from strategies import Driver, GameSetup, Mix

SEEDS = range(12)


def _expected(table: Table, table_id: int, emits: list[Emit], seat: int, seq: int, now: float, snapshot: bool) -> bytes:
    team = seating.team_of(seat, table.players)
    shown = [emit for emit in emits if emit.visible_to(seat, team)]
    message: dict[str, Any] = {
        "kind": "update",
        "table": table_id,
        "seq": seq,
        "snapshot": snapshot,
        "at": round(max(now, table.now) * 1000),
        "events": [to_wire(emit.event) for emit in shown],
    }
    if snapshot:
        message["view"] = to_wire(view(table, seat, now))
        return encode(message)
    if _timeless(table, shown, now):  # decided from what the seat is shown alone (H3)
        if any(isinstance(emit.event, e.Swapped) and emit.event.seat == seat for emit in shown):
            message["own"] = {k: v for k, v in to_wire(own_timers(table, seat, now)).items() if v}
        return encode(message)
    c = to_wire(clock(table, now))
    message["clock"] = {k: v for k, v in c.items() if not (k == "vote_ms" and v is None) and not (k == "vote_wait_ms" and v == 0)}
    own = {k: v for k, v in to_wire(own_timers(table, seat, now)).items() if v}
    if own:
        message["own"] = own
    return encode(message)


def _timeless(table: Table, emits: list[Emit], now: float) -> bool:
    """These events moved no countdown but by time passing: only swaps, and pulses less than half an interval late."""
    now = max(now, table.now)
    for emit in emits:
        event = emit.event
        if isinstance(event, e.Pulse):
            fell = table._seats[event.seat].last_pulse_at
            if fell is None or now - fell >= table.timing.pulse_interval / 2:
                return False
        elif not isinstance(event, e.Swapped):
            return False
    return True


@pytest.mark.parametrize("seed", SEEDS)
def test_every_update_frame_is_the_protocols_message(seed: int) -> None:
    r = random.Random(seed)
    players = r.choice((4, 6, 8))
    setup = GameSetup(players, frozenset(), 0, None, seed)
    table = setup.table()
    driver = Driver(table, random.Random(seed * 7919 + 1), Mix(garbage=0.03))
    start = driver.start_step()
    table.start(start.now)
    seqs = [r.choice((0, 120, 250, 70_000)) for _ in range(players)]  # one byte, then wider ``seq``s
    compared = compared_public = timeless = hidden_company = 0
    for _ in range(400):
        step = driver.step()
        emits = step.play(table)
        if not emits:
            continue
        batch = Batch(7, table, emits, step.now)
        for seat in range(players):
            seen = batch.seen_by(seat, seating.team_of(seat, players))
            if not seen:
                continue
            seqs[seat] += 1
            snapshot = r.random() < 0.05
            got = batch.update(seat, seqs[seat], seen, snapshot)
            assert got == _expected(table, 7, emits, seat, seqs[seat], step.now, snapshot), (seed, seat, emits)
            compared += 1
            hidden_company += len(seen) < len(emits)
        # The shortcut for a batch every seat sees whole builds the same bytes as ``update`` (the seat's delta).
        public = all(emit.visible_to(seat, seating.team_of(seat, players)) for emit in emits for seat in range(players))
        delta = Batch(7, table, emits, step.now).public_deltas()
        assert (delta is not None) == (public and all(emit.seat is None and emit.team is None for emit in emits))
        if delta is not None:
            for seat in range(players):
                assert delta(seat, seqs[seat]) == _expected(table, 7, emits, seat, seqs[seat], step.now, False), (seed, seat)
                compared_public += 1
        timeless += _timeless(table, emits, step.now)
        if table.phase is Phase.OVER:
            break
    assert compared > 100 and compared_public > 10 and timeless > 10, (compared, compared_public, timeless)
    assert hidden_company > 0, "no update of a batch holding another seat's private event"
