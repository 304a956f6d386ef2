"""``quatro-server``: serve Quatro tables over TCP (the default), run network bots (``bot``), simulate bot matches
(``sim``), or print a journalled match (``replay``).

``quatro-server [serve] [--host H] [--port P] [--timing T] [--seed N] [--data-dir DIR | --no-journal] [--log-level L]``
serves; with no subcommand the arguments are the server's, as they always were. ``quatro-server bot --help``,
``quatro-server sim --help`` and ``quatro-server replay --help`` describe the others.
"""

from __future__ import annotations

import argparse
import logging
import socket
import sys
from pathlib import Path

import trio

from quatro_shared.protocol import DEFAULT_PORT

from quatro_server import journal, netbot, replay, sim
from quatro_server.lobby import Lobby
from quatro_server.server import run
from quatro_server.timing import PROFILES, load_timing


#: The subcommands; the first word of the arguments picks one, and anything else means ``serve``.
SUBCOMMANDS = ("serve", "bot", "sim", "replay")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="quatro-server",
        description="Serve Quatro tables on this machine (the default), run network bots, simulate bot matches, "
        "or replay a journalled match.",
        epilog="With no subcommand, quatro-server serves: quatro-server --port 7777 is quatro-server serve --port 7777.",
    )
    commands = parser.add_subparsers(dest="command", metavar="{serve,bot,sim,replay}")
    serve = commands.add_parser("serve", help="serve tables over TCP (the default)", description="Serve Quatro tables on this machine.")
    serve.add_argument("--host", default=None, help="address to listen on (default: every interface, for LAN play)")
    serve.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"TCP port (default {DEFAULT_PORT}; 0 picks a free one)")
    serve.add_argument(
        "--timing",
        default="standard",
        help="default timing profile of new tables: standard, fast, or a TOML file of durations",
    )
    serve.add_argument("--seed", type=int, default=None, help="seed every shuffle (tests and replays only: predictable!)")
    serve.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="the server's data directory: its journal of every table, restored after a crash or restart "
        f"(default: $XDG_DATA_HOME/quatro, else ~/.local/share/quatro; here {journal.default_data_dir()})",
    )
    serve.add_argument(
        "--no-journal", action="store_true", help="keep tables in memory only: they end with the process"
    )
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
    replaying = commands.add_parser(
        "replay",
        help="print a journalled match move by move",
        description="Print a table's match from the journal, move by move (the notation is in docs/journal.md). "
        "Hidden things are shown too: this is the operator's record.",
    )
    replay.add_arguments(replaying)
    replaying.set_defaults(run=replay.run)
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
    args = _parser().parse_args(argv)
    return args.run(args)


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
    if args.no_journal and args.data_dir is not None:
        print("quatro-server: --no-journal and --data-dir exclude each other", file=sys.stderr)
        return 2
    book: journal.Journal | None = None
    if not args.no_journal:
        try:
            book = journal.Journal.open(args.data_dir or journal.default_data_dir())
        except journal.JournalError as refusal:
            print(f"quatro-server: {refusal}", file=sys.stderr)
            return 2

    async def main_task() -> None:
        async with trio.open_nursery() as nursery:
            if book is not None:
                restored = journal.restore(lobby, book, trio.current_time())
                nursery.start_soon(journal.settle, lobby, restored)
                print(f"Journal: {book.path} ({len(restored)} tables restored)", flush=True)

            async def serve_then_stop(task_status: trio.TaskStatus[list[trio.SocketListener]]) -> None:
                await run(args.host, args.port, lobby, task_status=task_status)
                nursery.cancel_scope.cancel()  # the restart's grace, if still running, ends with the server

            listeners = await nursery.start(serve_then_stop)
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
    finally:
        if book is not None:
            book.close()
    return status


if __name__ == "__main__":
    raise SystemExit(main())
