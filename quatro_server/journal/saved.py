"""What a journal holds for one table, as read back from the file: plain rows, for a restore and for ``replay``."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class SavedSeat:
    seat: int
    name: str | None
    bot: str | None  # the bot's level; None for a human or an empty seat
    secret: str | None  # the digest of the seat's secret, never the secret
    order: int


@dataclass(slots=True)
class SavedMove:
    n: int
    at: float
    kind: str
    seat: int | None
    input: str | None
    events: str


@dataclass(slots=True)
class SavedTable:
    id: int
    #: The game's name in the registry; None for a table of a journal of version 1, which hosted one game only.
    game: str | None
    players: int
    timing_name: str
    timing: dict[str, float]
    password: str | None
    host: int | None
    status: str
    round: int
    scores: list[int]
    created: float
    ended: float | None
    #: What of its row did not read (its timing, its scores): such a table is refused, never restored.
    damage: str | None = None
    seats: list[SavedSeat] = field(default_factory=list)
    moves: list[SavedMove] = field(default_factory=list)
