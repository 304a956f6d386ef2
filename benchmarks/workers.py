"""Busy tables carried at p99 < 50 ms by one worker and by two (``quatro-server --workers N``), in the same run.

    python benchmarks/workers.py [--tables 20,40,60,80] [--workers 1,2] [--seconds 4] [--warmup 2] [--pace 20]
    python benchmarks/workers.py --rounds 2 --json     # each size measured twice per worker count, alternating

For each table count (ascending) and each worker count, in turn (1, 2, then 2, 1 in the next round: a shared
machine's speed drifts, and both figures of a round drift alike), ``python -m quatro_server --workers N`` is started
on 127.0.0.1 as an operator starts it (journalling to a fresh data directory; two workers share the supervisor's
own redis-server) and played by the load generator of ``server_fanout.py`` (the lean one: raw sockets, one epoll
loop per process, ``--procs`` processes of their own): K tables of 8 seats, each seat swapping at its cooldown's pace
and pulsing its channel, seated through the public port (a join the other worker answers ``moved`` is followed).

Printed per run: the p50 and p99 of a swap to the swapper's own update carrying it (the load generator's clock),
swaps sent and accepted, the CPU share of each worker (all its threads), of the supervisor and its redis-server,
and of the load generator, and the machine's load average at the start and the end of the window. A worker count
carries a table count when the p99 of its median round is under ``--p99`` ms (50); its capacity is the largest table
count it carried below the first it did not. The summary prints both capacities, their ratio, and the
capacities at the standard pace (tables x pace: every duration is the standard one divided by it).

Figures, not tests: nothing here asserts a threshold. On a machine busy with other work (a load average near or
above its cores) the figures are the other work's as much as the server's: run it again on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import psutil  # noqa: E402
import server_fanout as fanout  # noqa: E402  (the load generator: one copy, shared)


@dataclass
class Run:
    workers: int
    tables: int
    p50_ms: float | None
    p99_ms: float | None
    swaps: int
    swaps_ok: int
    worker_cpu: list[float]  # each worker's share of one core in the window
    front_cpu: float  # the supervisor and its redis-server
    generator_cpu: float  # the load processes, together
    load: tuple[float, float]  # the 1-minute load average at the window's start and end
    skipped: int = 0  # swap slots skipped by the generator: the last reply had not come
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def cpu_per_table_ms(self) -> float:
        """Milliseconds of the workers' CPU per table per second: what a table costs, however busy the machine."""
        return round(sum(self.worker_cpu) / self.tables * 1000, 3)

    def carried(self, p99: float) -> bool:
        return self.p99_ms is not None and self.p99_ms < p99 and self.swaps > 0


def _tree(pid: int) -> tuple[list[int], list[int]]:
    """The workers' pids, and the rest of the server (the supervisor and its redis-server); a server of one process
    is its own one worker."""
    top = psutil.Process(pid)
    workers, rest = [], [pid]
    for child in top.children():
        try:
            command = child.cmdline()
        except psutil.NoSuchProcess:
            continue
        (workers if "--worker-index" in command else rest).append(child.pid)
    if not workers:
        return [pid], []
    return sorted(workers), rest


def _cpu(pids: list[int]) -> list[float]:
    return [fanout._process_cpu_seconds(pid) for pid in pids]  # noqa: SLF001 - the one reader of schedstat


def _command(workers: int, args: argparse.Namespace, timing_file: Path, data: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "quatro_server",
        "--host",
        fanout.HOST,
        "--port",
        "0",
        "--timing",
        str(timing_file),
        "--log-level",
        "warning",
        "--trusted-address",
        fanout.HOST,
        "--no-announce",
        "--workers",
        str(workers),
        "--data-dir",
        data,
    ]


