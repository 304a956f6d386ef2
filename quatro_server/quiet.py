"""A quiet tail: the garbage collector kept out of the way, and the longest batch of work measured.

With thousands of connections, Python's cyclic garbage collector sets the latency tail: a full collection walks
every object the server holds (tables, views, connections), and while it runs no table is served. Two remedies,
applied once the server listens (``settle_heap``):

- ``gc.freeze()`` moves everything alive after start-up (modules, classes, the lobby) to a permanent generation
  that collections never walk again;
- ``GC_THRESHOLDS`` makes the young generation much larger than Python's default of 700 allocations, so that
  collections come about a hundred times less often. The hot path (requests, engine events, updates) creates
  short-lived objects freed by reference counting, not cycles, so a larger young generation costs little memory.
  Measured with ``benchmarks/server_fanout.py`` (which prints the longest collection of each run): see
  docs/performance.md.

``LoopWatch`` is a trio instrument that keeps the longest batch of work (one pass of the run loop: the requests
answered, the tables' timers and the flush of that pass) and the longest collection, logs a warning when a batch
stalls every other table for longer than ``STALL_WARN``, and reports both when the server stops (and on SIGUSR1,
starting afresh: ``benchmarks/server_fanout.py`` reads the figures of its measured window that way).
"""

from __future__ import annotations

import gc
import logging
import time
from typing import Any

import trio

log = logging.getLogger("quatro.loop")

#: The collector's thresholds: generation 0 after this many net allocations (Python: 700), then the older ones
#: every 20 and 100 younger collections (Python: 10 and 10). See the module's docstring.
GC_THRESHOLDS = (70_000, 20, 100)
#: Seconds: a batch of work longer than this holds up every other table and is logged as a stall.
STALL_WARN = 0.050


def settle_heap() -> None:
    """Collect once, freeze what start-up left alive, and raise the collector's thresholds."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


class LoopWatch(trio.abc.Instrument):
    """The longest batch of work and the longest garbage collection, measured as the server runs.

    A batch is one pass of trio's run loop: every task step it runs between two waits for I/O (requests answered,
    tables' timers, the flush that sends what they queued). While a batch runs, no other table is served, so the
    longest one is the stall a player can feel. Two hooks per pass (``after_io_wait``, ``before_io_wait``), where a
    watch of every task step cost two per step: about a microsecond per step, several per message delivered."""

    def __init__(self) -> None:
        self.longest_batch = 0.0
        self.batches = 0
        self.longest_gc = 0.0
        self.collections = 0
        self._batch_started = 0.0
        self._gc_started = 0.0

    def after_io_wait(self, timeout: float) -> None:
        self._batch_started = time.perf_counter()

    def before_io_wait(self, timeout: float) -> None:
        if not self._batch_started:
            return  # the pass during which the watch was installed
        took = time.perf_counter() - self._batch_started
        self._batch_started = 0.0
        self.batches += 1
        if took > self.longest_batch:
            self.longest_batch = took
        if took > STALL_WARN:
            log.warning("stall ms=%.1f", took * 1000)

    def gc_callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._gc_started = time.perf_counter()
            return
        took = time.perf_counter() - self._gc_started
        self.collections += 1
        self.longest_gc = max(self.longest_gc, took)

    def reset(self) -> None:
        self.longest_batch, self.batches = 0.0, 0
        self.longest_gc, self.collections = 0.0, 0

    def install(self) -> None:
        trio.lowlevel.add_instrument(self)
        gc.callbacks.append(self.gc_callback)

    def uninstall(self) -> None:
        if self.gc_callback in gc.callbacks:
            gc.callbacks.remove(self.gc_callback)
        try:
            trio.lowlevel.remove_instrument(self)
        except (KeyError, RuntimeError):
            pass

    def report(self) -> None:
        """Log what was measured (read by ``benchmarks/server_fanout.py``)."""
        log.info(
            "loop_stats batches=%d longest_batch_ms=%.2f collections=%d longest_gc_ms=%.2f",
            self.batches,
            self.longest_batch * 1000,
            self.collections,
            self.longest_gc * 1000,
        )
