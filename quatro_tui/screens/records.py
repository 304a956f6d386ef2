"""Players' records: a game's leaderboard, and a player's card (protocol section 20).

The lobby opens both: ``l`` the leaderboard of the game its create row names (``g`` switches game, page up and down
turn pages, ``i`` or enter opens the highlighted player's card), ``i`` one's own card. Everything shown is the
server's words, drawn as plain text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Footer, Static

from quatro_shared import games
from quatro_shared import messages as m
from quatro_shared import protocol as p

from quatro_tui import words

if TYPE_CHECKING:
    from textual import getters

    from quatro_tui.app import QuatroApp


def title_of(game: str) -> str:
    contract = games.CONTRACTS.get(game)
    return contract.title if contract is not None else game.capitalize()


def tally_words(name: str) -> str:
    """A game's count as people read it: ``calls_right`` is "calls right"."""
    return name.replace("_", " ")


def rating_words(rating: float) -> str:
    return f"{rating:.1f}"


def player_words(name: str, bot: bool) -> str:
    return name if not bot or name.endswith(" bot") else f"{name} (bot)"


class LeaderboardScreen(Screen[None]):
    """One game's leaderboard, a page at a time: place, player, rating, matches, wins."""

    if TYPE_CHECKING:
        app = getters.app(QuatroApp)  # self.app as this client's app, for the type checker

    BINDINGS = [
        Binding("escape,l", "close", "back to the lobby", id="board-close"),
        Binding("g", "next_game", "another game", id="board-game"),
        Binding("i", "card", "player's card", id="board-card"),
        Binding("pagedown", "page(1)", "next page", id="board-next"),
        Binding("pageup", "page(-1)", "previous page", id="board-previous"),
    ]

    def __init__(self, game: str) -> None:
        super().__init__()
        self.game = game
        self.first = 0
        self.standings: m.Standings | None = None

    def compose(self) -> ComposeResult:
        yield Static("", id="board-title", classes="pad")
        yield DataTable(id="leaderboard", cursor_type="row")
        yield Static("", id="board-note", classes="pad")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("#", "player", "rating", "matches", "wins")
        table.focus()
        self.load()

    def load(self) -> None:
        self.app.run_worker(self._load(), exclusive=True, group="board", exit_on_error=False)

    async def _load(self) -> None:
        self._title(f"Leaderboard: {title_of(self.game)}  (loading…)")
        reply = await self.app.request(m.Leaderboard(self.game, self.first or None))
        if not (isinstance(reply, m.Ok) and isinstance(reply.payload, m.Standings)):
            self._title(f"Leaderboard: {title_of(self.game)}")
            self._note(f"No leaderboard: {words.why_not(reply)}.")
            return
        self.standings = board = reply.payload
        self.fill(board)

    def fill(self, board: m.Standings) -> None:
        ascii_only = self.app.game.ascii_only
        table = self.query_one(DataTable)
        table.clear()
        for s in board.entries:
            cells = (str(s.place), player_words(s.name, s.bot), rating_words(s.rating), str(s.matches), str(s.wins))
            table.add_row(*(Text(words.plain(cell, ascii_only)) for cell in cells), key=s.person)
        if board.entries:
            shown = f"{board.offset + 1}-{board.offset + len(board.entries)} of {board.total}"
        else:
            shown = "nobody yet" if board.total == 0 else f"past the last of {board.total}"
        self._title(f"Leaderboard: {title_of(board.game)}  ({shown})")
        others = len(self.app.games) > 1
        self._note(
            (
                "Rating: what the player is surely worth (mean - 3 x uncertainty); rated tables only. "
                if board.entries
                else "Nobody has a rated match of this game yet: finish one at a rated table. "
            )
            + ("g: another game. " if others else "")
            + ("i: the highlighted player's card." if board.entries else "i: your own card.")
        )

    def _title(self, text: str) -> None:
        self.query_one("#board-title", Static).update(Content(words.plain(text, self.app.game.ascii_only)))

    def _note(self, text: str) -> None:
        self.query_one("#board-note", Static).update(Content(words.plain(text, self.app.game.ascii_only)))

    def action_close(self) -> None:
        self.dismiss()

    def action_next_game(self) -> None:
        hosted = self.app.games or [self.game]
        self.game = hosted[(hosted.index(self.game) + 1) % len(hosted)] if self.game in hosted else hosted[0]
        self.first = 0
        self.load()

    def action_page(self, step: int) -> None:
        board = self.standings
        if board is None:
            return
        offset = max(0, self.first + step * p.LEADERBOARD_PAGE)
        if offset >= board.total and step > 0:
            return
        if offset != self.first:
            self.first = offset
            self.load()

    def highlighted(self) -> m.Standing | None:
        board, table = self.standings, self.query_one(DataTable)
        if board is None or not board.entries or table.cursor_row is None or table.cursor_row >= len(board.entries):
            return None
        return board.entries[table.cursor_row]

    def action_card(self) -> None:
        """The highlighted player's card; one's own where nobody is highlighted (an empty board, a page past the
        last), as the note says: the key always opens a card."""
        standing = self.highlighted()
        self.app.push_screen(PlayerCardScreen(standing.person if standing is not None else None))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_card()


class PlayerCardScreen(ModalScreen[None]):
    """A player's record in every game they played: place, rating, matches, wins and the game's own counts."""

    if TYPE_CHECKING:
        app = getters.app(QuatroApp)  # self.app as this client's app, for the type checker

    BINDINGS = [Binding("escape,i", "close", "close", id="card-close")]

    def __init__(self, person: str | None = None) -> None:
        super().__init__()
        #: Whose card: a person from a leaderboard; None for one's own.
        self.person = person
        self.card: m.Card | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="card-box", classes="dialog wide"):
            yield Static("Player's card", id="card-title")
            yield Static("loading…", id="card-body")
            yield Static("esc closes", classes="hint")

    def on_mount(self) -> None:
        self.app.run_worker(self._load(), exit_on_error=False)

    async def _load(self) -> None:
        reply = await self.app.request(m.PlayerCard(self.person))
        body = self.query_one("#card-body", Static)
        if not (isinstance(reply, m.Ok) and isinstance(reply.payload, m.Card)):
            why = words.why_not(reply)
            body.update(Content(words.plain(f"No card: {why}.", self.app.game.ascii_only)))
            return
        self.card = reply.payload
        body.update(
            Content(
                words.plain("\n".join(card_lines(reply.payload, own=self.person is None)), self.app.game.ascii_only)
            )
        )

    def action_close(self) -> None:
        self.dismiss()


def card_lines(card: m.Card, own: bool = False) -> list[str]:
    """A card as lines of text: who, then one paragraph per game."""
    lines = [player_words(card.name, card.bot) + ("  (you)" if own else "")]
    if not card.games:
        lines += ["", "No rated match finished yet: play at a rated table to get a rating."]
    for record in card.games:
        lines += [
            "",
            f"{title_of(record.game)}: #{record.place}, rating {rating_words(record.rating)}"
            f" (mean {record.mu:.1f}, uncertainty {record.sigma:.1f})",
            f"  {record.matches} match{'es' if record.matches != 1 else ''}, {record.wins} won",
        ]
        if record.tallies:
            lines.append("  " + ", ".join(f"{tally_words(t.name)} {t.value}" for t in record.tallies))
    return lines
