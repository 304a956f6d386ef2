"""What one seat may see of its table (H1): the only shape in which game state leaves the engine.

A ``SeatView`` is a snapshot taken at one instant. Countdowns are remaining milliseconds at that
instant, never clock readings, so that a client's clock never matters. The same type reaches a
player's screen (over the wire) and a bot's decision code (H2).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from quatro_shared.games.quatro.cards import Card
from quatro_shared.games.quatro.signs import Sign
from quatro_shared.tables import LEFT_OUT_AT_DEFAULT, TablePhase


class Phase(StrEnum):
    """The phases of a table, in the order they come (lobby → signing → round → break → … → over)."""

    LOBBY = "lobby"  # seats filling; the match has not started
    SIGNING = "signing"  # teams pick their sign, players declare ready (R5–R7)
    ROUND = "round"  # everyone swaps at once (R8–R16)
    BREAK = "break"  # the reveal stays on screen until the next round (R17, R18)
    OVER = "over"  # a team reached the target score (R20)


#: A table's phase in the lobby's words (protocol 9): the sign phase and the round are play, the break is between.
TABLE_PHASE = {
    Phase.LOBBY: TablePhase.LOBBY,
    Phase.SIGNING: TablePhase.PLAYING,
    Phase.ROUND: TablePhase.PLAYING,
    Phase.BREAK: TablePhase.BETWEEN,
    Phase.OVER: TablePhase.OVER,
}


@dataclass(frozen=True, slots=True)
class SeatState:
    """The public state of one seat: what the whole table can see of it."""

    seat: int
    team: int
    bot: bool
    connected: bool
    ready: bool
    channel_held: bool
    #: The emoji of the seat's latest pulse this round, and how long ago it fell.
    last_pulse: Sign | None
    last_pulse_ms: int | None
    #: Milliseconds to the seat's next pulse while it holds its channel (pulses are public, R11).
    next_pulse_ms: int | None


@dataclass(frozen=True, slots=True)
class VoteState:
    """A running reshuffle vote (R15)."""

    by: int
    voters: tuple[int, ...]
    yes: tuple[int, ...]
    remaining_ms: int


@dataclass(frozen=True, slots=True)
class RoundSummary:
    """The reveal of the last round (R17): every hand and sign, and how the round ended."""

    round: int
    outcome: str  # "call", "counter" or "draw"
    by: int | None
    accused: int | None
    right: bool | None
    scorers: tuple[int, ...]
    hands: tuple[tuple[Card, ...], ...]
    center: tuple[Card, ...]
    signs: tuple[Sign | None, ...]
    fours: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class SeatView:
    """Everything seat ``seat`` may know right now, and nothing more (H1)."""

    seat: int
    players: int
    team: int
    partner: int
    phase: Phase
    round: int
    #: Own hand (empty before the round's deal).
    hand: tuple[Card, ...]
    center: tuple[Card, ...]
    #: Own team's sign, once picked or drawn; never another team's before the reveal.
    sign: Sign | None
    seats: tuple[SeatState, ...]
    scores: tuple[int, ...]
    target_score: int
    host: int | None
    #: Time left in the current phase: the sign window, the round, or the break.
    phase_ms: int | None
    #: Own cooldowns (R9, R12); 0 when free.
    swap_wait_ms: int
    channel_wait_ms: int
    #: Own channel: held or not, and the emoji chosen to pulse (private until it pulses).
    channel_held: bool
    channel_sign: Sign | None
    vote: VoteState | None
    #: Milliseconds before a new reshuffle vote may start (R15), and whether this round's reshuffle is spent.
    vote_wait_ms: int
    reshuffle_used: bool
    #: The reveal of the round just ended, during the break and after the match.
    summary: RoundSummary | None
    winners: tuple[int, ...]
    #: How often a held channel pulses (R11), from the take: between two clocks a client runs each seat's
    #: ``next_pulse_ms`` on with it (protocol 3).
    pulse_interval_ms: int


@dataclass(frozen=True, slots=True)
class Clock:
    """The table's public countdowns at one instant: what an update carries, when a countdown moved otherwise than by
    time passing (protocol 3), so that a client's state built from events shows the same countdowns as a fresh view
    would. Remaining milliseconds, as in ``SeatView``. On the wire, ``vote_ms`` is left out when None and
    ``vote_wait_ms`` when 0."""

    phase_ms: int | None
    #: By seat: ``SeatState.next_pulse_ms`` and ``SeatState.last_pulse_ms``.
    next_pulse_ms: tuple[int | None, ...]
    last_pulse_ms: tuple[int | None, ...]
    vote_ms: int | None = field(default=None, metadata=LEFT_OUT_AT_DEFAULT)
    vote_wait_ms: int = field(default=0, metadata=LEFT_OUT_AT_DEFAULT)


@dataclass(frozen=True, slots=True)
class OwnTimers:
    """The seat's own cooldowns (R9, R12) at one instant: private, so built for that seat alone.
    An update leaves out the map when both are 0, and on the wire a field that is 0."""

    swap_wait_ms: int = field(default=0, metadata=LEFT_OUT_AT_DEFAULT)
    channel_wait_ms: int = field(default=0, metadata=LEFT_OUT_AT_DEFAULT)
