"""What the lobby's list costs the server: a ``list_tables`` answered, and a ``lobby`` push, at many tables.

    python benchmarks/lobby_listing.py [--tables 1000] [--changed 0,1,50] [--lists 400] [--repeat 3] [--json]

A real ``Lobby`` holds ``--tables`` tables, half of them seating players (a person and a bot), half with their match
under way (a person and three bots): ``MAX_LISTED`` (200) of them are listed. Then, ``--lists`` times, ``C`` listed
tables change something the list shows (a rename at the table, for each ``C`` of ``--changed``), 10 ms pass, and a
connection in the lobby asks ``list_tables``: the server's whole job for it is timed, as the shell does it (the
lobby's answer and ``tables_frame``: every listed line as it is at that moment, only the changed ones built again,
each line packed once while it is unchanged); so is pushing the list to one connection in the lobby after the same
changes (``push_stale_listing``: building the list and its message, encoded once whatever the number of watchers).

The baseline, in the same run and on the same lobby: the same list built afresh for every request and every push,
every line of it (``Room.summary``) and its encoding (``encode(to_wire(...))``), as fresh as the lobby's but with
nothing kept (and pushed when something changed, as the lobby's). The CPU is this thread's (``time.thread_time``).

Printed per ``C``: µs per ``list_tables`` and per push, the lobby's and the baseline's (the median of ``--repeat``
runs), the baseline's figure divided by the lobby's, and the bytes of one list. Figures, not tests: nothing here
asserts a threshold. Results go to docs/performance.md by hand.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from itertools import count
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from quatro_shared import messages as m  # noqa: E402
from quatro_shared import protocol as p  # noqa: E402
from quatro_shared.framing import encode  # noqa: E402
from quatro_shared.wire import to_wire  # noqa: E402

from quatro_server.tables.lobby import MAX_LISTED, Lobby  # noqa: E402
from quatro_server.tables.room import Room  # noqa: E402


class _Peer:
    """A connection as the lobby sees it: what it is sent is encoded (as the shell's queue would), then dropped."""

    origin = None

    def __init__(self, name: str) -> None:
        self.name, self.room, self.seat, self.person = name, None, None, None
        self.bytes = 0

    def send(self, message: dict[str, Any] | bytes) -> None:
        self.bytes += len(message if isinstance(message, bytes) else encode(message))

    def close(self, reason: str) -> None:
        pass


def _lobby(tables: int) -> tuple[Lobby, list[_Peer]]:
    """The lobby, and the hosts of its listed tables (the ones still seating players come first)."""
    lobby = Lobby(seed=7)
    lobby.max_tables = tables
    ids = count(1)
    hosts = []
    for i in range(tables):
        host = _Peer(f"host{i}")
        ask = lambda body, peer=host: lobby.handle(peer, m.Request(next(ids), body.kind, body), 0.0)  # noqa: E731
        assert type(ask(m.CreateTable(players=4))) is m.Ok
        assert type(ask(m.AddBot(level="easy"))) is m.Ok
        if i % 2:
            ask(m.AddBot(level="easy"))
            ask(m.AddBot(level="easy"))
            assert type(ask(m.Start())) is m.Ok
        hosts.append(host)
    listed = {summary.table for summary in lobby.listing()}
    return lobby, [host for host in hosts if host.room is not None and host.room.id in listed]


def _afresh(lobby: Lobby, now: float) -> tuple[m.TableSummary, ...]:
    """The baseline's list: every listed line built again."""
    rooms: list[Room] = sorted(lobby.rooms.values(), key=lambda room: (room.table is not None, room.id))
    return tuple(room.summary(now) for room in rooms[:MAX_LISTED])


def measure(tables: int, changed: int, lists: int, baseline: bool) -> dict[str, float]:
    lobby, hosts = _lobby(tables)
    eve, watcher = _Peer("eve"), _Peer("watcher")
    lobby.watchers.add(watcher)
    lobby.on_listing_stale = lambda: None  # pushed on the beat below, as the network shell pushes
    ids = count(1_000_000)
    now, list_cpu, push_cpu, size = 1.0, 0.0, 0.0, 0
    gc.collect()
    gc.disable()
    try:
        for n in range(lists):
            now += 0.01
            for host in hosts[(n * changed) % len(hosts) :][:changed]:
                lobby.handle(host, m.Request(next(ids), p.RENAME, m.Rename(f"h{n}")), now)
            request = m.Request(next(ids), p.LIST_TABLES, m.ListTables())
            start = time.thread_time()
            if baseline:
                lobby.now = now
                frame = encode(to_wire(m.Ok(request.id, m.Tables(_afresh(lobby, now)))))
            else:
                reply = lobby.handle(eve, request, now)
                assert type(reply) is m.Ok
                frame = lobby.tables_frame(reply)
            middle = time.thread_time()
            if baseline:
                if changed:  # a push when something changed, as the lobby's
                    encode(to_wire(m.LobbyList(_afresh(lobby, now))))
            else:
                lobby.push_stale_listing(now)
            end = time.thread_time()
            list_cpu += middle - start
            push_cpu += end - middle
            size = len(frame)
    finally:
        gc.enable()
    return {"us_per_list": list_cpu / lists * 1e6, "us_per_push": push_cpu / lists * 1e6, "list_bytes": size}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--changed", default="0,1,50", help="listed tables changed between two lists, comma-separated")
    parser.add_argument("--lists", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = []
    for changed in (int(c) for c in args.changed.split(",")):
        runs: dict[bool, list[dict[str, float]]] = {False: [], True: []}
        for _ in range(args.repeat):  # alternating: a shared machine's drift touches both alike
            for baseline in (False, True):
                runs[baseline].append(measure(args.tables, changed, args.lists, baseline))
        row: dict[str, Any] = {"changed": changed, "list_bytes": runs[False][0]["list_bytes"]}
        for baseline, name in ((False, "lobby"), (True, "afresh")):
            for figure in ("us_per_list", "us_per_push"):
                row[f"{name}_{figure}"] = round(statistics.median(r[figure] for r in runs[baseline]), 1)
        row["list_ratio"] = round(row["afresh_us_per_list"] / max(row["lobby_us_per_list"], 0.1), 1)
        row["push_ratio"] = round(row["afresh_us_per_push"] / max(row["lobby_us_per_push"], 0.1), 1)
        rows.append(row)
    if args.json:
        print(json.dumps({"tables": args.tables, "lists": args.lists, "rows": rows}))
        return
    print(f"{args.tables} tables, {MAX_LISTED} listed, {args.lists} lists")
    for row in rows:
        print(
            f"{row['changed']:>4} changed: list_tables {row['lobby_us_per_list']:>8} µs (afresh"
            f" {row['afresh_us_per_list']:>8} µs, x{row['list_ratio']}), push {row['lobby_us_per_push']:>8} µs"
            f" (afresh {row['afresh_us_per_push']:>8} µs, x{row['push_ratio']}), {row['list_bytes']} bytes"
        )


if __name__ == "__main__":
    main()
