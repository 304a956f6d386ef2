"""Does a thinking bot hold up the server? A Quatro player's round trips while Quarto ``perfect`` bots search.

    python benchmarks/bot_stall.py [--tables 4] [--seconds 10] [--warmup 2] [--json]

Three runs of the real server (``quatro_server.server.Server``, each in its own process on 127.0.0.1), same load:

1. ``idle``: the baseline. One Quatro table: a bystander (this process, over TCP, through the shared client core) and
   three of the server's ``random`` bots; the bystander sends a request every ``--interval`` (a ``swap`` of its
   latest view during a round, ``ready`` while signing, ``ping`` otherwise) and times each reply.
2. ``inline``: the same, plus ``--tables`` Quarto tables where two of the server's ``perfect`` bots play each other
   (rematch after rematch), their decisions made inline in the room's timer, inside the event loop: how the server
   ran before bots' thinking left it.
3. ``thread``: the same load, the decisions made as the server makes them now (``Room.think``: a worker thread,
   ``BOT_THINKERS`` at a time).

The Quarto tables are bots-only, which the lobby never makes (a table closes when no person is left): the benchmark
builds them in the server's process through the lobby (an in-process host adds a ``perfect`` bot, then its own seat
is given to a second one) and keeps them open. The bots look at the table every ``--think`` seconds (drawn at
random, person's pace is 0.6-1.4 s), so that the searches come often.

Printed (``--json``: one JSON document on stdout) per run: the bystander's round trip p50, p99 and worst (ms), the
server's longest task step (``quatro_server.net.quiet.LoopWatch``, ms) and its task, the Quarto pieces the bots placed
in the window (the work done: a run whose bots did less would look better for nothing), and requests answered.
Figures, not tests: nothing here asserts a threshold. Results go to docs/bots.md by hand.
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import trio  # noqa: E402

from quatro_shared import messages as m  # noqa: E402
from quatro_shared import protocol as p  # noqa: E402
from quatro_shared.client import ClientCore  # noqa: E402
from quatro_shared.games.quarto import contract as q  # noqa: E402
from quatro_shared.games.quatro import actions as a  # noqa: E402
from quatro_shared.games.quatro.views import Phase  # noqa: E402

from quatro_server.bots import netbot  # noqa: E402
from quatro_server.bots.games import bot_game  # noqa: E402
from quatro_server.bots.netbot import _Client  # noqa: E402
from quatro_server.games.quarto import bots as quarto_bots  # noqa: E402
from quatro_server.net.quiet import LoopWatch  # noqa: E402
from quatro_server.server import Server  # noqa: E402
from quatro_server.tables.lobby import Lobby  # noqa: E402
from quatro_server.tables.room import Room  # noqa: E402
from quatro_server.timing import FAST, PROFILES  # noqa: E402

MODES = ("idle", "inline", "thread")
#: The bystander's table: rounds that last, a short cooldown so that most swaps are taken.
BENCH_TIMING = replace(FAST, sign_window=1.0, swap_cooldown=0.05, round_length=600.0, break_length=1.0)


class _Host:
    """An in-process connection that creates the bots' tables and ignores what it is sent."""

    name = "bench-host"
    room: Room | None = None
    seat: int | None = None
    person: str | None = None
    origin: str | None = None

    def send(self, message: object) -> None:
        pass

    def close(self, reason: str) -> None:
        pass


