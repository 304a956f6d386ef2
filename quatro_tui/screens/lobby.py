"""The lobby: the server's tables, and creating or joining one."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.content import Content
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, Select, Static

from quatro_shared import games
from quatro_shared import messages as m
from quatro_shared import protocol as p
from quatro_shared.profiles import STANDARD_PROFILE
from quatro_shared.tables import TablePhase

from quatro_tui import words
from quatro_tui.widgets import Feed, StatusBar

if TYPE_CHECKING:
    from textual import getters

    from quatro_tui.app import QuatroApp


class PasswordInput(Input):
    """A password field that hides its letters behind ``*`` in ASCII mode (Textual draws bullets)."""

    if TYPE_CHECKING:
        app = getters.app(QuatroApp)  # self.app as this client's app, for the type checker

    @property
    def _value(self) -> Text:
        if self.password and self.app.game.ascii_only:
            return Text("*" * len(self.value), no_wrap=True, overflow="ignore", end="")
        return super()._value


def seat_choices(game: str) -> list[tuple[str, int]]:
    """The table sizes the create row offers for ``game``, the smallest first (as its contract lists them)."""
    contract = games.CONTRACTS.get(game, games.DEFAULT)
    return [(f"{n} players", n) for n in contract.seats]


#: Cells of the lobby list's "who sits there" column: names beyond it are counted, not cut.
WHO_WIDTH = 28
#: The lobby list's words for a table's phase (``quatro_shared.tables.TablePhase``).
PHASE_WORDS = {
    TablePhase.LOBBY: "lobby",
    TablePhase.PLAYING: "playing",
    TablePhase.BETWEEN: "break",
    TablePhase.OVER: "over",
}


def who_sits(t: m.TableSummary) -> str:
    """The players by name, then the bots and free seats counted: "ann, bob +2 bots, 1 free"."""
    if not t.names:  # a server that does not say
        return f"{t.taken}/{t.players} seated, {t.bots} bots"
    humans = [name for i, name in enumerate(t.names) if name and i not in t.bot_seats]
    free = sum(not name for name in t.names)
    tail = []
    if t.bot_seats:
        tail.append(f"{len(t.bot_seats)} bot{'s' if len(t.bot_seats) != 1 else ''}")
    if free:
        tail.append(f"{free} free")
    shown: list[str] = []
    for i, name in enumerate(humans):
        rest = len(humans) - i - 1
        candidate = ", ".join([*shown, name]) + (f" +{rest}" if rest else "")
        if len(candidate) > WHO_WIDTH - 10 and shown:
            shown[-1] += f" +{len(humans) - i}"
            break
        shown.append(name)
    return ", ".join(shown + tail)


def watchers(t: m.TableSummary) -> str:
    """How many watch the table, or that its host closed it to watchers."""
    if not t.watching:
        return "closed"
    return str(t.watchers) if t.watchers else ""


class LobbyScreen(Screen[None]):
    """The lobby. The server's pushes (its list, a drain, why watching ended) may reach it before it is composed
    (it was pushed in the same turn of the loop) or after it is gone (the player moved on): it keeps what it is
    told and shows it once its widgets are there, never asking for a widget that is not."""

    if TYPE_CHECKING:
        app = getters.app(QuatroApp)  # self.app as this client's app, for the type checker

    def __init__(self) -> None:
        super().__init__()
        #: The line under the list, kept for the moment the screen is composed.
        self._note = ""
        #: The widgets are composed (set as it mounts): until then fill() waits for on_mount to fill it.
        self._composed = False

    BINDINGS = [
        Binding("enter", "join", "join the table", id="lobby-join"),
        Binding("c", "create", "create", id="lobby-create"),
        # The list is pushed as it changes: refreshing it by hand is seldom needed, and off the key bar it leaves
        # room at 80 columns for the keys that lead somewhere (help lists it).
        Binding("g", "refresh", "refresh", id="lobby-refresh", show=False),
        Binding("t", "chat", "chat", id="lobby-chat"),
        Binding("p", "past", "replays", id="lobby-past"),
        Binding("w", "watch", "watch", id="lobby-watch"),
        Binding("l", "leaderboard", "ranks", id="lobby-leaderboard"),
        Binding("i", "card", "card", id="lobby-card"),
    ]

    def action_past(self) -> None:
        from quatro_tui.replay.past import PastMatchesScreen

        self.app.push_screen(PastMatchesScreen())

    def action_leaderboard(self) -> None:
        from quatro_tui.screens.records import LeaderboardScreen

        game = self.query_one("#game", Select).value
        self.app.push_screen(LeaderboardScreen(game if isinstance(game, str) else self.app.games[0]))

    def action_card(self) -> None:
        from quatro_tui.screens.records import PlayerCardScreen

        self.app.push_screen(PlayerCardScreen())

    def action_chat(self) -> None:
        from quatro_tui.screens.chat import ChatBox

        self.app.push_screen(ChatBox())

    def compose(self) -> ComposeResult:
        ascii_only = self.app.game.ascii_only
        yield StatusBar()
        yield Static("[b]Tables on this server[/b]  (enter joins the highlighted one, w watches it)", classes="pad")
        yield DataTable(id="tables", cursor_type="row")
        with Horizontal(id="create"):
            name = self.app.conn.name if self.app.conn is not None else ""
            yield Input(value=name, placeholder="your name", max_length=p.MAX_NAME_LEN, id="name")
            # The games this server hosts (its hello says), by name.
            hosted = [(game.capitalize(), game) for game in self.app.games]
            chosen = self.app.create_choices  # as the player left the row last time, where this server offers it

            def kept(field: str, options: list[tuple[Any, Any]], default: Any) -> Any:
                value = chosen.get(field)
                return value if any(value == option for _, option in options) else default

            game = kept("game", hosted, self.app.games[0])
            yield Select(hosted, value=game, allow_blank=False, id="game")
            seats = seat_choices(game)
            yield Select(seats, value=kept("players", seats, seats[0][1]), allow_blank=False, id="players")
            # The server's profiles, by name: plain text, they are the server's words.
            profiles = [(Text(words.plain(name, ascii_only)), name) for name in self.app.profiles]
            default = STANDARD_PROFILE if STANDARD_PROFILE in self.app.profiles else self.app.profiles[0]
            yield Select(profiles, value=kept("timing", profiles, default), allow_blank=False, id="timing")
            yield PasswordInput(placeholder="password (optional)", password=True, id="password")
        with Horizontal(id="create-more"):
            # Rated: the match counts for everyone's records and ratings; friendly: it leaves them as they were.
            rated = [("rated", "rated"), ("friendly", "friendly")]
            yield Select(rated, value=kept("rated", rated, "rated"), allow_blank=False, id="rated")
            yield Static("rated counts for the leaderboard (l); friendly does not", id="rated-note")
        draining = Static("", id="lobby-draining", classes="pad")
        draining.display = False  # shown only while the server drains
        yield draining
        yield Static(Content(words.plain(self._note, ascii_only)), id="lobby-note", classes="pad")
        yield Feed(id="lobby-feed", classes="pad")
        yield Footer()

    def on_mount(self) -> None:
        self._composed = True
        table = self.query_one(DataTable)
        # The names last: the widest column, it is the one that runs off a narrow terminal (the list scrolls
        # sideways), not the scores or the watchers after it.
        table.add_columns("table", "game", "phase", "idle", "timing", "pw", "play", "watch", "scores", "who sits there")
        self.query_one("#lobby-feed", Feed).styles.height = 4
        self.fill()
        self.query_one(DataTable).focus()
        if self.app.game.ascii_only:
            # The selects' arrows are triangles: ASCII ones instead.
            for arrow in self.query(".down-arrow").results(Static):
                arrow.update("v")
            for arrow in self.query(".up-arrow").results(Static):
                arrow.update("^")

    def on_screen_resume(self) -> None:
        self.fill()

    def fill(self) -> None:
        found = list(self.query("#lobby-draining").results(Static)) if self._composed else []
        if not found:
            return  # on_mount fills it; a screen gone has nobody to show it to
        draining = found[0]
        draining.update(
            "[b]This server is draining before a restart:[/b] it takes no new tables; running matches "
            "play on to their end."
            if self.app.draining
            else ""
        )
        draining.display = self.app.draining
        table = self.query_one(DataTable)
        table.clear()
        ascii_only = self.app.game.ascii_only
        for t in self.app.tables:
            # Cells as Text: a str cell is markup to a DataTable, and these strings are the server's.
            cells = (
                str(t.table),
                t.game.capitalize(),
                PHASE_WORDS[t.phase],
                words.idle(t.idle_s),
                t.timing,
                "yes" if t.password else "",
                "rated" if t.rated else "friendly",
                watchers(t),
                " ".join(map(str, t.scores)),
                who_sits(t),
            )
            table.add_row(*(Text(words.plain(cell, ascii_only)) for cell in cells), key=str(t.table))

    def note(self, text: str) -> None:
        """A line under the list, as plain text (it often holds the server's own words)."""
        self._note = text
        for line in self.query("#lobby-note").results(Static):
            line.update(Content(words.plain(text, self.app.game.ascii_only)))

    def on_select_changed(self, event: Select.Changed) -> None:
        field = event.select.id
        if field in ("game", "players", "timing", "rated") and isinstance(event.value, (str, int)):
            self.app.create_choices[field] = event.value
        if field != "game":
            return
        # Each game's own table sizes (the size chosen kept when the game has it).
        players = self.query_one("#players", Select)
        seats = seat_choices(str(event.value))
        size = players.value
        players.set_options(seats)
        players.value = size if any(size == option for _, option in seats) else seats[0][1]

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "name":
            self.app.run_worker(self._rename(event.value.strip()), exit_on_error=False)

    async def _rename(self, name: str) -> None:
        """Play under another name (over SSH the name starts as the login's)."""
        if not name or not p.printable(name):
            self.note("A name needs something printable.")
            return
        reply = await self.app.request(m.Rename(name))
        if isinstance(reply, m.Ok) and isinstance(reply.payload, m.Renamed):
            self.note(f"You play as {reply.payload.name}.")
        for table in self.query(DataTable).results(DataTable):
            table.focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_join()

    def action_refresh(self) -> None:
        self.app.run_worker(self._refresh(), exit_on_error=False)

    async def _refresh(self) -> None:
        reply = await self.app.request(m.ListTables())
        if isinstance(reply, m.Ok) and isinstance(reply.payload, m.Tables):
            self.app.tables = reply.payload.tables
            self.fill()

    def action_join(self) -> None:
        table = self.query_one(DataTable)
        if not self.app.tables or table.cursor_row is None or table.cursor_row >= len(self.app.tables):
            self.note("No table to join: create one with c.")
            return
        self.app.run_worker(self._join(self.app.tables[table.cursor_row].table), exit_on_error=False)

    def action_watch(self) -> None:
        table = self.query_one(DataTable)
        if not self.app.tables or table.cursor_row is None or table.cursor_row >= len(self.app.tables):
            self.note("No table to watch.")
            return
        self.app.run_worker(self._watch(self.app.tables[table.cursor_row].table), exit_on_error=False)

    async def _watch(self, table_id: int) -> None:
        password = self.query_one("#password", Input).value or getattr(self.app.plan, "password", None)
        reply = await self.app.watch_table(table_id, password)
        if not (isinstance(reply, m.Ok) and isinstance(reply.payload, m.Watching)):
            self.note(f"Cannot watch: {words.why_not(reply)}.")
            return
        # The seating push (and the snapshot) that came before the reply have turned this screen into the watch.
        self.app.route()
        self.app.game_changed()

    async def _join(self, table_id: int) -> None:
        password = self.query_one("#password", Input).value or getattr(self.app.plan, "password", None)
        reply = await self.app.request(m.Join(table_id, password or None))
        if not (isinstance(reply, m.Ok) and isinstance(reply.payload, m.Seated)):
            self.note(f"Cannot join: {words.why_not(reply)}.")
            return
        # The seating push that came with the reply has already turned this screen into the table's room.
        self.app.game.my_seat = reply.payload.seat
        self.app.game_changed()

    def action_create(self) -> None:
        self.app.run_worker(self._create(), exit_on_error=False)

    async def _create(self) -> None:
        game = self.query_one("#game", Select).value
        players = self.query_one("#players", Select).value
        timing = self.query_one("#timing", Select).value
        password = self.query_one("#password", Input).value or None
        rated = self.query_one("#rated", Select).value
        assert isinstance(game, str) and isinstance(players, int) and isinstance(timing, str)
        contract = games.CONTRACTS.get(game, games.DEFAULT)
        # A game of one table size takes no size; the default game goes unnamed (any server makes its tables); a
        # rated table is the default, said only when friendly.
        request = m.CreateTable(
            players if len(contract.seats) > 1 else None,
            timing,
            password,
            None if contract is games.DEFAULT else game,
            False if rated == "friendly" else None,
        )
        reply = await self.app.request(request)
        if not (isinstance(reply, m.Ok) and isinstance(reply.payload, m.Seated)):
            self.note(f"Cannot create: {words.why_not(reply)}.")
            return
        # The seating push that came with the reply has already turned this screen into the table's room.
        self.app.game.my_seat = reply.payload.seat
        self.app.game_changed()
