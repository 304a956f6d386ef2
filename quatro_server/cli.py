"""``quatro-server``: serve Quatro tables over TCP (the default), run network bots (``bot``), simulate bot matches
(``sim``), or print a journalled match (``replay``).

``quatro-server [serve] [--host H] [--port P] [--timing T] [--seed N] [--data-dir DIR | --no-journal] [--log-level L]``
serves; with no subcommand the arguments are the server's, as they always were. ``quatro-server --help`` shows
the serving options (the doors' too) beside the commands; ``quatro-server bot --help``, ``quatro-server sim --help``
and ``quatro-server replay --help`` describe the others.
"""

from __future__ import annotations

import argparse
import ipaddress
import logging
import os
import signal
import socket
import ssl
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from quatro_shared import plugins
from quatro_shared.addresses import format_address, parse_address
from quatro_shared.discovery import NO_ANNOUNCE_ENV, NoMulticast
from quatro_shared.profiles import STANDARD_PROFILE
from quatro_shared.protocol import DEFAULT_PORT, PROTOCOL_VERSION
from quatro_shared.wording import counted

from quatro_server import journal, logs
from quatro_server.bots import netbot
from quatro_server.datadir import default_data_dir
from quatro_server.directory import DEFAULT_TTL, DirectoryError
from quatro_server.directory import parse_address as parse_advertised
from quatro_server.doors import gate as doors
from quatro_server.doors.gate import Door, DoorThread, door_addresses, loopback, new_door_token
from quatro_server.idle import stop_when_idle
from quatro_server.net.addresses import join_addresses
from quatro_server.net.announce import Announcement
from quatro_server.net.tls import TlsConfigError, server_context
from quatro_server.records.store import Records, RecordsError
from quatro_server.replay import printout as replay
from quatro_server.server import MAX_CONNECTIONS, ServerConfig, run, settle
from quatro_server.tables.limits import MAX_TABLES
from quatro_server.tables.lobby import Lobby
from quatro_server.timing import PROFILES, load_timing
from quatro_server.tools import simulators, soak
from quatro_server.workers import admin
from quatro_server.workers import supervisor as workers

if TYPE_CHECKING:
    from quatro_server.directory.redis_directory import RedisDirectory
    from quatro_server.doors.ssh import Door as SshDoor
    from quatro_server.doors.web import WebDoor
    from quatro_server.workers.metrics import Metrics


log = logging.getLogger("quatro.server")

