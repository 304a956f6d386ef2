"""The games a network bot (``quatro_server.bots.netbot``) plays, by name, and what it needs of each (``BotGame``): its
bots, and how a bot reads the views and events the protocol brings it.

A network bot is decision code: it sees what the protocol carries, never a table (H2), so it does not reach the
server's registry of games (``quatro_server.games``, which holds the engines). Each game's part lives beside its
bots (``quatro_server.games.quatro.bots.BOT_GAME``, ``quatro_server.games.quarto.bots.BOT_GAME``) and is loaded when a bot of that game
is made: Quarto's search and its tables load with a Quarto bot, not with every server's command line. A game is one
entry of ``BOT_GAMES``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from quatro_server.rules import SeatBot


class BotGame(Protocol):
    """What a network bot needs of its game, beyond the contract (``quatro_shared.game.GameContract``)."""

    @property
    def outside_bots(self) -> bool:
        """Whether a bot of this game may be a class of your own (``--level module:Class``)."""

    def make_bot(self, level: str, rng: random.Random | None) -> SeatBot:
        """A bot of ``level``; raises ``ValueError`` for a level the game does not have."""

    def slow(self, bot: SeatBot, view: Any) -> bool:
        """Whether ``bot``'s decision on ``view`` may take long (a search): it is made in a worker thread, so that
        the connection goes on reading and answering heartbeats meanwhile."""

    def aged(self, view: Any, seconds: float) -> Any:
        """The view as it stands ``seconds`` after it arrived: the server sends durations, never clock times, and
        no update while nothing the seat may see happens, so the bot runs the countdowns down itself."""

    def over(self, view: Any) -> bool:
        """Whether the match the view shows is over."""

    def ended(self, events: Sequence[Any]) -> int:
        """How many of the game's rounds (a Quatro round, a Quarto game) end among ``events``: ``--rounds`` counts
        them."""


def _quatro() -> BotGame:
    from quatro_server.games.quatro.bots import BOT_GAME

    return BOT_GAME


def _quarto() -> BotGame:
    from quatro_server.games.quarto.bots import BOT_GAME

    return BOT_GAME


#: Every game a network bot plays, by its name on the wire (``quatro_shared.games.CONTRACTS``): the part is loaded
#: on first use.
BOT_GAMES: dict[str, Callable[[], BotGame]] = {"quatro": _quatro, "quarto": _quarto}


def bot_game(name: str) -> BotGame:
    """The network bot's part of game ``name``; ``KeyError`` for a game no bot plays."""
    return BOT_GAMES[name]()
