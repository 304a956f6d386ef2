"""The reshuffle vote (R15): who asked, who has agreed, the time left, and the one key to answer."""

from __future__ import annotations

from rich.text import Text

from quatro_tui import words
from quatro_tui.games.quatro.widgets.base import QuatroWidget


class VotePrompt(QuatroWidget):
    TICK = 0.1

    def watch_version(self, version: int) -> None:
        view = self.game.view
        voting = view is not None and view.vote is not None
        self.set_class(voting, "-open")
        self.screen.set_class(voting, "-voting")
        super().watch_version(version)

    def draw(self) -> Text:
        game = self.game
        view = game.view
        if view is None or view.vote is None:
            return Text("")
        vote = view.vote
        left = words.seconds(game.left(vote.remaining_ms) or 0)
        text = Text()
        text.append(" RESHUFFLE? ", style="bold reverse")
        text.append(" you ask. " if vote.by == view.seat else f" {game.name(vote.by)} asks. ")
        if view.seat in vote.voters and view.seat not in vote.yes:
            text.append("y", style="bold underline")
            text.append(" yes  ")
            text.append("n", style="bold underline")
            text.append(" no  ")
        elif view.seat in vote.yes:
            text.append("you said yes. ")
        text.append(f"{len(vote.yes)}/{len(vote.voters)} yes, {left} left")
        return text
