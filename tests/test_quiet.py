"""The quiet tail's tools: the loop watch measures the longest batch of work and collection; the heap is settled."""

from __future__ import annotations

import gc
import logging
import time

import pytest
import trio

from quatro_server import quiet
from quatro_server.quiet import LoopWatch


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


def test_settling_the_heap_freezes_start_up_and_raises_the_thresholds() -> None:
    before = gc.get_threshold()
    try:
        quiet.settle_heap()
        assert gc.get_threshold() == quiet.GC_THRESHOLDS
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