def run_once(workers: int, tables: int, args: argparse.Namespace, timing_file: Path) -> Run:
    data = tempfile.mkdtemp(prefix=f"workers-{workers}-{tables}-", dir=timing_file.parent)
    server = fanout.Target(_command(workers, args, timing_file, data))
    with server:
        assert server.process is not None
        deadline = time.monotonic() + 30
        while True:  # the supervisor prints where to join once every worker is ready
            worker_pids, rest = _tree(server.process.pid)
            if workers == 1 or len(worker_pids) == workers or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        loads: list[float] = []

        def probe() -> tuple[list[float], list[float]]:
            loads.append(os.getloadavg()[0])
            return _cpu(worker_pids), _cpu(rest)

        reports, window, (before, after) = fanout.drive_lean_load("quatro", server.port, tables, args, probe)
    result = fanout.lean_result("quatro", tables, reports, window, 0.0, 0.0)
    shares = [(b - a) / window for a, b in zip(before[0], after[0])]
    front = sum(b - a for a, b in zip(before[1], after[1])) / window
    return Run(
        workers,
        tables,
        _round(result.latency_ms(0.5)),
        _round(result.latency_ms(0.99)),
        result.stats.swaps,
        result.stats.swaps_ok,
        [round(x, 3) for x in shares],
        round(front, 3),
        round(sum(r.cpu for r in reports) / window, 3),
        (loads[0], loads[-1]),
        skipped=sum(g["skipped_awaiting_reply"] for g in result.generator),
    )


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


HEADER = (
    "workers tables  p50 ms  p99 ms   swaps ok/sent   worker CPU (each)      front CPU  load CPU  "
    "CPU ms/table/s  load avg"
)


def print_run(r: Run, out: Any) -> None:
    each = " ".join(f"{x:5.0%}" for x in r.worker_cpu)
    p50 = "-" if r.p50_ms is None else f"{r.p50_ms:.2f}"
    p99 = "-" if r.p99_ms is None else f"{r.p99_ms:.2f}"
    print(
        f"{r.workers:7d} {r.tables:6d} {p50:>7} {p99:>7} {r.swaps_ok:8d}/{r.swaps:<7d} {each:<22} "
        f"{r.front_cpu:8.0%} {r.generator_cpu:9.0%} {r.cpu_per_table_ms:15.2f}  {r.load[0]:.2f}-{r.load[1]:.2f}",
        file=out,
        flush=True,
    )


