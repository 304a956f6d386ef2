"""The top line of every game screen: round, the phase's time left, the scores, and the link when it is down."""

from __future__ import annotations

from rich.text import Text

from shared.views import Phase

from quatro_tui import words
from quatro_tui.widgets.base import GameWidget
from quatro_tui.widgets.scoreboard import TEAM_STYLES

PHASE_CLOCKS = {
    Phase.SIGNING: "signing",
    Phase.ROUND: "round",
    Phase.BREAK: "break",
}


class StatusBar(GameWidget):
    DEFAULT_CSS = """
    StatusBar { height: 1; background: $panel; }
    """
    TICK = 0.1

    def draw(self) -> Text:
        game = self.game
        view = game.view
        text = Text()
        text.append(" QUATRO ", style="bold reverse")
        if game.link:
            text.append(f" {game.link} ", style="bold reverse")
            return text
        if view is None:
            return text
        text.append(f" round {view.round}")
        label = PHASE_CLOCKS.get(view.phase)
        left = game.left(view.phase_ms)
        if label and left is not None:
            text.append(f"  {label} ")
            text.append(words.seconds(left), style="bold")
        text.append("   ")
        for team, score in enumerate(view.scores):
            mine = team == view.team
            text.append(f"{words.team_letter(team)}{'*' if mine else ''}:{score}", style=f"bold {TEAM_STYLES[team]}")
            text.append(" ")
        text.append(f"(to {view.target_score})", style="dim")
        return text
