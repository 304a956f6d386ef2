"""The short feed of public events: swaps, channels, votes, redeals, and refusals explained."""

from __future__ import annotations

from rich.text import Text

from quatro_tui import words
from quatro_tui.widgets.base import GameWidget


class Feed(GameWidget):
    """The latest lines of the game's feed, newest at the bottom, as many as fit."""

    def covered(self) -> int:
        """Rows at the bottom of the feed that a panel over the screen hides (the lesson's coach, docked over the
        bottom): the newest line must show above it, not under it."""
        try:
            panels = self.screen.query("Coach")
        except Exception:  # not on a screen yet
            return 0
        bottom = self.content_region.bottom
        tops = [panel.region.y for panel in panels if panel.display and panel.region.height]
        return max([0, *(bottom - top for top in tops if top < bottom)])

    def draw(self) -> Text:
        full = max(1, self.content_size.height)
        hidden = min(self.covered(), full - 1)
        height = full - hidden
        width = max(8, self.content_size.width)
        ascii_only = self.game.ascii_only
        feed = list(self.game.feed)
        urgent = self.app.client_game().urgent
        rows: list[Text] = []
        # Newest first, wrapped at words, until the box is full: a long line is never cut, and the newest line
        # always shows whole at the bottom (older ones give way from the top).
        for age, line in enumerate(reversed(feed)):
            plain = words.plain(line, ascii_only)
            if urgent(plain):
                style = "bold reverse"  # a line the player must not miss (the game says which): unmistakable
            else:
                style = "bold" if age == 0 else ""
            wrapped = list(Text(plain, style=style).wrap(self.app.console, width, overflow="fold"))
            rows[:0] = wrapped
            if len(rows) >= height:
                break
        return Text("\n").join([*rows[-height:], *([Text()] * hidden)])