def capacity(runs: dict[tuple[int, int], list[Run]], workers: int, sizes: list[int], p99: float) -> int:
    """The largest table count carried below the first that was not (each count's median round)."""
    carried = 0
    for tables in sizes:
        done = runs.get((workers, tables))
        if not done:
            break
        median = sorted(done, key=lambda r: r.p99_ms if r.p99_ms is not None else float("inf"))[len(done) // 2]
        if not median.carried(p99):
            break
        carried = tables
    return carried


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", default="20,40,60,80", help="table counts to try, ascending, comma-separated")
    parser.add_argument(
        "--workers",
        default="1,2",
        help="worker counts to compare, comma-separated (the first is the base of the ratio)",
    )
    parser.add_argument("--seconds", type=float, default=4.0, help="measured window of each run")
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds of full load before the window opens")
    parser.add_argument("--pace", type=float, default=20.0, help="play this many times faster than the standard timing")
    parser.add_argument("--procs", type=int, default=2, help="load generator processes")
    parser.add_argument("--rounds", type=int, default=1, help="runs of each table count and worker count, alternating")
    parser.add_argument("--p99", type=float, default=50.0, help="the latency a count must stay under, in ms")
    parser.add_argument(
        "--json", action="store_true", help="print the figures as one JSON document (the table to stderr)"
    )
    args = parser.parse_args()
    args.boost = 0  # the load generator's option: never raised above the others here
    args.pin = False  # nor pinned: the workers are spread over the cores themselves
    sizes = [int(n) for n in args.tables.split(",")]
    counts = [int(n) for n in args.workers.split(",")]
    out = sys.stderr if args.json else sys.stdout
    # The play at the pace, but the signing as long as the standard one: seating many tables on a busy machine takes
    # longer than a sign window divided by the pace, and the load measured is the round's.
    timing = fanout.paced_timing(args.pace).changed(sign_window=fanout.STANDARD.sign_window)
    print(
        f"{os.cpu_count()} CPUs; pace x{args.pace:g} (swap cooldown {timing.swap_cooldown * 1000:.0f} ms, pulse "
        f"every {timing.pulse_interval * 1000:.0f} ms); window {args.seconds:g} s after {args.warmup:g} s; "
        f"{args.procs} load processes; load average at the start {os.getloadavg()[0]:.2f}",
        file=out,
        flush=True,
    )
    print(HEADER, file=out, flush=True)
    runs: dict[tuple[int, int], list[Run]] = {}
    failed: set[int] = set()  # worker counts past their capacity: not tried at larger counts
    with tempfile.TemporaryDirectory() as tmp:
        timing_file = Path(tmp) / "bench.toml"
        timing_file.write_text("".join(f"{name} = {value!r}\n" for name, value in timing.values().items()))
        for tables in sizes:
            for round_ in range(args.rounds):
                order = counts if (round_ + sizes.index(tables)) % 2 == 0 else list(reversed(counts))
                for workers in order:
                    if workers in failed:
                        continue
                    r = run_once(workers, tables, args, timing_file)
                    runs.setdefault((workers, tables), []).append(r)
                    print_run(r, out)
            for workers in counts:
                if workers not in failed and capacity(runs, workers, sizes, args.p99) < tables:
                    failed.add(workers)
            if failed >= set(counts):
                break
    caps = {w: capacity(runs, w, sizes, args.p99) for w in counts}
    base = caps[counts[0]]
    print(
        f"capacity at p99 < {args.p99:g} ms (tables of 8 busy seats at pace x{args.pace:g}; at the standard pace x "
        f"{args.pace:g}):",
        file=out,
    )
    for w in counts:
        ratio = (
            f", {caps[w] / base:.2f}x of {counts[0]} worker{'s' if counts[0] > 1 else ''}"
            if base and w != counts[0]
            else ""
        )
        note = " (carried every count tried: raise --tables)" if caps[w] == sizes[-1] else ""
        print(
            f"  {w} worker{'s' if w > 1 else ' '}: {caps[w]} tables (~{caps[w] * args.pace:.0f} at the standard pace)"
            f"{ratio}{note}",
            file=out,
        )
    costs = {
        w: statistics.median(r.cpu_per_table_ms for (n, _), done in runs.items() if n == w for r in done)
        for w in counts
        if any(n == w for n, _ in runs)
    }
    print(
        "workers' CPU per table (median run): "
        + ", ".join(f"{w} worker{'s' if w > 1 else ''} {c:.2f} ms/s" for w, c in costs.items()),
        file=out,
    )
    load = [r.load[1] for done in runs.values() for r in done]
    print(
        f"load average during the runs: {min(load):.2f}-{max(load):.2f} on {os.cpu_count()} CPUs"
        + (" (busy: run it again on a quiet machine)" if max(load) > (os.cpu_count() or 1) * 0.75 else ""),
        file=out,
    )
    if args.json:
        print(
            json.dumps(
                {
                    "pace": args.pace,
                    "p99_limit_ms": args.p99,
                    "procs": args.procs,
                    "cpus": os.cpu_count(),
                    "capacity": {str(w): caps[w] for w in counts},
                    "ratio": {str(w): (round(caps[w] / base, 2) if base else None) for w in counts},
                    "cpu_per_table_ms": {str(w): c for w, c in costs.items()},
                    "runs": [
                        {**r.__dict__, "cpu_per_table_ms": r.cpu_per_table_ms} for done in runs.values() for r in done
                    ],
                    "median_load": statistics.median(load) if load else None,
                },
                indent=2,
            ),
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
