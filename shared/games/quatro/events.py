"""What happens at a table, as told to the seats allowed to know it.

The rules engine emits these events; the server filters them per seat (H1) and sends them;
clients and bots read them. Every event is a small frozen dataclass with a stable ``kind``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from quatro_shared.games.quatro.cards import Card
from quatro_shared.games.quatro.signs import Sign


@dataclass(frozen=True, slots=True)
class Event:
    kind: ClassVar[str] = "event"


# --- the match and its rounds -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MatchStarted(Event):
    players: int
    target_score: int
    kind: ClassVar[str] = "match_started"


@dataclass(frozen=True, slots=True)
class SigningStarted(Event):
    """A round's sign phase begins (R6, R7)."""

    round: int
    kind: ClassVar[str] = "signing_started"


@dataclass(frozen=True, slots=True)
class SignChosen(Event):
    """A team's sign is set, by a partner's pick or, when the round opens, by lot (``seat`` is None). Team only (R6)."""

    team: int
    sign: Sign
    seat: int | None
    kind: ClassVar[str] = "sign_chosen"


@dataclass(frozen=True, slots=True)
class PlayerReady(Event):
    seat: int
    kind: ClassVar[str] = "player_ready"


@dataclass(frozen=True, slots=True)
class RoundOpened(Event):
    round: int
    kind: ClassVar[str] = "round_opened"


@dataclass(frozen=True, slots=True)
class Dealt(Event):
    """A fresh deal: at the opening of a round, or after a reshuffle (R3, R4, R16).

    ``redeals`` counts the deals redone because a hand held three of a rank; never which hand or rank (R4).
    """

    center: tuple[Card, ...]
    redeals: int
    reshuffle: bool
    kind: ClassVar[str] = "dealt"


@dataclass(frozen=True, slots=True)
class HandDealt(Event):
    """The seat's own new hand. Sent to that seat alone (H1)."""

    seat: int
    hand: tuple[Card, ...]
    kind: ClassVar[str] = "hand_dealt"


@dataclass(frozen=True, slots=True)
class Swapped(Event):
    """``seat`` put ``put_down`` into center ``slot`` and took ``taken`` (R8: all public)."""

    seat: int
    slot: int
    put_down: Card
    taken: Card
    kind: ClassVar[str] = "swapped"


@dataclass(frozen=True, slots=True)
class ChannelTaken(Event):
    seat: int
    kind: ClassVar[str] = "channel_taken"


@dataclass(frozen=True, slots=True)
class ChannelReleased(Event):
    seat: int
    kind: ClassVar[str] = "channel_released"


@dataclass(frozen=True, slots=True)
class EmojiChosen(Event):
    """The emoji a seat will pulse. Sent to that seat alone: the table sees it only at pulses (R11)."""

    seat: int
    sign: Sign | None
    kind: ClassVar[str] = "emoji_chosen"


@dataclass(frozen=True, slots=True)
class Pulse(Event):
    """A channel shows its chosen emoji to everyone (R11)."""

    seat: int
    sign: Sign
    kind: ClassVar[str] = "pulse"


@dataclass(frozen=True, slots=True)
class VoteStarted(Event):
    """``seat`` asks for a reshuffle; ``voters`` must all agree (R15)."""

    seat: int
    voters: tuple[int, ...]
    kind: ClassVar[str] = "vote_started"


@dataclass(frozen=True, slots=True)
class VoteCast(Event):
    seat: int
    yes: bool
    kind: ClassVar[str] = "vote_cast"


@dataclass(frozen=True, slots=True)
class VoteEnded(Event):
    """``outcome``: ``agreed`` (everyone said yes, or nobody had to), ``refused`` (a no),
    ``timeout`` (silence is no), ``voter_left`` (a voter disconnected: silent, so the vote cannot pass),
    ``round_over`` (the round ended first)."""

    passed: bool
    outcome: str
    kind: ClassVar[str] = "vote_ended"


@dataclass(frozen=True, slots=True)
class RoundEnded(Event):
    """The reveal (R17): how the round ended, who scored, and everything that was hidden.

    ``outcome`` is ``call``, ``counter`` or ``draw``. ``by`` is the caller or the accuser, ``accused`` the
    team a counter named, ``right`` whether the call or counter was right. ``fours`` lists the seats
    holding four of a kind at that instant.
    """

    round: int
    outcome: str
    by: int | None
    accused: int | None
    right: bool | None
    scorers: tuple[int, ...]
    scores: tuple[int, ...]
    hands: tuple[tuple[Card, ...], ...]
    center: tuple[Card, ...]
    signs: tuple[Sign | None, ...]
    fours: tuple[int, ...]
    kind: ClassVar[str] = "round_ended"


@dataclass(frozen=True, slots=True)
class BreakStarted(Event):
    round: int
    kind: ClassVar[str] = "break_started"


@dataclass(frozen=True, slots=True)
class MatchOver(Event):
    """A team reached the target score; several teams reaching it together win together (R20)."""

    winners: tuple[int, ...]
    scores: tuple[int, ...]
    kind: ClassVar[str] = "match_over"


# --- seats ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SeatConnected(Event):
    seat: int
    kind: ClassVar[str] = "seat_connected"


@dataclass(frozen=True, slots=True)
class SeatDisconnected(Event):
    seat: int
    kind: ClassVar[str] = "seat_disconnected"


@dataclass(frozen=True, slots=True)
class HostChanged(Event):
    """The host (R18) is now ``seat``, or nobody (``None``) while no human is connected."""

    seat: int | None
    kind: ClassVar[str] = "host_changed"
