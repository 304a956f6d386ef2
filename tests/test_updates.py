"""The server's update frames (``quatro_server.games.quatro.updates``) are byte for byte the contract's ``quatro_shared.games.quatro.update.Update``
encoded by ``to_wire`` and ``framing.encode``, for every seat of every batch of many random matches.

``Batch.update`` and ``Batch.public_deltas`` assemble a delta from bytes shared by every seat that sees the same
events (the events, the table's clock) and pack only ``seq`` and the seat's own cooldowns per seat. Here the same
update is built as an ``Update`` value from the same batch, the way the protocol describes it: the events the seat
is shown; in a snapshot its view; otherwise, when what the seat is shown moved a countdown otherwise than by time
passing, the table's ``clock`` and the seat's cooldowns (left out when both are 0), and when it did not (protocol 3:
only swaps and pulses on their beat, whatever else the batch held, H3), no clock and cooldowns for a swapper alone.
Its keys, their order and what is left out come from the contract type alone, so any drift between the fast path and
``quatro_shared.games.quatro.update.Update`` (a key renamed, a field added, a default written out, a cooldown of the wrong seat, a stale
clock, a clock left out of a batch that moved a countdown, a ``seq`` past the one-byte range, an events array of the
wrong audience) shows as different bytes. The frame read back through the contract's decoder is the same value.
"""

from __future__ import annotations

import functools
import random
from collections import Counter
from dataclasses import dataclass

import pytest

from quatro_shared.framing import FrameDecoder, encode
from quatro_shared.games.quatro import events as e
from quatro_shared.games.quatro import seating
from quatro_shared.games.quatro.update import Update
from quatro_shared.games.quatro.views import OwnTimers, Phase
from quatro_shared.wire import push_from_wire, to_wire

from helpers.strategies import Driver, GameSetup, Mix
from quatro_server.games.quatro.engine import Emit, Table, clock, own_timers, view
from quatro_server.games.quatro.updates import Batch

SEEDS = range(16)
STEPS = 400
TABLE_ID = 7


def _expected(table: Table, emits: list[Emit], seat: int, seq: int, now: float, snapshot: bool) -> Update:
    """The update ``seat`` is owed for ``emits``, as a contract value built from the engine's public views."""
    team = seating.team_of(seat, table.players)
    shown = tuple(emit.event for emit in emits if emit.visible_to(seat, team))
    at = round(max(now, table.now) * 1000)
    if snapshot:
        return Update(TABLE_ID, seq, True, at, shown, view=view(table, seat, now))
    own = own_timers(table, seat, now)
    if _timeless(table, shown, now):  # decided from what the seat is shown alone (H3)
        swapped = any(isinstance(event, e.Swapped) and event.seat == seat for event in shown)
        return Update(TABLE_ID, seq, False, at, shown, own=own if swapped else None)
    return Update(TABLE_ID, seq, False, at, shown, clock=clock(table, now), own=None if own == OwnTimers() else own)


def _timeless(table: Table, shown: tuple[e.Event, ...], now: float) -> bool:
    """These events moved no countdown but by time passing: only swaps, and pulses less than half an interval late."""
    now = max(now, table.now)
    for event in shown:
        if isinstance(event, e.Pulse):
            fell = table._seats[event.seat].last_pulse_at
            if fell is None or now - fell >= table.timing.pulse_interval / 2:
                return False
        elif not isinstance(event, e.Swapped):
            return False
    return True


def _late_pulse(table: Table, shown: tuple[e.Event, ...], now: float) -> bool:
    """Only swaps and pulses, and the update carries a clock all the same: a pulse half an interval late or more."""
    return all(isinstance(event, (e.Swapped, e.Pulse)) for event in shown) and not _timeless(table, shown, now)


def _same(got: bytes, expected: Update, where: object, read_back: bool) -> None:
    assert got == encode(to_wire(expected)), where
    if read_back:
        (message,) = FrameDecoder().feed(got)
        assert push_from_wire(message) == expected, where


