"""What every game widget shares: a redraw only when what it shows has changed, and the app's table
(``quatro_tui.table``).

A widget draws itself (``draw``) when the game changes (the screen bumps ``version``) and, for widgets whose
content moves with time (countdowns, pulses), every ``TICK`` seconds. The drawing is compared with the last
one and the terminal is only touched when they differ: repainting unchanged widgets is what costs most in
a terminal app, and a round sends several updates a second.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

if TYPE_CHECKING:
    from textual import getters

    from quatro_tui.app import QuatroApp
    from quatro_tui.table import AnyTable


class DrawnWidget(Widget):
    """A widget that draws itself into a ``Text`` and touches the screen only when the drawing changed.
    Subclasses implement ``draw``."""

    #: Seconds between redraws of a widget whose content moves with time (countdowns, pulses); 0: none.
    TICK = 0.0

    _drawn: Text | None = None

    def draw(self) -> Text:
        raise NotImplementedError

    def render(self) -> Text:
        if self._drawn is None:
            self._drawn = self.draw()
        return self._drawn

    def redraw(self) -> None:
        """Draw again; refresh the screen only if the drawing changed."""
        drawn = self.draw()
        if drawn != self._drawn:
            self._drawn = drawn
            self.refresh()

    def on_mount(self) -> None:
        if self.TICK:
            self.set_interval(self.TICK, self.redraw)

    def on_resize(self) -> None:
        self.redraw()


class GameWidget(DrawnWidget):
    """A widget drawn from the client's table (a game's own widgets read it as their game's: Quatro's
    ``QuatroWidget``). Subclasses implement ``draw``."""

    if TYPE_CHECKING:
        app = getters.app(QuatroApp)  # self.app as this client's app, for the type checker

    #: No repaint of its own: ``redraw`` decides whether anything on screen changed.
    version: reactive[int] = reactive(0, always_update=True, repaint=False)

    @property
    def game(self) -> AnyTable:
        return self.app.game

    def watch_version(self, version: int) -> None:
        self.redraw()
