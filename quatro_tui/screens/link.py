"""When the table is out of reach: what happened, in plain words, and every way on (try again, the lobby, another
server, quit).

The screen covers the table while the connection is down, so that no round clock seems to count for a player
who cannot act; it goes by itself when the link comes back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from quatro_tui import words

if TYPE_CHECKING:
    from textual import getters

    from quatro_tui.app import QuatroApp


class LinkScreen(ModalScreen[None]):
    """What happened (``title``, ``detail``) and the ways on this situation has."""

    if TYPE_CHECKING:
        app = getters.app(QuatroApp)  # self.app as this client's app, for the type checker

    BINDINGS = [
        Binding("r", "app.try_again", "try again", id="link-retry"),
        Binding("l", "lobby", "back to the lobby", id="link-lobby"),
        Binding("j", "another_server", "another server", id="link-another"),
        Binding("q", "app.quit_now", "quit", id="link-quit"),
    ]

    def __init__(
        self, title: str, detail: str, *, retrying: bool = False, lobby: bool = True, gone: bool = False
    ) -> None:
        super().__init__()
        self.title_text, self.detail = title, detail
        #: The connection tries again by itself: the screen says so, and goes when it succeeds.
        self.retrying = retrying
        #: Whether a lobby exists to go back to (a private server that stopped has none).
        self.lobby = lobby
        #: The server has shut down: its lobby is gone too, and another server is the way on.
        self.gone = gone

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "another_server":
            return self.lobby  # a server to join: not for ``quatro play``, whose server is its own
        if action == "lobby":
            return not (self.gone and self.lobby)  # a server that has shut down has no lobby
        return True

    def action_lobby(self) -> None:
        self.app.action_back_to_lobby()

    def action_another_server(self) -> None:
        self.app.action_another_server()

    def compose(self) -> ComposeResult:
        ascii_only = self.app.game.ascii_only
        with Vertical(classes="dialog wide"):  # four ways on, and a whole sentence a line, at 80 columns
            yield Static(
                Content.from_markup("[b]$title[/b]", title=words.plain(self.title_text, ascii_only)), id="link-title"
            )
            yield Static(Content(words.plain(self.detail, ascii_only)), id="link-detail")
            yield Static(Content.from_markup(self.choices()), id="link-choices")

    def choices(self) -> str:
        options = ["[b]r[/b] try again now" if self.retrying else "[b]r[/b] try again"]
        if not self.lobby:
            options.append("[b]l[/b] start a new game")
        elif not self.gone:
            options.append("[b]l[/b] back to the lobby")
        if self.lobby:
            options.append("[b]j[/b] another server")
        options.append("[b]q[/b] quit")
        return "\n" + "    ".join(options)

    def tell(self, detail: str) -> None:
        """A new word on the same trouble (the next attempt's countdown)."""
        self.detail = detail
        self.query_one("#link-detail", Static).update(Content(words.plain(detail, self.app.game.ascii_only)))


class ConfirmQuit(ModalScreen[bool]):
    """Quitting in the middle of a match asks first: the seat is kept a while (R19), but the team plays short."""

    BINDINGS = [
        Binding("y", "yes", "quit", id="quit-yes"),
        Binding("n,escape", "no", "stay", id="quit-no"),
    ]

    def __init__(self, private: bool) -> None:
        super().__init__()
        #: A private server (``quatro play``) stops with its player: the match ends there.
        self.private = private

    def compose(self) -> ComposeResult:
        after = (
            "The match ends: the private server stops with you."
            if self.private
            else "Your partner plays on without you; your seat is kept for a while, and [b]quatro join[/b] "
            "brings you back to it."
        )
        with Vertical(classes="dialog"):
            yield Static(
                f"[b]Leave the match?[/b]\n\n{after}\n\n[b]y[/b] quit    [b]n[/b] stay    "
                "([b]ctrl+q[/b] again quits too)"
            )

    def action_yes(self) -> None:
        self.dismiss(True)

    def action_no(self) -> None:
        self.dismiss(False)


#: The smallest terminal the screens are laid out for (columns, rows): the sign grid takes 76 columns, the
#: table with 8 players 24 rows.
MIN_SIZE = (80, 24)


class TooSmall(ModalScreen[None]):
    """Covers everything while the terminal is smaller than ``MIN_SIZE``: a clipped table hides cards and keys
    without a word. Goes by itself once the terminal is large enough."""

    def compose(self) -> ComposeResult:
        yield Static(id="too-small")

    def on_mount(self) -> None:
        self.tell()

    def on_resize(self) -> None:
        self.tell()

    def tell(self) -> None:
        width, height = self.app.size
        need_w, need_h = MIN_SIZE
        self.query_one("#too-small", Static).update(
            Content(
                f"This terminal is {width}x{height}.\nQuatro needs at least {need_w}x{need_h}:\n"
                "make the window larger or the font smaller.\n\nctrl+q quits."
            )
        )


class TableEnded(ModalScreen[None]):
    """The server's operator closed this player's table, or removed the player from the seat: what happened, in the
    operator's words, and the ways on. The player is in the lobby already (it shows beneath)."""

    if TYPE_CHECKING:
        app = getters.app(QuatroApp)  # self.app as this client's app, for the type checker

    BINDINGS = [
        Binding("l,enter,escape", "lobby", "to the lobby", id="ended-lobby"),
        Binding("q", "app.quit_now", "quit", id="ended-quit"),
    ]

    def __init__(self, title: str, detail: str) -> None:
        super().__init__()
        self.title_text, self.detail = title, detail

    def compose(self) -> ComposeResult:
        ascii_only = self.app.game.ascii_only
        with Vertical(classes="dialog wide"):
            yield Static(
                Content.from_markup("[b]$title[/b]", title=words.plain(self.title_text, ascii_only)), id="ended-title"
            )
            yield Static(Content(words.plain(self.detail, ascii_only)), id="ended-detail")
            yield Static(Content.from_markup("\n[b]l[/b] to the lobby    [b]q[/b] quit"), id="ended-choices")

    def action_lobby(self) -> None:
        self.dismiss(None)
