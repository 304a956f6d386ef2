"""The bot levels: the one list the server (bots, lobby, simulator, network bots) and the client (``quatro play``) share.

The ladder goes from a level for learning the game to the strongest the project can make; ``random`` plays
legal moves at random and exists for tests and simulations (a baseline), not as an opponent. What each level
does, and how fast it reacts, is in ``docs/bots.md``.
"""

from __future__ import annotations

#: The ladder, weakest first: ``easy`` and ``normal`` are for learning, ``hard`` is a good player,
#: ``expert`` the strongest bot there is.
LADDER: tuple[str, ...] = ("easy", "normal", "hard", "expert")
#: Every level a server accepts: the ladder and the random baseline.
LEVELS: tuple[str, ...] = ("random", *LADDER)
#: The level of a bot added with no level named (``add_bot``, ``quatro-server bot``).
DEFAULT_LEVEL = "normal"
#: The level ``quatro play`` seats by default: a new player's pace, and nothing a beginner does by mistake is
#: punished (``docs/bots.md`` says why).
PLAY_LEVEL = "easy"
#: The longest level name on the wire (``add_bot``'s ``level`` is a string of 1-16 characters).
MAX_LEVEL_LEN = 16
