"""Network bots: each one a real client over TCP, playing any game the server hosts with the same decision code as the
server's fillers.

A network bot says hello, takes a seat (at the table it is given, or the first open table, or one it creates
and starts once every seat is taken), then plays: it hands the events of every update to ``Bot.observe``,
and at the bot's own pace asks ``Bot.decide`` what to do with the latest view, sending each action as a
request. A refusal ends that batch (as in the server's own bot driving); a cooldown refusal also makes it
wait the time the server names. To the server it is a player like any other: it says ready, and it is asked
to vote on reshuffles. Nothing here reaches the server's state: the bot sees what the protocol carries,
read by the shared client core (``quatro_shared.client``), so the decision code is fed the same types in the server and over the wire (H2).

What a game's bots are, and how they read its views, is the game's part (``quatro_server.bots.games``): ``--game G``
plays at a table of G, with G's bots; a bot whose decision takes long (a search) decides in a worker thread, so that
its connection keeps answering (heartbeats, pushes) while it thinks. ``--against LEVEL`` fills the other seats of the
table it creates with the server's own bots of that level, so that a bot can be matched with one.

``quatro-server bot HOST[:PORT] [--game G] [--table ID] [--count N] [--level L] [--against L]``
"""

from __future__ import annotations

import argparse
import logging
import random
import ssl
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import trio

from quatro_shared import messages as m
from quatro_shared import protocol as p
from quatro_shared.client import (
    Answered,
    ClientCore,
    ClientEvent,
    ResyncNeeded,
    SeatingChanged,
    ServerBye,
    ServerError,
    Updated,
)
from quatro_shared.framing import ProtocolError
from quatro_shared.game import GameAction, GameUpdate
from quatro_shared.games import CONTRACTS, DEFAULT
from quatro_shared.tables import TablePhase
from quatro_shared.tls import Endpoint, client_context, parse_endpoint, tls_trouble

from quatro_server.bots.games import BOT_GAMES, BotGame, bot_game
from quatro_server.logs import LOG_LEVELS, shown
from quatro_server.logs import configure as configure_logging
from quatro_server.rules import SeatBot, is_outside_bot

log = logging.getLogger("quatro.netbot")

#: Bytes read per receive call.
RECEIVE_BYTES = 65536
# A game's bot levels, and the level of a bot with none named, are its contract's (``CONTRACTS``, read when asked:
# a game from outside registers itself as the program starts, ``quatro_shared.plugins``); a bot of a game whose part
# says so (``BotGame.outside_bots``) may also be a class of your own, ``module:Class``.

#: Seconds to wait for the reply to one request before giving the connection up.
REPLY_TIMEOUT = 10.0
#: Times a bot whose connection dropped comes back to its seat with its secret (R19) before it gives up,
#: and the pause before each try.
RECONNECT_TRIES = 3
RECONNECT_PAUSE = 1.0


class Moved(Exception):
    """The table asked for is held by another server (``moved``): the bot connects there and asks again."""

    def __init__(self, table: int, address: tuple[str, int]) -> None:
        super().__init__(f"table {table} is at {address[0]}:{address[1]}")
        self.table, self.address = table, address


class ConnectionLost(Exception):
    """The server closed the connection, or said goodbye."""


