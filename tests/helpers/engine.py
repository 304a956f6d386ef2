"""Helpers for the rule-by-rule tests: build a table, arrange its cards, read what each seat was told.

Tests set a table's cards directly (to give a partner four of a kind, say) only through ``arrange``,
which keeps every card of the deck in play exactly once, as a real deal would.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterable, Mapping, Sequence

from quatro_shared.games.quatro import actions as a
from quatro_shared.games.quatro import events as e
from quatro_shared.games.quatro.actions import Reason
from quatro_shared.games.quatro.cards import (
    CENTER_SIZE,
    HAND_SIZE,
    RANKS,
    SUITS,
    Card,
    is_card,
    is_four_of_a_kind,
    rank_of,
    suit_of,
)
from quatro_shared.games.quatro.signs import SIGNS, is_sign
from quatro_shared.games.quatro.views import Phase
from quatro_shared.tables import Connect, Disconnect

from quatro_server.games.quatro.engine import Emit, Outcome, Table, events_for
from quatro_server.timing import FAST, Timing

PLAYER_COUNTS = (4, 6, 8)


# --- building a table ------------------------------------------------------------------------------


def new_table(
    players: int,
    *,
    timing: Timing = FAST,
    seed: int = 0,
    rng: random.Random | None = None,
    bots: Iterable[int] = (),
    host: int | None = 0,
    seat_order: list[int] | None = None,
) -> Table:
    """A table in the lobby, with a seeded random source (never the OS's in tests)."""
    return Table(
        players,
        timing=timing,
        rng=rng if rng is not None else random.Random(seed),
        bots=frozenset(bots),
        host=host,
        seat_order=seat_order,
    )


def open_round(table: Table, now: float = 0.0, signs: Mapping[int, str] | None = None) -> list[Emit]:
    """Start the match if needed, let teams pick ``signs`` ({team: sign}), and have every connected human
    declare ready, all at ``now``, so the round opens at ``now``. Returns every event on the way."""
    out: list[Emit] = []
    if table.phase is Phase.LOBBY:
        out += table.start(now)
    assert table.phase is Phase.SIGNING, table.phase
    for team, sign in (signs or {}).items():
        out += accept(table.act(table.team_seats(team)[0], a.PickSign(sign), now))
    for seat in range(table.players):
        if table.phase is Phase.SIGNING and table.is_connected(seat) and not table.is_bot(seat):
            out += accept(table.act(seat, a.Ready(), now))
    assert table.phase is Phase.ROUND, table.phase
    return out


def round_table(players: int, now: float = 0.0, **kwargs) -> Table:
    """A table whose first round has just opened at ``now``, every team with its own distinct sign."""
    table = new_table(players, **kwargs)
    open_round(table, now, signs={team: SIGNS[team] for team in range(table.teams)})
    return table


# --- arranging cards -------------------------------------------------------------------------------


def four_of(rank: str) -> list[Card]:
    """The four cards of ``rank``: a four of a kind."""
    return [rank + suit for suit in SUITS]


def arrange(
    table: Table, hands: Mapping[int, Sequence[Card]] | None = None, center: Sequence[Card] | None = None
) -> None:
    """Give the seats in ``hands`` exactly those cards (and the center ``center``, if given).

    Every other hand, and the center if not given, is filled from the remaining cards, taken suit by
    suit so that neighbouring cards differ in rank; no filled hand may end up with four of a kind, so
    the only fours on the table are the ones a test asks for. The cards stay a permutation of the deck.
    """
    hands = {seat: list(cards) for seat, cards in (hands or {}).items()}
    for seat, cards in hands.items():
        assert 0 <= seat < table.players and len(cards) == HAND_SIZE, (seat, cards)
    if center is not None:
        assert len(center) == CENTER_SIZE, center
    chosen = [card for cards in hands.values() for card in cards] + list(center or [])
    assert len(chosen) == len(set(chosen)), f"a card is placed twice: {chosen}"
    assert set(chosen) <= set(table.deck), f"cards not in this table's deck: {set(chosen) - set(table.deck)}"
    rest = sorted(
        set(table.deck) - set(chosen), key=lambda card: (SUITS.index(suit_of(card)), RANKS.index(rank_of(card)))
    )
    for seat in range(table.players):
        if seat not in hands:
            hands[seat], rest = rest[:HAND_SIZE], rest[HAND_SIZE:]
            assert not is_four_of_a_kind(hands[seat]), "filler made a four of a kind; choose other cards"
    if center is None:
        center, rest = rest[:CENTER_SIZE], rest[CENTER_SIZE:]
    assert not rest
    for seat in range(table.players):
        table._seats[seat].hand = list(hands[seat])
    table.center = list(center)
    assert_cards_conserved(table)


def assert_cards_conserved(table: Table) -> None:
    """Every card of the deck is in exactly one hand or center slot (R2, R3: no pile, no discard)."""
    in_play = [card for seat in range(table.players) for card in table.hand(seat)] + list(table.center)
    assert sorted(in_play) == sorted(table.deck)
    assert all(len(table.hand(seat)) == HAND_SIZE for seat in range(table.players))
    assert len(table.center) == CENTER_SIZE


class RiggedRandom(random.Random):
    """A seeded random source whose next ``bad_shuffles`` shuffles leave the first hand with three of a rank
    (AS AH AD, then a king), and whose ``choice`` can be rigged to return the first option.
    Afterwards it shuffles like ``random.Random(seed)``."""

    def __init__(self, seed: int = 0, bad_shuffles: int = 0, first_choice: bool = False) -> None:
        super().__init__(seed)
        self.bad_shuffles = bad_shuffles
        self.first_choice = first_choice
        self.shuffles = 0

    def shuffle(self, x) -> None:  # type: ignore[override]
        self.shuffles += 1
        if self.bad_shuffles > 0:
            self.bad_shuffles -= 1
            x.sort(key=lambda card: (RANKS.index(rank_of(card)), SUITS.index(suit_of(card))))
            x[3], x[4] = x[4], x[3]  # AS AH AD KS | AC KH KD KC | ...: three aces, three kings
            return
        super().shuffle(x)

    def choice(self, seq):
        if self.first_choice:
            return seq[0]
        return super().choice(seq)


# --- acting and reading what came out --------------------------------------------------------------


def accept(outcome: Outcome) -> list[Emit]:
    """The events of an action that must succeed."""
    assert outcome.ok, f"refused: {outcome.refusal}"
    return outcome.events


def refused(outcome: Outcome, reason: Reason) -> Outcome:
    """Assert the action was refused for ``reason``."""
    assert outcome.refusal is not None, "the action was accepted"
    assert outcome.refusal.reason == reason, outcome.refusal
    return outcome


def events_of(emits: Iterable[Emit], kind: type[e.Event]) -> list:
    return [emit.event for emit in emits if isinstance(emit.event, kind)]


def seen_by(table: Table, emits: Iterable[Emit], seat: int) -> list[e.Event]:
    return events_for(list(emits), seat, table.players)


def until_reveal(events: Iterable[e.Event]) -> list[e.Event]:
    """The events before the first ``RoundEnded`` (the reveal, R17)."""
    before = []
    for event in events:
        if isinstance(event, e.RoundEnded):
            break
        before.append(event)
    return before


def swap_any(table: Table, seat: int, now: float, slot: int = 0) -> Outcome:
    """``seat`` swaps its first card with the card in ``slot``."""
    return table.act(seat, a.Swap(table.hand(seat)[0], slot, table.center[slot]), now)


# --- looking inside anything that leaves the engine ------------------------------------------------


def leaves(obj: object) -> Iterable[object]:
    """Every scalar inside a view or an event, however deeply nested (dataclasses, tuples, lists, dicts)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            yield from leaves(getattr(obj, f.name))
    elif isinstance(obj, Mapping):
        for key, value in obj.items():
            yield from leaves(key)
            yield from leaves(value)
    elif isinstance(obj, (tuple, list, set, frozenset)):
        for item in obj:
            yield from leaves(item)
    else:
        yield obj


def cards_in(obj: object) -> set[Card]:
    return {leaf for leaf in leaves(obj) if is_card(leaf)}


def signs_in(obj: object) -> set[str]:
    return {leaf for leaf in leaves(obj) if is_sign(leaf)}


# --- random play (property tests) ------------------------------------------------------------------


def random_action(table: Table, rng: random.Random) -> tuple[int, a.Action]:
    """Some seat tries something, legal or not, mostly the things players do all round long."""
    seat = rng.randrange(table.players)
    kind = rng.choices(
        [
            "swap",
            "take",
            "release",
            "emoji",
            "ready",
            "sign",
            "ask",
            "vote",
            "call",
            "counter",
            "next",
            "leave",
            "back",
        ],
        weights=[40, 6, 5, 10, 8, 4, 2, 6, 1, 1, 2, 1, 2],
    )[0]
    if kind == "swap":
        hand = table.hand(seat)
        if hand and table.center and rng.random() < 0.9:
            slot = rng.randrange(CENTER_SIZE)
            take = table.center[slot] if rng.random() < 0.8 else rng.choice(table.deck)
            return seat, a.Swap(rng.choice(hand), slot, take)
        return seat, a.Swap(rng.choice(table.deck), rng.randrange(CENTER_SIZE), rng.choice(table.deck))
    if kind == "emoji":
        return seat, a.ChooseEmoji(rng.choice([*SIGNS, None]))
    if kind == "sign":
        return seat, a.PickSign(rng.choice(SIGNS))
    if kind == "vote":
        return seat, a.Vote(rng.random() < 0.7)
    if kind == "counter":
        return seat, a.Counter(rng.choice([None, *range(table.teams)]))
    return seat, {
        "take": a.TakeChannel(),
        "release": a.ReleaseChannel(),
        "ready": a.Ready(),
        "ask": a.AskReshuffle(),
        "call": a.Call(),
        "next": a.NextRound(),
        "leave": Disconnect(),
        "back": Connect(),
    }[kind]


def random_play(table: Table, rng: random.Random, steps: int, now: float = 0.0, max_step: float = 0.3):
    """Start the match and play ``steps`` random actions, time moving on by up to ``max_step`` between them.
    Yields ``(now, emits)`` after each step (the start counts as one)."""
    yield now, table.start(now)
    for _ in range(steps):
        now += rng.random() * max_step
        seat, action = random_action(table, rng)
        if rng.random() < 0.1:
            yield now, table.advance(now)
        else:
            yield now, table.act(seat, action, now).events