@dataclass
class _Kinds:
    """What kinds of update a match compared, to show the matches reach every branch of the fast path."""

    seen: Counter[str]

    def note(self, update: Update, batch_size: int, late_pulse: bool) -> None:
        seen = self.seen
        seen["any"] += 1
        if update.snapshot:
            seen["snapshot"] += 1
            return
        if len(update.events) < batch_size:
            seen["beside another seat's private event"] += 1
        if update.seq >= 128:
            seen["seq past one byte"] += 1
        if update.clock is None:
            seen["no clock"] += 1
            seen["no clock, the swapper's cooldowns" if update.own is not None else "no clock, cooldowns run on"] += 1
            if len(update.events) < batch_size:
                seen["no clock beside another seat's private event (H3)"] += 1
            return
        seen["clock and cooldowns" if update.own is not None else "clock, both cooldowns 0"] += 1
        if update.own is not None and 0 in (update.own.swap_wait_ms, update.own.channel_wait_ms):
            seen["clock, one cooldown 0"] += 1
        if update.clock.vote_ms is not None:
            seen["clock with a vote running"] += 1
        if update.clock.vote_wait_ms:
            seen["clock with the vote gap running"] += 1
        if late_pulse:
            seen["a late pulse, with the clock"] += 1


@functools.cache
def _play(seed: int) -> Counter[str]:
    """One random match, every update of every batch compared with its contract value (one in five read back too);
    what kinds were compared. A seed's match is the same every time it is played: played once per session."""
    r = random.Random(seed)
    players = r.choice((4, 6, 8))
    setup = GameSetup(players, frozenset(), 0, None, seed)
    table = setup.table()
    driver = Driver(table, random.Random(seed * 7919 + 1), Mix(garbage=0.03))
    start = driver.start_step()
    table.start(start.now)
    seqs = [r.choice((0, 120, 250, 70_000)) for _ in range(players)]  # one byte, then wider ``seq``s
    kinds = _Kinds(Counter())
    for _ in range(STEPS):
        step = driver.step()
        emits = step.play(table)
        if not emits:
            continue
        batch = Batch(TABLE_ID, table, emits, step.now)
        for seat in range(players):
            seen = batch.seen_by(seat, seating.team_of(seat, players))
            if not seen:
                continue
            seqs[seat] += 1
            snapshot = r.random() < 0.05
            expected = _expected(table, emits, seat, seqs[seat], step.now, snapshot)
            _same(batch.update(seat, seqs[seat], seen, snapshot), expected, (seed, seat, emits), r.random() < 0.2)
            kinds.note(expected, len(emits), _late_pulse(table, expected.events, step.now))
        # The shortcut for a batch every seat sees whole builds the same bytes as ``update`` (the seat's delta).
        delta = Batch(TABLE_ID, table, emits, step.now).public_deltas()
        assert (delta is not None) == all(emit.seat is None and emit.team is None for emit in emits)
        if delta is not None:
            for seat in range(players):
                expected = _expected(table, emits, seat, seqs[seat], step.now, False)
                _same(delta(seat, seqs[seat]), expected, (seed, seat), r.random() < 0.2)
                kinds.seen["public delta"] += 1
        if table.phase is Phase.OVER:
            break
    return kinds.seen


@pytest.mark.parametrize("seed", SEEDS)
def test_every_update_frame_is_the_contracts_update(seed: int) -> None:
    seen = _play(seed)
    assert seen["any"] > 100 and seen["public delta"] > 10 and seen["no clock"] > 10, seen


#: Every branch of the fast path that a frame can take, each met in the random matches above.
KINDS = (
    "snapshot",
    "public delta",
    "beside another seat's private event",
    "seq past one byte",
    "no clock, the swapper's cooldowns",
    "no clock, cooldowns run on",
    "no clock beside another seat's private event (H3)",
    "clock and cooldowns",
    "clock, one cooldown 0",
    "clock, both cooldowns 0",
    "clock with a vote running",
    "clock with the vote gap running",
    "a late pulse, with the clock",
)


def test_the_random_matches_compare_every_kind_of_update() -> None:
    seen: Counter[str] = Counter()
    for seed in SEEDS:
        seen.update(_play(seed))
    assert not [kind for kind in KINDS if not seen[kind]], seen
