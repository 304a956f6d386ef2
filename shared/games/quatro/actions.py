"""What a seat can ask of its table, and the stable reasons a request is refused.

Actions are small frozen dataclasses. The server turns wire requests into them; bots return them;
the rules engine takes them. A refusal is a value (``Refusal``), never an exception, so that
clients can explain it ("too slow: Q♥ was taken", "cooldown 1.2 s").
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import ClassVar

from quatro_shared import protocol as p
from quatro_shared.games.quatro.cards import Card
from quatro_shared.games.quatro.signs import Sign


class Reason(StrEnum):
    """Why an action was refused. The values are part of the protocol: never rename one."""

    # The platform's refusals of a game action (quatro_shared.protocol.GAME_ACTION_REASONS), in its words.
    UNKNOWN_ACTION = p.UNKNOWN_ACTION  # not an action this table knows
    BAD_SEAT = p.BAD_SEAT  # no such seat at this table
    BAD_ARGUMENT = p.BAD_ARGUMENT  # a field of the wrong type or out of range
    DISCONNECTED = p.DISCONNECTED  # the seat is not connected (R19)
    NOT_STARTED = p.NOT_STARTED  # the match has not started yet
    # Quatro's own.
    WRONG_PHASE = "wrong_phase"  # not something this phase accepts (e.g. swapping while signing)
    ROUND_OVER = "round_over"  # the round already ended (R17): later calls and counters are refused
    MATCH_OVER = "match_over"  # the match is won (R20)
    SIGN_SET = "sign_set"  # the team's sign is already chosen for this round (R6)
    NOT_IN_HAND = "not_in_hand"  # the card to put down is not in the hand
    TAKEN = "taken"  # the center slot no longer holds the expected card (R10)
    COOLDOWN = "cooldown"  # wait before swapping again (R9) or changing control again (R12)
    CHANNEL_NOT_HELD = "channel_not_held"  # choosing an emoji or releasing needs control (R11)
    CHANNEL_HELD = "channel_held"  # already in control of the channel
    TEAM_REQUIRED = "team_required"  # with 6 or 8 players a counter names a team (R14)
    NOT_OPPONENT = "not_opponent"  # a counter names an opposing team, not one's own (R14)
    VOTE_PENDING = "vote_pending"  # a reshuffle vote is already running (R15)
    RESHUFFLE_USED = "reshuffle_used"  # one reshuffle per round (R15)
    VOTE_COOLDOWN = "vote_cooldown"  # 30 s between the end of a vote and the next (R15)
    NO_VOTE = "no_vote"  # there is no vote to answer
    NOT_A_VOTER = "not_a_voter"  # the requester and bots do not vote (R15)
    ALREADY_VOTED = "already_voted"
    NOT_HOST = p.NOT_HOST  # only the host starts the next round early (R18): the lobby's word for it


@dataclass(frozen=True, slots=True)
class Refusal:
    reason: Reason
    #: Seconds left before the same action could succeed, where the rules know it (cooldowns).
    wait: float | None = None


@dataclass(frozen=True, slots=True)
class Action:
    kind: ClassVar[str] = "action"


@dataclass(frozen=True, slots=True)
class Ready(Action):
    """Declare ready during signing (R7)."""

    kind: ClassVar[str] = "ready"


@dataclass(frozen=True, slots=True)
class PickSign(Action):
    """Choose the team's sign during signing; the first partner to pick sets it (R6)."""

    sign: Sign
    kind: ClassVar[str] = "pick_sign"


@dataclass(frozen=True, slots=True)
class Swap(Action):
    """Put ``give`` from the hand into center ``slot`` and take the card there, expected to be ``take`` (R8, R10)."""

    give: Card
    slot: int
    take: Card
    kind: ClassVar[str] = "swap"


@dataclass(frozen=True, slots=True)
class TakeChannel(Action):
    kind: ClassVar[str] = "take_channel"


@dataclass(frozen=True, slots=True)
class ReleaseChannel(Action):
    kind: ClassVar[str] = "release_channel"


@dataclass(frozen=True, slots=True)
class ChooseEmoji(Action):
    """Choose (or clear, with ``None``) the emoji pulsed on one's channel while in control (R11)."""

    sign: Sign | None
    kind: ClassVar[str] = "choose_emoji"


@dataclass(frozen=True, slots=True)
class Call(Action):
    """ "Quatro!": the caller's partner holds four of a kind (R13)."""

    kind: ClassVar[str] = "call"


@dataclass(frozen=True, slots=True)
class Counter(Action):
    """ "Counter!": ``team`` holds four of a kind. ``None`` is allowed with 4 players (R14)."""

    team: int | None = None
    kind: ClassVar[str] = "counter"


@dataclass(frozen=True, slots=True)
class AskReshuffle(Action):
    kind: ClassVar[str] = "ask_reshuffle"


@dataclass(frozen=True, slots=True)
class Vote(Action):
    """Answer the running reshuffle vote (R15)."""

    yes: bool
    kind: ClassVar[str] = "vote"


@dataclass(frozen=True, slots=True)
class NextRound(Action):
    """The host ends the break early (R18)."""

    kind: ClassVar[str] = "next_round"


#: Actions a player (or a bot) may send. Connect and Disconnect come from the server alone.
PLAYER_ACTIONS: tuple[type[Action], ...] = (
    Ready,
    PickSign,
    Swap,
    TakeChannel,
    ReleaseChannel,
    ChooseEmoji,
    Call,
    Counter,
    AskReshuffle,
    Vote,
    NextRound,
)

#: The kinds of the player actions: the requests that are game actions.
ACTION_KINDS: frozenset[str] = frozenset(cls.kind for cls in PLAYER_ACTIONS)
