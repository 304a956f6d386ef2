"""A random walk of a person through the whole client, against a real server that pushes what real servers push.

Each step is one thing a person or the server does: a key the screen on top offers, any other key, a click
anywhere, a resize (80×24, 120×36, too small), quitting and coming back with the remembered seat; or, on the
other side, a scripted host (tables of both games opened, filled with bots, started, rematched, closed to
watchers, left, a chat line), a twin who takes the walker's seat over, and the operator (a notice, a table
closed, the walker's seat removed, the server restarted from its journal). With a directory (a real Redis), a
second server shares the lobby and a host there opens tables of its own: joining or watching one of them is
answered ``moved``, and the client follows it there (protocol section 21).

Sessions are of three kinds (``KINDS``): ``quatro join`` to the walk's server, whose journal holds a Quatro and a
Quarto match over from the start (for replays), ``quatro play`` on a private server, and ``quatro learn``.

The walk fails on any unhandled exception in the client (with the last steps that led there) and on a screen
that offers no key that leads on for ``STUCK`` seconds.
"""

from __future__ import annotations

import asyncio
import random
import signal
import subprocess
import sys
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from textual.widgets import Input

from quatro_shared import protocol as p

from helpers.tui import Player
from quatro_server.workers import admin
from quatro_tui.app import Join, Play, QuatroApp
from quatro_tui.games import CLIENT_GAMES, client_game
from quatro_tui.lessons.coach import LessonApp
from quatro_tui.local_server import LocalServer
from quatro_tui.screens.link import ConfirmQuit

#: The walk server's durations: the fast profile's, matches to 2 points, so that rounds, breaks, match ends,
#: rematches and past matches (for replays) all come within a walk.
WALK_TIMING = """\
sign_window = 3.0
swap_cooldown = 0.2
channel_cooldown = 0.2
pulse_interval = 0.5
pulse_shown = 0.4
vote_window = 2.0
vote_gap = 1.0
round_length = 12.0
break_length = 2.0
target_score = 2
"""

#: How a session starts, by weight: ``quatro join`` to the walk's server (where the host and the operator act),
#: ``quatro play`` (a private server of its own, bots in the other seats) and ``quatro learn`` (the lesson).
KINDS = {"join": 8, "play": 1, "learn": 1}

#: Seconds a screen may offer no key that leads on (the splash while connecting, a screen filling in).
STUCK = 8.0
#: Steps shown when the walk fails.
TRAIL = 40
#: Keys a person presses without looking at the footer.
KEYS = [
    *"abcdefghijklmnopqrstuvwxyz",
    *"12345678",
    "enter",
    "escape",
    "tab",
    "shift+tab",
    "up",
    "down",
    "left",
    "right",
    "space",
    "backspace",
    "question_mark",
]
#: Keys that end the program or only show help: not a way on from a screen.
NOT_ON = {"quit", "help", "quit_now"}
SIZES = [(80, 24), (120, 36)]
#: What a person who came to play presses more often than the rest: a match gets made and started, watched and
#: replayed, so that the walk reaches every screen.
PURPOSE = {
    "LobbyScreen": ["c", "enter", "w", "p"],
    "RoomScreen": ["b", "b", "b", "s"],
    "BotLevel": ["1", "2"],
    "PastMatchesScreen": ["enter"],
}


class WalkServer:
    """``quatro-server`` journalling into a data directory (replays, restarts restore), its admin socket there."""

    def __init__(self, tmp: Path, directory: str | None = None, past: bool = True) -> None:
        self.tmp = tmp
        self.data = tmp / "data"
        tmp.mkdir(parents=True, exist_ok=True)
        self.timing = tmp / "walk.toml"
        self.timing.write_text(WALK_TIMING)
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0
        #: The table directory shared with ``far`` (a Redis URL), and whether the journal starts with past matches.
        self.directory, self.past = directory, past
        #: The other server of the directory, whose tables the walker is ``moved`` to (None: a server alone).
        self.far: WalkServer | None = None

    def past_matches(self) -> None:
        """Two matches over in the journal before the server first starts, a Quatro one and a Quarto one, so that
        the lobby's past matches (p) list them and the walk replays them from its first session."""
        from test_journal import play_to_the_end
        from test_tui_replay import quarto_match

        play_to_the_end(self.data)
        quarto_match(self.data)

    def start(self) -> int:
        if self.starts == 0 and self.past:
            self.past_matches()
        log = (self.tmp / f"server-{self.starts}.log").open("wb")
        self.starts += 1
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "quatro_server",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--no-announce",
                "--data-dir",
                str(self.data),
                "--timing",
                str(self.timing),
                "--trusted-address",
                "127.0.0.1",
                "--log-level",
                "warning",
                *(["--directory", self.directory] if self.directory else []),
            ],
            stdout=subprocess.PIPE,
            stderr=log,
        )
        assert self.process.stdout is not None
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            line = self.process.stdout.readline().decode()
            assert line, f"the walk server exited: {(self.tmp / f'server-{self.starts - 1}.log').read_text()}"
            if "quatro join 127.0.0.1:" in line:
                self.port = int(line.strip().rsplit(":", 1)[1])
                return self.port
        raise AssertionError("the walk server never said where it listens")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def admin(self, request: admin.AdminRequest) -> dict[str, Any] | None:
        try:
            return admin.ask(self.data / admin.SOCKET_NAME, request, timeout=5)
        except (OSError, admin.AdminError):
            return None  # restarting: the operator tries again later