#: The subcommands; the first word of the arguments picks one, and anything else means ``serve``.
SUBCOMMANDS = ("serve", "bot", "sim", "soak", "replay", "admin")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="quatro-server",
        usage="%(prog)s [serve] [--port PORT] [--ssh PORT] [--web PORT] [options]\n"
        "       %(prog)s {bot,sim,soak,replay,admin} [options]",
        description="Serve Quatro tables on this machine (the default), run network bots, simulate bot matches, "
        "or replay a journalled match.",
        epilog="With no subcommand, quatro-server serves: quatro-server --port 7777 is quatro-server serve --port 7777. "
        "quatro-server COMMAND --help describes a command's options.",
    )
    commands = parser.add_subparsers(
        dest="command", metavar="{serve,bot,sim,soak,replay,admin}", title="commands", prog="quatro-server"
    )
    # The serving options where an operator looks first: shown here too (serving is the default), parsed by serve.
    _serving_options(parser, "serving (the default; quatro-server serve takes the same)", shown_only=True)
    serve = commands.add_parser(
        "serve", help="serve tables over TCP (the default)", description="Serve Quatro tables on this machine."
    )
    _serving_options(serve, "serving")
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
        description="Play whole matches between bots on a virtual clock (no network, no waiting) and measure them.",
    )
    simulators.add_arguments(simulate)
    simulate.set_defaults(run=simulators.run)
    soaking = commands.add_parser(
        "soak",
        help="attack a live server for a while and report whether it held",
        description="Start a server on 127.0.0.1 and attack it (broken frames, floods, watchers that never read, "
        "table and connection floods, password guessing, seat hijacking, silent peers) while honest players play; "
        "report crashes, leaks, hijacks, points lost, peak memory and the honest players' latency. Beside it, "
        "attack the SSH and browser doors (huge windows, handshake floods, abrupt kills, slowloris, junk HTTP, deep "
        "JSON, forged cookies, foreign origins), then the whole server under a lowered descriptor limit, two "
        "servers sharing a table directory on a real redis-server (Redis stopped, restarted empty, a forged "
        "record) and the metrics port under a flood of silent connections. Exits 1 if any crash, leak, hijack or "
        "lost point was seen, or any side's scenario did not pass.",
    )
    soak.add_arguments(soaking)
    soaking.set_defaults(run=soak.run)
    replaying = commands.add_parser(
        "replay",
        help="print a journalled match move by move",
        description="Print a table's match from the journal, move by move (the notation is in docs/journal.md). "
        "Hidden things are shown too: this is the operator's record.",
    )
    replay.add_arguments(replaying)
    replaying.set_defaults(run=replay.run)
    administering = commands.add_parser(
        "admin",
        help="ask a running server: its tables, close a table, remove a seat, a notice to all, drain before a restart",
        description="Ask the server running on this machine, over its admin socket (only the account that runs the "
        "server may): list its tables, close one, remove a seat's player, show every player a notice, or drain it "
        "before a restart (docs/operating.md).",
    )
    admin.add_arguments(administering)
    administering.set_defaults(run=admin.run)
    return parser


def _serving_actions() -> list[argparse.Action]:
    """Every option of ``serve``, for a supervisor to hand its workers those the operator gave."""
    parser = argparse.ArgumentParser(add_help=False)
    _serving_options(parser, "serving")
    return list(parser._actions)  # noqa: SLF001 - argparse's list of what it parses


