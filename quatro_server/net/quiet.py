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

import bisect
import gc
import heapq
import logging
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import trio

log = logging.getLogger("quatro.loop")

#: The collector's thresholds: generation 0 after this many net allocations (Python: 700), then the older ones
#: every 20 and 100 younger collections (Python: 10 and 10). See the module's docstring.
GC_THRESHOLDS = (70_000, 20, 100)
#: Seconds: a batch of work longer than this holds up every other table and is logged as a stall.
STALL_WARN = 0.050


#: Seconds a thread holding the interpreter's lock keeps it while another waits (Python: 0.005). The journal writer
#: runs Python beside the loop; every socket write of the loop's flush lets go of the lock and must take it back, so
#: with Python's 5 ms a flush of a few dozen writes could wait on the writer once per write (a pass of 48 writes
#: measured 7.5 ms). docs/performance.md has the figures.
SWITCH_INTERVAL = 0.0005


def settle_heap() -> None:
    """Collect once, freeze what start-up left alive, raise the collector's thresholds, and shorten the hold of the
    interpreter's lock that another thread may have while the loop waits for it."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
    sys.setswitchinterval(SWITCH_INTERVAL)


#: Upper bounds of the pass-length histogram's buckets, in seconds (the last bucket is everything longer).
PASS_BUCKETS = (0.001, 0.002, 0.005, 0.010, 0.020, 0.050)
#: The longest passes kept with what they held (``LoopWatch.longest``), and the shortest pass worth keeping so.
LONGEST_KEPT = 8
TRACE_FROM = 0.002


#: What a pass did, read as plain counts the server keeps anyway (``Server.pass_reading``): requests read, tables
#: ticked and the seconds in the tables' timer, sends and the seconds in the flush.
#: A pass's share is the difference of two readings.
Reading = tuple[int, int, float, int, float]


@dataclass(frozen=True, slots=True)
class Pass:
    """One long pass of the run loop and where it went (milliseconds, counts)."""

    ms: float
    #: The loop thread's own CPU time, and the journal writer's, when measured (``LoopWatch(cpu=...)``): a pass much
    #: longer than its CPU time was held off the core (the writer's hold on the interpreter's lock, or the machine).
    cpu_ms: float | None
    timer_ms: float
    ticks: int
    flush_ms: float
    sends: int
    frames_in: int
    writer_ms: float | None

    def line(self) -> str:
        cpu = "" if self.cpu_ms is None else f"cpu {self.cpu_ms:.1f}, "
        writer = "" if self.writer_ms is None else f", writer {self.writer_ms:.1f}"
        return (
            f"{self.ms:.1f}ms({cpu}timer {self.timer_ms:.1f}/{self.ticks}t, flush {self.flush_ms:.1f}/{self.sends}w, "
            f"in {self.frames_in}{writer})"
        )


class LoopWatch(trio.abc.Instrument):
    """The longest batch of work and the longest garbage collection, measured as the server runs, and a trace of
    every pass: how long each was (a histogram) and, for the longest, where the time went.

    A batch is one pass of trio's run loop: every task step it runs between two waits for I/O (requests answered,
    tables' timers, the flush that sends what they queued). While a batch runs, no other table is served, so the
    longest one is the stall a player can feel. Two hooks per pass (``after_io_wait``, ``before_io_wait``), where a
    watch of every task step cost two per step: about a microsecond per step, several per message delivered.

    With a probe (``Server.pass_reading``), a pass longer than ``TRACE_FROM`` is kept, among the ``LONGEST_KEPT`` longest,
    with its requests read, the tables its timer ticked and the time that took, the sends of its flush and their
    time. With ``cpu`` (the journal writer's CPU clock; the server passes it at log level debug), also the loop
    thread's own CPU time and the writer's in each pass: three clock reads more a pass, about a microsecond and a
    half, which at hundreds of tables is a share of the loop worth keeping off by default.

    ``idle`` is set while the loop waits for its sockets with nothing to do, and cleared as it wakes: the journal's
    writer runs its Python then, not while a pass works (``quatro_server.journal.store.IDLE_WAIT``)."""

    def __init__(self, probe: Callable[[], Reading] | None = None, cpu: Callable[[], float] | None = None) -> None:
        self.probe = probe
        self.cpu = cpu
        self.idle = threading.Event()
        self.longest_batch = 0.0
        self.batches = 0
        self.longest_gc = 0.0
        self.collections = 0
        self.histogram = [0] * (len(PASS_BUCKETS) + 1)
        self.longest: list[tuple[float, int, Pass]] = []  # a min-heap of the longest passes kept
        self._batch_started = 0.0
        self._cpu_started = (0.0, 0.0)
        self._at_start: Reading = (0, 0, 0.0, 0, 0.0)
        self._gc_started = 0.0

    def after_io_wait(self, timeout: float) -> None:
        self.idle.clear()
        self._batch_started = time.perf_counter()
        if self.probe is not None:
            self._at_start = self.probe()
            if self.cpu is not None:
                self._cpu_started = (time.thread_time(), self.cpu())

    def before_io_wait(self, timeout: float) -> None:
        if timeout > 0:  # a wait for sockets, not a look between two passes with work left
            self.idle.set()
        if not self._batch_started:
            return  # the pass during which the watch was installed
        took = time.perf_counter() - self._batch_started
        self._batch_started = 0.0
        self.batches += 1
        self.histogram[bisect.bisect_left(PASS_BUCKETS, took)] += 1
        if took > self.longest_batch:
            self.longest_batch = took
        if (
            took > TRACE_FROM
            and self.probe is not None
            and (len(self.longest) < LONGEST_KEPT or took > self.longest[0][0])
        ):
            self._keep(took)
        if took > STALL_WARN:
            log.warning("stall ms=%.1f", took * 1000)

    def _keep(self, took: float) -> None:
        cpu = writer = None
        if self.cpu is not None:
            cpu = (time.thread_time() - self._cpu_started[0]) * 1000
            writer = (self.cpu() - self._cpu_started[1]) * 1000
        assert self.probe is not None
        now = self.probe()
        d = [b - a for a, b in zip(self._at_start, now)]
        kept = Pass(
            ms=took * 1000,
            cpu_ms=cpu,
            timer_ms=d[2] * 1000,
            ticks=int(d[1]),
            flush_ms=d[4] * 1000,
            sends=int(d[3]),
            frames_in=int(d[0]),
            writer_ms=writer,
        )
        entry = (took, self.batches, kept)
        if len(self.longest) < LONGEST_KEPT:
            heapq.heappush(self.longest, entry)
        else:
            heapq.heapreplace(self.longest, entry)

    def gc_callback(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._gc_started = time.perf_counter()
            return
        took = time.perf_counter() - self._gc_started
        self.collections += 1
        self.longest_gc = max(self.longest_gc, took)

    def reset(self) -> None:
        self.longest_batch, self.batches = 0.0, 0
        self.longest_gc, self.collections = 0.0, 0
        self.histogram = [0] * (len(PASS_BUCKETS) + 1)
        self.longest = []

    def install(self) -> None:
        trio.lowlevel.add_instrument(self)
        gc.callbacks.append(self.gc_callback)

    def uninstall(self) -> None:
        self.idle.set()  # no loop to keep out of the way of any more: the writer runs freely
        if self.gc_callback in gc.callbacks:
            gc.callbacks.remove(self.gc_callback)
        try:
            trio.lowlevel.remove_instrument(self)
        except (KeyError, RuntimeError):
            pass

    def report(self) -> None:
        """Log what was measured (read by ``benchmarks/server_fanout.py``): the loop's figures on one line, the
        pass histogram (counts of passes up to each bound, in ms, and longer) and the longest passes on another."""
        log.info(
            "loop_stats batches=%d longest_batch_ms=%.2f collections=%d longest_gc_ms=%.2f",
            self.batches,
            self.longest_batch * 1000,
            self.collections,
            self.longest_gc * 1000,
        )
        bounds = [f"{b * 1000:g}" for b in PASS_BUCKETS] + ["more"]
        longest = "; ".join(kept.line() for _, _, kept in sorted(self.longest, reverse=True))
        log.info(
            "loop_passes %s longest=[%s]", " ".join(f"le_{b}={n}" for b, n in zip(bounds, self.histogram)), longest
        )