def _bots_table(lobby: Lobby, now: float, placed: list[int]) -> Room:
    """A Quarto table of two ``perfect`` bots, started; every piece placed there is counted in ``placed``."""
    host = _Host()
    ids = iter(range(1, 100))

    def ask(body: m.RequestBody) -> m.Reply:
        return lobby.handle(host, m.Request(next(ids), body.kind, body), now)

    seated = ask(m.CreateTable(game=q.NAME))
    assert isinstance(seated, m.Ok) and isinstance(seated.payload, m.Seated), seated
    room = lobby.rooms[seated.payload.table]
    assert isinstance(ask(m.AddBot(level="perfect")), m.Ok)
    room.expired = lambda now: False  # type: ignore[method-assign]  # kept open with nobody there: a benchmark's table
    lobby.detach(host, now, leaving=True)  # before the match: the seat is free again
    room.sit(0, None, "perfect-bot-0", bot=room.game.make_bot("perfect", random.Random(room.rng.getrandbits(64))))
    publish = room.publish

    def counting(emits: list[Any], now: float, snapshot_for: int | None = None) -> None:
        placed[0] += sum(isinstance(e, q.PiecePlaced) for e in emits)
        publish(emits, now, snapshot_for)

    room.publish = counting  # type: ignore[method-assign]
    room.start(now)
    return room


async def _serve(mode: str, tables: int) -> None:
    """The server side of one run (its own process): serve, keep the bots' tables playing, answer the parent on stdin."""
    lobby = Lobby(timing_profiles={**PROFILES, "bench": BENCH_TIMING}, seed=7)
    server = Server(lobby)
    if mode == "inline":
        created = lobby.on_room_created

        def inline(room: Room) -> None:
            created(room)
            room.think = None  # decide in the room's timer, as before

        lobby.on_room_created = inline
    watch = LoopWatch()
    placed = [0]
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(server.serve, "127.0.0.1", 0)
        rooms = [_bots_table(lobby, trio.current_time(), placed) for _ in range(tables if mode != "idle" else 0)]

        async def rematches() -> None:
            while True:
                await trio.sleep(0.2)
                for room in rooms:
                    if room.table is not None and room.game.over(room.table):
                        room.start(trio.current_time())

        nursery.start_soon(rematches)
        watch.install()
        print(listeners[0].socket.getsockname()[1], flush=True)
        stdin = trio.lowlevel.FdStream(0)
        buffer = b""
        while True:
            data = await stdin.receive_some(1024)
            if not data:
                break
            buffer += data
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                if line == b"reset":
                    watch.reset()
                    placed[0] = 0
                elif line == b"report":
                    figures = {
                        "longest_batch_ms": round(watch.longest_batch * 1000, 2),
                        "batches": watch.batches,
                        "placed": placed[0],
                    }
                    print(json.dumps(figures), flush=True)
        watch.uninstall()
        nursery.cancel_scope.cancel()


def _quantile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def _bystander(port: int, args: argparse.Namespace, child: subprocess.Popen[bytes]) -> dict[str, Any]:
    """Sit at a Quatro table with three server bots and time a request every ``interval`` for ``seconds``."""
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    part = bot_game(p.QUATRO)
    client = _Client(stream, part, part.make_bot("random", random.Random(1)), ClientCore("bystander"))
    times: list[float] = []
    kinds: dict[str, int] = {}
    async with stream, trio.open_nursery() as nursery:
        nursery.start_soon(client.read)
        nursery.start_soon(client.heartbeat)
        await client.request(m.Hello(p.PROTOCOL_VERSION, "bystander"))
        assert isinstance(await client.request(m.CreateTable(4, "bench")), m.Ok)
        for _ in range(3):
            assert isinstance(await client.request(m.AddBot(level="random")), m.Ok)
        assert isinstance(await client.request(m.Start()), m.Ok)
        measuring_from = trio.current_time() + args.warmup
        ends = measuring_from + args.seconds
        reset = False

        def start_measuring() -> None:
            assert child.stdin is not None
            child.stdin.write(b"reset\n")
            child.stdin.flush()

        while trio.current_time() < ends:
            if not reset and trio.current_time() >= measuring_from:
                start_measuring()
                reset = True
            view = client.view
            body: m.RequestBody | a.Action
            if view is not None and view.phase is Phase.ROUND and view.hand and view.center:
                body = a.Swap(view.hand[0], 0, view.center[0])
            elif view is not None and view.phase is Phase.SIGNING:
                body = a.Ready()
            else:
                body = m.Ping()
            sent = time.perf_counter()
            await client.request(body)
            if not reset and trio.current_time() >= measuring_from:
                # A reply held up from before the window to into it (an inline search's stall): it counts.
                start_measuring()
                reset = True
            if reset:
                times.append(time.perf_counter() - sent)
                kinds[body.kind] = kinds.get(body.kind, 0) + 1
            await trio.sleep(args.interval)
        nursery.cancel_scope.cancel()
    return {
        "requests": len(times),
        "kinds": kinds,
        "p50_ms": round(_quantile(times, 0.50) * 1000, 2),
        "p99_ms": round(_quantile(times, 0.99) * 1000, 2),
        "worst_ms": round(max(times) * 1000, 2),
    }