class _Client:
    """One connection, a thin trio shell around the bot's ``ClientCore`` (which lives across reconnections):
    requests and their replies, and the pushes (updates, seating) as they come."""

    def __init__(self, stream: trio.abc.Stream, game: BotGame, bot: SeatBot, core: ClientCore) -> None:
        self.stream = stream
        self.game = game
        self.bot = bot
        self.core = core
        self.replies: dict[int, m.Reply] = {}
        self.waiting: dict[int, trio.Event] = {}
        self.view: object = None
        self.view_at = 0.0
        self.seating: m.Seating | None = None
        self.seating_changed = trio.Event()
        self.rounds_ended = 0
        self.closed: str | None = None
        # Two tasks send (the player's requests and the heartbeat's pings): a trio stream takes one at a time.
        self._sending = trio.Lock()

    async def read(self) -> None:
        """Read frames until the connection ends; then wake every request still waiting."""
        try:
            while self.closed is None:
                try:
                    data = await self.stream.receive_some(RECEIVE_BYTES)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    data = b""
                if not data:
                    self.closed = self.closed or "closed"
                    break
                for received in self.core.receive_data(data, trio.current_time()):
                    self._dispatch(received)
        except ProtocolError as exc:
            self.closed = f"protocol_error:{exc.code}"
        finally:
            for event in self.waiting.values():
                event.set()
            self.seating_changed.set()

    async def heartbeat(self) -> None:
        """Ping when nothing was sent for a while (the server's heartbeat), and give up a server gone silent."""
        while self.closed is None:
            due = self.core.ping_due()
            now = trio.current_time()
            await trio.sleep_until(now + self.core.heartbeat_interval if due is None else due)
            now = trio.current_time()
            if self.core.server_gone(now):
                self.closed = "silent"
                await self.stream.aclose()
                return
            ping = self.core.ping_if_due(now)
            if ping is not None:
                try:
                    async with self._sending:
                        await self.stream.send_all(ping)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    return

    def _dispatch(self, event: ClientEvent) -> None:
        if isinstance(event, Answered):
            if event.id in self.waiting:
                self.replies[event.id] = event.reply
                self.waiting.pop(event.id).set()
        elif isinstance(event, Updated):
            self._update(event.update, event.view)
        elif isinstance(event, SeatingChanged):
            self.seating = event.seating
            self.seating_changed.set()
            self.seating_changed = trio.Event()
        elif isinstance(event, ServerBye):
            self.closed = event.bye.reason
        elif isinstance(event, ResyncNeeded):
            log.info("resync why=%s", event.why)
            self.closed = "resync"  # run_bot comes back with the seat's secret: the rejoin brings a snapshot
        elif isinstance(event, ServerError):
            log.warning("server error: %s %s", event.why, event.reply)

    def _update(self, update: GameUpdate, view: object) -> None:
        if update.events:
            self.bot.observe(list(update.events))  # the table's game is the bot's
            self.rounds_ended += self.game.ended(update.events)  # ``--rounds`` counts them
        self.view = view
        self.view_at = trio.current_time()

    async def request(self, body: m.RequestBody) -> m.Reply:
        """Send a request; return its reply. Raises ``ConnectionLost`` if the connection ends first, ``Moved`` when
        another server holds the table it names."""
        return await self._ask(lambda now: self.core.send(body, now))

    async def follow(self) -> m.Reply:
        """The request a ``moved`` named this server for, asked again through the core (``repeat``): a request that
        carries a secret goes only after this server proved it holds it (``prove``, then the request on this same
        link); else the core answers it ``unproven_move``. Raises ``Moved`` when the table moved on again."""
        while True:
            reply = await self._ask(self.core.repeat)
            if self.core.redirect is None:
                return reply

    async def _ask(self, make: Callable[[float], tuple[int, bytes]]) -> m.Reply:
        if self.closed is not None:
            raise ConnectionLost(self.closed)
        request_id, data = make(trio.current_time())
        done = self.waiting[request_id] = trio.Event()
        try:
            async with self._sending:
                await self.stream.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
            raise ConnectionLost(str(exc)) from None
        with trio.fail_after(REPLY_TIMEOUT):
            await done.wait()
        reply = self.replies.pop(request_id, None)
        if reply is None:
            raise ConnectionLost(self.closed or "closed")
        if isinstance(reply, m.MovedTo) and self.core.redirect is not None:
            current = self.stream.socket.getpeername()[0] if isinstance(self.stream, trio.SocketStream) else ""
            raise Moved(reply.table, self.core.redirect.address(current))
        return reply


@dataclass
class BotResult:
    """Where a network bot played, and how the match stood when it left."""

    name: str
    level: str
    table: int | None = None
    seat: int | None = None
    rounds: int = 0
    scores: tuple[int, ...] = ()
    winners: tuple[int, ...] = ()
    reason: str = ""


