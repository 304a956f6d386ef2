"""``quatro-server``: serve Quatro tables over TCP (the default), run network bots (``bot``), or simulate bot matches (``sim``).

``quatro-server [serve] [--host H] [--port P] [--timing T] [--seed N] [--log-level L]`` serves; with no subcommand
the arguments are the server's, as they always were. ``quatro-server bot --help`` and ``quatro-server sim --help``
describe the others.
"""

from __future__ import annotations

import argparse
import logging
import socket
import sys
from pathlib import Path

import trio

from quatro_shared.protocol import DEFAULT_PORT

from quatro_server import netbot, sim
from quatro_server.lobby import Lobby
from quatro_server.server import run
from quatro_server.timing import PROFILES, load_timing


#: The subcommands; the first word of the arguments picks one, and anything else means ``serve``.
SUBCOMMANDS = ("serve", "bot", "sim")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="quatro-server",
        description="Serve Quatro tables on this machine (the default), run network bots, or simulate bot matches.",
        epilog="With no subcommand, quatro-server serves: quatro-server --port 7777 is quatro-server serve --port 7777.",
    )
    commands = parser.add_subparsers(dest="command", metavar="{serve,bot,sim}")
    serve = commands.add_parser("serve", help="serve tables over TCP (the default)", description="Serve Quatro tables on this machine.")
    serve.add_argument("--host", default=None, help="address to listen on (default: every interface, for LAN play)")
    serve.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"TCP port (default {DEFAULT_PORT}; 0 picks a free one)")
    serve.add_argument(
        "--timing",
        default="standard",
        help="default timing profile of new tables: standard, fast, or a TOML file of durations",
    )
    serve.add_argument("--seed", type=int, default=None, help="seed every shuffle (tests and replays only: predictable!)")
    serve.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    serve.set_defaults(run=_serve)
    bot = commands.add_parser(
        "bot",
        help="play as network bots against a server",
        description="Network bots: each a real client over TCP, playing with the same decision code as the server's bots.",
    )
    netbot.add_arguments(bot)
    bot.set_defaults(run=netbot.run)
    simulate = commands.add_parser(
        "sim",
        help="simulate matches between bot levels",
        description="Play whole matches between bot teams on a virtual clock (no network, no waiting) and measure them.",
    )
    sim.add_arguments(simulate)
    simulate.set_defaults(run=sim.run)
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
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0] not in SUBCOMMANDS and argv[0] not in ("-h", "--help")):
        argv = ["serve", *argv]  # serving is the default: the server's own arguments work as they always did
    # --- the game a simulation plays: Quatro (the default) or Quarto (quatro_server.quarto_sim) ---
    if argv[:1] == ["sim"]:
        game, rest = _game_argument(argv[1:])
        if game == "quarto":
            from quatro_server import quarto_sim

            return quarto_sim.main(rest)
        if game != "quatro":
            print(f"quatro-server sim: --game is quatro or quarto, not {game!r}", file=sys.stderr)
            return 2
        argv = ["sim", *rest]
    # --- end of the game choice ---
    args = _parser().parse_args(argv)
    return args.run(args)


def _game_argument(argv: list[str]) -> tuple[str, list[str]]:
    """``--game NAME`` (or ``--game=NAME``) taken out of ``argv``; ``quatro`` when absent."""
    rest: list[str] = []
    game = "quatro"
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--game" and i + 1 < len(argv):
            game, i = argv[i + 1], i + 2
            continue
        if arg.startswith("--game="):
            game = arg.split("=", 1)[1]
        else:
            rest.append(arg)
        i += 1
    return game, rest


def _serve(args: argparse.Namespace) -> int:
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
