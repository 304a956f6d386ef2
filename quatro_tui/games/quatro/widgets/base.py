"""What Quatro's widgets share: the app's table read as Quatro's (``QuatroTable``: the events, the pulses, the
signs)."""

from __future__ import annotations

from quatro_tui.games.quatro.table import QuatroTable, quatro_table
from quatro_tui.widgets.base import GameWidget


class QuatroWidget(GameWidget):
    """A widget drawn from a Quatro table. Subclasses implement ``draw``."""

    @property
    def game(self) -> QuatroTable:
        return quatro_table(self.app.game)
