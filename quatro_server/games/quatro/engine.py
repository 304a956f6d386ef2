"""The rules of Quatro as a pure state machine: one table, its seats, its rounds and its match.

The engine is sans-I/O. It never reads a clock, never sleeps, never touches a socket, and draws
randomness only from the source it is given. Everything comes in through two doors, each with the
current time ``now`` (seconds on any monotonic scale the caller chooses):

- ``table.act(seat, action, now)``: a seat does something. Returns an ``Outcome``: the events that
  happened (time-driven ones first) and, if the action was refused, a ``Refusal`` with a stable reason.
- ``table.advance(now)``: time passes. Returns the events due by ``now`` (pulses, the round opening at
  the end of the sign window, a vote timing out, a draw, the end of a break), in the order they fell.

``table.next_deadline()`` tells the caller when to call ``advance`` next; ``table.seat_deadline(seat)``
adds the seat's own cooldowns (useful to bots). Events are addressed (``Emit``): to everyone, to one
team, or to one seat, and a seat is told only those ``Emit.visible_to`` it (H1). What a seat is sent is built
from the seat's ``view(table, seat, now)``, the events it may see, and, for the server's update frames
(``quatro_server.games.quatro.updates``), the per-seat figures of the view read one by one (``clock_parts``, ``own_waits``,
``pulsed_on_beat``); see ``docs/rules-engine.md`` for how a round flows through it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from math import inf
from typing import Any, Self

from quatro_shared.games.quatro import actions as a
from quatro_shared.games.quatro import events as e
from quatro_shared.games.quatro import seating
from quatro_shared.games.quatro.actions import Reason, Refusal
from quatro_shared.games.quatro.cards import (
    CENTER_SIZE,
    HAND_SIZE,
    Card,
    deck_for,
    has_three_of_a_rank,
    is_four_of_a_kind,
)
from quatro_shared.games.quatro.legal import phase_refusal
from quatro_shared.games.quatro.signs import SIGNS, Sign, is_sign
from quatro_shared.games.quatro.views import Clock, OwnTimers, Phase, RoundSummary, SeatState, SeatView, VoteState
from quatro_shared.tables import NO_SEAT, Connect, Disconnect

from quatro_server.rules import Outcome
from quatro_server.timing import STANDARD, Timing

#: A deal is redone until no hand holds three of a rank (R4). The odds of needing this many are nil
#: for every table size; the bound only keeps a broken random source from hanging the server.
MAX_REDEALS = 10_000


@dataclass(frozen=True, slots=True)
class Emit:
    """An event and who may see it: everyone (both ``None``), one team, or one seat (H1)."""

    event: e.Event
    team: int | None = None
    seat: int | None = None

    @property
    def public(self) -> bool:
        """Whether the whole table may see it: the public audience's events (a watcher's, ``NO_SEAT``)."""
        return self.seat is None and self.team is None

    def visible_to(self, seat: int, team: int) -> bool:
        """Whether ``seat`` of ``team`` may see it; ``NO_SEAT`` (no seat, no team) sees the public events alone."""
        if seat == NO_SEAT:
            return self.public
        if self.seat is not None:
            return self.seat == seat
        if self.team is not None:
            return self.team == team
        return True


@dataclass(slots=True)
class _Seat:
    bot: bool
    order: int  # seating order: the longest-seated connected human becomes host (R18)
    connected: bool = True
    ready: bool = False
    hand: list[Card] = field(default_factory=list)
    swap_free_at: float = -inf  # R9
    channel_free_at: float = -inf  # R12
    channel_held: bool = False
    channel_sign: Sign | None = None
    next_pulse_at: float = inf  # R11: counted from the take
    last_pulse: Sign | None = None
    last_pulse_at: float | None = None


@dataclass(slots=True)
class _Vote:
    by: int
    voters: tuple[int, ...]
    ends_at: float
    yes: set[int] = field(default_factory=set)


class Table:
    """One Quatro table: seats, teams, deck, signs, scores, and the phase it is in.

    ``bots`` are the seats played by bots: always connected, always ready (R7), never voting (R15).
    ``host`` is the seat of the player who opened the table (R18). ``rng`` is the source of every
    shuffle and draw; by default the operating system's (R3). Pass ``random.Random(seed)`` for tests
    and replays.
    """

    def __init__(
        self,
        players: int,
        *,
        timing: Timing = STANDARD,
        rng: random.Random | None = None,
        bots: frozenset[int] | set[int] | tuple[int, ...] = (),
        host: int | None = 0,
        seat_order: list[int] | None = None,
    ) -> None:
        self.deck: tuple[Card, ...] = tuple(deck_for(players))  # raises for a count other than 4, 6, 8 (R1)
        self.players = players
        self.teams = seating.team_count(players)
        self.timing = timing
        self.rng = rng if rng is not None else random.SystemRandom()
        order = seat_order if seat_order is not None else list(range(players))
        self._seats = [_Seat(bot=i in bots, order=order.index(i)) for i in range(players)]
        self.host: int | None = host if host is not None and not self._seats[host].bot else self._first_human()
        self.phase = Phase.LOBBY
        self.round = 0
        self.center: list[Card] = []
        self.signs: list[Sign | None] = [None] * self.teams
        self._previous_signs: list[Sign | None] = [None] * self.teams
        self.scores = [0] * self.teams
        self.phase_ends_at: float = inf  # sign window, round end or break end, by phase
        self._vote: _Vote | None = None
        self._last_vote_end = -inf
        self.reshuffle_used = False
        self.summary: RoundSummary | None = None
        self.winners: tuple[int, ...] = ()
        self.now = -inf

    # --- seats and teams (R1) ------------------------------------------------------------------

    def team_of(self, seat: int) -> int:
        return seating.team_of(seat, self.players)

    def partner_of(self, seat: int) -> int:
        return seating.partner_of(seat, self.players)

    def team_seats(self, team: int) -> tuple[int, int]:
        return seating.team_seats(team, self.players)

    def hand(self, seat: int) -> tuple[Card, ...]:
        return tuple(self._seats[seat].hand)

    def is_bot(self, seat: int) -> bool:
        return self._seats[seat].bot

    def is_connected(self, seat: int) -> bool:
        return self._seats[seat].connected

    # --- the two doors -------------------------------------------------------------------------

    def start(self, now: float) -> list[Emit]:
        """Start the match: the first sign phase begins."""
        self.now = max(self.now, now)
        if self.phase is not Phase.LOBBY:
            return []
        out = [Emit(e.MatchStarted(self.players, int(self.timing.target_score)))]
        self._begin_signing(out)
        return out

    def act(self, seat: int, action: object, now: float) -> Outcome[Emit, Refusal]:
        """Apply ``action`` from ``seat`` at time ``now``. Never raises: a bad request is refused.

        A ``now`` earlier than the table's (a late caller) is taken as the table's own time.
        """
        out = self.advance(now)
        refusal = self._dispatch(seat, action, out)
        return Outcome(out, refusal)

    def advance(self, now: float) -> list[Emit]:
        """Let time run to ``now``: fire every deadline due by then, earliest first."""
        out: list[Emit] = []
        if not now >= self.now or now == inf:  # time never runs backwards (nor to NaN or infinity)
            return out
        while True:
            at, what = self._next_due_at()
            if at > now:
                break
            self.now = at
            if what >= 0:
                self._pulse(what, out)
            else:
                _DUE[what](self)(out)
        self.now = now
        return out

    def next_deadline(self) -> float | None:
        """When the table next needs ``advance``: a pulse, the sign window, a vote, the round or the break end."""
        at, _ = self._next_due_at()
        return None if at == inf else at

    def seat_deadline(self, seat: int) -> float | None:
        """The table's next deadline or the seat's own next cooldown end, whichever is sooner."""
        s = self._seats[seat]
        candidates = [t for t in (s.swap_free_at, s.channel_free_at) if t > self.now]
        table_next = self.next_deadline()
        if table_next is not None:
            candidates.append(table_next)
        return min(candidates) if candidates else None

    def rebase(self, delta: float) -> None:
        """Move the table onto another clock, ``delta`` seconds ahead of the old one: every deadline, cooldown,
        pulse and vote keeps the time it had left. A restarted server resumes a journalled table this way."""
        self.now += delta
        self.phase_ends_at += delta
        self._last_vote_end += delta
        if self._vote is not None:
            self._vote.ends_at += delta
        for s in self._seats:
            s.swap_free_at += delta
            s.channel_free_at += delta
            s.next_pulse_at += delta
            if s.last_pulse_at is not None:
                s.last_pulse_at += delta

    def state(self) -> dict[str, Any]:
        """Everything the table is, as plain values (lists, numbers, strings; infinities stay floats), apart from
        its timing and its random source, which the caller keeps. ``Table.from_state`` rebuilds it."""
        vote = self._vote
        return {
            "players": self.players,
            "host": self.host,
            "phase": str(self.phase),
            "round": self.round,
            "center": list(self.center),
            "signs": list(self.signs),
            "previous_signs": list(self._previous_signs),
            "scores": list(self.scores),
            "phase_ends_at": self.phase_ends_at,
            "vote": None if vote is None else [vote.by, list(vote.voters), vote.ends_at, sorted(vote.yes)],
            "last_vote_end": self._last_vote_end,
            "reshuffle_used": self.reshuffle_used,
            "summary": None if self.summary is None else [getattr(self.summary, f.name) for f in fields(RoundSummary)],
            "winners": list(self.winners),
            "now": self.now,
            "seats": [
                [list(s.hand) if f.name == "hand" else getattr(s, f.name) for f in fields(_Seat)] for s in self._seats
            ],
        }

    @classmethod
    def from_state(cls, state: dict[str, Any], *, timing: Timing, rng: random.Random) -> Self:
        """The table ``state`` describes (from ``Table.state``). Raises ``ValueError`` for a malformed state."""
        try:
            table = cls(int(state["players"]), timing=timing, rng=rng, host=None)
            table._seats = [_Seat(*values) for values in state["seats"]]
            for s in table._seats:
                s.hand = list(s.hand)
            if len(table._seats) != table.players:
                raise ValueError("one seat per player")
            table.host = state["host"]
            table.phase = Phase(state["phase"])
            table.round = int(state["round"])
            table.center = list(state["center"])
            table.signs = list(state["signs"])
            table._previous_signs = list(state["previous_signs"])
            table.scores = [int(score) for score in state["scores"]]
            table.phase_ends_at = float(state["phase_ends_at"])
            vote = state["vote"]
            table._vote = None if vote is None else _Vote(vote[0], tuple(vote[1]), float(vote[2]), set(vote[3]))
            table._last_vote_end = float(state["last_vote_end"])
            table.reshuffle_used = bool(state["reshuffle_used"])
            summary = state["summary"]
            if summary is not None:
                (round_, outcome, by, accused, right, scorers, hands, center, signs, fours) = summary
                table.summary = RoundSummary(
                    round_,
                    outcome,
                    by,
                    accused,
                    right,
                    tuple(scorers),
                    tuple(tuple(hand) for hand in hands),
                    tuple(center),
                    tuple(signs),
                    tuple(fours),
                )
            table.winners = tuple(state["winners"])
            table.now = float(state["now"])
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise ValueError(f"not a table's state: {exc!r}") from exc
        if len(table.signs) != table.teams or len(table.scores) != table.teams:
            raise ValueError("not a table's state: one sign and one score per team")
        return table

    # --- time ----------------------------------------------------------------------------------

    def _next_due_at(self) -> tuple[float, int]:
        """The earliest pending deadline, and what falls due then: a seat's pulse (its index), or ``_VOTE_DUE``,
        ``_PHASE_DUE``, ``_NOTHING_DUE``. Ties fire pulses before phase changes. Asked on every action and every
        batch, so it builds nothing."""
        best = _NOTHING_DUE
        best_at = inf
        phase = self.phase
        if phase is Phase.ROUND:
            for i, s in enumerate(self._seats):
                if s.channel_held and s.channel_sign is not None and s.next_pulse_at < best_at:
                    best_at, best = s.next_pulse_at, i
            if self._vote is not None and self._vote.ends_at < best_at:
                best_at, best = self._vote.ends_at, _VOTE_DUE
        if (phase is Phase.SIGNING or phase is Phase.ROUND or phase is Phase.BREAK) and self.phase_ends_at < best_at:
            best_at, best = self.phase_ends_at, _PHASE_DUE
        return best_at, best

    def _phase_timeout(self, out: list[Emit]) -> None:
        if self.phase is Phase.SIGNING:
            self._open_round(out)  # R7: the sign window is over
        elif self.phase is Phase.ROUND:
            self._end_round("draw", None, None, None, [], out)  # R18
        elif self.phase is Phase.BREAK:
            self._begin_signing(out)

    def _vote_timeout(self, out: list[Emit]) -> None:
        self._end_vote(False, "timeout", out)  # R15: not everyone agreed in time

    def _pulse(self, seat: int, out: list[Emit]) -> None:
        s = self._seats[seat]
        assert s.channel_sign is not None  # _next_due_at pulses only a held channel with a sign chosen
        s.last_pulse, s.last_pulse_at = s.channel_sign, self.now
        s.next_pulse_at += self.timing.pulse_interval
        out.append(Emit(e.Pulse(seat, s.channel_sign)))

    # --- actions -------------------------------------------------------------------------------

    def _dispatch(self, seat: object, action: object, out: list[Emit]) -> Refusal | None:
        if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < self.players:
            return Refusal(Reason.BAD_SEAT)
        handler = _HANDLERS.get(type(action))
        if handler is None:
            return Refusal(Reason.UNKNOWN_ACTION)
        if isinstance(action, (Connect, Disconnect)):
            return handler(self, seat, action, out)
        if not self._seats[seat].connected:
            return Refusal(Reason.DISCONNECTED)
        if self.phase is Phase.LOBBY:
            return Refusal(Reason.NOT_STARTED)
        if self.phase is Phase.OVER:
            return Refusal(Reason.MATCH_OVER)
        # The action's own values first (protocol section 7 lists each action's refusals in order), then the one
        # table of what the phase accepts, looked up here alone.
        judge = _JUDGES.get(type(action))
        if judge is not None and (refusal := judge(self, seat, action)) is not None:
            return refusal
        if (reason := phase_refusal(self.phase, type(action))) is not None:
            return Refusal(reason)
        return handler(self, seat, action, out)

    # Each ``_judge_*`` judges an action's values alone, before the phase is asked: ``_JUDGES``.

    def _judge_pick_sign(self, seat: int, action: a.PickSign) -> Refusal | None:
        return None if is_sign(action.sign) else Refusal(Reason.BAD_ARGUMENT)

    def _judge_swap(self, seat: int, action: a.Swap) -> Refusal | None:
        # The fields' types were checked where the action came in (quatro_shared.wire); the rules judge values.
        return None if 0 <= action.slot < CENTER_SIZE else Refusal(Reason.BAD_ARGUMENT)

    def _judge_choose_emoji(self, seat: int, action: a.ChooseEmoji) -> Refusal | None:
        return None if action.sign is None or is_sign(action.sign) else Refusal(Reason.BAD_ARGUMENT)

    def _judge_counter(self, seat: int, action: a.Counter) -> Refusal | None:
        accused = self._accused(seat, action)
        if accused is None:
            return Refusal(Reason.TEAM_REQUIRED)
        if not 0 <= accused < self.teams:
            return Refusal(Reason.BAD_ARGUMENT)
        if accused == self.team_of(seat):
            return Refusal(Reason.NOT_OPPONENT)
        return None

    def _accused(self, seat: int, action: a.Counter) -> int | None:
        """The team a counter names: with two teams, no team named means the other one (R14)."""
        if action.team is None:
            return 1 - self.team_of(seat) if self.teams == 2 else None
        return action.team

    def _ready(self, seat: int, action: a.Ready, out: list[Emit]) -> Refusal | None:
        s = self._seats[seat]
        if not s.ready:
            s.ready = True
            out.append(Emit(e.PlayerReady(seat)))
            self._open_if_all_ready(out)
        return None

    def _pick_sign(self, seat: int, action: a.PickSign, out: list[Emit]) -> Refusal | None:
        team = self.team_of(seat)
        if self.signs[team] is not None:
            return Refusal(Reason.SIGN_SET)  # R6: the first pick stands for the round
        self.signs[team] = action.sign
        out.append(Emit(e.SignChosen(team, action.sign, seat), team=team))
        return None

    def _swap(self, seat: int, action: a.Swap, out: list[Emit]) -> Refusal | None:
        slot = action.slot
        s = self._seats[seat]
        if action.give not in s.hand:
            return Refusal(Reason.NOT_IN_HAND)
        if self.center[slot] != action.take:
            return Refusal(Reason.TAKEN)  # R10: someone was faster; no cooldown starts
        if self.now < s.swap_free_at:
            return Refusal(Reason.COOLDOWN, s.swap_free_at - self.now)  # R9
        s.hand[s.hand.index(action.give)] = action.take
        self.center[slot] = action.give
        s.swap_free_at = self.now + self.timing.swap_cooldown
        out.append(Emit(e.Swapped(seat, slot, action.give, action.take)))
        return None

    def _take_channel(self, seat: int, action: a.TakeChannel, out: list[Emit]) -> Refusal | None:
        s = self._seats[seat]
        if s.channel_held:
            return Refusal(Reason.CHANNEL_HELD)
        if self.now < s.channel_free_at:
            return Refusal(Reason.COOLDOWN, s.channel_free_at - self.now)  # R12
        s.channel_held, s.channel_sign = True, None
        s.next_pulse_at = self.now + self.timing.pulse_interval  # R11: pulses counted from the take
        s.channel_free_at = self.now + self.timing.channel_cooldown
        out.append(Emit(e.ChannelTaken(seat)))
        return None

    def _release_channel(self, seat: int, action: a.ReleaseChannel, out: list[Emit]) -> Refusal | None:
        s = self._seats[seat]
        if not s.channel_held:
            return Refusal(Reason.CHANNEL_NOT_HELD)
        if self.now < s.channel_free_at:
            return Refusal(Reason.COOLDOWN, s.channel_free_at - self.now)  # R12
        self._drop_channel(s)
        s.channel_free_at = self.now + self.timing.channel_cooldown
        out.append(Emit(e.ChannelReleased(seat)))
        return None

    def _choose_emoji(self, seat: int, action: a.ChooseEmoji, out: list[Emit]) -> Refusal | None:
        s = self._seats[seat]
        if not s.channel_held:
            return Refusal(Reason.CHANNEL_NOT_HELD)
        s.channel_sign = action.sign  # not a change of control: no cooldown (R12)
        # Pulses that fell with no emoji chosen showed nothing (R11) but kept the take's beat: the next one is still
        # to come, never a stale one (which would fire a burst of catch-up pulses and turn the table's clock back).
        interval = self.timing.pulse_interval
        if s.next_pulse_at <= self.now:
            s.next_pulse_at += ((self.now - s.next_pulse_at) // interval + 1) * interval
        while s.next_pulse_at <= self.now:  # float rounding
            s.next_pulse_at += interval
        out.append(Emit(e.EmojiChosen(seat, action.sign), seat=seat))
        return None

    def _call(self, seat: int, action: a.Call, out: list[Emit]) -> Refusal | None:
        team = self.team_of(seat)
        right = is_four_of_a_kind(self._seats[self.partner_of(seat)].hand)  # R13: the partner's hand only
        scorers = [team] if right else [t for t in range(self.teams) if t != team]
        self._end_round("call", seat, None, right, scorers, out)
        return None

    def _counter(self, seat: int, action: a.Counter, out: list[Emit]) -> Refusal | None:
        accused, own = self._accused(seat, action), self.team_of(seat)
        assert accused is not None  # judged: _judge_counter
        right = any(is_four_of_a_kind(self._seats[i].hand) for i in self.team_seats(accused))  # R14
        self._end_round("counter", seat, accused, right, [own] if right else [accused], out)
        return None

    def _ask_reshuffle(self, seat: int, action: a.AskReshuffle, out: list[Emit]) -> Refusal | None:
        if self._vote is not None:
            return Refusal(Reason.VOTE_PENDING)
        if self.reshuffle_used:
            return Refusal(Reason.RESHUFFLE_USED)
        if self.now < self._last_vote_end + self.timing.vote_gap:
            return Refusal(Reason.VOTE_COOLDOWN, self._last_vote_end + self.timing.vote_gap - self.now)
        voters = tuple(
            i for i, s in enumerate(self._seats) if i != seat and not s.bot and s.connected
        )  # R15: every other connected human; bots do not vote
        self._vote = _Vote(seat, voters, self.now + self.timing.vote_window)
        out.append(Emit(e.VoteStarted(seat, voters)))
        if not voters:
            self._end_vote(True, "agreed", out)
        return None

    def _answer_vote(self, seat: int, action: a.Vote, out: list[Emit]) -> Refusal | None:
        vote = self._vote
        if vote is None:
            return Refusal(Reason.NO_VOTE)
        if seat not in vote.voters:
            return Refusal(Reason.NOT_A_VOTER)
        if seat in vote.yes:
            return Refusal(Reason.ALREADY_VOTED)
        out.append(Emit(e.VoteCast(seat, action.yes)))
        if not action.yes:
            self._end_vote(False, "refused", out)  # one "no" ends the vote at once
        else:
            vote.yes.add(seat)
            if vote.yes.issuperset(vote.voters):
                self._end_vote(True, "agreed", out)
        return None

    def _next_round(self, seat: int, action: a.NextRound, out: list[Emit]) -> Refusal | None:
        if seat != self.host:
            return Refusal(Reason.NOT_HOST)
        self._begin_signing(out)  # R18: the host may start the next round early
        return None

    def _connect(self, seat: int, action: Connect, out: list[Emit]) -> Refusal | None:
        s = self._seats[seat]
        if s.connected:
            return None
        s.connected = True
        out.append(Emit(e.SeatConnected(seat)))
        if self.host is None and not s.bot:
            self._set_host(seat, out)
        return None

    def _disconnect(self, seat: int, action: Disconnect, out: list[Emit]) -> Refusal | None:
        s = self._seats[seat]
        if not s.connected or s.bot:
            return None
        s.connected = False  # R19: seat and hand stay; nobody plays in their place
        out.append(Emit(e.SeatDisconnected(seat)))
        if self.host == seat:
            self._set_host(self._first_human(), out)
        if self._vote is not None and seat in self._vote.voters and self.phase is Phase.ROUND:
            self._end_vote(False, "voter_left", out)  # R15: a voter who leaves is silent, so the vote cannot pass
        if self.phase is Phase.SIGNING:
            self._open_if_all_ready(out)  # R7: a disconnected player is not waited for
        return None

    # --- phases --------------------------------------------------------------------------------

    def _begin_signing(self, out: list[Emit]) -> None:
        self.round += 1
        self.phase = Phase.SIGNING
        self.phase_ends_at = self.now + self.timing.sign_window
        self._previous_signs = list(self.signs)
        self.signs = [None] * self.teams  # R7: signs are picked anew every round
        self.summary = None
        for s in self._seats:
            s.ready = s.bot  # R7: bots are always ready
            s.hand = []  # R7: the cards are dealt when the round opens
            self._drop_channel(s)
            s.last_pulse = s.last_pulse_at = None
            s.swap_free_at = s.channel_free_at = -inf
        self.center = []
        out.append(Emit(e.SigningStarted(self.round)))
        self._open_if_all_ready(out)

    def _open_if_all_ready(self, out: list[Emit]) -> None:
        if self.phase is Phase.SIGNING and all(s.ready for s in self._seats if s.connected):
            self._open_round(out)

    def _open_round(self, out: list[Emit]) -> None:
        for team in range(self.teams):
            if self.signs[team] is None:  # R7: drawn by lot, avoiding last round's sign
                choices = [sign for sign in SIGNS if sign != self._previous_signs[team]]
                sign = self.signs[team] = self.rng.choice(choices)
                out.append(Emit(e.SignChosen(team, sign, None), team=team))
        self.phase = Phase.ROUND
        self.phase_ends_at = self.now + self.timing.round_length
        self._vote = None
        self.reshuffle_used = False
        out.append(Emit(e.RoundOpened(self.round)))
        self._deal(False, out)

    def _deal(self, reshuffle: bool, out: list[Emit]) -> None:
        """Deal every card: four to each hand, four face up in the center, redone while a hand holds three of a rank (R3, R4)."""
        deck = list(self.deck)
        for redeals in range(MAX_REDEALS):
            self.rng.shuffle(deck)
            hands = [deck[i * HAND_SIZE : (i + 1) * HAND_SIZE] for i in range(self.players)]
            if not any(has_three_of_a_rank(hand) for hand in hands):
                break
        else:  # pragma: no cover - only a broken random source gets here
            raise RuntimeError("the random source never produced a legal deal")
        for s, hand in zip(self._seats, hands):
            s.hand = hand
        self.center = deck[self.players * HAND_SIZE :]
        out.append(Emit(e.Dealt(tuple(self.center), redeals, reshuffle)))
        for i, s in enumerate(self._seats):
            out.append(Emit(e.HandDealt(i, tuple(s.hand)), seat=i))

    def _end_vote(self, passed: bool, outcome: str, out: list[Emit]) -> None:
        self._vote = None
        self._last_vote_end = self.now
        out.append(Emit(e.VoteEnded(passed, outcome)))
        if passed:
            self.reshuffle_used = True
            self._deal(True, out)  # R16: same teams, signs, timer and channels; only the cards change

    def _end_round(
        self, outcome: str, by: int | None, accused: int | None, right: bool | None, scorers: list[int], out: list[Emit]
    ) -> None:
        """The round stops at the first call or counter, or at the draw (R17, R18); everything is revealed."""
        if self._vote is not None:
            self._vote = None
            self._last_vote_end = self.now
            out.append(Emit(e.VoteEnded(False, "round_over")))
        for team in scorers:
            self.scores[team] += 1
        hands = tuple(tuple(s.hand) for s in self._seats)
        fours = tuple(i for i, hand in enumerate(hands) if is_four_of_a_kind(hand))
        self.summary = RoundSummary(
            self.round, outcome, by, accused, right, tuple(scorers), hands, tuple(self.center), tuple(self.signs), fours
        )
        for s in self._seats:
            self._drop_channel(s)
        out.append(
            Emit(
                e.RoundEnded(
                    self.round,
                    outcome,
                    by,
                    accused,
                    right,
                    tuple(scorers),
                    tuple(self.scores),
                    hands,
                    tuple(self.center),
                    tuple(self.signs),
                    fours,
                )
            )
        )
        top = max(self.scores)
        if top >= self.timing.target_score:  # R20: several teams at the top win together
            self.phase = Phase.OVER
            self.phase_ends_at = inf
            self.winners = tuple(t for t, score in enumerate(self.scores) if score == top)
            out.append(Emit(e.MatchOver(self.winners, tuple(self.scores))))
        else:
            self.phase = Phase.BREAK
            self.phase_ends_at = self.now + self.timing.break_length
            out.append(Emit(e.BreakStarted(self.round)))

    # --- helpers -------------------------------------------------------------------------------

    @staticmethod
    def _drop_channel(s: _Seat) -> None:
        s.channel_held, s.channel_sign, s.next_pulse_at = False, None, inf  # releasing clears the choice (R11)

    def _first_human(self) -> int | None:
        """The longest-seated connected human, who becomes host when the host leaves (R18)."""
        humans = [(s.order, i) for i, s in enumerate(self._seats) if not s.bot and s.connected]
        return min(humans)[1] if humans else None

    def _set_host(self, seat: int | None, out: list[Emit]) -> None:
        if seat != self.host:
            self.host = seat
            out.append(Emit(e.HostChanged(seat)))


def _nothing(out: list[Emit]) -> None:
    return None


#: What ``Table._next_due_at`` says falls due, other than a seat's pulse, and how to fire it.
_VOTE_DUE, _PHASE_DUE, _NOTHING_DUE = -1, -2, -3
_DUE: dict[int, Callable[[Table], Callable[[list[Emit]], None]]] = {
    _VOTE_DUE: lambda table: table._vote_timeout,
    _PHASE_DUE: lambda table: table._phase_timeout,
    _NOTHING_DUE: lambda table: _nothing,
}


_HANDLERS: dict[type[object], Callable[[Table, int, Any, list[Emit]], Refusal | None]] = {
    a.Ready: Table._ready,
    a.PickSign: Table._pick_sign,
    a.Swap: Table._swap,
    a.TakeChannel: Table._take_channel,
    a.ReleaseChannel: Table._release_channel,
    a.ChooseEmoji: Table._choose_emoji,
    a.Call: Table._call,
    a.Counter: Table._counter,
    a.AskReshuffle: Table._ask_reshuffle,
    a.Vote: Table._answer_vote,
    a.NextRound: Table._next_round,
    Connect: Table._connect,
    Disconnect: Table._disconnect,
}

#: The actions whose values are judged before the phase is asked (the others have no values the rules judge).
_JUDGES: dict[type[object], Callable[[Table, int, Any], Refusal | None]] = {
    a.PickSign: Table._judge_pick_sign,
    a.Swap: Table._judge_swap,
    a.ChooseEmoji: Table._judge_choose_emoji,
    a.Counter: Table._judge_counter,
}


# --- what leaves the engine (H1) -------------------------------------------------------------------


def _next_beat(next_pulse_at: float, now: float, interval: float) -> float:
    """Seconds to a held channel's next pulse. With no emoji chosen, pulses show nothing and are not fired,
    but they keep the take's beat (R11): the next one is the first beat still to come."""
    if next_pulse_at > now:
        return next_pulse_at - now
    return interval - (now - next_pulse_at) % interval


