"""The quiet tail's tools: the loop watch measures the longest batch of work and collection; the heap is settled."""

from __future__ import annotations

import gc
import logging
import sys
import time

import pytest
import trio

from quatro_server.net import quiet
from quatro_server.net.quiet import LoopWatch


def test_the_watch_keeps_the_longest_batch_and_logs_a_stall(caplog: pytest.LogCaptureFixture) -> None:
    watch = LoopWatch()

    async def main() -> None:
        watch.install()
        try:
            await trio.sleep(0)
            time.sleep(quiet.STALL_WARN + 0.01)  # a batch of work that holds every other task up
            await trio.sleep(0)
        finally:
            watch.uninstall()

    with caplog.at_level(logging.WARNING, logger="quatro.loop"):
        trio.run(main)
    assert watch.batches >= 1 and watch.longest_batch >= quiet.STALL_WARN
    assert any("stall" in record.getMessage() for record in caplog.records)
    watch.reset()
    assert watch.longest_batch == 0 and watch.batches == 0


def test_the_watch_times_collections() -> None:
    watch = LoopWatch()
    gc.callbacks.append(watch.gc_callback)
    try:
        gc.collect()
    finally:
        gc.callbacks.remove(watch.gc_callback)
    assert watch.collections == 1 and watch.longest_gc > 0


def test_settling_the_heap_freezes_start_up_raises_the_thresholds_and_shortens_the_lock_s_hold() -> None:
    before, switch = gc.get_threshold(), sys.getswitchinterval()
    try:
        quiet.settle_heap()
        assert gc.get_threshold() == quiet.GC_THRESHOLDS
        assert gc.get_freeze_count() > 0
        assert sys.getswitchinterval() == pytest.approx(quiet.SWITCH_INTERVAL) and quiet.SWITCH_INTERVAL < switch
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
        sys.setswitchinterval(switch)


class _Due:
    """A table for the timer: its next deadline, until it is ticked."""

    def __init__(self, room_id: int, at: float) -> None:
        self.id, self.at = room_id, at

    def next_wake(self) -> float | None:
        return self.at


async def _ticks(slack: float, offsets: list[float]) -> tuple[float, list[tuple[int, float]]]:
    """Tables due at ``offsets`` seconds from now, served by the server's timer with ``slack``: when each was ticked."""
    from quatro_server.server import Server, ServerConfig
    from quatro_server.tables.lobby import Lobby

    srv = Server(Lobby(), ServerConfig(timer_slack=slack))
    ticks: list[tuple[int, float]] = []

    def tick(room: _Due, now: float) -> None:
        ticks.append((room.id, now))
        room.at = None  # nothing more to do there

    srv._tick = tick  # type: ignore[method-assign, assignment]
    start = trio.current_time()
    for i, offset in enumerate(offsets):
        room = _Due(1000 + i, start + offset)
        srv.lobby.rooms[room.id] = room  # type: ignore[assignment]
        srv._room_created(room)  # type: ignore[arg-type]
    async with trio.open_nursery() as nursery:
        nursery.start_soon(srv._run_timers)
        await trio.sleep(max(offsets) + 1)
        nursery.cancel_scope.cancel()
    return start, ticks


async def test_tables_due_within_the_timer_slack_share_one_wake_up_none_ticked_early_or_past_it(autojump_clock) -> None:
    """The tables' timer sleeps up to ``timer_slack`` past the earliest deadline, so that tables due close together
    share one wake-up of the loop: none is ticked before its deadline, nor later than the slack after it."""
    slack = 0.010
    offsets = [1.000, 1.004, 1.009, 1.030]
    start, ticks = await _ticks(slack, offsets)
    assert sorted(room for room, _ in ticks) == [1000, 1001, 1002, 1003]
    for room, now in ticks:
        due = start + offsets[room - 1000]
        assert due <= now <= due + slack + 1e-9, (room, now - start)
    wake_ups = sorted({now for _, now in ticks})
    assert len(wake_ups) == 2  # the first three together, the last on its own
    assert {room for room, now in ticks if now == wake_ups[0]} == {1000, 1001, 1002}


async def test_without_slack_each_table_is_ticked_at_its_own_deadline(autojump_clock) -> None:
    offsets = [1.000, 1.004, 1.009]
    start, ticks = await _ticks(0.0, offsets)
    assert [(room, round(now - start, 6)) for room, now in ticks] == [(1000, 1.0), (1001, 1.004), (1002, 1.009)]


