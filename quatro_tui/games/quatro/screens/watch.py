"""A Quatro table watched from no seat (protocol section 18): the center, every seat's channel and pulses, the
scores and, after each round, the reveal. The keys and the banner are every game's (``quatro_tui.screens.watch``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer

from quatro_shared.games.quatro.views import Phase

from quatro_tui.games.quatro import words as quatro_words
from quatro_tui.games.quatro.screens.reveal import Reveal
from quatro_tui.games.quatro.widgets import CardRow, SeatBox
from quatro_tui.screens.watch import WATCH_BINDINGS, WatchBanner
from quatro_tui.widgets import Feed, StatusBar

if TYPE_CHECKING:
    from textual import getters

    from quatro_tui.app import QuatroApp
    from quatro_tui.games.quatro.table import QuatroTable


def match_over(game: QuatroTable) -> Text | None:
    """`` MATCH OVER `` and the winning teams, once the match is over (the watch banner's second line)."""
    view = game.view
    if view is None or view.phase is not Phase.OVER or not view.winners:
        return None
    text = Text()
    text.append(" MATCH OVER ", style="bold reverse")
    text.append(
        f"  {quatro_words.teams_text(view.winners)} {'wins' if len(view.winners) == 1 else 'win'}!", style="bold"
    )
    return text


class WatchReveal(Reveal):
    """The last round's reveal, once there is one (during a round, the table is what there is to see)."""

    def draw(self) -> Text:
        view = self.game.view
        if view is None or view.summary is None or view.phase in (Phase.SIGNING, Phase.ROUND):
            return Text("")
        return super().draw()


class WatchScreen(Screen[None]):
    """A Quatro table from no seat: every seat's box around the center, the scores, the reveal after each round."""

    if TYPE_CHECKING:
        app = getters.app(QuatroApp)  # self.app as this client's app, for the type checker

    BINDINGS = list(WATCH_BINDINGS)

    def compose(self) -> ComposeResult:
        game = self.app.game
        yield StatusBar()
        yield WatchBanner(classes="pad", id="watch-banner")
        with VerticalScroll(id="watch-body"):
            with Vertical(id="watch-table"):
                with Horizontal(id="watch-seats"):
                    for seat in range(game.players):
                        yield SeatBox(seat)
                yield CardRow("center", " " * 4, id="center")
            yield WatchReveal(classes="pad")
            yield Feed(classes="pad")
        yield Footer()

    def on_screen_resume(self) -> None:
        self.app.game_changed()

    def check_action(self, action: str, parameters: tuple[Any, ...]) -> bool | None:
        return True
