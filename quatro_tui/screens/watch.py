"""Watching a table from no seat (protocol section 18): what every game's watch screen shares, and the ways out.

A watcher has no hand, no team and no channel. ``WATCHING`` stays on screen with the count of watchers
(``WatchBanner``); ``j`` takes a free seat while the table waits for its match; ``escape`` or ``q`` goes back to the
lobby: the keys are the same on every game's watch screen (``WATCH_BINDINGS``). Before the first view, the seats as
they fill (``WaitingToWatch``). Each game's watch screen is in its folder (Quatro's:
``quatro_tui.games.quatro.screens.watch``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer

from quatro_shared.tables import TablePhase

from quatro_tui import words
from quatro_tui.widgets import Feed
from quatro_tui.widgets.base import GameWidget

if TYPE_CHECKING:
    from textual import getters

    from quatro_tui.app import QuatroApp
    from quatro_tui.table import AnyTable

#: The keys of every watch screen.
WATCH_BINDINGS: list[Binding | tuple[str, str] | tuple[str, str, str]] = [
    Binding(
        "j",
        "app.take_seat",
        "take a free seat",
        tooltip="join the table in a free seat (before its match)",
        id="watch-join",
    ),
    Binding("escape,q", "app.stop_watching", "back to the lobby", tooltip="stop watching", id="watch-leave"),
]


def watching_line(game: AnyTable, ascii_only: bool) -> Text:
    """`` WATCHING `` table N, how many watch, and what ``j`` can do now."""
    seating = game.seating
    text = Text()
    text.append(" WATCHING ", style="bold reverse")
    text.append(f" table {game.watching}")
    if seating is not None:
        count = seating.watchers
        text.append(f" - {count} watching" if ascii_only else f" · {count} watching")
        free = sum(not s.taken for s in seating.seats)
        if seating.phase is TablePhase.LOBBY and free:
            text.append("   j takes a free seat", style="bold")
        elif seating.phase is TablePhase.LOBBY:
            text.append("   every seat is taken", style="dim")
    text.append("   q back to the lobby", style="dim")
    return text


class WatchBanner(GameWidget):
    """What is being watched, how many watch, and, once the match is over, who won (as the table's game says it,
    ``ClientGame.watch_outcome``): always two lines."""

    def draw(self) -> Text:
        game = self.game
        text = watching_line(game, game.ascii_only)
        text.append("\n")
        outcome = self.app.client_game().watch_outcome(game)
        if outcome is not None:
            text.append(outcome)
        elif game.view is None:
            text.append("The match has not started: the table waits for its players.", style="dim")
        return text


class WatchedSeats(GameWidget):
    """Who sits at the watched table, seat by seat (before its match: what a watcher may join)."""

    def draw(self) -> Text:
        game = self.game
        seating = game.seating
        text = Text()
        if seating is None:
            return text
        for s in seating.seats:
            text.append(f"  seat {s.seat + 1}  ")
            if not s.taken:
                text.append("free", style="bold")
            else:
                text.append(words.plain(s.name or "", game.ascii_only))
                if s.bot:
                    text.append(f"  ({s.bot} bot)", style="dim")
                elif not s.connected:
                    text.append("  (away)", style="dim")
            text.append("\n")
        return text


class WaitingToWatch(Screen[None]):
    """A watched table before its first view: its seats as they fill; the match shows when it starts."""

    if TYPE_CHECKING:
        app = getters.app(QuatroApp)  # self.app as this client's app, for the type checker

    BINDINGS = list(WATCH_BINDINGS)

    def compose(self) -> ComposeResult:
        yield WatchBanner(classes="pad", id="watch-banner")
        yield WatchedSeats(classes="pad")
        yield Feed(classes="pad")
        yield Footer()

    def on_screen_resume(self) -> None:
        self.app.game_changed()
