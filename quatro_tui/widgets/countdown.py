"""A labelled countdown that moves on its own between updates: the sign window, the round, the break. While the link
is down it stands still, marked as stopped."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.text import Text

from quatro_shared.games.quatro.views import Phase

from quatro_tui import words
from quatro_tui.game import Game
from quatro_tui.widgets.base import GameWidget

#: What the phase's clock counts down to, by phase.
PHASE_LABELS = {
    Phase.SIGNING: "opens in",
    Phase.ROUND: "round",
    Phase.BREAK: "next in",
}


def phase_left(game: Game) -> tuple[str, float] | None:
    """The current phase's label and seconds left, counted down locally from the last view (R7, R18)."""
    view = game.view
    if view is None or view.phase not in PHASE_LABELS or view.phase_ms is None:
        return None
    return PHASE_LABELS[view.phase], game.left(view.phase_ms) or 0.0


class Countdown(GameWidget):
    """A label then the seconds left, as ``left`` reads them from the game (None shows nothing)."""

    TICK = 0.1

    def __init__(self, left: Callable[[Game], tuple[str, float] | None] = phase_left, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.left = left

    def draw(self) -> Text:
        found = self.left(self.game)
        if found is None:
            return Text("")
        label, seconds = found
        if self.game.stopped:
            # The link is down: the count stands still, and says so, until the table is heard from again.
            return Text.assemble(f"{label} ", (words.seconds(seconds), "bold"), (" stopped", "bold reverse"))
        return Text.assemble(f"{label} ", (words.seconds(seconds), "bold"))
