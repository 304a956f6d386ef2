"""The server's own work per delivered message, in process: no sockets, no scheduler, a steady figure.

    python benchmarks/server_work.py [--tables 50] [--steps 1500] [--pace 3] [--scrape-every 15] [--json]

``server_fanout.py`` measures the whole server over loopback TCP against a bare relay; on a shared machine its
figures drift by 5-10 % from one minute to the next, more than most single changes to the server are worth. This
benchmark measures only the Python the server runs for its messages, which is what such changes change, and does so
in one process on one thread, so that a run repeats to within a few per cent:

1. ``server``: ``--tables`` tables of 8 seats, seated and started through the real ``quatro_server.server.Server``
   (hello, create_table, join, start, signs, ready, every channel taken with an emoji, as the load of
   ``server_fanout.py`` plays them); then, step after step, each table gets one ``swap`` request as the bytes a client
   sends (cut into a message by ``FrameDecoder``, answered by ``Server._answer``: the request's checks, the lobby, the
   rules engine, publishing to the 8 seats), and each table whose deadline has come is ticked (``Server._tick``:
   its pulses, published). Every connection's queued frames are then taken, as the flusher takes them before its one
   write. Time is a ``trio.testing.MockClock`` moved by hand: a step is an eighth of the swap period, so every seat
   swaps at the pace of ``server_fanout.py``'s load, and pulses come at theirs. The collector is set as the server
   sets it once it serves (``quatro_server.net.quiet.settle_heap``: start-up frozen, a young generation of 70,000).
2. ``server+journal``: the same, journalling every table to a fresh data directory (the operator's default): the
   loop's share of the journal, and the writer thread beside it (its CPU is not counted, its interference is).
3. ``server+metrics``: the same as ``server``, its metrics watched (``quatro-server --metrics``) and their text
   written every ``--scrape-every`` seconds of the run's clock, within the measured time, as a scrape costs the loop.
   The loop-lag task and the counters' additions are not in it (no scheduler here, and every outbox here is taken by
   hand, not by a flusher): ``docs/operating.md`` adds them up.
4. ``relay``: the baseline, the Python of ``server_fanout.py``'s flusher relay for the same messages: each request's
   bytes decoded, one update built and encoded for the table, appended to its 8 connections with an ``ok`` for the
   requester, and every connection's frames joined.

Printed per variant: CPU of this thread per delivered message (``time.thread_time``), messages, and the ratio to the
relay. Not the server's whole cost: the system calls (a send per connection per pass, the reads, epoll) and trio's
scheduling come on top, alike for server and relay; ``server_fanout.py`` measures those.
Figures, not tests: nothing here asserts a threshold. Results go to docs/performance.md by hand.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import trio  # noqa: E402
import trio.testing  # noqa: E402
from server_fanout import SEATS, paced_timing, sample_update_body  # noqa: E402

from quatro_shared.framing import FrameDecoder, encode  # noqa: E402
from quatro_shared.games.quatro.signs import SIGNS  # noqa: E402
from quatro_shared.protocol import PROTOCOL_VERSION  # noqa: E402

from quatro_server import journal  # noqa: E402
from quatro_server.net.quiet import settle_heap  # noqa: E402
from quatro_server.server import Connection, Server  # noqa: E402
from quatro_server.tables.lobby import Lobby  # noqa: E402
from quatro_server.tables.room import Room  # noqa: E402
from quatro_server.timing import PROFILES  # noqa: E402

VARIANTS = ("relay", "server", "server+journal", "server+metrics")


class _NoStream:
    """A connection's stream that is never written: the outbox's frames are taken, as the flusher takes them."""

    async def aclose(self) -> None:
        return None


class _Run:
    def __init__(self, tables: int, steps: int, pace: float) -> None:
        self.tables, self.steps, self.pace = tables, steps, pace
        self.timing = paced_timing(pace)
        self.rng = random.Random(7)

    def swap_bytes(self, request_id: int, hand: tuple[str, ...] | list[str], center: list[str]) -> bytes:
        slot = self.rng.randrange(4)
        return encode(
            {"kind": "swap", "id": request_id, "give": hand[self.rng.randrange(4)], "slot": slot, "take": center[slot]}
        )


def _seat_all(server: Server, clock: trio.testing.MockClock, count: int) -> list[tuple[Room, list[Connection]]]:
    """``count`` tables of 8 through the server, as ``server_fanout.py``'s load seats them: their matches running,
    every channel held with an emoji chosen. All at the same moment: the clock only moves past the sign window."""
    ids = iter(range(1, 1_000_000))

    def ask(conn: Connection, **fields: Any) -> None:
        server._answer(conn, {**fields, "id": next(ids)})
        conn.take()

    tables = []
    for table in range(count):
        conns = [Connection(_NoStream(), f"bench{table}.{i}", None) for i in range(SEATS)]  # type: ignore[arg-type]
        for i, conn in enumerate(conns):
            ask(conn, kind="hello", version=PROTOCOL_VERSION, name=f"load{table}-{i}")
        ask(conns[0], kind="create_table", players=SEATS, timing="bench")
        room = conns[0].room
        assert room is not None
        for conn in conns[1:]:
            ask(conn, kind="join", table=room.id)
        ask(conns[0], kind="start")
        for conn in conns:
            assert conn.seat is not None
            if conn.seat < SEATS // 2:
                ask(conn, kind="pick_sign", sign=SIGNS[conn.seat])
            ask(conn, kind="ready")
        tables.append((room, conns))
    timing = tables[0][0].timing
    clock.jump(timing.sign_window + 0.01)
    for room, _ in tables:
        server._tick(room, trio.current_time())  # the round opens
    # Channels taken one after another over one pulse interval, so that pulses come at every moment (a table whose
    # channels pulsed all at once would batch its pulses); a table's pulses due meanwhile fire at its first tick.
    apart = timing.pulse_interval / (count * SEATS)
    for seat in range(SEATS):  # a table's eight channels an eighth of the interval apart, the tables between them
        for room, conns in tables:
            conn = conns[seat]
            assert conn.seat is not None
            clock.jump(apart)
            ask(conn, kind="take_channel")
            ask(conn, kind="choose_emoji", sign=SIGNS[(conn.seat + 4) % len(SIGNS)])
    for room, conns in tables:
        server._tick(room, trio.current_time())
        for conn in conns:
            conn.take()
            conn.outbox.size = 0
    return tables


def measure_server(run: _Run, journalled: bool, scrape_every: float | None = None) -> dict[str, float]:
    """``scrape_every``: the server's metrics watched (``quatro_server.workers.metrics``) and their text written every that
    many seconds of the run's clock, inside the measured time, as a scrape makes the loop write it."""
    clock = trio.testing.MockClock()
    result: dict[str, float] = {}

    async def main() -> None:
        lobby = Lobby(timing_profiles={**PROFILES, "bench": run.timing}, seed=7)
        server = Server(lobby)
        metrics = None
        if scrape_every is not None:
            from quatro_server.workers.metrics import Metrics

            metrics = Metrics()
            metrics.watch(server)
        scraped_at = trio.current_time()
        scrapes, scrape_cpu = 0, 0.0
        book = None
        with tempfile.TemporaryDirectory() as data:
            if journalled:
                book = journal.Journal.open(Path(data))
                lobby.restore(book, trio.current_time())
            tables = _seat_all(server, clock, run.tables)
            decoders = {id(conn): FrameDecoder() for _, conns in tables for conn in conns}
            thresholds = gc.get_threshold()
            settle_heap()  # as the server does once it serves: start-up frozen, the collector's thresholds raised
            step_s = run.timing.swap_cooldown * 1.05 / SEATS  # each seat swaps a little slower than its cooldown
            request_id = 10_000
            delivered = 0
            cpu = 0.0
            for step in range(run.steps):
                clock.jump(step_s)
                now = trio.current_time()
                requests = []
                for room, conns in tables:
                    conn = conns[step % SEATS]
                    assert room.table is not None and conn.seat is not None
                    request_id += 1
                    requests.append(
                        (room, conn, run.swap_bytes(request_id, room.table.hand(conn.seat), room.table.center))
                    )
                started = time.thread_time()
                for room, conn, data in requests:
                    wake = room.next_wake()
                    if wake is not None and wake <= now:
                        server._tick(room, now)  # its pulses, on time (the server's timer fires before a request)
                    for frame in decoders[id(conn)].feed(data):
                        server._answer(conn, frame)
                for _, conns in tables:
                    for conn in conns:
                        chunks = conn.outbox.chunks
                        if chunks:
                            delivered += len(chunks)
                            conn.outbox.sent(len(conn.outbox.take()))
                if metrics is not None and scrape_every is not None and now >= scraped_at + scrape_every:
                    began = time.thread_time()
                    metrics.text()
                    scrape_cpu += time.thread_time() - began
                    scraped_at, scrapes = now, scrapes + 1
                cpu += time.thread_time() - started
            result.update(us_per_msg=cpu / delivered * 1e6, messages=delivered)
            if metrics is not None:
                result.update(
                    scrapes=scrapes,
                    us_per_scrape=scrape_cpu / max(1, scrapes) * 1e6,
                    scrape_us_per_msg=scrape_cpu / delivered * 1e6,
                )
            gc.set_threshold(*thresholds)
            gc.unfreeze()
            if book is not None:
                book.close()

    trio.run(main, clock=clock)
    return result


