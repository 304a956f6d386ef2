"""What every game widget shares: the app's ``Game`` and a ``version`` that makes it redraw on change."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.reactive import reactive
from textual.widget import Widget

if TYPE_CHECKING:
    from quatro_tui.game import Game


class GameWidget(Widget):
    """A widget drawn from the client's ``Game``. The screen bumps ``version`` when the game changes."""

    version: reactive[int] = reactive(0, always_update=True)
    #: Seconds between redraws of a widget whose content moves with time (countdowns, pulses); 0: none.
    TICK = 0.0

    @property
    def game(self) -> Game:
        return self.app.game  # type: ignore[attr-defined]

    def on_mount(self) -> None:
        if self.TICK:
            self.auto_refresh = self.TICK

    def watch_version(self, version: int) -> None:
        self.refresh(layout=False)