async def _take_seat(
    client: _Client,
    table: int | None,
    players: int,
    timing: str | None,
    game: str = DEFAULT.name,
    against: str | None = None,
) -> tuple[m.Seated, bool]:
    """Join ``table``, or the first open table of ``game``, or create one (its other seats filled with the server's
    bots of level ``against``, if given). Returns the seat and whether we created its table. A table of another
    game is never joined."""
    listing = _expect_ok(await client.request(m.ListTables()), "list the tables")
    assert isinstance(listing, m.Tables)
    if table is None:
        for entry in listing.tables:
            if (
                entry.game == game
                and entry.phase is TablePhase.LOBBY
                and not entry.password
                and entry.taken < entry.players
            ):
                reply = await client.request(m.Join(entry.table))
                if isinstance(reply, m.Ok) and isinstance(reply.payload, m.Seated):
                    return reply.payload, False
        sizes = CONTRACTS[game].seats
        if len(sizes) == 1:
            players = sizes[0]  # a game of one table size: nothing to ask
            request = m.CreateTable(None, timing, game=game)
        else:
            request = m.CreateTable(players, timing, game=None if game == DEFAULT.name else game)
        created = _expect_ok(await client.request(request), "create a table")
        assert isinstance(created, m.Seated)
        if against is not None:
            for _ in range(players - 1):
                _expect_ok(await client.request(m.AddBot(level=against)), f"add a {against} bot")
        return created, True
    listed = next((entry for entry in listing.tables if entry.table == table), None)
    if listed is not None and listed.game != game:
        raise RuntimeError(f"could not join table {table}: it plays {listed.game}; this network bot plays {game}")
    joined = _expect_ok(await client.request(m.Join(table)), f"join table {table}")
    assert isinstance(joined, m.Seated)
    return joined, False


def _expect_ok(reply: m.Reply, what: str) -> m.Payload:
    if isinstance(reply, m.Refused):
        raise RuntimeError(f"could not {what}: {reply.reason}: {reply.message}")
    if isinstance(reply, m.Error):
        raise RuntimeError(f"could not {what}: {reply.code}: {reply.message}")
    assert isinstance(reply, m.Ok)
    return reply.payload


async def _start_when_full(client: _Client) -> None:
    """The table's creator starts the match as soon as every seat is taken (by players, bots or network bots)."""
    while client.closed is None and client.view is None:
        seating = client.seating
        if seating is not None and seating.phase is TablePhase.LOBBY and all(s.taken for s in seating.seats):
            if isinstance(await client.request(m.Start()), m.Ok):
                return
        await client.seating_changed.wait()


def _over(game: BotGame, view: object) -> bool:
    return view is not None and game.over(view)


async def _decide(game: BotGame, bot: SeatBot, view: object, now: float) -> list[GameAction]:
    """The bot's actions; a slow bot (``BotGame.slow``: a search) thinks in a worker thread, so that the connection
    goes on reading and pinging meanwhile."""
    if game.slow(bot, view):
        return list(await trio.to_thread.run_sync(bot.decide, view, now, abandon_on_cancel=True))
    return list(bot.decide(view, now))


async def _play(client: _Client, bot: SeatBot, rounds: int | None) -> None:
    """Look, decide, act, at the bot's pace, until the match is over (or ``rounds`` of the game's rounds have
    ended)."""
    pause = 0.0
    while client.closed is None:
        await trio.sleep(max(bot.think_time(), pause))
        pause = 0.0
        view = client.view
        if view is None:
            continue  # the match has not started
        game = client.game
        if _over(game, view) or (rounds is not None and client.rounds_ended >= rounds):
            return
        now = trio.current_time()
        for action in await _decide(game, bot, game.aged(view, now - client.view_at), now):
            reply = await client.request(action)
            if not isinstance(reply, m.Ok):
                if isinstance(reply, m.Refused) and reply.wait_ms:
                    pause = reply.wait_ms / 1000  # a cooldown: the server says how long (R9, R12)
                log.debug("refused action=%s reply=%s", action.kind, reply)
                break


