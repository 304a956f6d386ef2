"""Protocol 3: a seat's state built from updates equals the server's view, at every step of many random matches.

The server sends a full view only in a snapshot; otherwise the events the seat may see and, when a countdown moved
otherwise than by time passing, the table's countdowns and the seat's own cooldowns. ``quatro_shared.games.quatro.apply.Tracker``
rebuilds the view from them, running the countdowns on between clocks. Here the engine is played at random (the
property tests' driver: plausible play, garbage, disconnections, late callers, deadline jumps), each batch is turned
into the very frames the server sends (``quatro_server.games.quatro.updates.Batch``) and read back as a client reads them, and,
after every step, each seat's state is held against ``engine.view``: every field equal and every countdown within
2 ms (three roundings to the millisecond: the clock's, and the two updates' ``at``) when the step sent the seat an
update; every field but the countdowns
when it did not (those run with time, and a client counts them down itself). A state that drifted from the truth
without a snapshot is a bug in the rules' mirror or in what the server leaves out.
"""

from __future__ import annotations

import random
from dataclasses import replace
from itertools import count
from typing import Any

import pytest

from quatro_shared import protocol as p
from quatro_shared import wire
from quatro_shared.framing import FrameDecoder
from quatro_shared.games.quarto import contract as q
from quatro_shared.games.quatro import events as e
from quatro_shared.games.quatro import seating
from quatro_shared.games.quatro.apply import ApplyError, Tracker, apply, without_countdowns
from quatro_shared.games.quatro.update import Update
from quatro_shared.games.quatro.views import Clock, OwnTimers, Phase
from quatro_shared.wire import push_from_wire

from helpers.countdowns import assert_same_view
from helpers.lobby_peer import RecordingPeer
from helpers.strategies import Driver, GameSetup, Mix
from quatro_server.games.quarto.engine import view as quarto_view
from quatro_server.games.quatro.engine import Table, clock, events_for, own_timers, view
from quatro_server.games.quatro.updates import Batch
from quatro_server.tables.lobby import Lobby
from quatro_server.timing import FAST

SEEDS = range(24)


def _setup(seed: int) -> GameSetup:
    r = random.Random(seed)
    players = r.choice((4, 6, 8))
    bots = frozenset(i for i in range(players) if r.random() < 0.25)
    return GameSetup(players, bots, 0, None, seed)


def _received(frame: bytes) -> Update:
    (message,) = FrameDecoder().feed(frame)
    update = push_from_wire(message)
    assert isinstance(update, Update)
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


def test_a_view_rebuilt_from_events_equals_every_in_step_snapshot_across_rematches() -> None:
    """Through a real ``Lobby``: two humans and two bots play three short matches (the host calls at each opening:
    right or wrong, some team scores, R13), each after the first asked with ``rematch``, and ask a ``resync`` now
    and then. Every snapshot that follows in step (the rematch's first update, a resync's answer) must equal the
    state built from the updates before it with its own events applied, but for the countdowns: ``match_started``
    says the last match's scores, winners and reveal are gone (docs/protocol.md section 10)."""
    lobby = Lobby(timing_profiles={"short": replace(FAST, target_score=2)}, seed=5)
    ann, bob = RecordingPeer("ann"), RecordingPeer("bob")
    ids = count(1)

    def ask(peer: RecordingPeer, kind: str, now: float, **fields: Any) -> dict[str, Any]:
        return wire.to_wire(lobby.handle(peer, wire.request_from_wire({"kind": kind, "id": next(ids), **fields}), now))

    assert ask(ann, p.CREATE_TABLE, 0.0, players=4, timing="short")["kind"] == p.OK
    assert ask(bob, p.JOIN, 0.0, table=1)["kind"] == p.OK
    assert ask(ann, p.ADD_BOT, 0.0, level="easy")["kind"] == p.OK
    assert ask(ann, p.ADD_BOT, 0.0, level="easy")["kind"] == p.OK
    room = lobby.rooms[1]
    now = 1.0
    assert ask(ann, p.START, now)["kind"] == p.OK
    matches = 1
    while matches <= 3:
        now += 0.05
        room.tick(now)
        table = room.table
        assert table is not None
        if table.phase is Phase.ROUND:
            ask(ann, "call", now)
        elif table.phase is Phase.SIGNING and int(now * 20) % 7 == 0:
            ask(ann if int(now * 20) % 2 else bob, p.RESYNC, now)
        elif table.phase is Phase.OVER:
            matches += 1
            if matches <= 3:
                assert ask(ann, p.REMATCH, now)["kind"] == p.OK
        assert now < 300, "the matches did not end"

    for peer in (ann, bob):
        tracker: Tracker | None = None
        seq = 0
        checked = rematches = 0
        for frame in peer.sent:
            if frame["kind"] != p.UPDATE:
                continue
            update = push_from_wire(frame)
            assert isinstance(update, Update)
            if update.snapshot:
                assert update.view is not None
                if tracker is not None and update.seq == seq + 1:
                    built = apply(tracker.view, update.events, None, None)
                    assert without_countdowns(built) == without_countdowns(update.view), (
                        peer.name,
                        update.seq,
                        update.events,
                    )
                    checked += 1
                    rematches += any(isinstance(ev, e.MatchStarted) for ev in update.events)
                tracker, seq = Tracker(update.view, update.at), update.seq
            else:
                assert tracker is not None and update.seq == seq + 1
                tracker.update(update.events, update.clock, update.own, update.at)
                seq = update.seq
        assert rematches == 2 and checked > rematches, (peer.name, checked, rematches)


