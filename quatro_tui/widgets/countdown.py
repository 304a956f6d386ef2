"""A labelled countdown that moves on its own between updates (round, break, vote, sign window, cooldowns)."""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text

from quatro_tui import words
from quatro_tui.game import Game
from quatro_tui.widgets.base import GameWidget


class Countdown(GameWidget):
    """``label`` then the seconds left, read from the game by ``left`` (None hides the time)."""

    DEFAULT_CSS = """
    Countdown { height: 1; width: auto; }
    """
    TICK = 0.1

    def __init__(self, label: str, left: Callable[[Game], float | None], **kwargs) -> None:
        super().__init__(**kwargs)
        self.label = label
        self.left = left

    def draw(self) -> Text:
        seconds = self.left(self.game)
        if seconds is None:
            return Text(f"{self.label} -")
        return Text.assemble(f"{self.label} ", (words.seconds(seconds), "bold"))