class TlsRefused(ConnectionError):
    """The TLS handshake failed (the certificate is not trusted, or the server does not speak TLS): said plainly."""


async def connect(host: str, port: int, tls: Endpoint | None = None) -> trio.abc.Stream:
    """A connection to the server, over TLS when ``tls`` says so (``quatro_shared.tls``: the certificate and its
    name checked before anything is sent). Raises ``OSError`` (``TlsRefused`` for a TLS failure)."""
    context = None if tls is None else client_context(tls)
    if context is None or tls is None:
        return await trio.open_tcp_stream(host, port)
    stream = await trio.open_ssl_over_tcp_stream(host, port, ssl_context=context)
    try:
        await stream.do_handshake()
    except trio.BrokenResourceError as exc:
        await trio.aclose_forcefully(stream)
        raise TlsRefused(tls_trouble(exc, tls) or "the TLS handshake failed") from exc
    return stream


async def run_bot(
    host: str,
    port: int,
    level: str | None = None,
    *,
    game: str = DEFAULT.name,
    against: str | None = None,
    table: int | None = None,
    players: int = 4,
    timing: str | None = None,
    name: str | None = None,
    rounds: int | None = None,
    rng: random.Random | None = None,
    tls: Endpoint | None = None,
    task_status: trio.TaskStatus[BotResult] = trio.TASK_STATUS_IGNORED,
) -> BotResult:
    """Play one network bot to the end of its match (or of ``rounds`` rounds). ``task_status.started`` fires once
    it is seated, so that several bots can be seated one after another at the same table. ``level`` is the game's
    default when not given; ``against`` fills the other seats of a table this bot creates with server bots."""
    level = level or CONTRACTS[game].default_level
    part = bot_game(game)  # loaded here, with the bot: not with every server's command line, which builds the parser
    bot = part.make_bot(level, rng)
    result = BotResult(name or f"{level}-bot", level)
    core = ClientCore(result.name)
    started = False
    attempt = -1
    while attempt < RECONNECT_TRIES:
        attempt += 1
        try:
            stream = await connect(host, port, tls)
        except OSError:
            if not started:
                raise
            await trio.sleep(RECONNECT_PAUSE)
            continue
        core.connection_lost()  # a fresh decoder; the seat and its secret stay
        client = _Client(stream, part, bot, core)
        failure: RuntimeError | None = None
        moved: Moved | None = None
        async with stream, trio.open_nursery() as nursery:
            nursery.start_soon(client.read)  # the reader handles its own errors: it marks the client closed
            nursery.start_soon(client.heartbeat)
            try:
                _expect_ok(await client.request(m.Hello(p.PROTOCOL_VERSION, result.name)), "say hello")
                if core.redirect is not None:
                    # Sent here by a ``moved``: the same request again, through the core (which has a server prove
                    # it holds the table before a seat secret goes to it).
                    followed = _expect_ok(await client.follow(), f"follow table {table} to {host}:{port}")
                    created = False
                    if isinstance(followed, m.Seated):
                        result.table, result.seat = followed.table, followed.seat
                    log.info("followed name=%s table=%s seat=%s", result.name, result.table, result.seat)
                elif core.place is None:
                    seated, created = await _take_seat(client, table, players, timing, game, against)
                    result.table, result.seat = seated.table, seated.seat
                    log.info("seated name=%s level=%s table=%d seat=%d", result.name, level, result.table, result.seat)
                else:
                    _expect_ok(await client.request(m.Rejoin(core.place.table, core.place.secret)), "come back")
                    created = False
                    log.info("rejoined name=%s table=%d seat=%d", result.name, result.table, result.seat)
                if not started:
                    started = True
                    task_status.started(result)
                if created:
                    await _start_when_full(client)
                await _play(client, bot, rounds)
                if client.closed is None:
                    await client.request(m.Leave())
            except Moved as exc:
                moved = exc
            except (ConnectionLost, trio.TooSlowError) as exc:
                client.closed = client.closed or str(exc) or "lost"
            except RuntimeError as exc:
                failure = exc
            if not started and failure is None and moved is None:
                hint = "" if tls is not None else "; if it speaks TLS, the address is tls://HOST:PORT"
                failure = RuntimeError(
                    f"the server closed the connection before the bot was seated ({client.closed or 'closed'}){hint}"
                )
            nursery.cancel_scope.cancel()
        if failure is not None:
            raise failure
        if moved is not None:
            # Another server holds the table: ask for that very table there (the core bounds the hand-overs).
            (host, port), table = moved.address, moved.table  # the core keeps the request to ask there
            log.info("moved name=%s table=%d to=%s:%d", result.name, table, shown(host), port)
            attempt -= 1  # a hand-over is no lost connection
            continue
        view = client.view
        if view is not None:
            # Every game's view keeps its match's scores and winners (its contract's view class).
            result.scores, result.winners = tuple(getattr(view, "scores", ())), tuple(getattr(view, "winners", ()))
        result.rounds += client.rounds_ended
        over = _over(part, view)
        result.reason = client.closed or ("over" if over else "left")
        if client.closed in (None, "shutdown") or not started or over or core.replaced:
            break
        log.info("connection_lost name=%s reason=%s attempt=%d", result.name, shown(client.closed), attempt + 1)
        await trio.sleep(RECONNECT_PAUSE)
    return result


