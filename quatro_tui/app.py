"""The Quatro Textual app: connects (or starts a private server first), then shows the screen of each phase.

State arrives as messages from the connection's worker; the app folds them into its table
(``quatro_tui.table.Table``) and tells the current screen, whose widgets redraw themselves. Requests go out through ``send``; a refusal becomes a
line of the feed that says why.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding, Keymap
from textual.content import Content
from textual.screen import ModalScreen, Screen
from textual.scrollbar import ScrollBar, ScrollBarRender
from textual.widgets import Static

from quatro_shared import exits, games
from quatro_shared import messages as m
from quatro_shared import protocol as p
from quatro_shared.profiles import PROFILE_NAMES, STANDARD_PROFILE
from quatro_shared.tables import TablePhase
from quatro_shared.tls import Endpoint, certificate_refused, client_context

from quatro_tui import words
from quatro_tui.connection import (
    Connection,
    ConnectionLost,
    LinkBack,
    LinkDropped,
    LinkMessage,
    SeatLost,
    SeqGap,
    ServerBye,
    ServerChat,
    ServerGone,
    ServerLobby,
    ServerNotice,
    ServerRecent,
    ServerSeatEnded,
    ServerSeating,
    ServerUpdate,
    ServerWatchEnded,
)
from quatro_tui.crash import MAX_CRASHES, Crash, CrashScreen, write_log
from quatro_tui.games import ClientGame, WayOn, client_game, default
from quatro_tui.guard import KeyGuard
from quatro_tui.local_server import LocalServer, ServerFailed
from quatro_tui.screens.dialogs import LEAVE, STOP, AskAddress, AskName, LeaveRunning, TakeOver
from quatro_tui.screens.help import HelpScreen
from quatro_tui.screens.link import MIN_SIZE, ConfirmQuit, LinkScreen, TableEnded, TooSmall
from quatro_tui.screens.lobby import LobbyScreen
from quatro_tui.screens.room import RoomScreen
from quatro_tui.table import AnyTable
from quatro_tui.widgets.base import GameWidget

if TYPE_CHECKING:
    from quatro_tui.replay.player import ReplayPlayer

#: Seconds a notice from the server's operator stays on the screen.
NOTICE_SECONDS = 20.0

#: Textual's key symbols, spelled out for ASCII mode.
ASCII_KEYS = str.maketrans(
    {"⏎": "enter", "↑": "up", "↓": "down", "←": "left", "→": "right", "⌫": "backspace", "⇥": "tab", "␣": "space"}
)


class AsciiScrollBarRender(ScrollBarRender):
    """Scrollbars without block characters: the thumb is a run of blank cells in the bar's colour."""

    VERTICAL_BARS = [" "] * 8
    HORIZONTAL_BARS = [" "] * 8


@dataclass
class Play:
    """``quatro play``: a private server, bots in every seat but ``open`` ones, the match started."""

    players: int = 4
    level: str = "normal"
    timing: str = STANDARD_PROFILE
    name: str = "player"
    open: int = 0
    #: The game, a name of the client's registry (``quatro_tui.games``); ``players`` is one of its table sizes.
    game: str = p.QUATRO
    #: Where the private server journals its matches, for replays (None: it keeps none).
    data_dir: Path | None = None


@dataclass
class Join:
    """``quatro join``: a server, and a table to join (or the lobby when ``table`` is None)."""

    host: str
    port: int
    name: str
    table: int | None = None
    password: str | None = None
    #: A seat this player held at ``rejoin_table`` on this server (R19): tried first, so that a client that
    #: was closed or crashed comes back to its seat.
    rejoin_table: int | None = None
    rejoin_secret: str | None = None
    #: A table to watch from no seat (``quatro join --watch``) instead of joining one.
    watch: int | None = None
    #: Over TLS (``quatro join tls://HOST``), its certificate checked against ``tls_ca`` alone or else the system's
    #: trust store (``quatro_shared.tls``).
    tls: bool = False
    tls_ca: str | None = None
    #: The server's address as the person typed it (``tls://`` included), for every message that names it.
    address: str | None = None

    @property
    def endpoint(self) -> Endpoint:
        return Endpoint(self.host, self.port, self.tls, self.tls_ca)