def _positive(text: str) -> int:
    """A count of at least one, for argparse."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not at least 1")
    return value


def _serving_options(parser: argparse.ArgumentParser, title: str, *, shown_only: bool = False) -> None:
    """The server's options, in groups: serving, the SSH door, the browser door. ``shown_only``: for the help of
    ``quatro-server`` itself, where nothing is parsed (its arguments go to ``serve``), so no defaults are set."""

    def default(value: object) -> object:
        return argparse.SUPPRESS if shown_only else value

    serve = parser.add_argument_group(title)
    serve.add_argument(
        "--host", default=default(None), help="address to listen on (default: every interface, for LAN play)"
    )
    serve.add_argument(
        "--port", type=int, default=default(DEFAULT_PORT), help=f"TCP port (default {DEFAULT_PORT}; 0 picks a free one)"
    )
    serve.add_argument(
        "--timing",
        default=default(STANDARD_PROFILE),
        help="default timing profile of new tables: standard, fast, or a TOML file of durations",
    )
    serve.add_argument(
        "--lesson",
        action="store_true",
        default=default(False),
        help="host the guided first match (quatro learn): each game's tables are its scripted lesson, with lesson bots",
    )
    serve.add_argument(
        "--seed", type=int, default=default(None), help="seed every shuffle (tests and replays only: predictable!)"
    )
    serve.add_argument(
        "--data-dir",
        type=Path,
        default=default(None),
        metavar="DIR",
        help="the server's data directory: its journal of every table, restored after a crash or restart, and the "
        f"SSH door's host key (default: $XDG_DATA_HOME/quatro, else ~/.local/share/quatro; here {default_data_dir()})",
    )
    serve.add_argument(
        "--no-journal",
        action="store_true",
        default=default(False),
        help="keep tables in memory only: they end with the process",
    )
    serve.add_argument(
        "--no-restore",
        action="store_true",
        default=default(False),
        help="journal every table, but restore none of the last run's: they are closed, kept for replays "
        "(quatro play's private server)",
    )
    serve.add_argument(
        "--log-level",
        default=default("info"),
        choices=logs.LOG_LEVELS,
        help="what the log on stderr tells (default info)",
    )
    serve.add_argument(
        "--trusted-address",
        action="append",
        default=default([]),
        metavar="IP",
        help="exempt this remote address from the per-address limits on connections and tables "
        "(a load generator, or a gateway that relays many people from one address); repeatable",
    )
    serve.add_argument(
        "--max-tables",
        type=_positive,
        default=default(MAX_TABLES),
        metavar="N",
        help=f"tables this server holds at once; past it create_table is refused server_full (default {MAX_TABLES}; "
        "with --workers, each worker's)",
    )
    serve.add_argument(
        "--max-connections",
        type=_positive,
        default=default(MAX_CONNECTIONS),
        metavar="N",
        help=f"connections this server holds at once; more are told it is full (default {MAX_CONNECTIONS}; with "
        "--workers, each worker's). A table of 8 is 8 connections, and each takes a descriptor: raise "
        "ulimit -n to match",
    )
    serve.add_argument(
        "--final-goodbye",
        default=None,
        metavar="WORDS",
        help="this server's stop is final (a private game's): its goodbye tells every client WORDS and not to wait "
        "for a restart (bye closed)",
    )
    serve.add_argument(
        "--stop-when-idle",
        type=float,
        default=default(None),
        metavar="SECONDS",
        help="stop once nobody has been connected for SECONDS, or at once when nobody is and every table has closed",
    )
    operator = parser.add_argument_group("admin", "the operator's socket for quatro-server admin (docs/operating.md)")
    operator.add_argument(
        "--admin-socket",
        type=Path,
        default=default(None),
        metavar="PATH",
        help=f"where quatro-server admin reaches this server (mode 0600: this account only; default: "
        f"DATA_DIR/{admin.SOCKET_NAME}, none with --no-journal unless given)",
    )
    many = parser.add_argument_group("workers", "every core of this machine busy (docs/operating.md)")
    many.add_argument(
        "--workers",
        type=workers.worker_count,
        default=default(1),
        metavar="N",
        help="serve with N worker processes behind the same ports, each with its own tables and journal "
        "(in DIR/worker-K); auto: one per core (default 1: this process serves alone). Without --directory "
        "they share a private redis-server, which must be installed",
    )
    many.add_argument(
        "--worker-ports",
        type=int,
        default=default(None),
        metavar="PORT",
        help="the workers' own game ports, where players are sent for the tables each holds: worker K on PORT+K-1 "
        "(default: free ports picked at start; give them for a firewall, which must let players reach them)",
    )
    if (
        not shown_only
    ):  # how a supervisor starts its workers (quatro_server.workers.supervisor): never typed by an operator
        many.add_argument("--worker-index", type=int, default=None, help=argparse.SUPPRESS)
        many.add_argument("--worker-of", type=int, default=None, help=argparse.SUPPRESS)
        many.add_argument("--listen-fd", type=int, action="append", default=[], help=argparse.SUPPRESS)
    door = parser.add_argument_group("SSH door", "players reach the lobby with a plain ssh client (docs/ssh.md)")
    door.add_argument(
        "--ssh", type=int, default=default(None), metavar="PORT", help="open the SSH door on PORT (0 picks a free one)"
    )
    door.add_argument(
        "--ssh-keys",
        type=Path,
        default=default(None),
        metavar="FILE",
        help="admit only the keys in FILE (authorized_keys format); default: anyone, with a key or without",
    )
    door.add_argument(
        "--ssh-max-sessions",
        type=int,
        default=default(doors.SSH_MAX_SESSIONS),
        metavar="N",
        help=f"SSH sessions at once (default {doors.SSH_MAX_SESSIONS}); the next one is told so and closed",
    )
    door.add_argument(
        "--ssh-idle",
        type=float,
        default=default(doors.SSH_IDLE_TIMEOUT),
        metavar="SECONDS",
        help=f"close an SSH session after SECONDS without a key press outside a match "
        f"(default {doors.SSH_IDLE_TIMEOUT:g})",
    )
    web = parser.add_argument_group("browser door", "players reach the lobby with a web browser (docs/web.md)")
    web.add_argument(
        "--web",
        type=int,
        default=default(None),
        metavar="PORT",
        help="serve the game to web browsers on PORT (0 picks a free one)",
    )
    web.add_argument(
        "--web-max-visitors",
        type=int,
        default=default(doors.WEB_MAX_VISITORS),
        metavar="N",
        help=f"browser pages at once (default {doors.WEB_MAX_VISITORS}; at most "
        f"{doors.WEB_MAX_PER_ADDRESS} from one address); the next is shown that the game is full",
    )
    web.add_argument(
        "--web-idle",
        type=float,
        default=default(doors.WEB_IDLE_TIMEOUT),
        metavar="SECONDS",
        help=f"close a browser page's game after SECONDS without a key press outside a match "
        f"(default {doors.WEB_IDLE_TIMEOUT:g})",
    )
    _operating_options(parser, default)
    many = parser.add_argument_group(
        "many servers, one lobby",
        "servers sharing a table directory on Redis list every server's tables, and send "
        "a player to the server that holds the table asked for (docs/operating.md)",
    )
    many.add_argument(
        "--directory",
        default=default(None),
        metavar="URL",
        help="the table directory: redis://HOST:PORT/DB, or unix:///PATH/redis.sock?db=N "
        "(default: none; this server's tables are its own)",
    )
    many.add_argument(
        "--advertise",
        default=default(None),
        metavar="HOST:PORT",
        help="the address other servers send players to for this server's tables "
        "(default: the game port's own; on every interface, this machine's first LAN address); "
        ":PORT sends them to PORT at the host they reached this server at (servers of one machine)",
    )
    many.add_argument(
        "--directory-ttl",
        type=float,
        default=default(DEFAULT_TTL),
        metavar="SECONDS",
        help="seconds a table stays listed by the other servers after its server stops refreshing it "
        f"(it dies, or loses Redis); refreshed every third of it (default {DEFAULT_TTL:g})",
    )
    serve.add_argument(
        "--announce",
        action=argparse.BooleanOptionalAction,
        default=default(None),
        help="announce the server on the LAN with zeroconf, for quatro join without an address "
        f"(default: yes, unless it listens on loopback only or {NO_ANNOUNCE_ENV}=1)",
    )


def _operating_options(parser: argparse.ArgumentParser, default: Callable[[object], object]) -> None:
    """TLS on the game port and the metrics endpoint (docs/operating.md)."""
    ops = parser.add_argument_group("TLS and metrics", "for a server on the internet (docs/operating.md)")
    ops.add_argument(
        "--tls-cert",
        type=Path,
        default=default(None),
        metavar="FILE",
        help="speak TLS on the game port with this certificate (PEM, its chain after it); players join "
        "with quatro join tls://HOST; needs --tls-key",
    )
    ops.add_argument(
        "--tls-key", type=Path, default=default(None), metavar="FILE", help="the certificate's private key (PEM)"
    )
    ops.add_argument(
        "--metrics",
        default=default(None),
        metavar="[HOST:]PORT",
        help="serve Prometheus metrics at http://HOST:PORT/metrics (default host 127.0.0.1; 0 picks a free port)",
    )


def _metrics_address(text: str) -> tuple[str, int]:
    """``--metrics``'s address: a port alone is on loopback (the figures are the operator's, not the players')."""
    if text.isdigit():
        host, port = "127.0.0.1", int(text)
    else:
        host, port = parse_address(text, default_port=-1)
        if port < 0:
            raise ValueError(f"--metrics {text}: name a port, PORT or HOST:PORT")
    if not 0 <= port < 65536:
        raise ValueError(f"--metrics {text}: port {port} is out of range")
    return host, port


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    plugins.load()  # games installed from outside register themselves before any option is read
    if not argv or (argv[0] not in SUBCOMMANDS and argv[0] not in ("-h", "--help")):
        argv = ["serve", *argv]  # serving is the default: the server's own arguments work as they always did
    if argv[:1] == ["sim"]:
        return simulators.main(argv[1:])  # the game is read first: its options depend on it
    args = _parser().parse_args(argv)
    status: int = args.run(args)
    return status