async def run_bots(
    # ``options`` are run_bot's keywords, passed through whole (each of its own type).
    host: str,
    port: int,
    count: int,
    level: str | None,
    *,
    seed: int | None = None,
    **options: Any,
) -> list[BotResult]:
    """``count`` network bots, seated one after another (so that they fill the same table), playing at once."""
    seeds = random.Random(seed) if seed is not None else random.SystemRandom()
    results: list[BotResult] = []
    async with trio.open_nursery() as nursery:

        async def one(i: int, *, task_status: trio.TaskStatus[BotResult] = trio.TASK_STATUS_IGNORED) -> None:
            rng = random.Random(seeds.getrandbits(64))
            name = f"{level or CONTRACTS[options.get('game', DEFAULT.name)].default_level}-net-{i + 1}"
            results.append(await run_bot(host, port, level, name=name, rng=rng, task_status=task_status, **options))

        for i in range(count):
            await nursery.start(one, i)
    return results


def _level(text: str) -> str:
    """A level name of some game, or an outside bot class (``module:Class``: the game's part loads it, ``run``)."""
    if not is_outside_bot(text) and not any(text in contract.levels for contract in CONTRACTS.values()):
        every = ", ".join(f"{', '.join(contract.levels)} ({contract.title})" for contract in CONTRACTS.values())
        raise argparse.ArgumentTypeError(f"levels: {every}, or module:Class")
    return text


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "address",
        metavar="HOST[:PORT]",
        help=f"the server (port {p.DEFAULT_PORT} if not given); "
        "tls://HOST[:PORT] over TLS, its certificate checked against the system's trusted authorities",
    )
    parser.add_argument(
        "--tls-ca",
        default=None,
        metavar="FILE",
        help="over TLS, trust the CA (or the self-signed certificate) in FILE instead (implies TLS)",
    )
    parser.add_argument(
        "--game", default=DEFAULT.name, choices=tuple(BOT_GAMES), help=f"the game to play (default {DEFAULT.name})"
    )
    parser.add_argument(
        "--table", type=int, default=None, help="join this table (default: the first open one, or a new one)"
    )
    parser.add_argument("--count", type=int, default=1, help="how many bots (default 1), seated one after another")
    parser.add_argument(
        "--level",
        default=None,
        type=_level,
        help="bot level: "
        + "; ".join(f"{c.title} {', '.join(c.levels)} (default {c.default_level})" for c in CONTRACTS.values())
        + "; or, for a game that takes them, a bot class of your own, module:Class",
    )
    parser.add_argument(
        "--against",
        default=None,
        metavar="LEVEL",
        help="fill the other seats of the table the bot creates with the server's bots of this level, then start (one bot only)",
    )
    parser.add_argument(
        "--players",
        type=int,
        default=None,
        choices=sorted({size for contract in CONTRACTS.values() for size in contract.seats}),
        help="seats of a table the bots create: "
        + "; ".join(f"{c.title} {', '.join(map(str, c.seats))}" for c in CONTRACTS.values())
        + " (default: the game's smallest)",
    )
    parser.add_argument("--timing", default=None, help="timing profile of a table the bots create (server's default)")
    parser.add_argument(
        "--rounds",
        type=int,
        default=None,
        help="leave after this many of the match's rounds or games (default: play the match)",
    )
    parser.add_argument("--seed", type=int, default=None, help="seed the bots' choices (tests and replays)")
    parser.add_argument("--log-level", default="info", choices=LOG_LEVELS)


