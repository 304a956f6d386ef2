"""Bots that fill seats: they decide from a seat's view alone, exactly what a player there would see (H2).

A bot is ``decide(view, now) -> list[Action]``; it never sees a ``Table``. The types make that structural:
``decide`` takes a ``shared.views.SeatView`` (the same data a network client receives), and nothing in this
module imports the rules engine. Bots react with a human-like delay (``think_time``) so they never win by
reflexes a person cannot match.

Levels:
- ``random``: legal actions at random (the baseline).
- ``normal``: collects toward the rank it holds most; holding four of a kind it takes its channel and
  shows the team's sign; when its partner's channel pulses the team's sign, it calls; it never calls
  on its own four of a kind.
"""

from __future__ import annotations

import random
from collections import Counter as Tally

from shared import actions as a
from shared.cards import is_four_of_a_kind, rank_of
from shared.events import Event
from shared.signs import SIGNS
from shared.views import Phase, SeatView

LEVELS: tuple[str, ...] = ("random", "normal")
DEFAULT_LEVEL = "normal"

#: Seconds between a bot's looks at the table: a person's reaction time, with jitter (low, high).
THINK_TIME: dict[str, tuple[float, float]] = {"random": (0.4, 1.2), "normal": (0.35, 0.8)}


class Bot:
    """A seat's bot. Subclasses choose actions; the base class paces them."""

    level = "random"

    def __init__(self, rng: random.Random | None = None) -> None:
        self.rng = rng if rng is not None else random.Random()

    def think_time(self) -> float:
        low, high = THINK_TIME[self.level]
        return self.rng.uniform(low, high)

    def observe(self, events: list[Event]) -> None:
        """The events this seat was shown (H1), in order, before its next decision. Levels that read the table use them."""

    def decide(self, view: SeatView, now: float) -> list[a.Action]:
        if view.phase is Phase.SIGNING:
            return self.sign(view)
        if view.phase is Phase.ROUND:
            return self.play(view)
        return []

    def sign(self, view: SeatView) -> list[a.Action]:
        if view.sign is None:
            return [a.PickSign(self.rng.choice(SIGNS))]
        return []

    def play(self, view: SeatView) -> list[a.Action]:
        raise NotImplementedError


class RandomBot(Bot):
    """Legal actions at random: the baseline every other level must beat."""

    level = "random"

    def play(self, view: SeatView) -> list[a.Action]:
        roll = self.rng.random()
        if roll < 0.75 and view.swap_wait_ms == 0 and view.hand and view.center:
            slot = self.rng.randrange(len(view.center))
            return [a.Swap(self.rng.choice(view.hand), slot, view.center[slot])]
        if roll < 0.85 and view.channel_wait_ms == 0:
            if view.channel_held:
                return [a.ReleaseChannel()]
            return [a.TakeChannel(), a.ChooseEmoji(self.rng.choice(SIGNS))]
        if roll < 0.86:
            return [a.Call()]
        if roll < 0.87:
            others = [t for t in range(view.players // 2) if t != view.team]
            return [a.Counter(self.rng.choice(others))]
        return []


class NormalBot(Bot):
    """Collects its most frequent rank, signals four of a kind with the true sign, calls on the partner's sign."""

    level = "normal"

    def play(self, view: SeatView) -> list[a.Action]:
        partner = view.seats[view.partner]
        if (
            view.sign is not None
            and partner.last_pulse == view.sign
            and partner.channel_held
            and partner.last_pulse_ms is not None
        ):
            return [a.Call()]  # the partner shows our sign: they hold four of a kind (never our own hand, R13)
        if is_four_of_a_kind(view.hand):
            return self._signal(view)
        if view.channel_held and view.channel_wait_ms == 0:
            return [a.ReleaseChannel()]
        return self._collect(view)

    def _signal(self, view: SeatView) -> list[a.Action]:
        if not view.channel_held:
            return [a.TakeChannel(), a.ChooseEmoji(view.sign)] if view.channel_wait_ms == 0 else []
        if view.channel_sign != view.sign:
            return [a.ChooseEmoji(view.sign)]
        return []

    def _collect(self, view: SeatView) -> list[a.Action]:
        if view.swap_wait_ms > 0 or not view.hand:
            return []
        counts = Tally(rank_of(card) for card in view.hand)
        # The target: the rank held most, preferring one the center can feed.
        center_counts = Tally(rank_of(card) for card in view.center)
        target = max(counts, key=lambda rank: (counts[rank], center_counts[rank], self.rng.random()))
        for slot, card in enumerate(view.center):
            if rank_of(card) == target:
                give = min(
                    (c for c in view.hand if rank_of(c) != target),
                    key=lambda c: (counts[rank_of(c)], self.rng.random()),
                )
                return [a.Swap(give, slot, card)]
        return []


_CLASSES: dict[str, type[Bot]] = {"random": RandomBot, "normal": NormalBot}


def make_bot(level: str = DEFAULT_LEVEL, rng: random.Random | None = None) -> Bot:
    """A bot of ``level``; raises ``ValueError`` for an unknown level."""
    try:
        return _CLASSES[level](rng)
    except KeyError:
        raise ValueError(f"unknown bot level {level!r} (levels: {', '.join(LEVELS)})") from None