def _ms(seconds: float) -> int:
    """Seconds to whole milliseconds, never negative (an elapsed deadline is 0)."""
    return round(seconds * 1000) if seconds > 0 else 0  # a float rounds to an int


def view(table: Table, seat: int, now: float) -> SeatView:
    """Everything ``seat`` may know at ``now``, and nothing more (H1). The only snapshot of a table that leaves it.
    Its countdowns are the table's ``clock`` and the seat's ``own_waits``, worked out by the same code: an update that
    carries those two shows what a fresh view would. ``NO_SEAT`` (a watcher) gets the public table alone: no hand,
    no team's sign, no channel and no cooldowns of its own."""
    now = max(now, table.now)
    phase_ms, next_pulse, last_pulse, vote_ms, vote_wait_ms = _countdowns(table, now)
    if seat == NO_SEAT:
        me, team, partner, sign = _NOBODY, NO_SEAT, NO_SEAT, None
    else:
        me, team = table._seats[seat], table.team_of(seat)
        partner, sign = table.partner_of(seat), table.signs[team]
    swap_wait_ms, channel_wait_ms = own_waits(table, seat, now)
    seats = tuple(
        SeatState(
            seat=i,
            team=table.team_of(i),
            bot=s.bot,
            connected=s.connected,
            ready=s.ready,
            channel_held=s.channel_held,
            last_pulse=s.last_pulse,
            last_pulse_ms=last_pulse_ms,
            next_pulse_ms=next_pulse_ms,
        )
        for i, (s, next_pulse_ms, last_pulse_ms) in enumerate(zip(table._seats, next_pulse, last_pulse))
    )
    vote = table._vote
    return SeatView(
        seat=seat,
        players=table.players,
        team=team,
        partner=partner,
        phase=table.phase,
        round=table.round,
        hand=tuple(me.hand),
        center=tuple(table.center),
        sign=sign,
        seats=seats,
        scores=tuple(table.scores),
        target_score=int(table.timing.target_score),
        host=table.host,
        phase_ms=phase_ms,
        swap_wait_ms=swap_wait_ms,
        channel_wait_ms=channel_wait_ms,
        channel_held=me.channel_held,
        channel_sign=me.channel_sign,
        vote=None
        if vote is None or vote_ms is None  # a vote's countdown is there when a vote runs
        else VoteState(vote.by, vote.voters, tuple(sorted(vote.yes)), vote_ms),
        vote_wait_ms=vote_wait_ms,
        reshuffle_used=table.reshuffle_used,
        summary=table.summary,
        winners=table.winners,
        pulse_interval_ms=_ms(table.timing.pulse_interval),
    )


