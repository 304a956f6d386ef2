"""The lobby's past matches (key ``p``): the server's finished matches, newest first, and a replay of one.

The list is ``past_matches``, page by page; the replay is ``replay``, chunk after chunk, as the seat chosen saw
it, then played on the table's own screens (``quatro_tui.replay.player``). A password table's match asks for its
password (the field under the list) unless this player held a seat there.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, Select, Static

from quatro_shared import messages as m

from quatro_tui import words
from quatro_tui.connection import ConnectionLost
from quatro_tui.replay.player import ReplayPlayer
from quatro_tui.replay.tape import ReplayError, Tape
from quatro_tui.widgets.status import StatusBar

if TYPE_CHECKING:
    from textual import getters

    from quatro_tui.app import QuatroApp


def when(seconds: int) -> str:
    """A match's end in the player's local time, to the minute."""
    return datetime.fromtimestamp(seconds).strftime("%Y-%m-%d %H:%M")


class PastMatchesScreen(Screen[None]):
    """The finished matches of the server; ``enter`` replays the highlighted one as the chosen seat saw it."""

    if TYPE_CHECKING:
        app = getters.app(QuatroApp)  # self.app as this client's app, for the type checker

    BINDINGS = [
        Binding("enter", "replay", "replay it", id="past-replay"),
        Binding("m", "more", "older ones", id="past-more"),
        Binding("escape", "back", "back to the lobby", id="past-back"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.matches: list[m.MatchSummary] = []
        self.more = False

    def compose(self) -> ComposeResult:
        yield StatusBar()
        yield Static(
            "[b]Past matches on this server[/b]  (enter replays the highlighted one, as the seat chosen below saw it)",
            classes="pad",
        )
        yield DataTable(id="past", cursor_type="row")
        yield Select([("seat 1", 0)], value=0, allow_blank=False, id="past-seat")  # seats count from 1, as people do
        yield Input(placeholder="password (a password table's match)", password=True, id="past-password")
        yield Static("", id="past-note", classes="pad")
        yield Footer()

    def on_mount(self) -> None:
        # The names last: the widest column, it is the one that runs off a narrow terminal (as in the lobby), not
        # the scores or when the match ended.
        self.query_one(DataTable).add_columns("table", "game", "scores", "ended", "pw", "who sat there")
        self.query_one(DataTable).focus()
        self.app.run_worker(self._load(0), exit_on_error=False)

    def note(self, text: str) -> None:
        self.query_one("#past-note", Static).update(Text(words.plain(text, self.app.game.ascii_only)))

    async def _ask(self, body: m.RequestBody) -> m.Reply | str:
        """The server's reply to ``body``, or why there is none, in words: not connected, the link dropped, or what
        the server sent could not be read (the link goes then: its bytes cannot be trusted; it comes back by itself,
        and the player stays here). A reply that is not ``ok`` is the caller's to tell, on this screen."""
        conn = self.app.conn
        if conn is None:
            return "not connected"
        try:
            return await conn.request(body)
        except ConnectionLost as exc:
            return str(exc)

    @staticmethod
    def why(reply: m.Reply | str) -> str:
        """Why ``reply`` is not what was asked for: the server's own words for a refusal or an error (its reason when
        it gave none), or what went wrong on the way."""
        if isinstance(reply, str):
            return reply
        if isinstance(reply, m.Refused):
            return reply.message or f"the server refused it ({reply.reason})"
        if isinstance(reply, m.Error):
            return reply.message or f"the server found the request bad ({reply.code})"
        return "the server's reply is not the one asked for"

    async def _load(self, offset: int) -> None:
        reply = await self._ask(m.PastMatches(offset or None))
        if not (isinstance(reply, m.Ok) and isinstance(reply.payload, m.Matches)):
            self.note(f"No past matches: {self.why(reply)}. Escape goes back to the lobby.")
            return
        self.matches += reply.payload.matches
        self.more = reply.payload.more
        self.fill()

    def fill(self) -> None:
        table = self.query_one(DataTable)
        table.clear()
        ascii_only = self.app.game.ascii_only
        for match in self.matches:
            names = ", ".join(name or "-" for name in match.names)
            cells = (
                f"{match.table}" + (f" #{match.match + 1}" if match.match else ""),
                match.game.capitalize(),
                " ".join(map(str, match.scores)),
                when(match.ended),
                "yes" if match.password else "",
                names,
            )
            table.add_row(*(Text(words.plain(cell, ascii_only)) for cell in cells))
        if not self.matches:
            self.note("No match on this server is over yet.")
        else:
            self.note("m shows older ones." if self.more else "")
        self._seats()

    def _seats(self) -> None:
        match = self.chosen()
        if match is None:
            return
        select = self.query_one("#past-seat", Select)
        ascii_only = self.app.game.ascii_only
        # Plain text: names are the players' own words.
        options = [
            (Text(words.plain(f"seat {i + 1}: {name or 'nobody'}", ascii_only)), i)
            for i, name in enumerate(match.names)
        ]
        select.set_options(options)
        select.value = 0

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._seats()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_replay()

    def chosen(self) -> m.MatchSummary | None:
        table = self.query_one(DataTable)
        row = table.cursor_row
        return self.matches[row] if self.matches and row is not None and 0 <= row < len(self.matches) else None

    def action_more(self) -> None:
        if self.more:
            self.app.run_worker(self._load(len(self.matches)), exit_on_error=False)

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_replay(self) -> None:
        match = self.chosen()
        if match is None:
            self.note("No match to replay.")
            return
        seat = self.query_one("#past-seat", Select).value
        password = self.query_one("#past-password", Input).value or None
        self.app.run_worker(self._replay(match, seat if isinstance(seat, int) else 0, password), exit_on_error=False)

    async def _replay(self, match: m.MatchSummary, seat: int, password: str | None) -> None:
        received: list[m.ReplayFrames] = []
        while True:
            start = sum(len(part.frames) for part in received)
            reply = await self._ask(
                m.Replay(match.table, seat, match=match.match, start=start or None, password=password)
            )
            if not (isinstance(reply, m.Ok) and isinstance(reply.payload, m.ReplayFrames)):
                self.note(f"Cannot replay it: {self.why(reply)}. Pick another match or seat, or escape to the lobby.")
                return
            received.append(reply.payload)
            if not reply.payload.frames or start + len(reply.payload.frames) >= reply.payload.total:
                break
        try:
            tape = Tape.from_chunks(received)
        except ReplayError as exc:
            self.note(f"Cannot replay it: {exc}.")
            return
        self.app.play_replay(ReplayPlayer(tape))
