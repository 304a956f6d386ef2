"""A labelled countdown that moves on its own between updates: the phase's clock, as the table's game reads it from
its view (Quatro's sign window, round and break). While the link is down it stands still, marked as stopped."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.text import Text

from quatro_tui import words
from quatro_tui.table import AnyTable
from quatro_tui.widgets.base import GameWidget


class Countdown(GameWidget):
    """A label then the seconds left, as ``left`` reads them from the game (None shows nothing). Without a ``left``,
    the table's game's phase clock (``ClientGame.phase_clock``)."""

    TICK = 0.1

    def __init__(self, left: Callable[[AnyTable], tuple[str, float] | None] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.left = left

    def draw(self) -> Text:
        found = self.left(self.game) if self.left is not None else self.app.client_game().phase_clock(self.game)
        if found is None:
            return Text("")
        label, seconds = found
        if self.game.stopped:
            # The link is down: the count stands still, and says so, until the table is heard from again.
            return Text.assemble(f"{label} ", (words.seconds(seconds), "bold"), (" stopped", "bold reverse"))
        return Text.assemble(f"{label} ", (words.seconds(seconds), "bold"))