@dataclass
class Walk:
    """One walk: ``steps`` steps from ``seed``."""

    server: WalkServer
    seed: int
    steps: int
    name: str = "wanda"
    rng: random.Random = field(init=False)
    trail: deque[str] = field(default_factory=lambda: deque(maxlen=TRAIL))
    seat: tuple[int, str] | None = None
    done: int = 0
    sessions: int = 0
    screens: set[str] = field(default_factory=set)
    #: The kinds of session walked ("join", "play quarto", "learn quatro", ...).
    kinds: set[str] = field(default_factory=set)
    host: Player | None = None
    host_tables: list[int] = field(default_factory=list)
    #: The host of the directory's other server (``WalkServer.far``).
    far_host: Player | None = None

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    def note(self, what: str) -> None:
        self.trail.append(f"{self.done:5} {what}")

    def fail(self, why: str, app: QuatroApp | None = None) -> AssertionError:
        # An app that crashed may have no screen left: the message must still say why, not fail on the lookup.
        shown = f"\nscreen {type(app.screen_stack[-1]).__name__}" if app is not None and app.screen_stack else ""
        return AssertionError(
            f"walk seed {self.seed} step {self.done}: {why}{shown}\nlast steps:\n" + "\n".join(self.trail)
        )

    def remember(self, table: int, secret: str, _name: str) -> None:
        self.seat = (table, secret)

    # --- the walk ------------------------------------------------------------------------------------

    async def run(self) -> None:
        try:
            while self.done < self.steps:
                await self.session()
        finally:
            for host in (self.host, self.far_host):
                if host is not None:
                    await host.close()

    def app(self) -> tuple[QuatroApp, str]:
        """The next session's client, and what kind it is (``KINDS``)."""
        kind = self.rng.choices(list(KINDS), weights=list(KINDS.values()))[0]
        timing = str(self.server.timing)
        game = self.rng.choice(sorted(CLIENT_GAMES))
        if kind == "play":
            seats = client_game(game).contract.seats
            level = self.rng.choice(client_game(game).contract.levels[:2])
            plan = Play(
                self.rng.choice(seats), level, timing, self.name, 0, game, self.server.tmp / f"play-{self.sessions}"
            )
            return QuatroApp(plan), f"play {game}"
        if kind == "learn":
            lesson = client_game(game).lesson
            if lesson is not None:
                plan = Play(client_game(game).contract.seats[0], "lesson", timing, self.name, 0, game)
                return LessonApp(plan, lesson, server=LocalServer(timing, lesson=True)), f"learn {game}"
        table, secret = self.seat if self.seat else (None, None)
        return (
            QuatroApp(
                Join("127.0.0.1", self.server.port, self.name, rejoin_table=table, rejoin_secret=secret),
                remember_seat=self.remember,
            ),
            f"join (rejoin {table})",
        )

    async def session(self) -> None:
        self.sessions += 1
        app, kind = self.app()
        self.kinds.add(kind.split(" (")[0])
        self.note(f"session {self.sessions}: {kind}")
        try:
            async with app.run_test(size=self.rng.choice(SIZES)) as pilot:
                stuck_since: float | None = None
                while self.done < self.steps and app.is_running:
                    self.done += 1
                    await self.step(app, pilot)
                    await pilot.pause()
                    if app._exception is not None:
                        break
                    if not app.is_running:
                        break
                    self.screens.add(type(app.screen).__name__)
                    if getattr(app, "player", None) is not None:
                        self.screens.add("a replay")  # a replay plays on the table's own screens, under its bar
                    far = self.server.far
                    if far is not None and app.conn is not None and app.conn.connected and app.conn.port == far.port:
                        self.screens.add("moved")  # followed a ``moved`` to the other server
                    if self.leads_on(app):
                        stuck_since = None
                    elif stuck_since is None:
                        stuck_since = time.monotonic()
                    elif time.monotonic() - stuck_since > STUCK:
                        raise self.fail(f"no key leads on for {STUCK:.0f} s", app)
                if app.is_running:
                    app.exit()
        except AssertionError:
            raise
        except Exception as exc:  # noqa: BLE001 - the client's unhandled error, re-raised by run_test
            raise self.fail(f"the client crashed: {exc!r}", app) from exc
        if app._exception is not None:
            raise self.fail(f"the client crashed: {app._exception!r}", app) from app._exception

    def purpose(self, app: QuatroApp) -> list[str]:
        """The keys this screen's person means to press: in the lobby, one who has never sat in a waiting room makes a
        table (whatever the server's pushes did to the list meanwhile), so that every seed reaches the room."""
        screen = type(app.screen).__name__
        if screen == "LobbyScreen" and "RoomScreen" not in self.screens:
            return ["c"]
        return PURPOSE.get(screen, [])

    @staticmethod
    def leads_on(app: QuatroApp) -> bool:
        if isinstance(app.focused, Input):
            return True
        return any(b.enabled and b.binding.action.split("(")[0] not in NOT_ON for b in app.active_bindings.values())

    async def step(self, app: QuatroApp, pilot: Any) -> None:
        roll = self.rng.random()
        if roll < 0.50:
            # The screen's own keys, quitting left to the walk's own step (it comes back with the seat).
            offered = [
                key
                for key, b in app.active_bindings.items()
                if b.enabled and b.binding.action.split("(")[0] not in NOT_ON
            ]
            wanted = [key for key in self.purpose(app) if key in offered]
            if wanted and self.rng.random() < 0.5:
                offered = wanted
            if offered:
                key = self.rng.choice(offered)
                self.note(f"{type(app.screen).__name__}: offered {key}")
                await pilot.press(key)
                await self.answer_quit(app, pilot)
                return
            roll = 0.55
        if roll < 0.65:
            key = self.rng.choice(KEYS)
            self.note(f"{type(app.screen).__name__}: key {key}")
            await pilot.press(key)
            await self.answer_quit(app, pilot)
        elif roll < 0.72:
            width, height = app.size
            where = (self.rng.randrange(width), self.rng.randrange(height))
            self.note(f"{type(app.screen).__name__}: click {where}")
            await pilot.click(offset=where)
        elif roll < 0.74:
            size = self.rng.choice([*SIZES, (60, 18)])
            self.note(f"resize {size}")
            await pilot.resize_terminal(*size)
        elif roll < 0.745:
            self.note("quit, to come back")
            await pilot.press("ctrl+q")
            await self.answer_quit(app, pilot, leave=True)
        elif roll < 0.86:
            await self.host_does(app)
        elif roll < 0.92:
            await self.far_host_does()
        elif roll < 0.94:
            await self.twin_takes_over()
        else:
            await self.operator_does(app)

    async def answer_quit(self, app: QuatroApp, pilot: Any, leave: bool | None = None) -> None:
        """A quit question is answered: yes when the walk means to leave, at random otherwise."""
        await pilot.pause()
        if isinstance(app.screen, ConfirmQuit):
            yes = leave if leave is not None else self.rng.random() < 0.5
            self.note(f"quit? {'y' if yes else 'n'}")
            await pilot.press("y" if yes else "n")
            await pilot.pause()

    # --- the other side ------------------------------------------------------------------------------

    async def host_player(self) -> Player | None:
        if self.host is not None and self.host.conn.connected:
            return self.host
        if self.host is not None:
            await self.host.close()
            self.host = None
        try:
            self.host = await asyncio.wait_for(Player(self.server.port, "hosta").start(), 5)
        except (OSError, asyncio.TimeoutError, Exception):  # noqa: BLE001 - the server is restarting
            self.host = None
        return self.host

    async def host_does(self, app: QuatroApp) -> None:
        host = await self.host_player()
        if host is None:
            return
        what = self.rng.choice(
            ["open", "open", "fill", "start", "rematch", "watchers_off", "watchers_on", "leave", "chat", "join_walker"]
        )
        self.note(f"host: {what}")
        try:
            await asyncio.wait_for(self._host(host, what, app), 5)
        except (asyncio.TimeoutError, AssertionError, Exception):  # noqa: BLE001 - refusals and a dropped link
            pass

    async def _host(self, host: Player, what: str, app: QuatroApp) -> None:
        if what == "open":
            await host.request(p.LEAVE)
            if self.rng.random() < 0.5:
                await host.request(p.CREATE_TABLE, game="quarto")
            else:
                await host.request(p.CREATE_TABLE, players=self.rng.choice([4, 6]))
        elif what == "fill":
            for _ in range(7):
                if (await host.request(p.ADD_BOT, level="easy"))["kind"] != p.OK:
                    break
        elif what == "start":
            await host.request(p.START)
        elif what == "rematch":
            await host.request(p.REMATCH)
        elif what in ("watchers_off", "watchers_on"):
            await host.request(p.WATCHERS, open=what == "watchers_on")
        elif what == "leave":
            await host.request(p.LEAVE)
        elif what == "chat":
            await host.request(p.CHAT, text="hello there")
        elif what == "join_walker" and app.conn is not None and app.conn.seat is not None:
            await host.request(p.LEAVE)
            await host.request(p.JOIN, table=app.conn.seat.table)

    async def far_host_does(self) -> None:
        """The other server's host opens a table there (listed in the walker's lobby through the directory), fills
        it with bots and starts it, or leaves it: the walker's join or watch of it is answered ``moved``."""
        far = self.server.far
        if far is None:
            return
        if self.far_host is None or not self.far_host.conn.connected:
            if self.far_host is not None:
                await self.far_host.close()
            try:
                self.far_host = await asyncio.wait_for(Player(far.port, "farah").start(), 5)
            except (OSError, asyncio.TimeoutError, Exception):  # noqa: BLE001
                self.far_host = None
                return
        host = self.far_host
        what = self.rng.choice(["open", "open", "fill", "start", "leave"])
        self.note(f"far host: {what}")
        try:
            async with asyncio.timeout(5):
                if what == "open":
                    await host.request(p.LEAVE)
                    if self.rng.random() < 0.3:
                        await host.request(p.CREATE_TABLE, game="quarto")
                    else:
                        await host.request(p.CREATE_TABLE, players=4)
                elif what == "fill":
                    for _ in range(self.rng.choice([1, 3])):  # sometimes a seat is left for the walker
                        await host.request(p.ADD_BOT, level="easy")
                elif what == "start":
                    await host.request(p.START)
                else:
                    await host.request(p.LEAVE)
        except (asyncio.TimeoutError, AssertionError, Exception):  # noqa: BLE001 - refusals and a dropped link
            pass

    async def twin_takes_over(self) -> None:
        """The walker's own seat, taken over from another terminal with its secret, then given back."""
        if self.seat is None:
            return
        table, secret = self.seat
        self.note(f"twin takes over table {table}")
        twin: Player | None = None
        try:
            twin = await asyncio.wait_for(Player(self.server.port, self.name).start(), 5)
            await asyncio.wait_for(twin.request(p.REJOIN, table=table, secret=secret, takeover=True), 5)
        except (asyncio.TimeoutError, Exception):  # noqa: BLE001 - the seat is gone, or the server restarts
            pass
        finally:
            if twin is not None:
                await twin.close()

    async def operator_does(self, app: QuatroApp) -> None:
        roll = self.rng.random()
        mine = app.conn.seat.table if app.conn is not None and app.conn.seat is not None else None
        if roll < 0.35:
            self.note("operator: notice")
            await asyncio.to_thread(self.server.admin, admin.Notice("The server restarts at midnight."))
        elif roll < 0.6:
            listed = await asyncio.to_thread(self.server.admin, admin.Tables())
            tables = [t["table"] for t in (listed or {}).get("tables", [])]
            if tables:
                table = mine if mine in tables and self.rng.random() < 0.5 else self.rng.choice(tables)
                self.note(f"operator: close table {table}")
                await asyncio.to_thread(self.server.admin, admin.Close(table, "closing for the night"))
        elif roll < 0.85:
            if mine is not None and app.game.my_seat is not None:
                self.note(f"operator: remove the walker from table {mine}")
                await asyncio.to_thread(self.server.admin, admin.Remove(mine, app.game.my_seat, "make room"))
        else:
            self.note("operator: restart the server")
            await asyncio.to_thread(self.restart)

    def restart(self) -> None:
        self.server.stop()
        self.server.start()
