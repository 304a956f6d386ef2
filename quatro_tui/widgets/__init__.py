"""The small widgets every game's screens are built from: the status line, countdowns, scores, the feed. A game's
own widgets are in its folder (Quatro's cards, seats, channel and vote: ``quatro_tui.games.quatro.widgets``)."""

from quatro_tui.widgets.countdown import Countdown
from quatro_tui.widgets.feed import Feed
from quatro_tui.widgets.scoreboard import Scoreboard
from quatro_tui.widgets.status import StatusBar

__all__ = ["Countdown", "Feed", "Scoreboard", "StatusBar"]
