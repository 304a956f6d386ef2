"""The guided first match (``quatro learn``): each game's scripted table, whose deal and bots follow the lesson.

A lesson is a normal table of its game on a private server started with ``--lesson``: the server hosts each game's
lesson (``quatro_server.games.lessons``) in place of the game itself (``quatro_server.games.host_instead``), so the rules engine, the
room and the protocol are the ones of every match. Two things differ, both outside the engine:

- the table's random source (``LessonDeck``) deals the lesson's scenes in order, one a round, instead of shuffling
  (R3's fixed order, as a seed gives tests and replays), and draws the lesson's signs and starters;
- its bots are ``lesson`` bots: each plays its part of the scene it recognises from its own cards (H2: from its
  seat's view alone), paced in pulse beats of the table's timing so that a fast profile runs the same lesson faster.

The learner is seat 0 (the table's creator). The client's coach (``quatro_tui.lessons``) says each step and checks
it from what its player really did.
"""

from __future__ import annotations

import random
from collections.abc import MutableSequence, Sequence
from dataclasses import dataclass
from typing import Any

from quatro_shared.games.quatro import actions as a
from quatro_shared.games.quatro import events as e
from quatro_shared.games.quatro.cards import Card, is_four_of_a_kind, rank_counts, rank_of
from quatro_shared.games.quatro.signs import SIGNS, Sign
from quatro_shared.games.quatro.views import Phase, SeatView

from quatro_server.game import LESSON_LEVEL, LESSON_LOOK
from quatro_server.games.quatro.engine import Table
from quatro_server.games.quatro.game import QuatroGame
from quatro_server.journal import Opening
from quatro_server.timing import Timing

#: The learner's seat: the player who created the table.
LEARNER = 0
#: Seconds between a lesson bot's looks at the table: it answers the learner at once (its cues are counted in beats).
LOOK = LESSON_LOOK


# --- Quatro (each other game's lesson is in its own module) -----------------------------------------------------


@dataclass(frozen=True, slots=True)
class Scene:
    """One round of the Quatro lesson: the deal (hands by seat, then the center), and the seat the round is about."""

    name: str
    hands: tuple[tuple[Card, ...], ...]
    center: tuple[Card, ...]
    #: The seat that collects four of a kind and shows a sign (None: the learner does), or shows a decoy.
    actor: int | None

    def deck(self) -> list[Card]:
        """The deck in the order the engine deals it: four cards a seat, then the center (R3)."""
        return [card for hand in self.hands for card in hand] + list(self.center)


#: The Quatro lesson's rounds, in order; a round the learner's team did not win is dealt again. R4 holds for each (no
#: hand holds three of a rank), and no seat is dealt the same hand in two scenes: a bot knows its scene by its hand.
SCENES: tuple[Scene, ...] = (
    # The learner takes the two kings of the center, shows the sign; the partner calls.
    Scene(
        "your four",
        (("KS", "KH", "AS", "JS"), ("AH", "QH", "JH", "10H"), ("AD", "QD", "JD", "10D"), ("AC", "QC", "JC", "10C")),
        ("KD", "KC", "QS", "10S"),
        None,
    ),
    # The partner takes the two queens, shows the team's sign; the learner calls.
    Scene(
        "your partner's four",
        (("AS", "KS", "JS", "10S"), ("AD", "KD", "JD", "10D"), ("QS", "QH", "AH", "KH"), ("AC", "KC", "JC", "10C")),
        ("QD", "QC", "JH", "10H"),
        2,
    ),
    # The opponent on the learner's left takes the two jacks, shows their sign; the learner counters.
    Scene(
        "their four",
        (("AH", "KH", "QS", "10S"), ("JH", "JD", "AS", "KS"), ("AD", "KD", "QD", "10D"), ("AC", "KC", "QC", "10C")),
        ("JS", "JC", "QH", "10H"),
        1,
    ),
    # The opponent on the learner's right shows a decoy, holding nothing; the learner does not counter.
    Scene(
        "a decoy",
        (("AS", "KS", "QS", "JS"), ("AH", "KH", "QH", "JH"), ("AD", "KD", "QD", "JD"), ("QC", "JC", "10C", "10D")),
        ("AC", "KC", "10S", "10H"),
        3,
    ),
)
#: The opponents' sign when the lesson draws it (R7), unless the learner's team took it (R6 allows both; the lesson
#: keeps them apart to be read easily), and the decoy shown in the last scene.
THEIR_SIGNS: tuple[Sign, ...] = ("octopus", "cactus")
DECOY_SIGNS: tuple[Sign, ...] = ("die", "balloon")


def scene_index(scores: Sequence[int]) -> int:
    """The scene of the next round: one further for each point the learner's team won, the last one kept."""
    return min(scores[0], len(SCENES) - 1)


def scene_of(hand: Sequence[Card], seat: int) -> Scene | None:
    """The scene a seat recognises from the hand it was dealt (None: no scene of the lesson deals it)."""
    for scene in SCENES:
        if sorted(scene.hands[seat]) == sorted(hand):
            return scene
    return None