def _serve(args: argparse.Namespace) -> int:
    worker = args.worker_index is not None  # one of a supervisor's workers (quatro_server.workers.supervisor)
    logs.configure(args.log_level, f"worker-{args.worker_index}" if worker else None)
    if worker:
        workers.die_with_parent(args.worker_of)
    try:
        timing = load_timing(args.timing)
    except (ValueError, OSError) as exc:
        print(f"quatro-server: {exc}", file=sys.stderr)
        return 2
    supervising = args.workers > 1 and not worker
    if supervising and (refusal := workers.refusal(args)):
        print(f"quatro-server: {refusal}", file=sys.stderr)
        return 2
    if args.lesson:
        from quatro_server.games import lessons as lesson_games

        lesson_games.host()
    profiles = dict(PROFILES)
    name = args.timing if args.timing in PROFILES else Path(args.timing).stem
    profiles[name] = timing
    lobby = Lobby(timing_profiles=profiles, seed=args.seed)
    lobby.default_timing = name
    lobby.max_tables = args.max_tables
    if args.seed is not None and not supervising:  # each worker says it
        print(
            f"WARNING: seeded with {args.seed}: every shuffle on this server is predictable. Tests and replays only.",
            file=sys.stderr,
            flush=True,
        )
    tls_context: ssl.SSLContext | None = None
    if (args.tls_cert is None) != (args.tls_key is None):
        print("quatro-server: --tls-cert and --tls-key go together", file=sys.stderr)
        return 2
    if args.tls_cert is not None:
        try:
            tls_context = server_context(args.tls_cert, args.tls_key)
        except TlsConfigError as exc:
            print(f"quatro-server: TLS: {exc}", file=sys.stderr)
            return 2
    metrics_at: tuple[str, int] | None = None
    if args.metrics is not None:
        try:
            metrics_at = _metrics_address(args.metrics)
        except ValueError as exc:
            print(f"quatro-server: {exc}", file=sys.stderr)
            return 2
    book: journal.Journal | None = None
    data_dir = args.data_dir or default_data_dir()
    if not args.no_journal and not supervising:
        try:
            # A worker's tables in a journal of its own; the players' records are the whole server's.
            book = journal.Journal.open(workers.journal_dir(data_dir, args.worker_index) if worker else data_dir)
            # The players' records beside the journal; without a journal they last as long as the process.
            lobby.records = Records.open(data_dir)
        except (journal.JournalError, RecordsError) as refusal:
            print(f"quatro-server: {refusal}", file=sys.stderr)
            return 2
        if args.no_restore:
            for saved in book.saved:  # kept for replays, never played on
                book.set_status(saved.id, "closed")
            book.saved = []

    door: SshDoor | None = None
    web: WebDoor | None = None
    front = Front()
    #: Handed to the doors' clients, afresh at each start: their hello shows it (docs/reliability.md). A worker is
    #: told its supervisor's, whose doors these clients come through.
    door_token = new_door_token() if not worker and (args.ssh is not None or args.web is not None) else None
    if worker:
        door_token = os.environ.get(workers.DOOR_TOKEN_ENV) or None
    # A door's libraries (asyncssh; aiohttp and textual-serve) load only when it opens. A worker has no door of its
    # own: its supervisor's doors bring their visitors to the shared game port.
    if args.ssh is not None and not worker:
        from quatro_server.doors import ssh as ssh_door

        try:
            door = ssh_door.Door(
                "",
                data_dir,
                keys_file=args.ssh_keys,
                max_sessions=args.ssh_max_sessions,
                idle_timeout=args.ssh_idle,
                door_token=door_token or "",
            )
        except (OSError, ValueError) as exc:
            print(f"quatro-server: the SSH door cannot start: {exc}", file=sys.stderr)
            return 2
        if door.admitted is not None and not door.admitted:
            print(f"quatro-server: {args.ssh_keys} holds no key the SSH door can read", file=sys.stderr)
            return 2

    directory: RedisDirectory | None = None
    if args.directory is not None and not supervising:  # a supervisor hands its directory to its workers
        from quatro_server.directory.redis_directory import RedisDirectory

        try:
            if args.advertise is not None:
                parse_advertised(args.advertise)
            if not args.directory_ttl > 0:
                raise ValueError("--directory-ttl: more than 0 seconds")
            directory = RedisDirectory(
                args.directory,
                ttl=args.directory_ttl,
                local=lobby.local_listing,
                on_others_changed=lobby.listing_changed,
            )
        except (DirectoryError, ValueError) as exc:
            print(f"quatro-server: {exc}", file=sys.stderr)
            return 2
        lobby.directory = directory

    if args.web is not None and not worker:
        from quatro_server.doors import web as web_door

        web = web_door.WebDoor(
            "", data_dir, max_visitors=args.web_max_visitors, idle_timeout=args.web_idle, door_token=door_token or ""
        )

    if supervising:
        return workers.supervise(
            args, _serving_actions(), name, door_token, partial(_open_front, args, door, web, front), front
        )

    operator: admin.AdminListener | None = None
    # One socket a worker (its supervisor's answers for the whole server, asking each worker on its own).
    admin_path = (
        workers.worker_admin_socket(data_dir, args.no_journal, args.admin_socket, args.worker_index)
        if worker
        else workers.admin_socket(data_dir, args.no_journal, args.admin_socket)
    )
    if admin_path is not None:
        try:
            operator = admin.listen(admin_path, asked=args.admin_socket is not None)
        except admin.AdminUnavailable as exc:
            print(f"quatro-server: {exc}", file=sys.stderr)
            if book is not None:
                book.close()
            return 2

    async def main_task() -> None:
        async with trio.open_nursery() as nursery:
            if book is not None:
                restored = lobby.restore(book, trio.current_time())
                nursery.start_soon(settle, lobby, restored)
                print(f"Journal: {book.path} ({counted(len(restored), 'table')} restored)", flush=True)
            if operator is not None and not worker:  # a worker's is its supervisor's to name
                print(admin.started_line(operator.path, data_dir), flush=True)
            if directory is not None:
                await directory.connect(lobby.highest_id())  # before the game port opens: every id is global
            # The doors' clients reach the lobby over loopback, many people from one address: those that show the
            # door token are bounded by the doors' own caps; any other local process keeps the per-address limits.
            config = ServerConfig(
                trusted_addresses=frozenset(args.trusted_address),
                door_token=door_token,
                door_addresses=frozenset(door_addresses(args.host) if door_token else ()),
                tls=tls_context,
                max_connections=args.max_connections,
                final_goodbye=args.final_goodbye,
            )
            # With TLS on, the doors' clients join over a listener of their own, on loopback and in the clear, that
            # admits only the door token: their secrets never leave the machine, and are not encrypted twice over
            # (the visitor's own link is SSH, or the browser's). docs/operating.md, "TLS", says why.
            door_listeners = (
                await trio.open_tcp_listeners(0, host="127.0.0.1") if tls_context is not None and door_token else []
            )
            metrics: Metrics | None = None
            if metrics_at is not None:
                from quatro_server.workers.metrics import Metrics

                metrics = Metrics()
                try:
                    scraped = await nursery.start(metrics.serve, *metrics_at)
                except OSError as exc:
                    raise DoorFailed(
                        f"cannot serve metrics on {format_address(*metrics_at)}: {exc.strerror or exc}"
                    ) from exc
                where = scraped[0].socket.getsockname()
                print(f"Metrics: http://{format_address(where[0], where[1])}/metrics", flush=True)

            sockets = [socket.socket(fileno=fd) for fd in args.listen_fd] if worker else None

            async def serve(task_status: trio.TaskStatus[list[trio.SocketListener]] = trio.TASK_STATUS_IGNORED) -> None:
                await run(
                    args.host,
                    args.port,
                    lobby,
                    config=config,
                    door_listeners=door_listeners,
                    sockets=sockets,
                    metrics=metrics,
                    admin=operator,
                    task_status=task_status,
                )
                nursery.cancel_scope.cancel()  # the server has stopped: so does everything that served beside it

            listeners = await nursery.start(serve)
            port = listeners[0].socket.getsockname()[1]
            if directory is not None:
                directory.address = args.advertise or _advertised(
                    listeners[0].socket.getsockname()[0], port, join_addresses(args.host, port)
                )
                await nursery.start(directory.run)
            # After the join lines, which tools read first.
            joined = (
                None
                if directory is None
                else (
                    f"One lobby with every server of the directory {args.directory}; "
                    f"they send players here at {directory.address}"
                )
            )
            if worker:
                if joined is not None:
                    print(joined, flush=True)  # the supervisor prints it after its own join lines
                # Gone with its supervisor, even one killed outright: SIGTERM to itself, the goodbye of any stop.
                nursery.start_soon(workers.watch_parent, args.worker_of, lambda: os.kill(os.getpid(), signal.SIGTERM))
                print(f"{workers.READY} {args.worker_index} (pid {os.getpid()})", flush=True)
                return
            tls_note = ", over TLS" if tls_context is not None else ""
            doors_join = (
                f"127.0.0.1:{door_listeners[0].socket.getsockname()[1]}"
                if door_listeners
                else loopback(args.host, port)
            )
            await _open_front(
                args,
                door,
                web,
                front,
                f"Quatro server listening (timing: {name}{tls_note}).",
                port,
                nursery,
                joined,
                doors_join=doors_join,
                metrics=metrics,
            )
            if args.stop_when_idle is not None:
                # SIGTERM to itself: the same goodbye to every client as an operator's stop.
                nursery.start_soon(
                    stop_when_idle, lobby, args.stop_when_idle, lambda: os.kill(os.getpid(), signal.SIGTERM)
                )

    status = 0
    try:
        trio.run(main_task)
    except* DirectoryError as group:
        print(f"quatro-server: {group.exceptions[0]}", file=sys.stderr)
        status = 1
    except* DoorFailed as group:
        print(f"quatro-server: {group.exceptions[0]}", file=sys.stderr)
        status = 1
    except* OSError as group:
        error = group.exceptions[0]
        print(f"quatro-server: cannot listen on port {args.port}: {getattr(error, 'strerror', error)}", file=sys.stderr)
        status = 1
    except* KeyboardInterrupt:
        pass
    finally:
        front.stop()
        if operator is not None:
            operator.remove()
        if book is not None:
            book.close()
    return status


