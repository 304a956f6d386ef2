"""What watchers cost the server: one busy table of 8 watched by 0, 1 and 200 connections, in process.

    python benchmarks/watchers.py [--watchers 0,1,200] [--steps 1500] [--pace 3] [--json]

The table is seated and played through the real ``quatro_server.server.Server`` as ``server_work.py`` plays its
tables (every seat holds its channel with an emoji and swaps at its cooldown's pace, so batches are swaps and
pulses, with a clock now and then), and ``W`` connections in the lobby send ``watch`` for it before the measured
steps. Each step hands the table one ``swap`` as the bytes a client sends, ticks it when its deadline has come,
and takes every connection's queued frames, as the flusher takes them before its one write. Time is a
``trio.testing.MockClock`` moved by hand; the CPU is this thread's (``time.thread_time``) over the steps alone.

Printed per watcher count (the median of ``--repeat`` runs): the table's batches, the server's CPU per batch (the
request, the engine, every seat's frames and the watchers' frame, queued to every connection), the CPU of taking
every connection's queued frames per batch (the flusher's share before its writes), the watchers' bytes per batch as
built (distinct frames: one per batch for the whole audience) and as queued (every watcher's copy), and the server
CPU each watcher adds per batch (the difference to the previous watcher count, divided by the extra watchers). Not the system calls:
a socket write per watcher per scheduler pass comes on top (``server_fanout.py`` measures those for seats).
Figures, not tests: nothing here asserts a threshold. Results go to docs/performance.md by hand.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import trio  # noqa: E402
import trio.testing  # noqa: E402
from server_fanout import SEATS  # noqa: E402
from server_work import _NoStream, _Run, _seat_all  # noqa: E402

from quatro_shared.framing import FrameDecoder  # noqa: E402
from quatro_shared.protocol import PROTOCOL_VERSION  # noqa: E402

from quatro_server.net.quiet import settle_heap  # noqa: E402
from quatro_server.server import Connection, Server  # noqa: E402
from quatro_server.tables.lobby import Lobby  # noqa: E402
from quatro_server.timing import PROFILES  # noqa: E402

#: How an ``update`` frame starts (after its length prefix and map header): its ``kind``.
_UPDATE = b"\xa4kind\xa6update"


def measure(run: _Run, watchers: int) -> dict[str, float]:
    clock = trio.testing.MockClock()
    result: dict[str, float] = {}

    async def main() -> None:
        lobby = Lobby(timing_profiles={**PROFILES, "bench": run.timing}, seed=7)
        server = Server(lobby)
        ((room, conns),) = _seat_all(server, clock, 1)
        audience = [Connection(_NoStream(), f"watcher{i}", None) for i in range(watchers)]  # type: ignore[arg-type]
        for i, conn in enumerate(audience):
            server._answer(conn, {"kind": "hello", "id": 1, "version": PROTOCOL_VERSION, "name": f"w{i}"})
            server._answer(conn, {"kind": "watch", "id": 2, "table": room.id})
        for conn in (*conns, *audience):  # what the seating told of each watcher's coming: before the measure
            conn.take()
            conn.outbox.size = 0
        decoder = FrameDecoder()
        thresholds = gc.get_threshold()
        settle_heap()
        step_s = run.timing.swap_cooldown * 1.05 / SEATS
        request_id = 10_000
        cpu = flush = 0.0
        batches = built = queued = 0
        first_seq = room.watch_seq
        publishes = 0
        original = room.publish

        def counted(emits: list[Any], now: float, snapshot_for: int | None = None) -> None:
            nonlocal publishes
            if emits:
                publishes += 1
            original(emits, now, snapshot_for)

        room.publish = counted  # type: ignore[method-assign]
        for step in range(run.steps):
            clock.jump(step_s)
            now = trio.current_time()
            conn = conns[step % SEATS]
            assert room.table is not None and conn.seat is not None
            request_id += 1
            data = run.swap_bytes(request_id, room.table.hand(conn.seat), room.table.center)
            started = time.thread_time()
            wake = room.next_wake()
            if wake is not None and wake <= now:
                server._tick(room, now)
            for frame in decoder.feed(data):
                server._answer(conn, frame)
            served = time.thread_time()
            cpu += served - started
            distinct: dict[int, int] = {}  # counted outside the measure
            for each in audience:
                for chunk in each.outbox.chunks:
                    assert isinstance(chunk, bytes)
                    if _UPDATE not in chunk[:24]:
                        continue  # the ``table`` push telling the count (once a second at most), not a batch's
                    distinct[id(chunk)] = len(chunk)
                    queued += len(chunk)
            built += sum(distinct.values())
            started = time.thread_time()
            for each in (*conns, *audience):
                if each.outbox.chunks:
                    each.outbox.sent(len(each.outbox.take()))
            flush += time.thread_time() - started
        batches = room.watch_seq - first_seq
        dropped = sum(each.closed_reason is not None for each in (*conns, *audience))
        gc.set_threshold(*thresholds)
        gc.unfreeze()
        result.update(
            watchers=watchers,
            batches=publishes,
            watched_batches=batches,
            dropped=dropped,
            us_per_batch=cpu / publishes * 1e6,
            flush_us_per_batch=flush / publishes * 1e6,
            built_bytes_per_batch=built / batches if batches else 0.0,
            queued_bytes_per_batch=queued / batches if batches else 0.0,
        )

    trio.run(main, clock=clock)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--watchers", default="0,1,200", help="watcher counts, comma separated")
    parser.add_argument("--steps", type=int, default=1500, help="steps measured: one swap at the table per step")
    parser.add_argument("--pace", type=float, default=3.0, help="play this many times faster than the standard timing")
    parser.add_argument("--repeat", type=int, default=3, help="runs per watcher count (the median is kept)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON document")
    args = parser.parse_args()
    run = _Run(1, args.steps, args.pace)
    counts = [int(n) for n in args.watchers.split(",")]
    rows = []
    for n in counts:  # the median of ``--repeat`` runs, by the server's CPU per batch (a shared machine drifts)
        runs = sorted((measure(run, n) for _ in range(args.repeat)), key=lambda r: r["us_per_batch"])
        rows.append(runs[len(runs) // 2])
    for before, row in zip(rows, rows[1:]):
        extra = row["watchers"] - before["watchers"]
        row["us_per_watcher_per_batch"] = (row["us_per_batch"] - before["us_per_batch"]) / extra if extra else 0.0
    if args.json:
        print(
            json.dumps(
                {
                    "steps": args.steps,
                    "pace": args.pace,
                    "python": sys.version.split()[0],
                    "rows": [{k: round(v, 3) for k, v in row.items()} for row in rows],
                },
                indent=2,
            )
        )
        return 0
    print(
        f"python {sys.version.split()[0]}; one table of {SEATS}, {args.steps} steps, pace x{args.pace:g}; "
        "CPU of this thread per batch, in process (no system calls, no scheduler)"
    )
    print(
        f"  {'watchers':>8} {'batches':>8} {'µs/batch':>9} {'flush µs':>9} {'built B/batch':>14} {'queued B/batch':>15}"
        f" {'µs/watcher':>11}"
    )
    for row in rows:
        print(
            f"  {row['watchers']:>8.0f} {row['batches']:>8.0f} {row['us_per_batch']:>9.1f} {row['flush_us_per_batch']:>9.1f} "
            f"{row['built_bytes_per_batch']:>14.1f} {row['queued_bytes_per_batch']:>15.1f} "
            f"{row.get('us_per_watcher_per_batch', 0.0):>11.3f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