class QuatroApp(App[str | None]):
    """The client. ``plan`` says how to begin; without one (screenshots) the app shows ``game`` as it is."""

    CSS_PATH = "quatro.tcss"
    TITLE = "Quatro"
    ENABLE_COMMAND_PALETTE = False
    #: The match is played to its target score, and the scores say so ("(to 5)"); a lesson's ends with its steps.
    TELLS_TARGET = True
    BINDINGS = [
        Binding("question_mark,f1", "help", "help", id="help"),
        Binding("ctrl+q", "quit", "quit", id="quit", priority=True),
        # The replay player's keys, over every screen's own while a replay plays (``quatro_tui.replay``).
        Binding("space", "replay('toggle')", "play/pause", show=False, priority=True, id="replay-toggle"),
        Binding("right,l", "replay('forward')", "step forward", show=False, priority=True, id="replay-forward"),
        Binding("left,h", "replay('back')", "step back", show=False, priority=True, id="replay-back"),
        Binding("n", "replay('jump')", "jump on", show=False, priority=True, id="replay-jump"),
        Binding("s", "replay('faster')", "speed", show=False, priority=True, id="replay-speed"),
        Binding("home", "replay('first')", "to the start", show=False, priority=True, id="replay-first"),
        Binding("end", "replay('last')", "to the end", show=False, priority=True, id="replay-last"),
        Binding("q,escape", "replay('close')", "close the replay", show=False, priority=True, id="replay-close"),
    ]

    def __init__(
        self,
        plan: Play | Join | None = None,
        *,
        ascii_only: bool = False,
        clock: Callable[[], float] = time.monotonic,
        game: AnyTable | None = None,
        server: LocalServer | None = None,
        remember_seat: Callable[[int, str, str], None] | None = None,
        idle_exit: float | None = None,
        bell: bool = False,
        ask_name: Callable[[str], tuple[int, str] | None] | None = None,
        replay: ReplayPlayer | None = None,
        person_key: Callable[[str], str | None] | None = None,
    ) -> None:
        super().__init__()
        #: A replay playing on the screens (``quatro replay``, or one picked from the lobby's past matches).
        self.player = replay
        #: The person key of a player name (protocol section 20), said in ``hello``; None: the player is anonymous.
        self.person_key = person_key
        #: Ask the player's name before joining (``quatro join`` without ``--name``, a browser door's newcomer), starting
        #: from the plan's, and tell it to this callable: it answers with the seat remembered for that name (R19).
        self.ask_name = ask_name
        #: Seconds without a key press, outside a match, after which the app closes itself (None: never).
        self.idle_exit = idle_exit
        self._clock = clock
        #: Where the idle count of ``idle_exit`` starts: the last key press, or the last moment the table gave the
        #: player something to look at (``_close_if_idle``).
        self._idle_from = clock()
        self.plan = plan
        self.game: AnyTable = game if game is not None else default().table_type(ascii_only=ascii_only, clock=clock)
        self.game.ascii_only = self.game.ascii_only or ascii_only
        self.conn: Connection | None = None
        self.server = server
        #: Told the table, secret and player name of every seat taken, so that ``quatro join`` can come back to it (R19).
        self.remember_seat = remember_seat
        #: Ring the terminal's bell when the partner shows the team's sign and at one's own four of a kind.
        self.bell_on = bell
        #: ``quatro play`` went back to its server's lobby: tables made there start when their host says.
        self.left_play_table = False
        #: Addresses others join with (``quatro play --open N``).
        self.join_addresses: list[str] = []
        #: The server's tables, for the lobby screen.
        self.tables: tuple[m.TableSummary, ...] = ()
        #: The lobby's create row as the player last left it (game, players, timing, rated): a visit to a table
        #: and back keeps the choices.
        self.create_choices: dict[str, str | int] = {}
        #: The server drains before a restart (protocol 5): the lobby says it takes no new tables.
        self.draining = False
        #: The timing profiles the server offers (its hello says; a server started with ``--timing FILE`` adds one).
        self.profiles: list[str] = list(PROFILE_NAMES)
        #: The games the server hosts (its hello says; a server from before it said: the default game alone).
        self.games: list[str] = list(games.names())
        #: ASCII mode draws ASCII borders too (quatro.tcss, ``.-ascii``).
        self.set_class(self.game.ascii_only, "-ascii")
        self._scrollbar_renderer: type[ScrollBarRender] | None = None
        #: The unexpected error this app stopped on (its traceback written to a file): ``successor`` goes on from it.
        self.crash: Crash | None = None
        #: The crash of the app before this one, shown first with its ways on (``quatro_tui.crash``).
        self.after: Crash | None = None
        #: Where the ways on after a crash lead: the server the crashed app was at (None: it was at none).
        self._way_on: Join | None = None
        #: The keys remapped by the player's settings, for a successor to keep.
        self.keymap_given: Keymap = {}

    def compose(self) -> ComposeResult:
        yield Static("Quatro", id="splash")

    def on_mount(self) -> None:
        if self.game.ascii_only:
            # Textual draws scrollbar ends with block characters; in ASCII mode, with blanks. The renderer is
            # Textual's documented class-wide setting: set for as long as this app runs.
            self._scrollbar_renderer = ScrollBar.renderer
            ScrollBar.renderer = AsciiScrollBarRender
        if self.idle_exit is not None:
            self.set_interval(min(self.idle_exit / 4, 5.0), self._close_if_idle)
        if self.after is not None:
            self.push_screen(CrashScreen(self.after))
        elif self.plan is not None:
            self.run_worker(self._begin(), name="begin", exit_on_error=False)
        elif self.player is not None:
            self.player.start(self)
        elif self.wanted_screen() is not None:
            self.route()
        self.check_size()

    def on_resize(self) -> None:
        self.call_after_refresh(self.check_size)

    def check_size(self) -> None:
        """Below ``MIN_SIZE`` a notice with the size needed covers the screens; it goes once the terminal is larger."""
        small = self.size.width < MIN_SIZE[0] or self.size.height < MIN_SIZE[1]
        if small and not isinstance(self.screen, TooSmall):
            self.push_screen(TooSmall())
        elif not small:
            while isinstance(self.screen, TooSmall):
                self.pop_screen()

    # --- beginning ----------------------------------------------------------------------------

    def _splash(self, text: str) -> None:
        try:
            # Plain text: it holds the address typed on the command line.
            self.query_one("#splash", Static).update(Content(words.plain(text, self.game.ascii_only)))
        except Exception:  # noqa: BLE001 - the splash is gone once a screen covers it; nothing to tell
            pass

    async def _begin(self, restart: bool = False) -> None:
        """Connect as the plan says. ``restart``: a way on from trouble, whose failure shows the ways on again
        rather than ending the program."""
        plan = self.plan
        host, port = "127.0.0.1", 0
        tls, tls_ca = False, None
        address: str | None = None
        try:
            if isinstance(plan, Play):
                self._splash("Starting a private server…")
                if self.server is None:
                    self.server = LocalServer(
                        plan.timing, public=plan.open > 0, data_dir=plan.data_dir, opener=plan.name
                    )
                port = await asyncio.to_thread(self.server.wait)
                self.join_addresses = list(self.server.addresses)
                host, name = "127.0.0.1", plan.name
            else:
                assert isinstance(plan, Join)
                if self.ask_name is not None:
                    # Nobody there: say so now, not after the name was asked for nothing.
                    host, port, tls, tls_ca, address = plan.host, plan.port, plan.tls, plan.tls_ca, plan.address
                    self._splash(f"Connecting to {address or Endpoint(host, port, tls)}…")
                    await Connection.reachable(host, port)
                    self._splash("")
                    plan.name = await self.push_screen(AskName(plan.name), wait_for_dismiss=True)
                    remembered = self.ask_name(plan.name)
                    if remembered is not None:
                        plan.rejoin_table, plan.rejoin_secret = remembered
                    self.ask_name = None  # asked once: a restart keeps the name
                host, port, name = plan.host, plan.port, plan.name
                tls, tls_ca, address = plan.tls, plan.tls_ca, plan.address
            self._splash(f"Connecting to {address or Endpoint(host, port, tls)}…")
            person = None if self.person_key is None else self.person_key(name)
            context = client_context(Endpoint(host, port, tls, tls_ca))
            self.conn = Connection(
                host, port, name, self.post_message, person=person, tls=context, tls_ca=tls_ca, address=address
            )
            hello = await self.conn.open()
        except (OSError, ConnectionLost, ServerFailed, TimeoutError) as exc:
            if isinstance(exc, ServerFailed):
                why = str(exc)[:1].upper() + str(exc)[1:]
            else:
                why = words.unreachable(exc, host, port, tls=tls, ca=tls_ca, address=address)
            if certificate_refused(exc):
                # Never a quiet exit, never a retry by itself: the player decides, knowing why.
                self.show_link("The server's certificate is not trusted.", why, gone=True)
            elif restart:
                self.show_link("Cannot reach the server.", why, lobby=not isinstance(plan, Play))
            else:
                self.exit(f"quatro: {why}", return_code=1)
            return
        self.run_worker(self.conn.run(), name="link", exit_on_error=False)
        self.tables = hello.tables
        self.draining = hello.draining
        if hello.profiles:
            self.profiles = list(hello.profiles)
        self.games = list(hello.games) if hello.games else [p.QUATRO]
        if isinstance(plan, Play):
            await self._set_up_play(plan)
        elif plan.watch is not None:
            reply = await self.watch_table(plan.watch, plan.password)
            if not (isinstance(reply, m.Ok) and isinstance(reply.payload, m.Watching)):
                why = words.why_not(reply)
                self.exit(f"quatro: cannot watch table {plan.watch}: {words.ended(why)}", return_code=1)
                return
        elif await self._rejoin(plan):
            pass
        elif plan.table is not None:
            reply = await self.request(m.Join(plan.table, plan.password or None))
            if not (isinstance(reply, m.Ok) and isinstance(reply.payload, m.Seated)):
                why = words.why_not(reply)
                self.exit(f"quatro: cannot join table {plan.table}: {words.ended(why)}", return_code=1)
                return
            self.game.my_seat = reply.payload.seat
        else:
            self.push_screen(LobbyScreen())

    async def _rejoin(self, plan: Join) -> bool:
        """Back to a remembered seat (R19), when there is one at the table asked for (or no table was asked for)."""
        if plan.rejoin_secret is None or plan.rejoin_table is None or plan.table not in (None, plan.rejoin_table):
            return False
        assert self.conn is not None
        reply = await self.conn.request(m.Rejoin(plan.rejoin_table, plan.rejoin_secret))
        if isinstance(reply, m.Refused) and reply.reason == p.SEAT_IN_USE:
            # The same person plays this seat elsewhere (another terminal, a connection not yet timed out).
            question = TakeOver(plan.rejoin_table, plan.name, self.seat_named(plan.rejoin_table, plan.name))
            self._splash(question.question().split("\n")[0])
            if not await self.push_screen(question, wait_for_dismiss=True):
                return False
            reply = await self.conn.request(m.Rejoin(plan.rejoin_table, plan.rejoin_secret, takeover=True))
        if isinstance(reply, m.Refused) and reply.reason in words.LOBBY_REFUSAL_WORDS:
            # The directory named a server that could not prove it holds the table: the secret was kept; say so.
            text = words.sentence(words.LOBBY_REFUSAL_WORDS[reply.reason])
            self.game.say(text)
            self.notify(text, title=words.UNPROVEN_TITLE, severity="error", timeout=NOTICE_SECONDS, markup=False)
        if not (isinstance(reply, m.Ok) and isinstance(reply.payload, m.Rejoined)):
            return False  # that table is gone, or the seat was given up: carry on as asked
        self.game.my_seat = reply.payload.seat
        self.game.say("Back in your seat.")
        return True

    def seat_named(self, table: int, name: str) -> int | None:
        """The one seat at ``table`` that the server's list shows under ``name`` (None: none, or more than one)."""
        summary = next((t for t in self.tables if t.table == table), None)
        seats = [i for i, held in enumerate(summary.names if summary else ()) if held == name]
        return seats[0] if len(seats) == 1 else None

    async def _set_up_play(self, plan: Play) -> None:
        """Create the table, seat the bots, and start (unless seats are left open for other people)."""
        contract = client_game(plan.game).contract
        default = contract.name == games.DEFAULT.name
        players = plan.players if plan.players in contract.seats else contract.seats[0]
        # A game of one table size takes no size; the default game goes unnamed (any server makes its tables).
        reply = await self.request(
            m.CreateTable(
                players if len(contract.seats) > 1 else None,
                self.table_timing(plan.timing),
                game=None if default else contract.name,
            )
        )
        if not (isinstance(reply, m.Ok) and isinstance(reply.payload, m.Seated)):
            why = words.why_not(reply)
            table = "a table" if default else f"a {contract.title} table"
            self.exit(f"quatro: cannot create {table}: {words.ended(why)}", return_code=1)
            return
        self.table_of(contract.name).my_seat = reply.payload.seat
        level = plan.level
        for _ in range(players - 1 - plan.open):
            bot = await self.request(m.AddBot(level=level))
            if isinstance(bot, m.Refused) and bot.reason == p.BAD_LEVEL and level != contract.default_level:
                self.game.say(f"This server has no {level!r} bots: playing against {contract.default_level} ones.")
                level = contract.default_level
                await self.request(m.AddBot(level=level))
        if plan.open == 0:
            await self.request(m.Start())
        else:
            self.route()

    @staticmethod
    def table_timing(timing: str) -> str | None:
        """The ``timing`` field of ``create_table`` for the private server.

        A named profile is asked for by name. A file is not named at all: the private server was started with
        ``--timing FILE`` and made it its default, which a table created without ``timing`` gets; the file's
        stem could be longer than the protocol allows a profile name (32 characters), or clash with a profile.
        """
        return timing if timing in PROFILE_NAMES else None

    # --- requests -----------------------------------------------------------------------------

    async def request(self, body: m.RequestBody) -> m.Reply | None:
        """Send a request and return its reply; a refusal is also told in the feed. None when not connected."""
        if self.conn is None:
            return None
        try:
            reply = await self.conn.request(body)
        except ConnectionLost as exc:
            self.game.say(f"Not sent: {exc}.")
            self.game_changed()
            return None
        if not isinstance(reply, m.Ok):
            self.game.say(self.client_game().refusal(body, reply, self.game.ascii_only))
            self.game_changed()
        elif isinstance(reply.payload, m.Seated) and self.remember_seat is not None:
            self.remember_seat(reply.payload.table, reply.payload.secret, self.conn.core.name)
        return reply

    async def watch_table(self, table: int, password: str | None) -> m.Reply | None:
        """Watch ``table`` from no seat: its watch screen shows from the ``table`` push that comes before the reply."""
        self.game.watching = table
        reply = await self.request(m.Watch(table, password or None))
        if not (isinstance(reply, m.Ok) and isinstance(reply.payload, m.Watching)):
            self.game.watching = None
        return reply

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "take_seat":  # a watcher's j: while the watched table waits with a free seat
            seating = self.game.seating
            return (
                self.game.watching is not None
                and seating is not None
                and seating.phase is TablePhase.LOBBY
                and any(not s.taken for s in seating.seats)
            )
        if action == "replay":
            return self.player is not None and self.player.app is self and not isinstance(self.screen, ModalScreen)
        return super().check_action(action, parameters)

    def action_take_seat(self) -> None:
        """A watcher takes a free seat of the table it watches (while the table waits for its match)."""
        table = self.game.watching
        if table is None:
            return
        password = getattr(self.plan, "password", None)
        self.run_worker(self._take_seat(table, password), group="requests", exit_on_error=False)

    async def _take_seat(self, table: int, password: str | None) -> None:
        reply = await self.request(m.Join(table, password or None))
        if isinstance(reply, m.Ok) and isinstance(reply.payload, m.Seated):
            self.game.watching = None
            self.game.my_seat = reply.payload.seat
            self.route()
            self.game_changed()

    def action_stop_watching(self) -> None:
        """Back to the lobby from a watched table, on the same connection."""
        if self.conn is not None and self.game.watching is not None:
            self.run_worker(self._to_lobby(self.conn), name="lobby", group="lobby", exclusive=True, exit_on_error=False)

    def on_server_watch_ended(self, message: ServerWatchEnded) -> None:
        """The host closed the table to watchers, or it closed: back to the lobby, told why."""
        if self.stale(message):
            return
        self._show_lobby(self.tables)
        if isinstance(self.screen, LobbyScreen):
            self.screen.note(f"Watching ended: {message.text}.")

    def on_server_notice(self, message: ServerNotice) -> None:
        """A line from the server's operator: a toast over whatever screen shows, and a line of the feed."""
        if self.stale(message):
            return
        text = words.plain(message.text, self.game.ascii_only)
        self.notify(text, title="Notice from the server", severity="warning", timeout=NOTICE_SECONDS, markup=False)
        self.game.say(f"Server notice: {message.text}")
        if message.draining:
            self.draining = True
            if isinstance(self.screen, LobbyScreen):
                self.screen.fill()
        self.game_changed()

    def on_server_recent(self, message: ServerRecent) -> None:
        """A rejoin's look back (before its snapshot): the feed of a client that comes back with none."""
        if self.stale(message):
            return
        client_game(message.game).recall(self.table_of(message.game), message.events)
        self.game_changed()

    def on_server_seat_ended(self, message: ServerSeatEnded) -> None:
        """The operator closed the table or removed this player: the lobby, and a screen that says what happened."""
        if self.stale(message):
            return
        if message.reason == p.REMOVED_BY_OPERATOR:
            title = "The server's operator removed you from your seat."
            way_on = "Your seat's secret no longer works. You are in the lobby: join or create another table."
        else:
            title = f"The server's operator closed table {message.table}."
            way_on = "The match ended there. You are in the lobby: join or create another table."
        self.game.stop_clocks()
        self._show_lobby(self.tables)
        reason = words.sentence(message.text) if message.text else ""
        self.push_screen(TableEnded(title, f"{reason}\n{way_on}" if reason else way_on))

    def send(self, body: m.RequestBody) -> None:
        """Fire a request from a key or a click; its refusal, if any, lands in the feed."""
        self.run_worker(self.request(body), group="requests", exit_on_error=False)

    # --- what the server pushes -------------------------------------------------------------------

    def stale(self, message: LinkMessage) -> bool:
        """Whether ``message`` comes from a connection this app has already closed (it left, or began again), or
        reaches an app that is closing (its screens are gone: there is nobody left to tell)."""
        return not self.screen_stack or (message.origin is not None and message.origin is not self.conn)

    def on_server_update(self, message: ServerUpdate) -> None:
        if self.stale(message):
            return
        game = client_game(message.game)
        during = self.in_match()
        if game.take(self.table_of(message.game), message.view, message.events, message.received_at) and self.bell_on:
            self.ring()
        if during or self.in_match():
            self._idle_from = self._clock()  # the update of a match, or the one that ended it (``_close_if_idle``)
        self.route()
        game.updated(self, message.view, message.events, message.received_at)
        self.game_changed()

    def on_way_on(self, message: WayOn) -> None:
        """A game's screen asks for the ways on beyond its moves."""
        if message.what == "rematch":
            self.send(m.Rematch())
        elif message.what == "lobby":
            self.action_back_to_lobby()
        elif message.what == "chat":
            from quatro_tui.screens.chat import ChatBox

            self.push_screen(ChatBox())

    def on_server_seating(self, message: ServerSeating) -> None:
        if self.stale(message):
            return
        self.table_of(message.seating.game).seat(message.seating)
        if isinstance(self.plan, Play) and self.plan.open and self.game.view is None and not self.left_play_table:
            # Everyone is seated: the match starts by itself, as `quatro play` promises.
            if all(s.taken for s in message.seating.seats) and self.game.is_host():
                self.send(m.Start())
        self.route()
        self.game_changed()
        if isinstance(self.screen, RoomScreen) or self.game.watching is not None:
            self.screen.refresh_bindings()  # the host's keys follow the host; a watcher's j, the free seats

    def on_server_chat(self, message: ServerChat) -> None:
        if self.stale(message):
            return
        line = message.line
        self.game.say(f"{line.name}: {line.text}")  # the feed draws it as plain text
        self.client_game().chat(self, f"{line.name}: {line.text}")
        self.game_changed()

    def on_server_lobby(self, message: ServerLobby) -> None:
        if self.stale(message):
            return
        self.tables = message.tables
        self.draining = message.draining
        if isinstance(self.screen, LobbyScreen):
            self.screen.fill()

    def on_server_bye(self, message: ServerBye) -> None:
        if self.stale(message):
            return
        self.game.stop_clocks()
        if message.reason == m.BYE_REPLACED:
            self.game.link = "seat played elsewhere"
            self.show_link(
                "Your seat is now played from another connection.",
                "Someone (you, elsewhere?) came back to this seat with its secret.",
            )
        elif message.reason == m.BYE_CLOSED:
            self.game.link = "server stopped"
            self.game.say(f"The server says goodbye: {words.ended(message.text or 'it stopped for good')}")
        elif message.reason == m.BYE_SHUTDOWN:
            self.game.link = "server shutting down"
            self.game.say("The server says goodbye: it is shutting down.")
            self.show_link(*self.goodbye_words(), retrying=True)
        else:
            self.game.say(f"The server says goodbye: {message.text or message.reason}.")
            self.show_link(
                "The server closed the connection.", words.sentence(message.text or message.reason), retrying=True
            )
        self.game_changed()

    def server_address(self) -> str:
        return self.conn.shown if self.conn is not None else ""

    def goodbye_words(self, retry: str = "") -> tuple[str, str]:
        """What a player is told while a server that said goodbye is tried again."""
        return (
            "The server is shutting down.",
            f"The server at {self.server_address()} said goodbye. If it is restarting, you will be back in "
            f"your seat by itself.{retry}",
        )

    def on_server_gone(self, message: ServerGone) -> None:
        if self.stale(message):
            return
        self.game.link = "server shut down"
        if message.final:
            self.show_link(
                "The game is over: its server has stopped.",
                f"{words.ended(message.text)} The server at {self.server_address()} is not coming "
                "back, and neither is this table.",
                gone=True,
            )
        else:
            self.show_link(
                "The server has shut down.",
                f"The server at {self.server_address()} said goodbye ({message.text.rstrip('.')}) "
                "and has not come back.",
                gone=True,
            )
        self.game_changed()

    def action_another_server(self) -> None:
        """Join another server's lobby (the player's name goes along)."""
        plan = self.plan
        if not isinstance(plan, Join):
            return

        def chosen(address: Endpoint | None) -> None:
            if address is not None:
                self.plan = Join(address.host, address.port, plan.name, tls=address.tls)
                self.run_worker(self._restart(None), name="begin", exclusive=True, exit_on_error=False)

        self.push_screen(AskAddress(), chosen)

    def on_link_dropped(self, message: LinkDropped) -> None:
        if self.stale(message):
            return
        self.game.link = f"connection lost, retry in {message.retry_in:.1f}s"
        self.game.stop_clocks()
        if message.attempt == 1 and not message.goodbye:
            self.game.say("Connection lost: trying again.")
        if message.goodbye:
            self.show_link(
                *self.goodbye_words(f"\nTrying again in {message.retry_in:.1f}s (attempt {message.attempt})."),
                retrying=True,
            )
            self.game_changed()
            return
        self.show_link(
            "The connection to the server was lost.",
            f"{words.sentence(message.why)}\nTrying again in {message.retry_in:.1f}s (attempt {message.attempt}).",
            retrying=True,
        )
        self.game_changed()

    def on_link_back(self, message: LinkBack) -> None:
        if self.stale(message):
            return
        self.game.link = ""
        if message.resynced:
            self.game.say("Resynced: the table as it is now.")
        else:
            self.game.say(
                "Reconnected: watching again." if self.game.watching is not None else "Reconnected: back in your seat."
            )
        self.hide_link()
        self.game_changed()

    def on_seq_gap(self, message: SeqGap) -> None:
        if self.stale(message):
            return
        got = "an unreadable one" if message.got is None else f"update {message.got}"
        self.log.warning(f"seq gap: {got} came where update {message.expected} was due; resyncing")
        self.game.say("An update went missing: catching up.")
        self.game_changed()

    def on_seat_lost(self, message: SeatLost) -> None:
        if self.stale(message):
            return
        self.game.link = "seat lost"
        self.game.stop_clocks()
        if message.reason in words.LOBBY_REFUSAL_WORDS:
            # Not the seat's end: the directory named a server that could not prove it holds the table.
            self.show_link(words.UNPROVEN_TITLE, words.sentence(words.LOBBY_REFUSAL_WORDS[message.reason]))
        else:
            self.show_link(
                "Your seat is gone.",
                f"The server no longer has your seat: it restarted, or the seat was given up "
                f"({message.why.rstrip('.')}).",
            )
        self.game_changed()

    # --- ways on ------------------------------------------------------------------------------

    def show_link(
        self, title: str, detail: str, *, retrying: bool = False, lobby: bool | None = None, gone: bool = False
    ) -> None:
        """Cover whatever shows with what happened and the ways on (one screen, updated, however often it is told)."""
        if not self.screen_stack:
            return  # the app is closing (its screens are gone): the connection's last word has nobody to tell
        if lobby is None:
            lobby = not isinstance(self.plan, Play)
        screen = self.screen
        if isinstance(screen, LinkScreen) and screen.title_text == title:
            screen.tell(detail)
            return
        if isinstance(screen, LinkScreen):
            self.pop_screen()
        self.push_screen(LinkScreen(title, detail, retrying=retrying, lobby=lobby, gone=gone))
        self.check_size()

    def hide_link(self) -> None:
        if isinstance(self.screen, LinkScreen):
            self.pop_screen()

    def action_try_again(self) -> None:
        """Connect afresh, back to the seat if the server still has it (R19), else to the lobby."""
        place = self.conn.seat if self.conn is not None else None
        self.run_worker(self._restart(place), name="begin", exclusive=True, exit_on_error=False)

    def action_back_to_lobby(self) -> None:
        if self.conn is not None and not self.game.link and not isinstance(self.screen, LinkScreen):
            # A link that is up takes the player to the lobby as it is: leave the table, list the tables, on the
            # same connection (a new connection and hello took seconds with nothing on screen). A private
            # server has a lobby like any server's.
            self.run_worker(self._to_lobby(self.conn), name="lobby", group="lobby", exclusive=True, exit_on_error=False)
            return
        self.run_worker(self._restart(None, leave=True), name="begin", exclusive=True, exit_on_error=False)

    async def _to_lobby(self, conn: Connection) -> None:
        """Leave the table and show the server's lobby: its tables, and creating one (bots at every level)."""
        try:
            if self.game.me is not None or self.game.watching is not None:
                await conn.request(m.Leave())
            listing = await conn.request(m.ListTables())
        except ConnectionLost:
            await self._restart(None)
            return
        self.left_play_table = True
        if isinstance(listing, m.Ok) and isinstance(listing.payload, m.Tables):
            self.draining = listing.payload.draining
        # Queued behind whatever the table pushed before it let go of this connection: that is dropped, not shown.
        self.call_later(
            self._show_lobby,
            listing.payload.tables
            if isinstance(listing, m.Ok) and isinstance(listing.payload, m.Tables)
            else self.tables,
        )

    def _show_lobby(self, tables: tuple[m.TableSummary, ...]) -> None:
        self.game = self.fresh_table()
        self.tables = tables
        while len(self.screen_stack) > 1:
            self.pop_screen()
        self.push_screen(LobbyScreen())
        self.check_size()

    async def _restart(self, place: object, leave: bool = False) -> None:
        """Close the link, forget the table, and begin again: ``quatro join`` to the server's lobby (or the seat
        ``place``), ``quatro play`` with a fresh private server when its own has stopped."""
        conn, self.conn = self.conn, None
        if conn is not None:
            if leave and self.game.me is not None:
                try:
                    await asyncio.wait_for(conn.request(m.Leave()), 2.0)
                except (ConnectionLost, TimeoutError):
                    pass  # the seat goes when the server notices (R19)
            await conn.close()
        self.game = self.fresh_table()
        while len(self.screen_stack) > 1:
            self.pop_screen()
        self._splash("Connecting…")
        plan = self.plan
        if isinstance(plan, Join):
            table, secret = getattr(place, "table", None), getattr(place, "secret", None)
            self.plan = Join(
                plan.host,
                plan.port,
                plan.name,
                None,
                plan.password,
                table if isinstance(table, int) else None,
                secret if isinstance(secret, str) else None,
                tls=plan.tls,
                tls_ca=plan.tls_ca,
            )
        elif (
            isinstance(plan, Play)
            and self.server is not None
            and (leave or self.server.process is None or self.server.process.poll() is not None)
        ):
            self.server.stop(wait=False)
            self.server = None
        await self._begin(restart=True)

    async def action_quit_now(self) -> None:
        await self._quit()

    # --- screens ------------------------------------------------------------------------------

    def client_game(self) -> ClientGame[Any]:
        """The table's game, as this client plays it."""
        return client_game(self.game.kind)

    def table_of(self, kind: str) -> AnyTable:
        """The table, kept as its game ``kind`` keeps one (``ClientGame.table_type``): told of a table of another
        game than the one the client was keeping (the lobby's is the default game's), it moves to that game's."""
        table_type: type[AnyTable] = client_game(kind).table_type
        if self.game.kind != kind or type(self.game) is not table_type:
            self.game = self.game.moved_to(table_type, kind)
        return self.game

    def fresh_table(self) -> AnyTable:
        """A table of nothing yet (the lobby's, a new connection's), with this terminal's clock and randomness."""
        old = self.game
        table: AnyTable = default().table_type(ascii_only=old.ascii_only, clock=old.clock, rng=old.rng)
        return table

    def base_screen(self) -> Screen[Any] | None:
        """The phase screen under any dialogs (None while only the splash shows)."""
        stack: list[Screen[Any]] = self.screen_stack
        for screen in stack[::-1]:
            if not isinstance(screen, ModalScreen) and screen is not stack[0]:
                return screen
        return None

    def wanted_screen(self) -> type[Screen[None]] | None:
        """The screen the table's state calls for, as its game says (its watch screen for a table watched)."""
        if self.game.watching is not None:
            return self.client_game().watch_screen(self.game)
        return self.client_game().screen(self.game)

    def make_screen(self, wanted: type[Screen[None]]) -> Screen[None]:
        return self.client_game().make_screen(self, wanted)

    def route(self) -> None:
        """Show the screen of the table's phase; dialogs of a phase that ended go with it."""
        wanted = self.wanted_screen()
        if wanted is None or isinstance(self.screen, LeaveRunning):
            return  # the quit question is not a phase's dialog: the screens catch up once it is answered
        base = self.base_screen()
        if base is not None and type(base) is wanted:
            return
        while isinstance(self.screen, ModalScreen):
            self.pop_screen()
        screen = self.make_screen(wanted)
        if base is None:
            # The first screen of a run comes after the splash: no key was meant for another screen.
            if isinstance(screen, KeyGuard):
                screen.guard = 0.0
            self.push_screen(screen)
        else:
            self.switch_screen(screen)
        self.check_size()

    def game_changed(self) -> None:
        """Tell every game widget on the visible screens to redraw."""
        for screen in self.screen_stack:
            for widget in screen.query(GameWidget):
                widget.version += 1
        self.client_game().changed(self)

    def ring(self) -> None:
        """The terminal's bell (BEL), even where Textual's ``bell`` stays quiet."""
        if self._driver is not None:
            self._driver.write("\a")
            self._driver.flush()

    # --- keys everywhere ------------------------------------------------------------------------

    def action_replay(self, what: str) -> None:
        player = self.player
        if player is None:
            return
        if what == "close":
            player.close()
            self.player = None
            return
        moves: dict[str, Callable[[], None]] = {
            "toggle": player.toggle,
            "forward": lambda: player.step(1),
            "back": lambda: player.step(-1),
            "jump": player.jump,
            "faster": player.faster,
            "first": lambda: player.goto(0),
            "last": lambda: player.goto(len(player.tape.steps) - 1),
        }
        moves[what]()

    def play_replay(self, player: ReplayPlayer) -> None:
        """Play ``player``'s replay here; closing it brings the lobby back."""
        self.player = player
        player.on_close = lambda: self._show_lobby(self.tables)
        player.start(self)

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key):
            self._idle_from = self._clock()
        await super().on_event(event)

    def on_app_blur(self, event: events.AppBlur) -> None:
        """The app stays focused for Textual when its terminal is not. Textual stops drawing the key bar of an
        unfocused app, and a browser page's client starts unfocused until its first key press: a seat that came
        back after a reload would show a blank key bar until the next screen."""
        event.prevent_default()

    def in_match(self) -> bool:
        return self.client_game().in_match(self.game)

    def _close_if_idle(self) -> None:
        """Watching a match is playing it; anywhere else (the lobby, a room, a match that is over), a player
        who has not touched a key for ``idle_exit`` seconds has gone: the session closes.

        The count starts from the last key press or from the match's last update, whichever came later: the
        update that ends a match is the moment the player has something to do again (a rematch, the lobby), and
        their last key press during it says nothing about whether they are still there. Someone who watched bots
        play a whole match, or sat still while bots played it, gets the whole ``idle_exit`` after its end, not
        what was left of it since a poll of this check or a key press long ago."""
        now = self._clock()
        if self.in_match():
            self._idle_from = now
        elif self.idle_exit is not None and now - self._idle_from >= self.idle_exit:
            minutes = self.idle_exit / 60
            self.run_worker(
                self._quit(f"Closed after {minutes:g} minutes without a key press.", exits.IDLE), exit_on_error=False
            )

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

    def others_playing(self) -> int:
        """Other people seated and connected at this table (bots are not counted)."""
        seating = self.game.seating
        if not seating:
            return 0
        return sum(
            1
            for seat in seating.seats
            if seat.seat != self.game.my_seat and seat.taken and seat.bot is None and seat.connected
        )

    async def action_quit(self) -> None:
        if self.player is not None and self.plan is None:
            self.exit()  # a replay alone: nothing runs that quitting would leave
            return
        """Quit. The opener of a table others play at is asked whether to leave it running; anyone else in the middle
        of a match is asked first too (ctrl+q twice also quits)."""
        others = self.others_playing() if isinstance(self.plan, Play) and self.plan.open and self.server else 0
        if isinstance(self.screen, LeaveRunning):
            self.screen.dismiss(LEAVE)  # ctrl+q twice: quit, and the others play on
            return
        if others and self.server is not None:
            # The private server is this terminal's: quitting must not end the others' game unasked.
            self.push_screen(LeaveRunning(others, self.server.idle_stop), self._quit_answered)
            return
        in_match = self.in_match()
        if others or self.conn is None or not in_match or isinstance(self.screen, (ConfirmQuit, LinkScreen)):
            await self._quit()
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.run_worker(self._quit(), exit_on_error=False)

        self.push_screen(ConfirmQuit(private=isinstance(self.plan, Play)), answered)

    async def _quit_answered(self, answer: str | None) -> None:
        if answer is None:
            self.route()  # not quitting after all: to the screen of the phase the table is in now
            return
        if self.server is not None:
            if answer == LEAVE:
                self.server.detach()
            elif answer == STOP:
                self.server.stop(wait=False)
        await self._quit()

    async def _quit(self, message: str | None = None, return_code: int = 0) -> None:
        if self.conn is not None:
            await self.conn.close()
        self.exit(message, return_code=return_code)

    # --- an unexpected error ----------------------------------------------------------------------

    def _handle_exception(self, error: Exception) -> None:
        """An error nothing handled ends this app (Textual's rule) but never in silence: its traceback goes to a
        file, and ``successor`` opens on a screen that names the file and offers the ways on."""
        place = self.conn.seat if self.conn is not None else None
        plan = self.plan
        about = (
            f"player {getattr(plan, 'name', '?')!r}; plan {type(plan).__name__}; screens "
            f"{[type(s).__name__ for s in self.screen_stack]}; table {place.table if place else None}; "
            f"phase {getattr(self.game.view, 'phase', None) or self.game.table_phase}"
        )
        try:
            log = write_log(error, about)
        except Exception:  # noqa: BLE001 - a log that cannot be written must not hide the error itself
            log = None
        if self.conn is not None:
            self.conn.close_now()  # the seat is free at once for the next app to come back to (R19)
        lobby = isinstance(plan, Join) or (
            isinstance(plan, Play) and self.server is not None and self.server.port is not None
        )
        self.crash = Crash.of(
            error,
            log,
            None if place is None else (place.table, place.seat),
            lobby,
            1 if self.after is None else self.after.count + 1,
            None if place is None else place.secret,
        )
        super()._handle_exception(error)
        if log is not None:
            self._exit_renderables.clear()  # the traceback is in the file; the next screen names it

    def successor(self) -> QuatroApp | None:
        """The app that follows this one after it stopped on an unexpected error: it opens on the crash screen
        (None: no crash, or too many in a row to go on from)."""
        crash = self.crash
        if crash is None or crash.count > MAX_CRASHES:
            return None
        plan = self.plan
        way_on: Join | None = None
        server = None
        if isinstance(plan, Join):
            way_on = Join(
                plan.host,
                plan.port,
                plan.name,
                password=plan.password,
                tls=plan.tls,
                tls_ca=plan.tls_ca,
                address=plan.address,
            )
        elif isinstance(plan, Play) and self.server is not None and self.server.port is not None:
            # The private server plays on (its bots keep the seat's match going): the next app joins it.
            way_on, server = Join("127.0.0.1", self.server.port, plan.name), self.server
        elif self._way_on is not None:
            way_on, server = self._way_on, self.server
        follow = QuatroApp(
            None,
            ascii_only=self.game.ascii_only,
            clock=self._clock,
            server=server,
            remember_seat=self.remember_seat,
            idle_exit=self.idle_exit,
            bell=self.bell_on,
            person_key=self.person_key,
        )
        if way_on is None:
            crash = Crash(crash.summary, crash.log, None, False, crash.count)  # nowhere to go on to but out
        elif crash.seat is not None:
            # Back to the seat, the table's story so far comes along (the lobby starts a fresh feed anyway).
            follow.game.feed.extend(self.game.feed)
        follow.after, follow._way_on = crash, way_on
        if self.keymap_given:
            follow.set_keymap(self.keymap_given)
        return follow

    def after_crash(self, seat: bool) -> None:
        """A way on from the crash screen: back to the seat held (R19), or the server's lobby."""
        if self._way_on is None or self.after is None:
            return
        plan = self._way_on
        table_seat = self.after.seat if seat else None
        secret = self.after.secret if table_seat is not None else None
        self.plan = Join(
            plan.host,
            plan.port,
            plan.name,
            None,
            plan.password,
            table_seat[0] if table_seat is not None else None,
            secret,
            tls=plan.tls,
            tls_ca=plan.tls_ca,
            address=plan.address,
        )
        while len(self.screen_stack) > 1:
            self.pop_screen()
        self._splash("Connecting…")
        self.run_worker(self._begin(restart=True), name="begin", exclusive=True, exit_on_error=False)

    def set_keymap(self, keymap: Keymap) -> None:
        self.keymap_given = dict(keymap)
        super().set_keymap(keymap)

    def get_key_display(self, binding: Binding) -> str:
        """Keys as the footer shows them: Textual's symbols (arrows, a return sign), or their names in ASCII mode."""
        shown = super().get_key_display(binding)
        if self.game.ascii_only and not shown.isascii():
            shown = words.plain(shown.translate(ASCII_KEYS), True)
        return shown

    def on_unmount(self) -> None:
        if self._scrollbar_renderer is not None:
            ScrollBar.renderer = self._scrollbar_renderer
            self._scrollbar_renderer = None
        if self.server is not None and self.crash is None:  # after a crash, the next app may go on at this server
            if isinstance(self.plan, Play) and self.plan.open and self.others_playing():
                self.server.detach()  # the app ends unasked (its terminal went): the others play on
            else:
                self.server.stop(wait=False)
