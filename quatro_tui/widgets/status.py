"""The top line of every game screen: the game and how far it is (Quatro's round), the link when it is down, the
phase's clock, the scores."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal

from quatro_shared.games import CONTRACTS, DEFAULT

from quatro_tui import words
from quatro_tui.widgets.base import GameWidget
from quatro_tui.widgets.countdown import Countdown
from quatro_tui.widgets.scoreboard import Scoreboard


class RoundLabel(GameWidget):
    """The game's name and the round; while the link is down, what the client is doing about it."""

    def draw(self) -> Text:
        game = self.game
        text = Text()
        contract = CONTRACTS.get(game.kind, DEFAULT)
        text.append(f" {contract.title.upper()} ", style="bold reverse")
        if game.link:
            text.append(
                f" {self._fitted(words.plain(game.link, game.ascii_only), text.cell_len)} ", style="bold reverse"
            )
        elif game.view is not None:
            progress = self.app.client_game().progress(game)
            if progress:
                text.append(f" {progress} ")
        return text

    def _fitted(self, link: str, used: int) -> str:
        """The link's words, shortened with an ellipsis to the room the bar leaves beside the clock and the
        scores: at 80 columns a long one pushed the scores off the line ("A:0 B:0 (to")."""
        bar = self.parent
        if not isinstance(bar, StatusBar) or bar.size.width == 0:
            return link
        others = sum(w.outer_size.width + w.styles.margin.width for w in bar.children if isinstance(w, Countdown))
        others += sum(w.draw().cell_len for w in bar.children if isinstance(w, Scoreboard))
        room = max(8, bar.size.width - others - used - 3)
        if len(link) <= room:
            return link
        return link[: room - 1].rstrip() + ("..." if self.game.ascii_only else "…")

    def redraw(self) -> None:
        # The width follows the text (the link message is long): lay out again when it changes.
        old = self._drawn
        super().redraw()
        if old is not None and self._drawn is not None and old.cell_len != self._drawn.cell_len:
            self.refresh(layout=True)


class StatusBar(Horizontal):
    def compose(self) -> ComposeResult:
        yield RoundLabel()
        yield Countdown()
        yield Scoreboard()