class LessonDeck(random.Random):
    """A table's random source that deals the lesson instead of shuffling. ``table`` is set once the table is built:
    the next scene depends on its scores."""

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        self.table: Table | None = None

    def shuffle(self, x: MutableSequence[Any]) -> None:
        scores = self.table.scores if self.table is not None else (0,)
        deck = SCENES[scene_index(scores)].deck()
        if sorted(deck) != sorted(x):
            super().shuffle(x)  # not the lesson's table size: a plain shuffle
            return
        x[:] = deck

    def choice(self, seq: Any) -> Any:
        """R7's draw of a sign for a team that picked none: the lesson's, unless the learner's team holds it."""
        taken = set(self.table.signs) if self.table is not None else set()
        for sign in THEIR_SIGNS:
            if sign in seq and sign not in taken:
                return sign
        return super().choice(seq)


class QuatroLessonBot:
    """A seat of the Quatro lesson: it plays its part of the scene it was dealt, one beat (the table's pulse interval)
    at a time, and otherwise waits. It never picks the team's sign: the learner does."""

    level = LESSON_LEVEL

    def __init__(self) -> None:
        self._round = -1
        self._scene: Scene | None = None
        self._dealt_at = 0.0
        #: When the learner's sign showed (the partner calls on it): -1 until the next look reads the clock.
        self._pulse_at: float | None = None
        self._called = False
        self._team_sign: Sign | None = None
        #: Every emoji each seat's channel showed, in any round: public (every channel is), so the decoy can keep
        #: clear of the learner's team's sign without knowing it (H2: only what its seat saw).
        self._shown: dict[int, set[Sign]] = {}

    def think_time(self) -> float:
        return LOOK

    def observe(self, events: list[Any]) -> None:
        for event in events:
            if isinstance(event, e.Pulse):
                self._shown.setdefault(event.seat, set()).add(event.sign)
            if (
                isinstance(event, e.Pulse)
                and event.seat == LEARNER
                and self._pulse_at is None
                and self._team_sign is not None
                and event.sign == self._team_sign
            ):
                self._pulse_at = -1.0  # the moment is taken at the next look (``decide`` has the clock)

    def decide(self, view: SeatView, now: float) -> Sequence[Any]:
        if view.phase is not Phase.ROUND or not view.hand:
            return []
        if view.round != self._round:
            self._round, self._scene, self._dealt_at = view.round, scene_of(view.hand, view.seat), now
            self._pulse_at, self._called = None, False
        self._team_sign = view.sign
        scene = self._scene
        if scene is None:
            return []
        beat = max(view.pulse_interval_ms / 1000, LOOK)
        if self._pulse_at == -1.0:
            self._pulse_at = now
        if scene.actor is None:
            # The learner's four: the partner calls a moment after the learner's sign (the convention of R11).
            if view.partner == LEARNER and self._pulse_at is not None and not self._called:
                if now >= self._pulse_at + beat / 2:
                    self._called = True
                    return [a.Call()]
            return []
        if view.seat != scene.actor:
            return []
        if scene is SCENES[-1]:
            # The decoy: the channel, at once an emoji that is not the team's sign, with nothing in hand.
            if not view.channel_held and now >= self._dealt_at + beat and view.channel_wait_ms == 0:
                decoy = decoy_sign(view, self._shown)
                return [a.TakeChannel(), a.ChooseEmoji(decoy)]
            return []
        if is_four_of_a_kind(view.hand):
            if not view.channel_held and view.channel_wait_ms == 0 and view.sign is not None:
                return [a.TakeChannel(), a.ChooseEmoji(view.sign)]
            return []
        swaps = sum(1 for card in view.hand if card not in scene.hands[view.seat])
        if view.swap_wait_ms == 0 and now >= self._dealt_at + beat * (swaps + 1):
            swap = collect(view.hand, view.center)
            return [swap] if swap is not None else []
        return []


def decoy_sign(view: SeatView, shown: dict[int, set[Sign]]) -> Sign:
    """The decoy's emoji: never its own team's sign, nor one the other team's channels ever showed (the learner's own
    sign among them, shown in the first scene): a decoy must not look like the learner's partner signing."""
    theirs = set().union(*(signs for seat, signs in shown.items() if seat not in (view.seat, view.partner)))
    return next(s for s in (*DECOY_SIGNS, *SIGNS) if s != view.sign and s not in theirs)


def collect(hand: Sequence[Card], center: Sequence[Card]) -> a.Swap | None:
    """The swap that takes a card of the hand's most held rank from the center, giving a card of another rank."""
    counts = rank_counts(hand)
    rank = max(counts, key=lambda r: counts[r])
    for slot, card in enumerate(center):
        if rank_of(card) == rank:
            give = next(c for c in hand if rank_of(c) != rank)
            return a.Swap(give=give, slot=slot, take=card)
    return None


class QuatroLesson(QuatroGame):
    """Quatro as the lesson hosts it: four seats, the lesson's deal, ``lesson`` bots."""

    levels = (LESSON_LEVEL,)
    default_level = LESSON_LEVEL

    def new_table(self, opening: Opening, timing: Timing, rng: random.Random) -> Table:
        deck = LessonDeck()
        table = self.journal.new_table(opening, timing, deck)
        deck.table = table
        return table

    def make_bot(self, level: str, rng: random.Random) -> Any:
        if level != LESSON_LEVEL:
            raise ValueError(f"the lesson's bots are {LESSON_LEVEL!r}")
        return QuatroLessonBot()