#: What a view from no seat holds of its own: nothing (``view`` for ``NO_SEAT``).
_NOBODY = _Seat(bot=False, order=-1)


def clock(table: Table, now: float) -> Clock:
    """The table's public countdowns at ``now``, as ``view`` shows them to every seat (an update's ``clock``)."""
    return Clock(*_countdowns(table, max(now, table.now)))


def _countdowns(
    table: Table, now: float
) -> tuple[int | None, tuple[int | None, ...], tuple[int | None, ...], int | None, int]:
    """The table's public countdowns at ``now`` (not before the table's own time), in ``Clock``'s order: the one
    place they are worked out, for ``view`` and ``clock`` alike."""
    in_round = table.phase is Phase.ROUND
    interval = table.timing.pulse_interval
    next_pulse: list[int | None] = []
    last_pulse: list[int | None] = []
    for s in table._seats:
        next_pulse.append(_ms(_next_beat(s.next_pulse_at, now, interval)) if in_round and s.channel_held else None)
        fell = s.last_pulse_at
        last_pulse.append(None if fell is None else _ms(now - fell))
    vote = table._vote
    return (
        _ms(table.phase_ends_at - now) if table.phase_ends_at != inf else None,
        tuple(next_pulse),
        tuple(last_pulse),
        None if vote is None else _ms(vote.ends_at - now),
        _ms(table._last_vote_end + table.timing.vote_gap - now),
    )