def run_mode(mode: str, args: argparse.Namespace) -> dict[str, Any]:
    command = [
        sys.executable,
        __file__,
        "--serve",
        mode,
        "--tables",
        str(args.tables),
        "--think",
        args.think,
        "--exact-empty",
        str(args.exact_empty),
    ]
    if args.switch_interval:
        command += ["--switch-interval", str(args.switch_interval)]
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert child.stdout is not None and child.stdin is not None
        port = int(child.stdout.readline())
        bystander = trio.run(_bystander, port, args, child)
        child.stdin.write(b"report\n")
        child.stdin.flush()
        server = json.loads(child.stdout.readline())
        child.stdin.close()
        child.wait(timeout=10)
    finally:
        if child.poll() is None:
            child.kill()
    return {"mode": mode, **bystander, **server}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=4, help="Quarto tables of two perfect bots (default 4)")
    parser.add_argument("--seconds", type=float, default=10.0, help="measured seconds per run (default 10)")
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds before measuring (default 2)")
    parser.add_argument("--interval", type=float, default=0.05, help="seconds between the bystander's requests")
    parser.add_argument(
        "--think", default="0.1,0.3", help="the bots' look interval in seconds, MIN,MAX (default 0.1,0.3)"
    )
    parser.add_argument("--modes", default=",".join(MODES), help=f"runs, of {', '.join(MODES)} (default all)")
    parser.add_argument(
        "--switch-interval",
        type=float,
        default=None,
        help="the server's sys.setswitchinterval (default: Python's, 0.005 s)",
    )
    parser.add_argument(
        "--exact-empty",
        type=int,
        default=quarto_bots.EXACT_EMPTY,
        metavar="N",
        help=f"perfect's exact search from N empty squares (default the bots' own, {quarto_bots.EXACT_EMPTY})",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON document")
    parser.add_argument("--serve", choices=MODES, help=argparse.SUPPRESS)  # the server side of one run
    args = parser.parse_args()
    low, high = (float(x) for x in args.think.split(","))
    if args.serve:
        logging.getLogger("quatro").setLevel(logging.ERROR)  # the inline run's stall warnings: the figures say it
        if args.switch_interval:
            sys.setswitchinterval(args.switch_interval)
        quarto_bots.THINK_TIME = (low, high)
        # Every run's searches alike: the bots' own unless told (an inline search stalls the loop for its seconds).
        quarto_bots.EXACT_EMPTY = args.exact_empty
        trio.run(_serve, args.serve, args.tables)
        return
    # The stall is the figure: an inline exact search may hold the loop past a network bot's reply timeout.
    netbot.REPLY_TIMEOUT = 600.0
    runs = [run_mode(mode, args) for mode in args.modes.split(",")]
    report = {"tables": args.tables, "seconds": args.seconds, "think": [low, high], "runs": runs}
    table = [
        f"{'run':8} {'requests':>8} {'p50 ms':>8} {'p99 ms':>8} {'worst ms':>9} {'longest batch ms':>17} {'placed':>7}"
    ]
    for r in runs:
        table.append(
            f"{r['mode']:8} {r['requests']:8} {r['p50_ms']:8.2f} {r['p99_ms']:8.2f} {r['worst_ms']:9.2f} "
            f"{r['longest_batch_ms']:17.2f} {r['placed']:7}"
        )
    print("\n".join(table), file=sys.stderr if args.json else sys.stdout)
    if args.json:
        print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
