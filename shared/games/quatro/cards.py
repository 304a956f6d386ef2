"""The card vocabulary of Quatro (R2): ranks, suits, decks by player count.

A card is a short string, rank then suit letter: ``"QH"`` is the queen of hearts, ``"10S"`` the ten of spades.
Strings travel on the wire as they are and compare cheaply. Only the rank ever matters to a rule;
the suit gives each of the four copies an identity and a face for display.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeGuard

Card = str

#: Ranks from the highest down; a table of n players uses the first n + 1 (R2).
RANKS: tuple[str, ...] = ("A", "K", "Q", "J", "10", "9", "8", "7", "6")
#: Suit letters, in display order. Decoration only (R2, Decided).
SUITS: tuple[str, ...] = ("S", "H", "D", "C")
SUIT_SYMBOLS: dict[str, str] = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
PLAYER_COUNTS: tuple[int, ...] = (4, 6, 8)
HAND_SIZE = 4
CENTER_SIZE = 4


def ranks_for(players: int) -> tuple[str, ...]:
    """The ranks in play at a table of ``players`` (R2: one more rank than players)."""
    if players not in PLAYER_COUNTS:
        raise ValueError(f"Quatro is played by 4, 6 or 8 players, not {players}")
    return RANKS[: players + 1]


def deck_for(players: int) -> list[Card]:
    """Every card of a table of ``players``, in a fixed order (R2)."""
    return [rank + suit for rank in ranks_for(players) for suit in SUITS]


def rank_of(card: Card) -> str:
    return card[:-1]


def suit_of(card: Card) -> str:
    return card[-1]


def is_card(value: object) -> TypeGuard[str]:
    """True when ``value`` names a card of the full vocabulary (any table size)."""
    return isinstance(value, str) and len(value) in (2, 3) and value[:-1] in RANKS and value[-1] in SUITS


def display(card: Card, ascii_only: bool = False) -> str:
    """``Q♥`` for the screen, or ``QH`` where the terminal has no suit symbols."""
    if ascii_only:
        return card
    return rank_of(card) + SUIT_SYMBOLS[suit_of(card)]


def rank_counts(cards: Iterable[Card]) -> dict[str, int]:
    """How many cards of each rank. A plain dict: bots call this on every look, the engine on every deal."""
    counts: dict[str, int] = {}
    for card in cards:
        rank = card[:-1]
        counts[rank] = counts.get(rank, 0) + 1
    return counts


def is_four_of_a_kind(hand: Iterable[Card]) -> bool:
    """True when the hand is four cards of one rank (what R13 and R14 look for)."""
    hand = tuple(hand)
    if len(hand) != HAND_SIZE:
        return False
    rank = hand[0][:-1]
    return all(card[:-1] == rank for card in hand[1:])


def has_three_of_a_rank(hand: Iterable[Card]) -> bool:
    """True when three or more cards share a rank (what R4 forbids in a fresh deal)."""
    counts = rank_counts(hand)
    return bool(counts) and max(counts.values()) >= 3
