"""The words both sides say of any game: counts, a seat's player, how long is left. A game's own words (why its
rules refused an action: Quatro's ``quatro_shared.games.quatro.wording``) live in its folder."""

from __future__ import annotations


def counted(count: int, one: str, many: str | None = None) -> str:
    """``count`` and its noun, agreeing: "1 table", "2 tables", "0 tables" (``many``: an irregular plural)."""
    return f"{count} {one if count == 1 else (many or one + 's')}"


def person(seat: int, name: str | None) -> str:
    """A seat's player as people read them: their name, or "seat 3" for a seat with none. Seats count from 1 in
    every word a person reads (the waiting room's numbers), though the wire counts them from 0."""
    return name or f"seat {seat + 1}"


def seconds(value: float) -> str:
    """A countdown: ``2:31`` above a minute, ``9.4s`` below ten seconds, ``42s`` between."""
    value = max(0.0, value)
    if value >= 60:
        whole = int(value + 0.999)
        return f"{whole // 60}:{whole % 60:02d}"
    if value >= 10:
        return f"{int(value + 0.999)}s"
    return f"{value:.1f}s"