def _quarto_folded(view: q.QuartoView, events: tuple[q.Event, ...]) -> q.QuartoView:
    """What a Quarto update's events say of the match, applied to the view before it: the reference the view the
    update carries must agree with (docs/protocol.md section 17)."""
    for ev in events:
        if isinstance(ev, q.MatchStarted):
            # A new match (the first, or a rematch): nothing of the last one carries over.
            view = replace(view, games=ev.games, scores=(0, 0), draws=0, winners=())
        elif isinstance(ev, q.GameStarted):
            view = replace(
                view,
                game=ev.game,
                starter=ev.starter,
                board=(None,) * 16,
                pool=tuple(range(16)),
                in_hand=None,
                moves=(),
                winner=None,
                line=None,
                shared=(),
            )
        elif isinstance(ev, q.PieceGiven):
            # The whole turn ("b3 SLQF") replaces its square alone; a game's opening give ("SLQF") is a turn of its own.
            moves = (*view.moves[:-1], ev.notation) if " " in ev.notation else (*view.moves, ev.notation)
            view = replace(view, in_hand=ev.piece, pool=tuple(x for x in view.pool if x != ev.piece), moves=moves)
        elif isinstance(ev, q.PiecePlaced):
            board = list(view.board)
            board[ev.square] = ev.piece
            view = replace(view, board=tuple(board), in_hand=None, moves=(*view.moves, ev.notation))
        elif isinstance(ev, q.GameEnded):
            view = replace(
                view, winner=ev.winner, line=ev.line, shared=ev.shared, scores=ev.scores, draws=ev.draws, moves=ev.moves
            )
        elif isinstance(ev, q.MatchOver):
            view = replace(view, winners=ev.winners, scores=ev.scores, draws=ev.draws)
    return view


#: The Quarto view's fields its events decide (the others: whose turn, the seats, the clocks, follow from the rules).
_QUARTO_FOLDED = (
    "games",
    "game",
    "starter",
    "board",
    "pool",
    "in_hand",
    "moves",
    "winner",
    "line",
    "shared",
    "scores",
    "draws",
    "winners",
)


def test_a_quarto_view_agrees_with_its_events_at_every_update_across_rematches() -> None:
    """Through a real ``Lobby``: a player and a ``random`` bot play three Quarto matches, the last two asked with
    ``rematch``. Every update carries the seat's whole view; each must equal the view before it with the update's
    events applied, in every field the events decide, the rematch's first update (a snapshot, numbered on) included:
    ``quarto_match_started`` says the last match's scores, draws and winners are gone."""
    lobby = Lobby(seed=9)
    ann = RecordingPeer("ann")
    ids = count(1)

    def ask(kind: str, now: float, **fields: Any) -> dict[str, Any]:
        return wire.to_wire(lobby.handle(ann, wire.request_from_wire({"kind": kind, "id": next(ids), **fields}), now))

    assert ask(p.CREATE_TABLE, 0.0, game=q.NAME)["kind"] == p.OK
    assert ask(p.ADD_BOT, 0.0, level="random")["kind"] == p.OK
    assert ask(p.START, 1.0)["kind"] == p.OK
    room = lobby.rooms[1]
    now, matches = 1.0, 1
    while matches <= 3:
        now += 1.0
        table = room.table
        assert table is not None and now < 5000, "the matches did not end"
        if table.phase is q.Phase.OVER:
            matches += 1
            if matches <= 3:
                assert ask(p.REMATCH, now)["kind"] == p.OK
            continue
        for action in q.legal(quarto_view(table, 0, now))[:1]:
            assert (
                ask(action.kind, now, **{k: v for k, v in wire.to_wire(action).items() if k != "kind"})["kind"] == p.OK
            )
        room.tick(now + 0.5)
        room.tick(now + 0.9)

    before: q.QuartoView | None = None
    seq = checked = rematches = 0
    for frame in ann.sent:
        if frame["kind"] != p.UPDATE:
            continue
        update = push_from_wire(frame)
        assert isinstance(update, q.QuartoUpdate) and update.seq == seq + 1, (update.seq, seq)
        if before is not None:
            folded = _quarto_folded(before, update.events)
            differ = [name for name in _QUARTO_FOLDED if getattr(folded, name) != getattr(update.view, name)]
            assert not differ, (update.seq, update.events, differ, folded, update.view)
            checked += 1
            rematches += any(isinstance(ev, q.MatchStarted) for ev in update.events)
        before, seq = update.view, update.seq
    assert rematches == 2 and checked > 50, (rematches, checked)
