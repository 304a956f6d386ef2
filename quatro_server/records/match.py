"""A finished match as its game tells it (``quatro_server.game.Game.record``): the sides, their places, and what
each seat did, counted from the match's events. Every game returns this one shape; the records store
(``quatro_server.records.store``) knows no game."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class MatchRecord:
    """``side_of[seat]``: the side (a team, or the seat itself) each seat played for. ``places[side]``: 1 for the
    winners, 2 for the next, ...; sides that finished level share a place. ``counts[seat]``: the game's own tallies
    for that seat (calls and counters, games won and drawn), by name."""

    side_of: tuple[int, ...]
    places: tuple[int, ...]
    counts: tuple[Mapping[str, int], ...] = field(default_factory=tuple)

    def won(self, seat: int) -> bool:
        """Whether ``seat``'s side finished first (alone or level with others)."""
        return self.places[self.side_of[seat]] == 1

    def seat_counts(self, seat: int) -> Mapping[str, int]:
        return self.counts[seat] if seat < len(self.counts) else {}


def places_by_score(winners: tuple[int, ...], scores: tuple[int, ...]) -> tuple[int, ...]:
    """The places of sides from a match's winners and scores: every winner first, then the others by score, highest
    first, equal scores sharing a place (competition ranking: 1, 2, 2, 4)."""
    sides = len(scores)
    top = set(winners)
    ordered = sorted(range(sides), key=lambda side: (side not in top, -scores[side]))
    places = [0] * sides
    for position, side in enumerate(ordered):
        previous = ordered[position - 1] if position else None
        same = (
            previous is not None
            and (previous in top) == (side in top)
            and (side in top or scores[previous] == scores[side])
        )
        places[side] = places[previous] if same and previous is not None else position + 1
    return tuple(places)