#: The events of routine play: a swap and a pulse. They change no status, score or round, bring no deadline forward
#: and move no countdown but by time passing, except the swapper's cooldowns (a pulse keeps its channel's beat).
#: The room, the journal and the update frames each skip work for a batch of only these.
ROUTINE_EVENTS = frozenset({e.Swapped, e.Pulse})


def routine(emits: Sequence[Emit]) -> bool:
    """Whether a batch holds only routine events (``ROUTINE_EVENTS``). Asked after every batch: a loop, no generator."""
    for emit in emits:
        if type(emit.event) not in ROUTINE_EVENTS:
            return False
    return True


def pulsed_on_beat(table: Table, seat: int, now: float) -> bool:
    """Whether ``seat``'s latest pulse fell less than half a pulse interval before ``now``: close enough to its beat
    that a client running the beat on can tell which one it was (protocol 3 sends such a pulse without a clock)."""
    fell = table._seats[seat].last_pulse_at
    return fell is not None and (max(now, table.now) - fell) * 2 < table.timing.pulse_interval


def own_timers(table: Table, seat: int, now: float) -> OwnTimers:
    """The seat's own cooldowns at ``now``, as its ``view`` shows them (private to that seat)."""
    return OwnTimers(*own_waits(table, seat, now))


def own_waits(table: Table, seat: int, now: float) -> tuple[int, int]:
    """The seat's own cooldowns at ``now``, swap then channel, as a plain pair: the one place they are worked out,
    for ``view``, ``own_timers`` and the update frames (which pack them without building an ``OwnTimers``)."""
    if table.phase is not Phase.ROUND or seat == NO_SEAT:
        return 0, 0
    if now < table.now:
        now = table.now
    me = table._seats[seat]
    return _ms(me.swap_free_at - now), _ms(me.channel_free_at - now)


def events_for(emits: list[Emit], seat: int, players: int) -> list[e.Event]:
    """The events of ``emits`` that ``seat`` may see (H1), in order."""
    team = seating.team_of(seat, players)
    return [emit.event for emit in emits if emit.visible_to(seat, team)]