@dataclass
class Front:
    """What faces the players beside the game port: the doors' threads and the LAN announcement, to stop at the end."""

    door_thread: DoorThread | None = None
    web_thread: DoorThread | None = None
    announcement: Announcement | None = None

    def stop(self) -> None:
        if self.announcement is not None:
            self.announcement.stop()
        if self.door_thread is not None:
            self.door_thread.stop()
        if self.web_thread is not None:
            self.web_thread.stop()


async def _open_front(
    args: argparse.Namespace,
    door: SshDoor | None,
    web: WebDoor | None,
    front: Front,
    headline: str,
    port: int,
    nursery: trio.Nursery,
    joined: str | None = None,
    *,
    doors_join: str | None = None,
    metrics: Metrics | None = None,
) -> None:
    """Say where to join (the game ``port``; then ``joined``, if any), open the doors, announce the server on the
    LAN; ``front`` keeps them. The doors' clients join at ``doors_join`` (default: the game port on loopback);
    ``metrics``, if any, counts the doors' sessions."""
    print(f"{headline} Players join with:", flush=True)
    addresses = join_addresses(args.host, port)
    ssh_port = 0
    game_address = doors_join or loopback(args.host, port)
    for address in addresses:
        print(f"  quatro join {'tls://' if args.tls_cert is not None else ''}{address}", flush=True)
    if joined is not None:
        print(joined, flush=True)
    if door is not None:
        from quatro_server.doors import ssh as ssh_door

        front.door_thread, ssh_port = await _open_door(door, args.host, game_address, args.ssh, "SSH door")
        if metrics is not None:
            metrics.add_door("ssh", partial(len, door.sessions), [door.connections, door.handshakes])
        print(f"Or with nothing to install, over SSH (host key {door.fingerprint}):", flush=True)
        for command in ssh_door.ssh_commands(ssh_port, addresses):
            print(f"  {command}", flush=True)
    if web is not None:
        from quatro_server.doors import web as web_door

        front.web_thread, web_port = await _open_door(web, args.host, game_address, args.web, "browser door")
        if metrics is not None:
            metrics.add_door("web", partial(len, web.visits), [web.gate])
        print(f"Or in a web browser (at most {web.max_visitors} at once):", flush=True)
        for url in web_door.web_urls(web_port, addresses):
            print(f"  {url}", flush=True)
    if _announces(args):
        front.announcement = Announcement(
            f"Quatro on {socket.gethostname().split('.')[0] or 'this machine'}",
            args.host,
            port,
            [address.rsplit(":", 1)[0].strip("[]") for address in addresses],
            ssh_port=ssh_port,
            version=PROTOCOL_VERSION,
        )
        nursery.start_soon(_announce, front.announcement)


