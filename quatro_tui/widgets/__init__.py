"""The small widgets the screens are built from: cards, seats, channel, countdowns, scores, feed, vote."""

from quatro_tui.widgets.cards import CardRow
from quatro_tui.widgets.countdown import Countdown
from quatro_tui.widgets.feed import Feed
from quatro_tui.widgets.scoreboard import Scoreboard
from quatro_tui.widgets.seat import SeatBox
from quatro_tui.widgets.self_panel import SelfPanel
from quatro_tui.widgets.status import StatusBar
from quatro_tui.widgets.vote import VotePrompt

__all__ = ["CardRow", "Countdown", "Feed", "Scoreboard", "SeatBox", "SelfPanel", "StatusBar", "VotePrompt"]