async def test_a_wake_up_with_many_tables_due_gives_the_loop_back_between_them_and_ticks_each_once() -> None:
    """Twenty tables due at once, each taking a millisecond to tick, with a pass budget of two: the timer ticks a
    few, yields (a request read meanwhile is answered), goes on, and every table is ticked exactly once."""
    from quatro_server.server import Server, ServerConfig
    from quatro_server.tables.lobby import Lobby

    srv = Server(Lobby(), ServerConfig(timer_slack=0.0, pass_budget=0.002))
    ticked: list[int] = []
    seen_between: list[int] = []

    def tick(room: _Due, now: float) -> None:
        ticked.append(room.id)
        time.sleep(0.001)  # a busy table's tick
        room.at = None

    srv._tick = tick  # type: ignore[method-assign, assignment]
    start = trio.current_time()
    for i in range(20):
        room = _Due(2000 + i, start + 0.05)
        srv.lobby.rooms[room.id] = room  # type: ignore[assignment]
        srv._room_created(room)  # type: ignore[arg-type]

    async def another_task() -> None:  # what a connection's reader would do meanwhile: run between passes
        while len(ticked) < 20:
            seen_between.append(len(ticked))
            await trio.sleep(0)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(srv._run_timers)
        nursery.start_soon(another_task)
        with trio.fail_after(5):
            while len(ticked) < 20:
                await trio.sleep(0.01)
        await trio.sleep(0.1)
        nursery.cancel_scope.cancel()
    assert sorted(ticked) == list(range(2000, 2020))
    assert srv.timer_yields >= 5
    assert any(0 < n < 20 for n in seen_between)  # the other task ran while the tables were still being ticked
    steps = sorted(set(seen_between))
    assert max(b - a for a, b in zip(steps, steps[1:])) <= 4  # never many more than the budget's worth at a time


def test_the_trace_keeps_the_longest_passes_with_where_their_time_went(caplog: pytest.LogCaptureFixture) -> None:
    """With a probe, a long pass is kept with the counts it moved (requests read, tables ticked, the timer's time,
    sends, the flush's time, the journal writer's CPU), and the report logs the pass histogram and the longest."""
    counts = {"frames": 0, "ticks": 0, "timer": 0.0, "sends": 0, "flush": 0.0}
    watch = LoopWatch(
        lambda: (counts["frames"], counts["ticks"], counts["timer"], counts["sends"], counts["flush"]), cpu=lambda: 0.0
    )

    async def main() -> None:
        watch.install()
        try:
            await trio.sleep(0)
            for _ in range(3):
                await trio.sleep(0)
            time.sleep(0.02)  # one long pass: 7 requests, 40 tables ticked in 15 ms, 56 sends in 3 ms
            counts.update(frames=7, ticks=40, timer=0.015, sends=56, flush=0.003)
            await trio.sleep(0)
        finally:
            watch.uninstall()

    trio.run(main)
    assert sum(watch.histogram) == watch.batches
    assert watch.histogram[-1] == 0 and watch.histogram[quiet.PASS_BUCKETS.index(0.050)] >= 1
    longest = max(watch.longest)[2]
    assert longest.ms >= 20 and longest.cpu_ms < 5  # asleep: the pass was long, its CPU time short
    assert (longest.frames_in, longest.ticks, longest.sends) == (7, 40, 56)
    assert longest.timer_ms == pytest.approx(15) and longest.flush_ms == pytest.approx(3)
    with caplog.at_level(logging.INFO, logger="quatro.loop"):
        watch.report()
    line = next(r.getMessage() for r in caplog.records if r.getMessage().startswith("loop_passes"))
    assert "le_50=" in line and "timer 15.0/40t" in line and "flush 3.0/56w" in line and "in 7" in line


async def test_the_watch_says_when_the_loop_waits_for_its_sockets_and_not_while_it_works() -> None:
    """``idle`` (the journal writer's cue) is set while the loop waits with nothing to do, clear while a pass runs."""
    import threading

    watch = LoopWatch()
    watch.install()
    seen = threading.Event()
    try:
        await trio.sleep(0)  # the pass during which the watch was installed ends
        waiter = threading.Thread(target=lambda: seen.set() if watch.idle.wait(5) else None)
        assert not watch.idle.is_set()  # this task is running: a pass
        waiter.start()
        await trio.sleep(0.05)  # the loop waits: the writer's thread may run
        assert not watch.idle.is_set()  # woken: working again
        waiter.join(5)
        assert seen.is_set()
    finally:
        watch.uninstall()
    assert watch.idle.is_set()  # no loop left to keep out of the way of