def measure_relay(run: _Run) -> dict[str, float]:
    """The flusher relay's Python for the same messages (``server_fanout.Relay``'s ``handle``, ``fan_out``, ``reply``
    and its flush, without the sockets): one update encoded per batch, shared by the table's 8 connections."""
    template = sample_update_body()
    hands = [["AS", "KS", "QS", "JS"] for _ in range(SEATS)]
    center = ["AH", "KH", "QH", "JH"]
    chunks: list[list[bytes]] = [[] for _ in range(run.tables * SEATS)]
    decoders = [FrameDecoder() for _ in range(run.tables * SEATS)]
    # Every seat's channel pulses once per pulse interval: this many pulses per table per step, as at the server.
    pulses_per_step = SEATS * (run.timing.swap_cooldown * 1.05 / SEATS) / run.timing.pulse_interval
    owed = [random.Random(t).random() for t in range(run.tables)]  # the tables' pulses out of step, as there
    delivered = 0
    cpu = 0.0
    request_id = 10_000
    for step in range(run.steps):
        requests = []
        for t in range(run.tables):
            request_id += 1
            requests.append((t, step % SEATS, run.swap_bytes(request_id, hands[step % SEATS], center)))
        started = time.thread_time()
        for t, seat, data in requests:
            conn = t * SEATS + seat
            for frame in decoders[conn].feed(data):
                event = {
                    "kind": "swapped",
                    "seat": seat,
                    "slot": frame["slot"],
                    "give": frame["give"],
                    "take": frame["take"],
                }
                update = encode({**template, "events": [event]})
                for other in range(t * SEATS, t * SEATS + SEATS):
                    chunks[other].append(update)
                chunks[conn].append(encode({"kind": "ok", "id": frame.get("id")}))
            owed[t] += pulses_per_step
            while owed[t] >= 1:
                owed[t] -= 1
                pulse = encode({**template, "events": [{"kind": "pulse", "seat": seat, "sign": SIGNS[seat]}]})
                for other in range(t * SEATS, t * SEATS + SEATS):
                    chunks[other].append(pulse)
        for queued in chunks:
            if queued:
                delivered += len(queued)
                b"".join(queued)
                queued.clear()
        cpu += time.thread_time() - started
    return {"us_per_msg": cpu / delivered * 1e6, "messages": delivered}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=50, help="tables of 8 seats")
    parser.add_argument("--steps", type=int, default=1500, help="steps measured: each table gets one swap per step")
    parser.add_argument("--pace", type=float, default=3.0, help="play this many times faster than the standard timing")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON document")
    parser.add_argument(
        "--scrape-every",
        type=float,
        default=15.0,
        help="server+metrics: seconds of the run's clock between scrapes (default 15, Prometheus's usual)",
    )
    args = parser.parse_args()
    run = _Run(args.tables, args.steps, args.pace)
    figures = {
        "relay": measure_relay(run),
        "server": measure_server(run, journalled=False),
        "server+journal": measure_server(run, journalled=True),
        "server+metrics": measure_server(run, journalled=False, scrape_every=args.scrape_every),
    }
    base = figures["relay"]["us_per_msg"]
    for name in VARIANTS:
        figures[name]["ratio_to_relay"] = figures[name]["us_per_msg"] / base
    if args.json:
        print(
            json.dumps(
                {
                    "tables": args.tables,
                    "steps": args.steps,
                    "pace": args.pace,
                    "python": sys.version.split()[0],
                    "variants": {k: {f: round(v, 3) for f, v in d.items()} for k, d in figures.items()},
                },
                indent=2,
            )
        )
        return 0
    print(
        f"python {sys.version.split()[0]}; {args.tables} tables of {SEATS}, {args.steps} steps, pace x{args.pace:g}; "
        "CPU of this thread per delivered message, in process (no system calls, no scheduler)"
    )
    for name in VARIANTS:
        f = figures[name]
        print(
            f"  {name:<15} {f['us_per_msg']:6.2f} µs/msg  {f['ratio_to_relay']:5.2f}x relay   ({f['messages']:.0f} messages)"
        )
    metered = figures["server+metrics"]
    print(
        f"  server+metrics: {metered['scrapes']:.0f} scrapes of {metered['us_per_scrape']:.0f} µs each, "
        f"{metered['scrape_us_per_msg']:.4f} µs per message; metrics on / off x"
        f"{metered['us_per_msg'] / figures['server']['us_per_msg']:.3f} (the run's noise included)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
