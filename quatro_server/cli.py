"""``quatro-server``: serve Quatro tables over TCP (later issues add the ``bot``, ``sim`` and ``soak`` subcommands)."""

from __future__ import annotations

import argparse
import logging
import socket
import sys
from pathlib import Path

import trio

from shared.protocol import DEFAULT_PORT

from quatro_server.lobby import Lobby
from quatro_server.server import run
from quatro_server.timing import PROFILES, load_timing


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="quatro-server", description="Serve Quatro tables on this machine.")
    parser.add_argument("--host", default=None, help="address to listen on (default: every interface, for LAN play)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"TCP port (default {DEFAULT_PORT}; 0 picks a free one)")
    parser.add_argument(
        "--timing",
        default="standard",
        help="default timing profile of new tables: standard, fast, or a TOML file of durations",
    )
    parser.add_argument("--seed", type=int, default=None, help="seed every shuffle (tests and replays only: predictable!)")
    parser.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    return parser


def _addresses(host: str | None, port: int) -> list[str]:
    """Where players can reach this server: loopback and this machine's addresses."""
    if host not in (None, "", "0.0.0.0", "::"):
        return [f"{host}:{port}"]
    found = ["127.0.0.1"]
    try:
        for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET):
            address = str(info[4][0])
            if address not in found:
                found.append(address)
    except OSError:
        pass
    return [f"{address}:{port}" for address in found]


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(
        level=getattr(logging, args.log_level.upper()),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s %(message)s",
    )
    try:
        timing = load_timing(args.timing)
    except (ValueError, OSError) as exc:
        print(f"quatro-server: {exc}", file=sys.stderr)
        return 2
    profiles = dict(PROFILES)
    name = args.timing if args.timing in PROFILES else Path(args.timing).stem
    profiles[name] = timing
    lobby = Lobby(timing_profiles=profiles, seed=args.seed)
    lobby.default_timing = name
    if args.seed is not None:
        print(
            f"WARNING: seeded with {args.seed}: every shuffle on this server is predictable. Tests and replays only.",
            file=sys.stderr,
            flush=True,
        )

    async def main_task() -> None:
        async with trio.open_nursery() as nursery:
            listeners = await nursery.start(run, args.host, args.port, lobby)
            port = listeners[0].socket.getsockname()[1]
            print(f"Quatro server listening (timing: {name}). Players join with:", flush=True)
            for address in _addresses(args.host, port):
                print(f"  quatro join {address}", flush=True)

    status = 0
    try:
        trio.run(main_task)
    except* OSError as group:
        exc = group.exceptions[0]
        print(f"quatro-server: cannot listen on port {args.port}: {getattr(exc, 'strerror', exc)}", file=sys.stderr)
        status = 1
    except* KeyboardInterrupt:
        pass
    return status


if __name__ == "__main__":
    raise SystemExit(main())
