"""Quatro's own widgets: a row of cards, a seat's box, one's own channel and hand, the sign grid, the vote."""

from quatro_tui.games.quatro.widgets.cards import CardRow
from quatro_tui.games.quatro.widgets.seat import SeatBox
from quatro_tui.games.quatro.widgets.self_panel import SelfPanel
from quatro_tui.games.quatro.widgets.vote import VotePrompt

__all__ = ["CardRow", "SeatBox", "SelfPanel", "VotePrompt"]