def run(args: argparse.Namespace) -> int:
    configure_logging(args.log_level)
    try:
        endpoint = parse_endpoint(args.address, ca=args.tls_ca)
        host, port = endpoint.host, endpoint.port
        try:
            client_context(endpoint)  # a --tls-ca that cannot be read is said now
        except (OSError, ssl.SSLError) as exc:
            raise ValueError(f"--tls-ca {endpoint.ca}: {getattr(exc, 'strerror', None) or exc}") from None
        tls = endpoint if endpoint.tls else None
    except ValueError as exc:
        print(f"quatro-server bot: {exc}", file=sys.stderr)
        return 2
    if args.count < 1:
        print("quatro-server bot: --count must be at least 1", file=sys.stderr)
        return 2
    levels = CONTRACTS[args.game].levels
    part = bot_game(args.game)
    outside = args.level is not None and is_outside_bot(args.level) and part.outside_bots
    if args.level is not None and args.level not in levels and not outside:
        print(f"quatro-server bot: {args.game} bot levels: {', '.join(levels)}", file=sys.stderr)
        return 2
    if outside:
        try:
            part.make_bot(args.level, random.Random(0))  # the class loads and has the bot interface, or is said now
        except ValueError as exc:
            print(f"quatro-server bot: --level: {exc}", file=sys.stderr)
            return 2
    sizes = CONTRACTS[args.game].seats
    if args.players is not None and args.players not in sizes:
        said = ", ".join(map(str, sizes))
        print(f"quatro-server bot: --players: a {CONTRACTS[args.game].title} table has {said} seats", file=sys.stderr)
        return 2
    if args.against is not None:
        if args.against not in levels:
            print(f"quatro-server bot: --against: {args.game} bot levels: {', '.join(levels)}", file=sys.stderr)
            return 2
        if args.count != 1 or args.table is not None:
            print("quatro-server bot: --against fills a table the bot creates: one bot, no --table", file=sys.stderr)
            return 2
    options = dict(
        table=args.table,
        players=sizes[0] if args.players is None else args.players,
        timing=args.timing,
        rounds=args.rounds,
        game=args.game,
        against=args.against,
        tls=tls,
    )
    results: list[BotResult] = []
    status = 0
    try:
        results = trio.run(lambda: run_bots(host, port, args.count, args.level, seed=args.seed, **options))
    except* OSError as group:
        print(f"quatro-server bot: cannot reach {host}:{port}: {group.exceptions[0]}", file=sys.stderr)
        status = 1
    except* RuntimeError as group:
        print(f"quatro-server bot: {group.exceptions[0]}", file=sys.stderr)
        status = 1
    except* KeyboardInterrupt:
        pass
    for r in results:
        print(
            f"{r.name}: table {r.table} seat {r.seat}, {r.rounds} rounds, scores {list(r.scores)}, "
            f"winners {list(r.winners)} ({r.reason})",
            flush=True,
        )
    return status
