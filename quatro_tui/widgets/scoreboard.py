"""The scores, as the table's game tells them (``ClientGame.scores``): Quatro's team by team with the target."""

from __future__ import annotations

from rich.text import Text

from quatro_tui.widgets.base import GameWidget

#: Team colours (a hint only: every team also carries its letter, ``quatro_tui.words.team_letter``).
TEAM_STYLES = ("cyan", "magenta", "yellow", "green")


class Scoreboard(GameWidget):
    def draw(self) -> Text:
        return self.app.client_game().scores(self.game, self.app.TELLS_TARGET)
