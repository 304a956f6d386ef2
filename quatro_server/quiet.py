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

``LoopWatch`` is a trio instrument that keeps the longest task step (one uninterrupted batch of work: a request
and everything it published, a table's timer, a flush) and the longest collection, logs a warning when a step
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
    """The longest task step and the longest garbage collection, measured as the server runs."""

    def __init__(self) -> None:
        self.longest_step = 0.0
        self.longest_task = ""
        self.steps = 0
        self.longest_gc = 0.0
        self.collections = 0
        self._step_started = 0.0
        self._gc_started = 0.0

    def before_task_step(self, task: trio.lowlevel.Task) -> None:
        self._step_started = time.perf_counter()

    def after_task_step(self, task: trio.lowlevel.Task) -> None:
        if not self._step_started:
            return  # the step during which the watch was installed
        took = time.perf_counter() - self._step_started
        self._step_started = 0.0
        self.steps += 1
        if took > self.longest_step:
            self.longest_step, self.longest_task = took, task.name
        if took > STALL_WARN:
            log.warning("stall task=%s ms=%.1f", task.name, took * 1000)

    def gc_callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._gc_started = time.perf_counter()
            return
        took = time.perf_counter() - self._gc_started
        self.collections += 1
        self.longest_gc = max(self.longest_gc, took)

    def reset(self) -> None:
        self.longest_step, self.longest_task, self.steps = 0.0, "", 0
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
            "loop_stats steps=%d longest_step_ms=%.2f longest_task=%s collections=%d longest_gc_ms=%.2f",
            self.steps,
            self.longest_step * 1000,
            self.longest_task.rsplit(".", 1)[-1],
            self.collections,
            self.longest_gc * 1000,
        )
