"""A bot's answer to what one look shows: it sees it at that look and acts one reaction time later (``Bot.react_ready``)."""

from __future__ import annotations

from typing import Any

from quatro_server.games.quatro.bots import Bot

#: Seconds of looks ``answer`` waits for an answer: more than any level's reaction time.
PATIENCE = 2.0


def answer(bot: Bot, view: Any, now: float) -> list[Any]:
    """What ``bot`` does about ``view``: the actions of the first of its looks from ``now`` on (each when it asked for
    it, on the same view) that does something, within ``PATIENCE`` seconds; none if none does."""
    start = now
    while True:
        actions = bot.decide(view, now)
        if actions or now - start > PATIENCE:
            return actions
        now += bot.think_time()
