"""The short feed of public events: swaps, channels, votes, redeals, and refusals explained."""

from __future__ import annotations

from rich.text import Text

from quatro_tui import words
from quatro_tui.widgets.base import GameWidget


class Feed(GameWidget):
    """The latest lines of the game's feed, newest at the bottom, as many as fit."""

    DEFAULT_CSS = """
    Feed { height: 1fr; }
    """

    def draw(self) -> Text:
        height = max(1, self.size.height)
        lines = [words.plain(line, self.game.ascii_only) for line in list(self.game.feed)[-height:]]
        # One event a line, cut rather than wrapped: wrapping would push the newest line off the bottom.
        text = Text(no_wrap=True, overflow="ellipsis")
        for i, line in enumerate(lines):
            newest = i == len(lines) - 1
            if words.YOUR_SIGN in line:
                text.append(line, style="bold reverse")  # the partner showed the team's sign: unmistakable
            else:
                text.append(line, style="bold" if newest else "")
            if not newest:
                text.append("\n")
        return text