def _advertised(bound: str, port: int, addresses: list[str]) -> str:
    """The game port's own address, for the directory: where it listens on every interface, the first address
    players are told to join (a LAN address of this machine)."""
    if bound not in ("0.0.0.0", "::", "") or not addresses:
        return format_address(bound, port)
    return format_address(*parse_advertised(addresses[0]))


def _announces(args: argparse.Namespace) -> bool:
    """``--announce``, ``--no-announce``, or by default: when others can reach the server at all."""
    if args.announce is not None:
        return bool(args.announce)
    if getattr(args, "tls_cert", None) is not None:
        return False  # the LAN's announcements carry no tls://: a client that found it would be refused
    if os.environ.get(NO_ANNOUNCE_ENV, "").strip() not in ("", "0", "no"):
        return False
    if args.host in (None, "", "0.0.0.0", "::"):
        return True
    try:
        return not ipaddress.ip_address(args.host).is_loopback
    except ValueError:
        return bool(args.host != "localhost")


async def _announce(announcement: Announcement) -> None:
    """Register with zeroconf off the event loop (it takes a second or two); no multicast is one line, not a stop."""
    try:
        await trio.to_thread.run_sync(announcement.start, abandon_on_cancel=True)
    except NoMulticast as exc:
        print(f"quatro-server: not announced on the LAN: {exc}", file=sys.stderr, flush=True)
    else:
        log.info("announced service=%s", announcement.info.name)


class DoorFailed(Exception):
    """A door (or the metrics endpoint) could not listen (its port is taken, say): the server does not run without it."""


async def _open_door(door: Door, host: str | None, game_address: str, port: int, name: str) -> tuple[DoorThread, int]:
    """Start ``door`` on a thread of its own, listening on ``port``; the thread (to stop it) and the port it got.
    Each visitor's client joins this server at ``game_address``, on loopback, like any other client."""
    door.game_address = game_address
    thread = DoorThread(door, host, port, name=name)
    try:
        return thread, await trio.to_thread.run_sync(thread.start)
    except OSError as exc:
        raise DoorFailed(f"cannot open the {name} on port {port}: {exc.strerror or exc}") from exc


if __name__ == "__main__":
    raise SystemExit(main())
