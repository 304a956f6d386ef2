"""The scores, team by team, with the target; one's own team marked by a star as well as by its letter."""

from __future__ import annotations

from rich.text import Text

from quatro_tui import words
from quatro_tui.widgets.base import GameWidget

#: Team colours (a hint only: every team also carries its letter).
TEAM_STYLES = ("cyan", "magenta", "yellow", "green")


class Scoreboard(GameWidget):
    def draw(self) -> Text:
        view = self.game.view
        if view is None:
            return Text("")
        text = Text()
        for team, score in enumerate(view.scores):
            mine = team == view.team  # starred as well as coloured: one's own team
            text.append(f"{words.team_letter(team)}{'*' if mine else ''}:{score}", style=f"bold {TEAM_STYLES[team]}")
            text.append(" ")
        if self.app.TELLS_TARGET:
            text.append(f"(to {view.target_score})", style="dim")
        return text
