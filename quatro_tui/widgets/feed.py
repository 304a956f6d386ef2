"""The short feed of public events: swaps, channels, votes, redeals, and refusals explained."""

from __future__ import annotations

from rich.text import Text

from quatro_tui import words
from quatro_tui.widgets.base import GameWidget


class Feed(GameWidget):
    """The latest lines of the game's feed, newest at the bottom, as many as fit."""

    def draw(self) -> Text:
        height = max(1, self.content_size.height)
        width = max(8, self.content_size.width)
        ascii_only = self.game.ascii_only
        feed = list(self.game.feed)
        rows: list[Text] = []
        # Newest first, wrapped at words, until the box is full: a long line is never cut, and the newest line
        # always shows whole at the bottom (older ones give way from the top).
        for age, line in enumerate(reversed(feed)):
            plain = words.plain(line, ascii_only)
            if words.YOUR_SIGN in plain:
                style = "bold reverse"  # the partner showed the team's sign: unmistakable
            else:
                style = "bold" if age == 0 else ""
            wrapped = list(Text(plain, style=style).wrap(self.app.console, width, overflow="fold"))
            rows[:0] = wrapped
            if len(rows) >= height:
                break
        return Text("\n").join(rows[-height:])
