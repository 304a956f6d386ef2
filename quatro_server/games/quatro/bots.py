"""Bots that fill seats or play over the network: they decide from what a player in their seat is shown (H2).

A bot is ``observe(events)`` (the events its seat was sent, in order), ``decide(view, now) -> list[Action]``
and ``think_time()`` (seconds until it wants to look again). It never sees a ``Table``. The types make that
structural: both take the shared types a network client receives (``quatro_shared.games.quatro.views.SeatView``,
``quatro_shared.games.quatro.events.Event``), and nothing in this module imports the rules engine. The same classes drive
the server's fillers (``quatro_server.tables.room.Room``), the network bots (``quatro_server.bots.netbot``) and the
simulator (``quatro_server.tools.sim``). Bots react at a person's pace (``THINK_TIME``), measured on the clock
they are given (``now``), so they never win by reflexes a person cannot match.

The ladder (``quatro_shared.levels``), weakest first:
- ``easy``: collects toward the rank it holds most, at a new player's pace (``READING_TIME``); holding four of a
  kind it takes its channel and shows the team's sign; calls when its partner's channel pulses the team's sign.
  Slow, honest, readable: for learning.
- ``normal``: the same, but it holds its channel from the start of the round, so that taking it says nothing.
- ``hard``: ``normal`` plus reading the table (``TableReader``): every public swap tells it part of each hand,
  every reveal teaches it how each seat signals; it counters, calls early, blocks, reshuffles and sends decoys.
- ``expert``: ``hard`` without its tells; it learns what each pair's signal is from the reveals (``SignalLearner``),
  reads and denies the cards, and with an expert partner keeps a convention keyed by the team's sign (``keyed_toggle``).
``random`` (legal actions at random) is the baseline for tests and simulations. ``docs/bots.md`` explains
how each level reasons, and how to write a bot of one's own (``make_bot("module:Class")``).

The convention a human partner can rely on, at every level above ``random``: the bot shows the team's sign
on its channel when, and only when, it holds four of a kind; and it calls when its partner's channel
pulses the team's sign.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import random
from collections.abc import Callable, Sequence
from typing import Any

from quatro_shared.games.quatro import actions as a
from quatro_shared.games.quatro import events as e
from quatro_shared.games.quatro.cards import HAND_SIZE, Card, rank_counts, rank_of
from quatro_shared.games.quatro.cards import is_four_of_a_kind as is_four
from quatro_shared.games.quatro.legal import legal
from quatro_shared.games.quatro.seating import opposing_teams, team_count, team_of, team_seats
from quatro_shared.games.quatro.signs import SIGNS, Sign
from quatro_shared.games.quatro.views import Phase, SeatView
from quatro_shared.levels import DEFAULT_LEVEL, LEVELS

from quatro_server.rules import is_outside_bot

__all__ = ["DEFAULT_LEVEL", "LEVELS", "Bot", "make_bot", "load_bot_class"]

#: A level's reaction time, in seconds (low, high), drawn afresh each time: between two looks at the table,
#: from a pulse of the partner's sign to the call, and from the end of the swap cooldown (R9) to the next
#: swap. ``hard`` reacts no faster than a good player: it must win by reading the table, not by reflexes;
#: ``expert`` reacts like a quick, practised one.
THINK_TIME: dict[str, tuple[float, float]] = {
    "random": (0.4, 1.2),
    "easy": (0.9, 1.8),
    "normal": (0.5, 1.0),
    "hard": (0.35, 0.8),
    "expert": (0.25, 0.5),
}
#: A level's time to find the swap that helps, in seconds (low, high), drawn afresh for every swap: after the
#: cooldown and the reaction between two swaps, and after a fresh deal before the first. A new player reads
#: the cards before each swap, so ``easy`` swaps at their pace (one swap every 4.9-6.8 s, the cooldown included; the
#: first 2.9-4.8 s after it sees the deal): a newcomer partnered with it is not a spectator (``docs/bots.md``, "A
#: newcomer's first match").
#: The other levels know the cards at a glance.
READING_TIME: dict[str, tuple[float, float]] = {
    "random": (0.0, 0.0),
    "easy": (2.0, 3.0),
    "normal": (0.0, 0.0),
    "hard": (0.0, 0.0),
    "expert": (0.0, 0.0),
}
#: While nothing can be played (the break after a round), a bot glances at the table this often at most,
#: and looks again as the break ends. A host who starts the next round early (R18) waits no longer than this.
IDLE_GLANCE = 2.0
#: Two moments closer than this are the same one (a cooldown's end, a pulse seen on two looks).
SAME_MOMENT = 0.05
#: A look asked for at a moment may come this much before it (float rounding of the clock).
REACT_SLACK = 1e-9

#: The largest number of cards of one rank a fresh deal leaves in a hand (R4): four takes two swaps at least.
DEALT_MAX = 2

# --- the random baseline: how often each kind of action is picked on a look at the table ---------------
#: Shares of the looks at the table (the rest do nothing). Calls and counters are rare enough that rounds
#: last long enough to swap in, and common enough to lose points the way a player who guesses would.
RANDOM_SWAP = 0.6
RANDOM_CHANNEL = 0.1
RANDOM_CALL = 0.01
RANDOM_COUNTER = 0.01
RANDOM_RESHUFFLE = 0.005


class Bot:
    """A seat's bot. Subclasses choose actions (``play``); the base class paces them and handles signing and votes.

    Pacing runs on the clock ``decide`` is given, never a real sleep: a subclass asks ``swap_ready`` before
    swapping and ``call_ready`` before calling on a pulse, and the base class schedules its next look for
    the moment the reaction is due.
    """

    level = "random"
    #: Reaction time (low, high) in seconds; ``None``: the level's entry in ``THINK_TIME``.
    pace: tuple[float, float] | None = None
    #: Time to find a swap (low, high) in seconds; ``None``: the level's entry in ``READING_TIME`` (none for a level
    #: not listed there).
    reading: tuple[float, float] | None = None

    def __init__(self, rng: random.Random | None = None) -> None:
        self.rng = rng if rng is not None else random.Random()
        self._idle: float | None = None  # seconds to wait before the next look when nothing can be played
        self._now = 0.0  # the clock at the latest look
        self._due: float | None = None  # a moment this look wants the next one (a reaction falling due)
        self._swap_due: tuple[float, float] | None = None  # (the swap cooldown ends, the next swap may go)
        self._call_due: tuple[float, float] | None = None  # (the partner's pulse fell, the call goes)
        self._new_cards = False  # a fresh deal not yet read (``cards_dealt``)
        self._react: tuple[object, float] | None = None  # (a reaction on what a look showed, when it may go)
        self._react_asked = False  # this look asked for it again (``react_ready``): otherwise it is dropped
        self._voted_this_round = False  # a reshuffle vote was held this round: no more requests (``_one_vote_a_round``)

    def reaction(self) -> float:
        """One reaction time of this level, in seconds."""
        low, high = self.pace if self.pace is not None else THINK_TIME[self.level]
        return self.rng.uniform(low, high)

    def think_time(self) -> float:
        """Seconds until this bot looks at the table again: a reaction time, sooner when a reaction falls due, or
        longer while idle."""
        wait = self.reaction()
        idle, self._idle = self._idle, None
        due, self._due = self._due, None
        if idle is not None:
            return idle + wait
        if due is not None:
            wait = min(wait, max(0.0, due - self._now))
        return wait

    def look_at(self, moment: float) -> None:
        """Make sure the next look comes no later than ``moment`` (a reaction falling due)."""
        self._due = moment if self._due is None else min(self._due, moment)

    def reading_time(self) -> float:
        """One time to find a swap, in seconds: 0 for a level that reads the cards at a glance."""
        low, high = self.reading if self.reading is not None else READING_TIME.get(self.level, (0.0, 0.0))
        return self.rng.uniform(low, high) if high > 0 else 0.0  # no draw at all for a glance: the rest stays the same

    def cards_dealt(self) -> None:
        """A fresh deal (a round's, a reshuffle's): the first swap waits until the new cards are read."""
        self._new_cards = True

    def swap_ready(self, view: SeatView, now: float) -> bool:
        """Whether a swap may go now: the cooldown (R9) is over and a reaction time (and a reading time) has passed
        since; after a fresh deal, a reaction and a reading time after the first look at the new cards."""
        if self._new_cards:
            self._new_cards = False
            reading = self.reading_time()
            if reading > 0:
                self._swap_due = (now, now + reading + self.reaction())
        if view.swap_wait_ms > 0:
            ends = now + view.swap_wait_ms / 1000
            if self._swap_due is None or abs(self._swap_due[0] - ends) > SAME_MOMENT:
                self._swap_due = (ends, ends + self.reaction() + self.reading_time())
        if self._swap_due is not None and now < self._swap_due[1]:
            self.look_at(self._swap_due[1])
            return False
        return True

    def call_ready(self, view: SeatView, now: float) -> bool:
        """Whether the call on the partner's latest pulse may go now: a reaction time after the pulse fell."""
        ago = view.seats[view.partner].last_pulse_ms
        pulsed = now - (ago or 0) / 1000
        if self._call_due is None or abs(self._call_due[0] - pulsed) > SAME_MOMENT:
            self._call_due = (pulsed, pulsed + self.reaction())
        if now >= self._call_due[1]:
            return True
        self.look_at(self._call_due[1])
        return False

    def react_ready(self, what: object, now: float) -> bool:
        """Whether a reaction to what the table shows (``what``: a counter of a team, a call) may go now: one reaction
        time after the first look that showed it, and only if every look since still wanted it.

        A bot is not told when an event fell, only that it fell before this look: counting the reaction from the
        look that saw it, never from an earlier guess, keeps every counter and every call on a swap, a channel
        change or a silence at least one reaction time after what it answers (a person's pace, never a reflex).
        """
        self._react_asked = True
        if self._react is None or self._react[0] != what:
            self._react = (what, now + self.reaction())
        if now >= self._react[1] - REACT_SLACK:
            self._react = None
            return True
        self.look_at(self._react[1])
        return False

    def observe(self, events: list[e.Event]) -> None:
        """The events this seat was shown (H1), in order, before its next decision. Levels that read the table use
        them (and call this one: it keeps what every level needs, whether the round had a reshuffle vote)."""
        for event in events:
            if isinstance(event, e.VoteStarted):
                self._voted_this_round = True
            elif isinstance(event, e.RoundOpened):
                self._voted_this_round = False

    def decide(self, view: SeatView, now: float) -> list[a.Action]:
        """The actions to take now, in order, from the seat's view alone (H2). The caller stops at the first refusal."""
        self._now, self._due = now, None
        self._react_asked = False
        try:
            return self._one_vote_a_round(self._decide(view, now))
        finally:
            if not self._react_asked:
                self._react = None  # what it waited to answer is gone (or was answered)

    def _one_vote_a_round(self, actions: list[a.Action]) -> list[a.Action]:
        """``actions`` without a reshuffle request once the round had a vote, this bot's or anyone's (R15). The rules
        allow a new vote every ``vote_gap``, but a request is a question to the people at the table and their answer
        (silence is no) stands for the round: a bot whose center stayed dead asked a lone human again after every
        gap, four times and more in a round. Every level's requests go through here."""
        if self._voted_this_round:
            return [action for action in actions if not isinstance(action, a.AskReshuffle)]
        return actions

    def _decide(self, view: SeatView, now: float) -> list[a.Action]:
        if view.phase is Phase.ROUND:
            vote = view.vote
            if vote is not None and view.seat in vote.voters and view.seat not in vote.yes:
                return [a.Vote(self.vote(view))]  # only a bot seated as a network player is ever asked (R15)
            return self.play(view, now)
        if view.phase is Phase.SIGNING:
            return self.sign(view)
        # Nothing to play (the break, the lobby, the match over): glance now and then, and again as the break ends.
        self._idle = IDLE_GLANCE if view.phase_ms is None else min(IDLE_GLANCE, view.phase_ms / 1000)
        return []

    def sign(self, view: SeatView) -> list[a.Action]:
        """During signing: pick the team's sign (when the partner is a bot too: a human partner may want to), be ready."""
        actions: list[a.Action] = []
        if view.sign is None and view.seats[view.partner].bot:
            actions.append(a.PickSign(self.pick_sign(view)))
        if not view.seats[view.seat].ready:
            actions.append(a.Ready())  # fillers are ready from the start (R7); a network bot says so
        return actions

    def pick_sign(self, view: SeatView) -> Sign:
        return self.rng.choice(SIGNS)

    def vote(self, view: SeatView) -> bool:
        """Whether to agree to a reshuffle another player asked for (R15)."""
        return self.rng.random() < 0.5

    def play(self, view: SeatView, now: float) -> list[a.Action]:
        raise NotImplementedError


class RandomBot(Bot):
    """Legal actions at random: the baseline every other level must beat. Every action it takes is one of
    ``legal(view)``'s; the shares below say how often each kind is picked on a look at the table."""

    level = "random"

    #: Each kind of round action with its share of the looks (the rest do nothing).
    SHARES: tuple[tuple[tuple[type[a.Action], ...], float], ...] = (
        ((a.Swap,), RANDOM_SWAP),
        ((a.TakeChannel, a.ReleaseChannel, a.ChooseEmoji), RANDOM_CHANNEL),
        ((a.Call,), RANDOM_CALL),
        ((a.Counter,), RANDOM_COUNTER),
        ((a.AskReshuffle,), RANDOM_RESHUFFLE),
    )

    def play(self, view: SeatView, now: float) -> list[a.Action]:
        roll = self.rng.random()
        for kinds, share in self.SHARES:
            if roll < share:
                moves = [move for move in legal(view) if isinstance(move, kinds)]
                return [self.rng.choice(moves)] if moves else []
            roll -= share
        return []

    def sign(self, view: SeatView) -> list[a.Action]:
        """The team's sign at random when the partner is a bot too (a human partner may want to pick it), and ready."""
        moves = legal(view)
        picks = [move for move in moves if isinstance(move, a.PickSign)]
        chosen: list[a.Action] = [self.rng.choice(picks)] if picks and view.seats[view.partner].bot else []
        return chosen + [move for move in moves if isinstance(move, a.Ready)]


class EasyBot(Bot):
    """Collects its most frequent rank, signals four of a kind with the true sign, calls on the partner's sign.

    The plainest honest player: its channel goes up the moment it holds four, which an attentive opponent
    counters. Slow and readable on purpose: a level to learn the game against, and to learn the convention with.
    """

    level = "easy"
    #: Take the channel as the round opens and hold it all round (``normal`` and up), rather than at four of a kind.
    holds_channel = False

    def __init__(self, rng: random.Random | None = None) -> None:
        super().__init__(rng)
        self._pulsed: dict[int, Sign] = {}  # each seat's latest pulse since the latest deal, while it holds its channel
        self._swaps: dict[int, int] | None = None  # swaps per seat since the latest deal (None: we missed the deal)

    def observe(self, events: list[e.Event]) -> None:
        super().observe(events)
        for event in events:
            if isinstance(event, e.Pulse):
                # A deal leaves at most two of a rank in a hand (R4), so four takes two swaps at least: a pulse
                # sooner after a deal was chosen for the hand before a reshuffle, and says nothing of this one.
                if self._swaps is None or self._swaps.get(event.seat, 0) >= HAND_SIZE - DEALT_MAX:
                    self._pulsed[event.seat] = event.sign
            elif isinstance(event, e.Swapped):
                if self._swaps is not None:
                    self._swaps[event.seat] = self._swaps.get(event.seat, 0) + 1
            elif isinstance(event, e.Dealt):
                self._pulsed.clear()  # a pulse before a reshuffle spoke of a hand that is gone (R16)
                self._swaps = {}
                self.cards_dealt()
            elif isinstance(event, e.SigningStarted):
                self._pulsed.clear()
            elif isinstance(event, e.ChannelReleased):
                self._pulsed.pop(event.seat, None)

    def partner_shows_sign(self, view: SeatView) -> bool:
        """The convention: the partner's channel pulsed our team's sign, so the partner holds four of a kind."""
        return view.sign is not None and self._pulsed.get(view.partner) == view.sign

    def play(self, view: SeatView, now: float) -> list[a.Action]:
        if self.partner_shows_sign(view):
            # The partner holds four of a kind (a call checks the partner's hand, never ours: R13).
            return [a.Call()] if self.call_ready(view, now) else []
        if is_four(view.hand):
            return self._signal(view)
        channel: list[a.Action] = []
        if self.holds_channel:
            if not view.channel_held and view.channel_wait_ms == 0:
                channel = [a.TakeChannel()]  # held from the start: taking it says nothing
            elif view.channel_held and view.channel_sign is not None:
                channel = [a.ChooseEmoji(None)]  # no longer four (a reshuffle): the sign comes down
        elif view.channel_held and view.channel_wait_ms == 0:
            return [a.ReleaseChannel()]  # the channel means "four of a kind": never leave it up without one
        return channel + self._collect(view, now)

    def vote(self, view: SeatView) -> bool:
        return max(rank_counts(view.hand).values(), default=0) < 2  # a fresh deal is welcome to a hand with no pair

    def _signal(self, view: SeatView) -> list[a.Action]:
        if not view.channel_held:
            return [a.TakeChannel(), a.ChooseEmoji(view.sign)] if view.channel_wait_ms == 0 else []
        if view.channel_sign != view.sign:
            return [a.ChooseEmoji(view.sign)]
        return []

    def _target(self, view: SeatView, counts: dict[str, int], center_counts: dict[str, int]) -> str:
        """The rank to collect: the rank held most, preferring one the center can feed."""
        return max(counts, key=lambda rank: (counts[rank], center_counts.get(rank, 0), self.rng.random()))

    def _collect(self, view: SeatView, now: float) -> list[a.Action]:
        if not view.hand or not self.swap_ready(view, now):
            return []
        swap = self._collect_swap(view)
        if swap is None:
            return []
        if self.holds_channel and view.channel_held and rank_counts(view.hand).get(rank_of(swap.take)) == HAND_SIZE - 1:
            return [swap, a.ChooseEmoji(view.sign)]  # four with this swap: the sign goes up with it
        return [swap]

    def _collect_swap(self, view: SeatView) -> a.Swap | None:
        """The swap toward the target rank, or toward a pair when the center does not hold the target."""
        if not view.hand:
            return None
        counts = rank_counts(view.hand)
        center = view.center
        center_counts = rank_counts(center)
        target = self._target(view, counts, center_counts)
        spare = [card for card in view.hand if rank_of(card) != target]
        self.rng.shuffle(spare)
        spare.sort(key=lambda card: counts[rank_of(card)])  # give the loneliest card first
        if center_counts.get(target) and spare:
            slot = next(i for i, card in enumerate(center) if rank_of(card) == target)
            return a.Swap(spare[0], slot, center[slot])
        # The target is not in the center: pair a lone card rather than wait (a center nobody takes from is dead).
        for slot, card in enumerate(center):
            rank = rank_of(card)
            if counts.get(rank) == 1 and rank != target:
                lonely = [c for c in spare if counts[rank_of(c)] == 1 and rank_of(c) != rank]
                if lonely:
                    return a.Swap(lonely[0], slot, card)
        return None


class NormalBot(EasyBot):
    """``easy``'s honest game at a quicker pace, with its channel held from the start of the round.

    ``easy`` takes its channel the moment it holds four, so countering every channel take beats it. ``normal``
    takes its channel as the round opens and holds it, showing nothing until it holds four: a channel says
    nothing, and the sign is up at the channel's next beat (within 5 s) rather than 5 s after a take.
    """

    level = "normal"
    holds_channel = True

    def __init__(self, rng: random.Random | None = None) -> None:
        super().__init__(rng)
        self.reader = TableReader()
        self._deals = 0  # deals seen (each round's, and each reshuffle's)
        self._cagey: tuple[int, str] | None = None  # (deal, rank): the lone card this deal's collecting started from
        self._quiet_since: float | None = None  # since when no swap was worth making (None: a new deal)

    def observe(self, events: list[e.Event]) -> None:
        super().observe(events)
        self.reader.observe(events)
        if any(isinstance(event, e.Dealt) for event in events):
            self._deals += 1
            self._quiet_since = None

    def _target(self, view: SeatView, counts: dict[str, int], center_counts: dict[str, int]) -> str:
        """Once an opponent has countered this match, collect from a lone card rather than a dealt pair.

        From a dealt pair, the swap that makes four is the first after which the table sees a hand that could
        hold four: a player who counters on the cards is right. From a lone card, the table sees such a hand
        one swap before four: a counter there is our point.
        """
        reader = self.reader
        target = super()._target(view, counts, center_counts)
        cagey = reader.valid and any(n for team, n in enumerate(reader.counters) if team != view.team)
        if not cagey or counts[target] > DEALT_MAX:
            return target
        if self._cagey is not None and self._cagey[0] == self._deals and counts.get(self._cagey[1], 0):
            return self._cagey[1]
        lone = [rank for rank, held in counts.items() if held == 1 and center_counts.get(rank)]
        if lone:
            target = self.rng.choice(lone)
            self._cagey = (self._deals, target)
        return target

    def play(self, view: SeatView, now: float) -> list[a.Action]:
        reader = self.reader
        reader.sync(view)
        if reader.valid and not self.partner_shows_sign(view):
            for seat in range(view.players):
                if team_of(seat, view.players) == view.team or reader.status(seat)[0] == IMPOSSIBLE:
                    continue
                if reader.take_at[seat] > reader.last_swap[seat]:
                    team = team_of(seat, view.players)  # the convention: a channel taken on four
                    return [a.Counter(team)] if self.react_ready(("counter", team), now) else []
        actions = super().play(view, now)
        if self._quiet_since is None or any(isinstance(x, (a.Swap, a.Call)) for x in actions) or is_four(view.hand):
            self._quiet_since = now
        elif (
            now - self._quiet_since >= DEAD_CENTER_SECONDS
            and max(rank_counts(view.hand).values(), default=0) <= DEALT_MAX
            and not view.reshuffle_used
            and view.vote is None
            and view.vote_wait_ms == 0
        ):
            self._quiet_since = now
            return actions + [a.AskReshuffle()]  # nothing in the center for us for a long while: a fresh deal (R15)
        return actions


# --- reading the table -------------------------------------------------------------------------------

#: What the public cards say of a seat's hand.
IMPOSSIBLE, POSSIBLE, PROVEN = 0, 1, 2

# Entries of the round's log, replayed backwards against the reveal to learn how each seat plays.
_SWAP, _TAKE, _PULSE, _STATE = "swap", "take", "pulse", "state"

#: Beliefs before any evidence, as Beta priors (hits, misses) on "this seat held four of a kind when ...".
#: ... it took its channel while its public cards allowed four: the convention says a channel means four.
TAKE_PRIOR = (2.0, 1.0)
#: ... its channel pulsed (any emoji) while its public cards allowed four: could be a decoy.
PULSE_PRIOR = (1.0, 1.0)
#: ... its channel pulsed its team's true sign: the convention.
SIGN_PULSE_PRIOR = (3.0, 1.0)
#: ... its swaps had just left k cards of one rank in public view (the rest of its hand from the deal).
CARDS_PRIOR = (1.0, 3.0)
#: ``expert``'s prior for the same (``SignalLearner``): it learns the rate from every opposing team's reveals.
EXPERT_CARDS_PRIOR = (1.0, 2.0)
#: How much a team's revealed signs weigh against the odds of a sign picked at random (1 in 24): after the
#: same sign three rounds running, a pulse of it is taken for the team's sign three times in four.
SIGN_HABIT_PRIOR = 1.0
#: A seat that shows this many cards of one rank, and no other, is collecting that rank.
COLLECTING = 2


class _Shown:
    """What the table has shown of one seat's hand since the last deal."""

    __slots__ = ("taken", "hidden", "dealt_out")

    def __init__(self) -> None:
        self.taken: list[Card] = []  # taken from the center (all public, R8) and held since
        self.hidden = HAND_SIZE  # cards from the deal still held: their faces are unknown
        self.dealt_out: dict[str, int] = {}  # ranks of the dealt cards put down (the deal held at most 2 of a rank)


class TableReader:
    """Everything a player can work out from the public events: part of every hand, and how each seat plays.

    Within a round: every card taken from the center is public (R8), so each seat's hand is known in part
    (the cards it took and still holds), and the rest is what it was dealt (never three of a rank, R4).
    That proves some hands cannot hold four of a kind, and proves others do. Across rounds: the reveal
    (R17) shows every hand and sign, so each logged moment of the round (a channel taken, a pulse, a
    telling swap) is replayed backwards from the final hands to learn whether that seat held four then.
    """

    def __init__(self) -> None:
        self.players = 0
        self.teams = 0
        self.seat: int | None = None
        self.valid = False  # every event since the last deal was seen: the tracking can be trusted
        self.center: list[Card] = []
        self.shown: list[_Shown] = []
        self.clock = 0  # counts events: orders swaps, takes and pulses
        self.last_swap: list[int] = []
        self.take_at: list[int] = []  # when the seat took the channel it holds (-1: not held)
        self.pulse: list[tuple[int, Sign] | None] = []  # the seat's latest pulse while holding its channel
        self.log: list[tuple[Any, ...]] = []  # this deal's moments, for learning at the reveal
        self._states: set[tuple[int, int]] = set()
        # Across rounds (the whole match):
        self.stats: dict[tuple[Any, ...], list[int]] = {}  # (kind, seat[, k]) -> [held four, times]
        self.signs: list[list[Sign]] = []  # each team's revealed signs, round by round
        self.counters: list[int] = []  # counters made by each team this match
        self._handlers: dict[type[e.Event], Callable[[Any], None]] = {
            e.MatchStarted: self._match_started,
            e.Dealt: self._dealt,
            e.HandDealt: self._hand_dealt,
            e.Swapped: self._swapped,
            e.ChannelTaken: self._channel_taken,
            e.ChannelReleased: self._channel_released,
            e.Pulse: self._pulse,
            e.RoundEnded: self._round_ended,
            e.SigningStarted: self._round_over,
        }

    # --- keeping up ------------------------------------------------------------------------------

    def sync(self, view: SeatView) -> None:
        """Learn the table's size and our seat from a view (a bot that joined late saw no ``match_started``)."""
        if self.players != view.players:
            self._setup(view.players)
        self.seat = view.seat

    def observe(self, events: list[e.Event]) -> None:
        for event in events:
            handler = self._handlers.get(type(event))
            if handler is not None:
                self.clock += 1
                handler(event)

    def _setup(self, players: int) -> None:
        self.players, self.teams = players, team_count(players)
        self.valid = False
        self.signs = [[] for _ in range(self.teams)]
        self.counters = [0] * self.teams
        self.stats = {}
        self.take_at = [-1] * players
        self.pulse = [None] * players

    def _match_started(self, event: e.MatchStarted) -> None:
        self._setup(event.players)

    def _dealt(self, event: e.Dealt) -> None:
        if not self.players:
            return
        self.valid = True
        self.center = list(event.center)
        self.shown = [_Shown() for _ in range(self.players)]
        # Every hand is new: signals given before (channels stay as they were, R16) speak of the old hands.
        self.last_swap = [self.clock] * self.players
        self.log = []  # hands before a reshuffle are never revealed: their moments cannot be learned from
        self._states = set()

    def _hand_dealt(self, event: e.HandDealt) -> None:
        self.seat = event.seat
        if self.valid:
            own = self.shown[event.seat]
            own.taken, own.hidden = list(event.hand), 0  # our own hand: every card known

    def _swapped(self, event: e.Swapped) -> None:
        if not self.valid:
            return
        seat = event.seat
        shown = self.shown[seat]
        if self.center[event.slot] != event.taken:
            self.valid = False  # we missed something: trust nothing until the next deal
            return
        self.center[event.slot] = event.put_down
        if event.put_down in shown.taken:
            shown.taken.remove(event.put_down)
        elif shown.hidden > 0:
            shown.hidden -= 1
            rank = rank_of(event.put_down)
            shown.dealt_out[rank] = shown.dealt_out.get(rank, 0) + 1
        else:
            self.valid = False
            return
        shown.taken.append(event.taken)
        self.last_swap[seat] = self.clock
        self.log.append((_SWAP, seat, event.put_down, event.taken))
        if seat != self.seat and self.status(seat)[0] == POSSIBLE:
            state = (seat, len(shown.taken))
            if state not in self._states:  # one lesson per seat and count per deal: the moments are not independent
                self._states.add(state)
                self.log.append((_STATE, seat, ("cards", seat, len(shown.taken))))

    def _channel_taken(self, event: e.ChannelTaken) -> None:
        if not self.players:
            return
        self.take_at[event.seat] = self.clock
        if self.valid and event.seat != self.seat and self.status(event.seat)[0] == POSSIBLE:
            self.log.append((_TAKE, event.seat, ("take", event.seat)))

    def _channel_released(self, event: e.ChannelReleased) -> None:
        if self.players:
            self.take_at[event.seat] = -1
            self.pulse[event.seat] = None

    def _pulse(self, event: e.Pulse) -> None:
        if not self.players:
            return
        self.pulse[event.seat] = (self.clock, event.sign)
        if self.valid and event.seat != self.seat and self.status(event.seat)[0] == POSSIBLE:
            self.log.append((_PULSE, event.seat, ("pulse", event.seat), event.sign))

    def _round_over(self, event: e.Event) -> None:
        if not self.players:
            return
        self.valid = False
        self.take_at = [-1] * self.players
        self.pulse = [None] * self.players

    def _round_ended(self, event: e.RoundEnded) -> None:
        if not self.players:
            return
        if self.valid:
            self._learn(event)
        self._round_over(event)
        for team, sign in enumerate(event.signs):
            if sign is not None:
                self.signs[team].append(sign)
        if event.outcome == "counter" and event.by is not None:
            self.counters[team_of(event.by, self.players)] += 1

    def _learn(self, event: e.RoundEnded) -> None:
        """Replay the round backwards from the revealed hands: did each logged seat hold four at its moment?"""
        hands = [list(hand) for hand in event.hands]
        lessons: list[tuple[tuple[Any, ...], bool]] = []
        for entry in reversed(self.log):
            if entry[0] == _SWAP:
                _, seat, put_down, taken = entry
                if taken not in hands[seat]:
                    return  # the reveal disagrees with what we saw: learn nothing from this round
                hands[seat].remove(taken)
                hands[seat].append(put_down)
                continue
            seat, key = entry[1], entry[2]
            four = is_four(hands[seat])
            lessons.append((key, four))
            if entry[0] == _PULSE and entry[3] == event.signs[team_of(seat, self.players)]:
                lessons.append((("sign_pulse", seat), four))
        for key, four in lessons:
            counts = self.stats.setdefault(key, [0, 0])
            counts[0] += four
            counts[1] += 1

    # --- what the cards say ----------------------------------------------------------------------

    def status(self, seat: int) -> tuple[int, str | None]:
        """Whether the public cards rule out, allow, or prove four of a kind in ``seat``'s hand, and of which rank."""
        shown = self.shown[seat]
        if shown.hidden > DEALT_MAX or not shown.taken:
            return IMPOSSIBLE, None  # three or more unknown dealt cards cannot all share a rank (R4)
        rank = rank_of(shown.taken[0])
        for card in shown.taken:
            if rank_of(card) != rank:
                return IMPOSSIBLE, None
        if shown.hidden == 0:
            return PROVEN, rank
        if shown.dealt_out.get(rank, 0) + shown.hidden > DEALT_MAX:
            return IMPOSSIBLE, None  # the deal would have given it three of the rank (R4)
        unseen = 4 - self._placed(rank)
        if unseen < shown.hidden:
            return IMPOSSIBLE, None  # not enough of the rank left unaccounted for
        for other, theirs in enumerate(self.shown):
            if other != seat and theirs.hidden > 0 and theirs.dealt_out.get(rank, 0) < DEALT_MAX:
                return POSSIBLE, rank  # another hand could hold the missing cards
        return PROVEN, rank  # nowhere else for the rest of the rank to be

    def _placed(self, rank: str) -> int:
        """Cards of ``rank`` whose place is known: the center and every card taken and held."""
        placed = sum(1 for card in self.center if rank_of(card) == rank)
        for shown in self.shown:
            placed += sum(1 for card in shown.taken if rank_of(card) == rank)
        return placed

    def rate(self, key: tuple[Any, ...], prior: tuple[float, float]) -> float:
        hits, times = self.stats.get(key, (0, 0))
        return (hits + prior[0]) / (times + prior[0] + prior[1])

    def sign_habit(self, team: int, sign: Sign) -> float:
        """How likely ``sign`` is ``team``'s sign this round, from the signs the reveals showed (people keep favourites)."""
        past = self.signs[team]
        return (past.count(sign) + SIGN_HABIT_PRIOR / len(SIGNS)) / (len(past) + SIGN_HABIT_PRIOR)

    def evidence(self, seat: int, pulses: bool = True) -> tuple[float, bool]:
        """How likely ``seat`` holds four of a kind now, from its public cards and its signals as learned so far, and
        whether that rests on more than the cards: a proof, or a signal given since the last swap.

        ``pulses=False`` leaves the seat's pulses out: for our partner, whose sign we know, the convention says
        it all (the sign means four; anything else is a decoy).
        """
        state, _ = self.status(seat)
        if state != POSSIBLE:
            return float(state == PROVEN), state == PROVEN
        chance = self.rate(("cards", seat, len(self.shown[seat].taken)), CARDS_PRIOR)
        signalled = False
        since = self.last_swap[seat]  # a signal speaks of the hand it was given with, not of a later one
        if self.take_at[seat] > since:
            signalled = True
            chance = max(chance, self.rate(("take", seat), TAKE_PRIOR))
        pulse = self.pulse[seat] if pulses else None
        if pulse is not None and pulse[0] > since:
            signalled = True
            chance = max(chance, self.rate(("pulse", seat), PULSE_PRIOR))
            habit = self.sign_habit(team_of(seat, self.players), pulse[1])
            chance = max(chance, habit * self.rate(("sign_pulse", seat), SIGN_PULSE_PRIOR))
        return chance, signalled

    def collector(self, seat: int) -> tuple[str | None, int]:
        """The rank ``seat`` visibly collects (it shows two or more of it and nothing else), and how many it shows.

        Not the same as "could hold four now": a seat one card short, that card in the center, cannot hold four
        yet, and is the very seat to block.
        """
        taken = self.shown[seat].taken
        if len(taken) < COLLECTING:
            return None, 0
        rank = rank_of(taken[0])
        return (rank, len(taken)) if all(rank_of(card) == rank for card in taken) else (None, 0)


# --- the hard level ------------------------------------------------------------------------------------

#: Call without waiting for the partner's sign when the partner holds four with at least this chance:
#: a wrong call gives every other team a point (R13), so only near-certainty will do.
CALL_CONFIDENCE = 0.8
#: Counter when an opposing team holds four with at least this chance: a wrong counter gives them the point
#: (R14), a right one takes it; waiting while they hold four usually hands it to them at their partner's call.
COUNTER_CONFIDENCE = 0.55
#: On the cards alone (no proof, no signal since the seat's last swap) the bar is higher: a hand of four
#: usually shows itself soon (a channel taken, a pulse), and a counter made on a guess hands the point over.
CARDS_COUNTER_CONFIDENCE = 0.75
#: Worth of holding 0..4 cards of a rank that can still be completed, when choosing a swap.
HOLD_WORTH = (0.0, 0.0, 3.0, 10.0, 1000.0)
#: Worth of taking from the center the rank an opponent visibly collects, per card of it they show (blocking).
BLOCK_WORTH = 2.0
#: Cost of putting down the rank an opponent visibly collects, per card of it they show (feeding them).
FEED_COST = 3.0
#: Worth of putting down the rank our partner visibly collects (it may reach them).
PARTNER_FEED_WORTH = 0.5
#: Seconds with no useful swap in the center before the center counts as dead and a reshuffle is asked for.
DEAD_CENTER_SECONDS = 12.0
#: An opponent this likely to hold four (but not likely enough to counter) is a threat a reshuffle removes.
THREAT_CHANCE = 0.3
#: Looks at the table after which a decoy emoji is changed, on average (a steady decoy is easy to tune out).
DECOY_CHANGE_LOOKS = 8


class HardBot(NormalBot):
    """Normal play, plus reading the table: counters on evidence, early calls on proof, blocks, reshuffles, decoys."""

    level = "hard"

    def __init__(self, rng: random.Random | None = None) -> None:
        super().__init__(rng)
        self._stuck_since: float | None = None

    def partner_shows_sign(self, view: SeatView) -> bool:
        if not super().partner_shows_sign(view):
            return False
        reader = self.reader
        return not (reader.valid and reader.status(view.partner)[0] == IMPOSSIBLE)  # the cards say it cannot be

    def pick_sign(self, view: SeatView) -> Sign:
        used = self.reader.signs[view.team] if self.reader.signs else []
        fresh = [sign for sign in SIGNS if sign not in used]  # never a sign the table has seen us use
        return self.rng.choice(fresh or SIGNS)

    def vote(self, view: SeatView) -> bool:
        self.reader.sync(view)
        return self._want_reshuffle(view, ignore_rules=True)

    def play(self, view: SeatView, now: float) -> list[a.Action]:
        reader = self.reader
        reader.sync(view)
        if self.partner_shows_sign(view):
            return [a.Call()] if self.call_ready(view, now) else []
        if reader.valid:
            if reader.evidence(view.partner, pulses=False)[0] >= CALL_CONFIDENCE:
                # The partner's four is proven (or as good as): no need to wait for the pulse.
                return [a.Call()] if self.react_ready("call", now) else []
            team, chance, signalled = self._likeliest_opponent(view)
            if chance >= (COUNTER_CONFIDENCE if signalled else CARDS_COUNTER_CONFIDENCE):
                return [a.Counter(team)] if self.react_ready(("counter", team), now) else []
        four = is_four(view.hand)
        actions = self._channel(view, four)
        if four:
            return actions  # hold it: the partner calls on the sign
        if self.swap_ready(view, now):
            swap = self._best_swap(view)
            if swap is not None:
                self._stuck_since = None
                return actions + [swap]
            if self._stuck_since is None:
                self._stuck_since = now
        return self._reshuffle_if_stuck(view, now, actions)

    def _reshuffle_if_stuck(self, view: SeatView, now: float, actions: list[a.Action]) -> list[a.Action]:
        """No swap worth making: after long enough without one (``_stuck_since``), ask for a reshuffle (R15)."""
        stuck_for = 0.0 if self._stuck_since is None else now - self._stuck_since
        if self._want_reshuffle(view, stuck_for):
            self._stuck_since = None
            return actions + [a.AskReshuffle()]
        return actions

    # --- evidence ----------------------------------------------------------------------------------

    def _likeliest_opponent(self, view: SeatView) -> tuple[int, float, bool]:
        """The opposing team most likely to hold four of a kind (either partner, R14), that chance, and whether a
        proof or a signal backs it (rather than the cards alone)."""
        teams = team_count(view.players)
        best, best_chance, best_signalled = opposing_teams(view.team, view.players)[0], 0.0, False
        for team in range(teams):
            if team == view.team:
                continue
            miss, signalled = 1.0, False
            for seat in team_seats(team, view.players):
                chance, seat_signalled = self._evidence(seat)
                miss *= 1.0 - chance
                signalled = signalled or seat_signalled
            if 1.0 - miss > best_chance:
                best, best_chance, best_signalled = team, 1.0 - miss, signalled
        return best, best_chance, best_signalled

    def _evidence(self, seat: int) -> tuple[float, bool]:
        """What the reader makes of ``seat``: how likely it holds four of a kind, and whether a signal says so."""
        return self.reader.evidence(seat)

    # --- the channel -------------------------------------------------------------------------------

    def _channel(self, view: SeatView, four: bool) -> list[a.Action]:
        """Hold the channel all round, so that taking it gives nothing away; pulse the sign only on four of a kind.

        Decoys are pulsed when the opponents have shown they counter: a decoy that looks like our sign
        (one our team used before) invites a wrong counter, which scores for us.
        """
        if not view.channel_held:
            if view.channel_wait_ms > 0:
                return []
            if four:
                return [a.TakeChannel(), a.ChooseEmoji(view.sign)]
            decoy = self._decoy(view)
            return [a.TakeChannel()] + ([a.ChooseEmoji(decoy)] if decoy else [])
        if four:
            return [] if view.channel_sign == view.sign else [a.ChooseEmoji(view.sign)]
        if view.channel_sign is not None and view.channel_sign == view.sign:
            return [a.ChooseEmoji(self._decoy(view))]  # no longer four (a reshuffle): stop showing the sign
        if self._decoys_help(view) and (view.channel_sign is None or self.rng.randrange(DECOY_CHANGE_LOOKS) == 0):
            return [a.ChooseEmoji(self._decoy(view))]
        return []

    def _decoys_help(self, view: SeatView) -> bool:
        counters = self.reader.counters
        return any(n for team, n in enumerate(counters) if team != view.team)

    def _decoy(self, view: SeatView) -> Sign | None:
        if not self._decoys_help(view):
            return None
        used = [sign for sign in (self.reader.signs[view.team] if self.reader.signs else []) if sign != view.sign]
        if used and self.rng.random() < 0.5:
            return self.rng.choice(used)
        return self.rng.choice([sign for sign in SIGNS if sign != view.sign])

    # --- swapping ----------------------------------------------------------------------------------

    def _best_swap(self, view: SeatView) -> a.Swap | None:
        """The swap that most improves the hand, counting what others visibly collect (blocked, to block, to feed)."""
        reader = self.reader
        collecting: dict[str, int] = {}  # rank -> most cards of it an opponent shows while it could make four
        partner_rank: str | None = None
        locked: dict[str, int] = {}  # cards of a rank held by someone collecting it: not coming back
        if reader.valid:
            for seat in range(view.players):
                if seat == view.seat:
                    continue
                rank, shown = reader.collector(seat)
                if rank is None:
                    continue
                locked[rank] = locked.get(rank, 0) + shown
                if seat == view.partner:
                    partner_rank = rank
                else:
                    collecting[rank] = max(collecting.get(rank, 0), shown)
        counts = rank_counts(view.hand)
        base = self._worth(counts, locked)
        best: a.Swap | None = None
        best_gain = 0.0
        for slot, take in enumerate(view.center):
            taken_rank = rank_of(take)
            block = BLOCK_WORTH * collecting.get(taken_rank, 0)
            for give in dict.fromkeys(view.hand):
                given_rank = rank_of(give)
                if given_rank == taken_rank:
                    continue
                counts[given_rank] -= 1
                counts[taken_rank] = counts.get(taken_rank, 0) + 1
                gain = self._worth(counts, locked) - base + block
                counts[taken_rank] -= 1
                counts[given_rank] += 1
                gain -= FEED_COST * collecting.get(given_rank, 0)
                if given_rank == partner_rank:
                    gain += PARTNER_FEED_WORTH
                gain += self.rng.random() * 1e-3  # ties broken at random
                if gain > best_gain:
                    best, best_gain = a.Swap(give, slot, take), gain
        return best

    @staticmethod
    def _worth(counts: dict[str, int], locked: dict[str, int]) -> float:
        """How close a hand is to four of a kind: a rank counts unless someone collecting it holds some (they keep them)."""
        return sum(HOLD_WORTH[held] for rank, held in counts.items() if held and not locked.get(rank))

    # --- reshuffles --------------------------------------------------------------------------------

    def _want_reshuffle(self, view: SeatView, stuck_for: float = 0.0, ignore_rules: bool = False) -> bool:
        """Ask for a fresh deal (R15) when an opponent is close and we are not, or when the center is dead for us."""
        if not ignore_rules and (view.reshuffle_used or view.vote is not None or view.vote_wait_ms > 0):
            return False
        held = max(rank_counts(view.hand).values(), default=0)
        reader = self.reader
        partner_close = reader.valid and reader.collector(view.partner)[1] >= 2
        if held >= 3 or partner_close:
            return False  # our team is close: keep the cards
        if reader.valid and self._likeliest_opponent(view)[1] >= THREAT_CHANCE:
            return True
        return stuck_for >= DEAD_CENTER_SECONDS and held <= 2


# --- the expert level ------------------------------------------------------------------------------------

#: Beliefs before any evidence (see ``TableReader``) for what ``hard`` does not read at all:
#: ... the seat released its channel while its public cards allowed four (people signal by releases too).
RELEASE_PRIOR = (1.0, 3.0)
#: ... the seat had not swapped for ``SILENCE_SECONDS`` while its public cards allowed four (a hand of four
#: cannot swap without breaking it, so a player who holds four goes quiet).
SILENCE_PRIOR = (1.0, 3.0)
#: Seconds without a swap after which a seat counts as silent.
SILENCE_SECONDS = 4.0
#: Worth of a swap that leaves our public cards looking like four of a kind while we do not hold it (a bait:
#: a counter on it hands us the point), once an opposing team has shown that it counters.
BAIT_WORTH = 4.0
#: While an opposing team has countered on the cards (a hand that could be four, on no other sign) in one of
#: the last this many rounds, the swap that makes four waits: the counter would come, and be right. A bait
#: (a hand that looks like four and is not) is shown instead, and the counter it draws is ours.
WARY_ROUNDS = 3
#: A table that counters on the cards counters the latest hand they allow (``ExpertReader.latest_possible``). While
#: that is our bait, the counters it draws are ours to gain: ``expert`` counters another team only on a posterior of
#: at least ``HOLD_BAR`` meanwhile (a wrong counter of ours would end the round on their point).
HOLD_BAR = 0.5


#: What ``expert`` learns from, per opposing team: every public behaviour of a seat in a *window* (from one of its
#: swaps to the next, while its public cards allow four), stamped at the look that saw it. A channel taken or
#: released, and how soon after the seat's own swap (within ``QUICK_SIGNAL`` s, or later); the channel held or
#: free when the window opened; a pulse, a pulse of a new emoji; how long the seat has been still (each of
#: ``SILENCE_STEPS`` reached); and the swap's rhythm: the gap since the seat's swap before (``GAP_STEPS``).
QUICK_SIGNAL = 1.0
SILENCE_STEPS = (2.5, 3.5, 4.5, 6.0)
GAP_STEPS = (3.0, 4.0, 5.5)
#: Each likelihood is a Beta posterior shrunk toward a wider rate with the weight of ``SHRINK`` windows:
#: P(feature | four) toward the feature's rate in all the team's windows, P(feature | no four) toward its rate
#: in every window without four (those the cards ruled out too, which need no reveal). So a feature nobody has
#: seen yet, or one seen everywhere, leaves the odds as they were; one seen before every four and never without
#: moves them by the ratio within two reveals. ``FEATURE_PRIOR`` is the Beta prior of the wider rates.
FEATURE_PRIOR = (1.0, 1.0)
SHRINK = 2.0
#: Added to the break-even posterior of a counter (``ExpertBot.counter_bar``).
COUNTER_MARGIN = 0.15
#: Beta prior (countered, not) on the chance that a third team counters a hand we wait on, before any reveal: even
#: odds, nothing known.
THIRD_COUNTER_PRIOR = (1.0, 1.0)
#: Where a third team ends at least this share of the rounds on a hand we wait on (q, ``ExpertBot.counter_bar``), the
#: table counters every hand the cards allow: waiting shows nothing (the hand is countered a reaction later, right or
#: wrong), and the accused scores from a wrong counter of theirs exactly as from ours, so ``expert`` counters any such
#: hand with a chance of four of at least ``RACED_BAR``: every real four it is first to counter is a point taken from
#: them.
RACED_Q = 0.75
RACED_BAR = 0.02
#: During a round ``expert`` watches the table without a break, as a practised player does: it glances at it this
#: often (seconds), between its regular looks (one reaction time apart, like every level's). A glance only sees
#: sooner: a counter or a call on what it shows still goes one reaction time (the level's band) after the glance
#: that saw it, a swap still waits for the cooldown and a reaction, and the first swap after a deal is made at a
#: regular look, as before. So what a look shows is answered within ``WATCH_GLANCE`` plus a reaction of it falling,
#: never sooner than the band, and no longer up to a whole look later.
WATCH_GLANCE = 0.05


#: The most points a team may still need in ``match_chance``'s reckoning: a match further from its end is weighed as
#: if scaled down to this (every team's need in proportion, one point then standing for several). The race's states
#: grow with the needs to the power of the teams, and unbounded (a profile's ``target_score`` has no maximum) one
#: decision took seconds, or failed on Python's recursion limit: bounded, the whole table of a four-team race is
#: about 4,400 states, reckoned once (milliseconds) and kept.
MATCH_NEED_CAP = 12


def point_values(scores: Sequence[int], target: int, us: int, accused: int) -> tuple[float, float, float]:
    """What one point does to our team's chance of winning the match (R20), at these scores: (what ours gains it,
    what the accused team's costs it, what a third team's costs it on average; 0.0 if there is no third team).

    The chance is worked out as if every point from here went to a team drawn at random (``match_chance``): the
    teams are equals, and only the scores tell them apart. All 0.0 when the match is decided or has no target. Far
    from the end (a need over ``MATCH_NEED_CAP``) a point is one of the scaled race's: the three keep their ratios.
    """
    teams = len(scores)
    if target <= 0 or teams < 2 or not 0 <= us < teams or not 0 <= accused < teams or max(scores) >= target:
        return 0.0, 0.0, 0.0
    needs = _scaled_needs(scores, target)

    def after(team: int) -> float:
        return _chance(tuple(n - (i == team) for i, n in enumerate(needs)), us)

    now = _chance(needs, us)
    thirds = [now - after(t) for t in range(teams) if t not in (us, accused)]
    return after(us) - now, now - after(accused), sum(thirds) / len(thirds) if thirds else 0.0


def match_chance(scores: tuple[int, ...], target: int, us: int) -> float:
    """The chance that team ``us`` reaches ``target`` first, if each point from here goes to any team alike (needs
    over ``MATCH_NEED_CAP`` scaled down to it)."""
    if scores[us] >= target:
        return 1.0
    if max(scores) >= target:
        return 0.0
    return _chance(_scaled_needs(scores, target), us)


def _scaled_needs(scores: Sequence[int], target: int) -> tuple[int, ...]:
    needs = [target - n for n in scores]
    top = max(needs)
    if top <= MATCH_NEED_CAP:
        return tuple(needs)
    return tuple(max(1, round(n * MATCH_NEED_CAP / top)) for n in needs)


def _chance(needs: tuple[int, ...], us: int) -> float:
    """``us``'s chance in the race where team i still needs ``needs[i]`` points (0: it has won)."""
    if needs[us] <= 0:
        return 1.0
    if min(needs) <= 0:
        return 0.0
    return _race(needs[us], tuple(sorted(needs[:us] + needs[us + 1 :])))


@functools.lru_cache(maxsize=1 << 16)
def _race(mine: int, others: tuple[int, ...]) -> float:
    """The chance of the team that needs ``mine`` points against teams needing ``others`` (sorted: the teams are
    alike, so only the multiset counts), every point to any team alike. Depth at most the needs' sum (48 at most
    with ``MATCH_NEED_CAP``), never Python's recursion limit."""
    teams = len(others) + 1
    total = 1.0 if mine == 1 else _race(mine - 1, others)
    last = 0.0  # the race after a point of the team before, which a team of the same need shares
    for i, n in enumerate(others):
        if n == 1:
            continue  # that team reaches the target: 0 for us
        if not (i and others[i - 1] == n):
            last = _race(mine, tuple(sorted((*others[:i], n - 1, *others[i + 1 :]))))
        total += last
    return total / teams


class _Window:
    """One seat's hand between two of its swaps: what the table saw it do meanwhile."""

    __slots__ = ("id", "seat", "start", "k", "features", "learn")

    def __init__(self, ident: int, seat: int, k: int, learn: bool) -> None:
        self.id = ident
        self.seat = seat
        self.start: float | None = None  # when we saw the swap that opened it (our clock)
        self.k = k  # cards of one rank in public view at the opening
        self.features: set[str] = set()
        self.learn = learn  # its public cards allowed four: the reveal will say whether it was four


class SignalLearner:
    """Naive Bayes over public behaviour, per team, learnt from the reveals.

    For each opposing team: how many of its windows held four and how many did not (per count of cards in
    view), and in how many of each kind every feature occurred. The posterior for a seat now is the prior
    odds of its window (Beta over the windows with ``EXPERT_CARDS_PRIOR``) times, for each feature seen in
    the window so far, P(feature | four) / P(feature | no four), each a shrunk Beta posterior (``SHRINK``).
    P(feature | no four) is learnt from the windows whose cards allowed four and did not hold it, shrunk
    toward the same rate in *every* window without four (those the cards ruled out too, which need no
    reveal): a pair that bluffs only where the cards look like four is found out by its own windows, and a
    signal never given without four is found out by all of them.
    A behaviour that came before every revealed four is believed; one that came as often without four (a
    bluff) weighs nothing; one that came only without four lowers the odds. Nothing is known in advance of
    what a pair's signal is.
    """

    def __init__(self, teams: int) -> None:
        self.windows: dict[tuple[int, int], list[int]] = {}  # (team, k) -> [four, no four], cards allowing four
        self.totals = [[0, 0, 0] for _ in range(teams)]  # per team: windows with four, without, ruled out by cards
        self.features: dict[tuple[int, str], list[int]] = {}  # (team, feature) -> the same three counts

    def learn(self, team: int, k: int, features: set[str], four: bool, possible: bool = True) -> None:
        index = 2 if not possible else 0 if four else 1
        if possible:
            self.windows.setdefault((team, k), [0, 0])[index] += 1
        self.totals[team][index] += 1
        for feature in features:
            self.features.setdefault((team, feature), [0, 0, 0])[index] += 1

    def likelihood_ratio(self, team: int, feature: str) -> float:
        with_four, without, ruled_out = self.features.get((team, feature), (0, 0, 0))
        fours, others, impossible = self.totals[team]
        a, b = FEATURE_PRIOR
        anywhere = (with_four + without + ruled_out + a) / (fours + others + impossible + a + b)
        no_four = (without + ruled_out + a) / (others + impossible + a + b)
        given_four = (with_four + SHRINK * anywhere) / (fours + SHRINK)
        given_none = (without + SHRINK * no_four) / (others + SHRINK)
        return given_four / given_none

    def chance(self, team: int, k: int, features: Sequence[str], pool: Sequence[int] = ()) -> float:
        """P(four) for a seat of ``team`` showing ``k`` cards of one rank, with ``features`` seen in its window.

        The cards' own rate is the team's, shrunk (``SHRINK``) toward the rate over the ``pool`` of teams (the
        other opposing teams: how people collect is learnt from all of them, how this pair signals from it alone)."""
        fours, others = self.windows.get((team, k), (0, 0))
        pool_fours = sum(self.windows.get((t, k), (0, 0))[0] for t in pool)
        pool_others = sum(self.windows.get((t, k), (0, 0))[1] for t in pool)
        a, b = EXPERT_CARDS_PRIOR
        pooled = (pool_fours + a) / (pool_fours + pool_others + a + b)
        prior = (fours + SHRINK * pooled) / (fours + others + SHRINK)
        odds = prior / (1.0 - prior)
        for feature in features:
            odds *= self.likelihood_ratio(team, feature)
        return odds / (1.0 + odds)


def _silence_feature(still: float) -> str | None:
    reached = [step for step in SILENCE_STEPS if still >= step]
    return f"still>{reached[-1]}" if reached else None


def _gap_feature(gap: float) -> str:
    for step in GAP_STEPS:
        if gap < step:
            return f"gap<{step}"
    return f"gap>{GAP_STEPS[-1]}"


_WIN = "window"


class ExpertReader(TableReader):
    """``TableReader`` that also reads releases and silences, and knows what the table sees of our own hand."""

    def __init__(self) -> None:
        super().__init__()
        self.release_at: list[int] = []  # when the seat last released its channel (event clock; -1: never this deal)
        self.swap_time: list[float] = []  # when we first saw the seat's latest swap (our clock)
        self._swap_seen: list[int] = []  # the event clock of the latest swap we stamped
        self._silences: set[tuple[int, int]] = set()  # (seat, swap clock) already logged as silent
        self.public = _Shown()  # our hand as the table sees it: what we took, and how many dealt cards remain
        self.card_counters: list[int] = []
        self.card_rounds: list[int | None] = []  # per round ended: the team that countered on the cards, if one did
        # Per opposing team: the rounds that ended, not by us, with its hand allowing four (``exposed``), and of those
        # the ones a third team ended by countering it (``exposed_countered``): the chance that waiting hands it to them.
        self.exposed: list[int] = []
        self.exposed_countered: list[int] = []
        self.learner = SignalLearner(0)
        self.window: list[_Window | None] = []  # each seat's window now (None: no swap yet this deal)
        self._windows: dict[int, _Window] = {}  # this deal's windows, by id
        self._pending: list[tuple[str, int]] = []  # behaviour seen since the last look, stamped at the next
        self._last_pulse: list[Sign | None] = []
        self._gap_from: dict[int, float] = {}
        # The seat whose swap last left its public cards allowing four, as the table sees them (None: none this
        # round): the hand a table that counters on the cards counters next (``HOLD_BAR``).
        self.latest_possible: int | None = None

    def _setup(self, players: int) -> None:
        super()._setup(players)
        self.card_counters = [0] * self.teams  # counters each team made on a hand whose cards allowed four
        self.card_rounds = []
        self.exposed = [0] * self.teams
        self.exposed_countered = [0] * self.teams
        self.learner = SignalLearner(self.teams)
        self.window = [None] * players
        self._windows = {}
        self._pending = []
        self._last_pulse = [None] * players
        self.release_at = [-1] * players
        self.swap_time = [0.0] * players
        self._swap_seen = [-1] * players
        self.latest_possible = None

    def _dealt(self, event: e.Dealt) -> None:
        super()._dealt(event)
        if self.players:
            self.release_at = [-1] * self.players
            self._swap_seen = [-1] * self.players
            self._silences = set()
            self.public = _Shown()
            self.window = [None] * self.players
            self._windows = {}
            self._pending = []
        self.latest_possible = None

    def _swapped(self, event: e.Swapped) -> None:
        if self.valid and event.seat == self.seat:
            public = self.public
            if event.put_down in public.taken:
                public.taken.remove(event.put_down)
            elif public.hidden > 0:
                public.hidden -= 1
                rank = rank_of(event.put_down)
                public.dealt_out[rank] = public.dealt_out.get(rank, 0) + 1
            public.taken.append(event.taken)
        super()._swapped(event)
        if self.valid and self.table_state(event.seat) != IMPOSSIBLE:
            self.latest_possible = event.seat
        if self.valid and event.seat != self.seat:
            seat = event.seat
            window = _Window(self.clock, seat, len(self.shown[seat].taken), self.status(seat)[0] == POSSIBLE)
            window.features.add("held" if self.take_at[seat] >= 0 else "free")
            previous = self.window[seat]
            self.window[seat] = window
            self._windows[window.id] = window
            self._pending.append(("swap", seat))
            if previous is not None and previous.start is not None:
                self._pending.append(("gap", seat))
                self._gap_from[seat] = previous.start
            if window.learn:
                self.log.append((_WIN, seat, window.id))

    def _channel_taken(self, event: e.ChannelTaken) -> None:
        super()._channel_taken(event)
        if self.players and self.valid:
            self._pending.append(("take", event.seat))

    def _pulse(self, event: e.Pulse) -> None:
        if self.players and self.valid:
            new = self._last_pulse[event.seat] != event.sign
            self._pending.append(("pulse-new" if new else "pulse-same", event.seat))
            self._last_pulse[event.seat] = event.sign
        super()._pulse(event)

    def _channel_released(self, event: e.ChannelReleased) -> None:
        if self.players and self.valid:
            self.release_at[event.seat] = self.clock
            if event.seat != self.seat and self.status(event.seat)[0] == POSSIBLE:
                self.log.append((_TAKE, event.seat, ("release", event.seat)))
            self._pending.append(("release", event.seat))
        super()._channel_released(event)

    def note_time(self, now: float) -> None:
        """Stamp the swaps seen since the last look, and log the seats gone silent (a moment to learn from)."""
        if not self.valid:
            return
        self._stamp(now)
        for seat in range(self.players):
            if self.last_swap[seat] != self._swap_seen[seat]:
                self._swap_seen[seat] = self.last_swap[seat]
                self.swap_time[seat] = now
            elif seat != self.seat and now - self.swap_time[seat] >= SILENCE_SECONDS:
                key = (seat, self.last_swap[seat])
                if key not in self._silences and self.status(seat)[0] == POSSIBLE:
                    self._silences.add(key)
                    self.log.append((_TAKE, seat, ("silent", seat)))

    def _stamp(self, now: float) -> None:
        """Give the behaviour seen since the last look its moment, and file it under the seat's window."""
        for kind, seat in self._pending:
            window = self.window[seat]
            if seat == self.seat or window is None:
                continue
            if kind == "swap":
                window.start = now
            elif kind == "gap":
                window.features.add(_gap_feature(now - self._gap_from.get(seat, now)))
            elif kind in ("take", "release"):
                quick = window.start is None or now - window.start <= QUICK_SIGNAL
                window.features.add(f"{kind}-{'quick' if quick else 'late'}")
            else:
                window.features.add(kind)
        self._pending = []
        for seat, window in enumerate(self.window):
            if window is not None and window.start is not None and seat != self.seat:
                still = _silence_feature(now - window.start)
                if still is not None and still not in window.features:
                    for step in SILENCE_STEPS:  # every step reached on the way: each is a feature to learn
                        if now - window.start >= step:
                            window.features.add(f"still>{step}")

    def chance(self, seat: int, now: float) -> float:
        """The posterior that ``seat`` holds four now: its cards, and what its team's reveals taught of its behaviour."""
        state, _ = self.status(seat)
        if state != POSSIBLE:
            return float(state == PROVEN)
        window = self.window[seat]
        if window is None:
            return 0.0
        features = [f for f in window.features if not f.startswith("still>")]
        if window.start is not None:
            still = _silence_feature(now - window.start)
            if still is not None:
                features.append(still)  # only the longest stillness reached: the shorter ones are implied
        ours = None if self.seat is None else team_of(self.seat, self.players)
        team = team_of(seat, self.players)
        pool = [t for t in range(self.teams) if t not in (ours, team)]
        return self.learner.chance(team, len(self.shown[seat].taken), features, pool)

    def _learn(self, event: e.RoundEnded) -> None:
        """The windows first (replayed backwards from the reveal, like every logged moment), then ``hard``'s lessons."""
        hands = [list(hand) for hand in event.hands]
        labels: list[tuple[_Window, int, bool]] = []
        for entry in reversed(self.log):
            if entry[0] == _SWAP:
                _, seat, put_down, taken = entry
                if taken not in hands[seat]:
                    labels = []
                    break
                hands[seat].remove(taken)
                hands[seat].append(put_down)
            elif entry[0] == _WIN:
                window = self._windows.get(entry[2])
                if window is not None:
                    labels.append((window, entry[1], is_four(hands[entry[1]])))
        for window, seat, four in labels:
            self.learner.learn(team_of(seat, self.players), window.k, window.features, four)
        if labels or not any(entry[0] == _WIN for entry in self.log):
            for window in self._windows.values():
                if not window.learn:  # the cards ruled four out: no reveal needed to know it
                    self.learner.learn(
                        team_of(window.seat, self.players), window.k, window.features, False, possible=False
                    )
        log = self.log
        self.log = [entry for entry in log if entry[0] != _WIN]
        try:
            super()._learn(event)
        finally:
            self.log = log

    def silent(self, seat: int, now: float) -> bool:
        return self.valid and now - self.swap_time[seat] >= SILENCE_SECONDS

    def evidence_at(self, seat: int, now: float, pulses: bool = True) -> tuple[float, bool]:
        """``evidence`` with releases and silences read too, each as this seat has shown it means (or not) four."""
        chance, signalled = self.evidence(seat, pulses)
        if self.status(seat)[0] != POSSIBLE:
            return chance, signalled
        if self.release_at[seat] > self.last_swap[seat]:
            signalled = True
            chance = max(chance, self.rate(("release", seat), RELEASE_PRIOR))
        if self.silent(seat, now):
            signalled = True
            chance = max(chance, self.rate(("silent", seat), SILENCE_PRIOR))
        return chance, signalled

    def _round_ended(self, event: e.RoundEnded) -> None:
        if self.players and self.valid:
            # Each opposing team whose hand allowed four as the round ended, when we did not end it: did a third
            # team end it by countering that hand? (``ExpertBot.counter_bar``: what waiting on such a hand costs.)
            ours = None if self.seat is None else team_of(self.seat, self.players)
            by = None if event.by is None else team_of(event.by, self.players)
            if by is None or by != ours:
                for team in range(self.teams):
                    if team != ours and any(self.public_state(s) == POSSIBLE for s in team_seats(team, self.players)):
                        self.exposed[team] += 1
                        self.exposed_countered[team] += event.outcome == "counter" and event.accused == team
        if (
            self.players
            and self.valid
            and event.outcome == "counter"
            and event.by is not None
            and event.accused is not None
        ):
            # Did the accused team show a hand that could be four (a counter on the cards)?
            shown = any(self.public_state(seat) == POSSIBLE for seat in team_seats(event.accused, self.players))
            team = team_of(event.by, self.players)
            self.card_counters[team] += shown
            self.card_rounds.append(team if shown else None)
        elif self.players:
            self.card_rounds.append(None)
        super()._round_ended(event)

    def public_state(self, seat: int) -> int:
        """What we make of ``seat``'s hand, and of ours what the table makes of it (not what we know of it)."""
        return self.status(seat)[0] if seat != self.seat else self.table_state(seat)

    def table_state(self, seat: int) -> int:
        """What the others make of ``seat``'s hand: the public cards alone, without what our own hand tells us."""
        if self.seat is None:
            return self.status(seat)[0]
        saved = self.shown[self.seat]
        self.shown[self.seat] = self.public
        try:
            return self.status(seat)[0]
        finally:
            self.shown[self.seat] = saved

    def public_status_after(self, give: Card, slot: int, take: Card) -> int:
        """What the table would make of our hand after this swap: impossible, possible or proven four."""
        seat = self.seat
        if seat is None or not self.valid:
            return IMPOSSIBLE
        public = self.public
        after = _Shown()
        after.taken = [card for card in public.taken if card != give] + [take]
        after.hidden = public.hidden - (give not in public.taken)
        after.dealt_out = dict(public.dealt_out)
        if give not in public.taken:
            after.dealt_out[rank_of(give)] = after.dealt_out.get(rank_of(give), 0) + 1
        if after.hidden < 0:
            return IMPOSSIBLE
        saved_shown, saved_center = self.shown[seat], self.center
        self.shown[seat] = after
        self.center = list(saved_center)
        self.center[slot] = give
        try:
            return self.status(seat)[0]
        finally:
            self.shown[seat], self.center = saved_shown, saved_center


class ExpertBot(HardBot):
    """``hard`` without its tells, reading more: the strongest level.

    - Its sign is drawn from all 24 (a sign used before proves nothing), its channel is up from the start and
      pulses a fresh decoy at every beat, so the true sign, when it comes, looks like any other beat.
    - The sign goes up in the same breath as the swap that makes four: no look's delay.
    - It baits: once an opponent has shown it counters, a swap that makes our public cards look like four
      without holding it is worth something (a counter on it is our point).
    - It is wary: while an opponent counters on the cards (``WARY_ROUNDS``), it does not make the swap that
      completes four, which such a counter would catch; it shows baits instead.
    - It learns each opposing pair's signal, whatever it is, from the reveals (``SignalLearner``: naive Bayes over
      every public behaviour of a seat between two of its swaps), and counters when that makes a counter likelier
      to pay than waiting (``counter_bar``, each point weighed by what it does to the match: ``point_values``); it
      stops countering what the reveals show to be a bluff, and holds a doubtful counter while the table's card
      counters aim at its bait (``HOLD_BAR``).
    - It weighs swaps by a count of where the missing cards are (``_reach``), and against a table that counters on
      the cards takes the ranks opponents begin to collect (``_deny``).
    - With a bot partner, the channel changes with a swap exactly when a key drawn from the team's sign says so
      (``keyed_toggle``): the table sees a channel change with half the swaps. It reads its partner as it reads a
      person, by the documented convention (the team's sign on the channel means four), until the partner's own
      swaps show that it keeps the key too (``KEY_PROOF``: only another expert does). From then on, and only with
      such a partner, the swap that makes four breaks the key and the partner calls a look later, four or not
      never shown; with any other partner it shows the team's sign on four, as the convention says.
    """

    level = "expert"

    def __init__(self, rng: random.Random | None = None) -> None:
        super().__init__(rng)
        self.reader: ExpertReader = ExpertReader()
        self._beats = 0  # our own pulses seen: each one calls for a fresh decoy
        self._decoy_beat = -1
        # The pair's own convention, with a bot partner: keyed by the team's sign (``keyed_toggle``).
        self._sign: Sign | None = None
        self._partner: int | None = None
        self._bot_partner = False  # our partner is a bot: our channel changes with our swaps by the key
        self._paired = False  # our partner has shown that it keeps the key too: the pair's own convention is on
        self._key_kept = 0  # the partner's swaps whose channel change (or none) the key foretold
        self._key_missed = 0  # ... and those it did not
        self._swaps_made: dict[int, int] = {}  # swaps this deal, by seat (ours and our partner's)
        self.keyed_four = False  # the partner's latest swap broke the key: it holds four
        self._watching = False  # in a round: glancing at the table every ``WATCH_GLANCE`` s
        self._regular_at: float | None = None  # when the next regular look falls (one reaction after the last)
        self._last_look = 0.0  # the moment of the latest look in a round (a glance or a regular one)

    def observe(self, events: list[e.Event]) -> None:
        super().observe(events)
        seat = self.reader.seat
        for i, event in enumerate(events):
            if isinstance(event, e.Pulse) and event.seat == seat:
                self._beats += 1
            elif isinstance(event, (e.Dealt, e.SigningStarted, e.RoundEnded)):
                self._swaps_made, self.keyed_four = {}, False
                if isinstance(event, e.SigningStarted):
                    self._sign = None  # a new round, a new sign: the key is unknown until it is chosen
            elif isinstance(event, e.SignChosen):
                self._sign = event.sign  # our team's (R6: nobody else is told it)
            elif isinstance(event, e.Swapped):
                made = self._swaps_made[event.seat] = self._swaps_made.get(event.seat, 0) + 1
                if event.seat == self._partner and self._bot_partner and self._sign is not None:
                    # The toggle, if any, comes in the same batch as the swap it goes with.
                    toggled = any(
                        isinstance(later, (e.ChannelTaken, e.ChannelReleased)) and later.seat == event.seat
                        for later in events[i + 1 :]
                    )
                    expected = keyed_toggle(self._sign, self._deals, event.seat, made)
                    if toggled == expected:
                        self._key_kept += 1
                    else:
                        self._key_missed += 1
                    self.keyed_four = self._paired and made >= HAND_SIZE - DEALT_MAX and toggled != expected

    def sign(self, view: SeatView) -> list[a.Action]:
        self._note(view)
        self._watching = False
        return super().sign(view)

    def think_time(self) -> float:
        """During a round: the next glance (``WATCH_GLANCE``), or sooner the regular look or a reaction falling due."""
        if not self._watching or self._idle is not None:
            self._watching, self._regular_at = False, None
            return super().think_time()
        due, self._due = self._due, None
        now = self._now
        if self._regular_at is None or self._regular_at <= now + REACT_SLACK:
            self._regular_at = now + self.reaction()
        target = self._regular_at if due is None else min(self._regular_at, max(now, due))
        swap_due = self._swap_due
        if swap_due is not None and swap_due[1] > now + REACT_SLACK:
            target = min(target, swap_due[1])  # the next swap falls due then: look at that moment, glance or not
        return min(max(0.0, target - now), WATCH_GLANCE)

    def _glance(self, now: float) -> bool:
        """Whether this look is a glance between two regular looks."""
        return self._regular_at is not None and now < self._regular_at - REACT_SLACK

    def _bait_now(self, view: SeatView, now: float, glance: bool, previous: float) -> a.Swap | None:
        """The bait to show now, while a counter waits for its reaction: a swap due now (at a regular look, or as it
        falls due) after which our public cards could be four and are not; None if there is none."""
        if is_four(view.hand) or (glance and not self._swap_falls_due(now, previous)) or not self.swap_ready(view, now):
            return None
        if not self.reader.valid or not self._baits_help(view):
            return None
        swap = self._best_swap(view)
        if swap is None:
            return None
        after = list(view.hand)
        after[after.index(swap.give)] = swap.take
        if is_four(after) or self.reader.public_status_after(swap.give, swap.slot, swap.take) == IMPOSSIBLE:
            return None
        return swap

    def _swap_falls_due(self, now: float, previous: float) -> bool:
        """Whether the next swap fell due (the cooldown's end and a reaction, R9) since the look before this one: a
        swap may go at that moment, as at any regular look, never at a glance between."""
        due = self._swap_due
        return due is not None and previous < due[1] - REACT_SLACK <= now

    def _note(self, view: SeatView) -> None:
        if view.partner != self._partner:
            self._key_kept = self._key_missed = 0  # a new partner: what the last one showed says nothing of it
        self._sign, self._partner = view.sign, view.partner
        self._bot_partner = view.seats[view.partner].bot
        seen = self._key_kept + self._key_missed
        self._paired = self._bot_partner and seen >= KEY_PROOF and self._key_missed <= KEY_SLIP * seen

    def pick_sign(self, view: SeatView) -> Sign:
        return self.rng.choice(SIGNS)  # any of the 24: a decoy that repeats an old sign proves nothing

    def play(self, view: SeatView, now: float) -> list[a.Action]:
        reader = self.reader
        reader.sync(view)
        reader.note_time(now)
        self._note(view)
        glance, self._watching = self._glance(now), True
        previous, self._last_look = self._last_look, now
        if self.partner_shows_sign(view):
            return [a.Call()] if self.call_ready(view, now) else []
        if self._paired and self.keyed_four and not (reader.valid and reader.status(view.partner)[0] == IMPOSSIBLE):
            return [a.Call()] if self.react_ready("call", now) else []  # the pair's own signal: the key broke
        if reader.valid:
            # A human partner's own ways are learnt (a release, a silence); a bot partner keeps the key, and its
            # channel changes with half its swaps: only a proof from the cards calls without the key.
            if self._paired:
                if reader.status(view.partner)[0] == PROVEN:
                    return [a.Call()] if self.react_ready("call", now) else []
            elif reader.evidence_at(view.partner, now, pulses=False)[0] >= CALL_CONFIDENCE:
                return [a.Call()] if self.react_ready("call", now) else []
            accused = self._counter_pick(view)
            if accused is not None:
                if self.react_ready(("counter", accused), now):
                    return [a.Counter(accused)]
                # Waiting to counter: a bait due now goes meanwhile. The table's counters go to the latest hand that
                # could be four, so ours, shown now, draws them from the hand we would counter (their wrong counter
                # is our point whether that hand held four or not).
                bait = self._bait_now(view, now, glance, previous)
                if bait is None:
                    return []
                return self._keyed_swap(view, bait, False, []) if self._bot_partner else [bait]
        four = is_four(view.hand)
        actions = self._channel(view, four)
        if four:
            return actions
        if glance and not self._swap_falls_due(now, previous):
            return actions  # a glance sees, and answers with a reaction (above): swaps and requests keep their pace
        if self.swap_ready(view, now):
            swap = self._best_swap(view)
            if swap is not None:
                self._stuck_since = None
                after = list(view.hand)
                after[after.index(swap.give)] = swap.take
                if self._bot_partner:
                    return self._keyed_swap(view, swap, is_four(after), actions)
                if is_four(after):
                    # The sign goes up with the swap (chosen after it, so a refused swap shows nothing).
                    return [x for x in actions if not isinstance(x, a.ChooseEmoji)] + [swap, a.ChooseEmoji(view.sign)]
                return actions + [swap]
            if self._stuck_since is None:
                self._stuck_since = now
        return self._reshuffle_if_stuck(view, now, actions)

    def _evidence(self, seat: int) -> tuple[float, bool]:
        return self.reader.chance(seat, self._now), True  # what this seat's team has shown its behaviour means

    def _counter_pick(self, view: SeatView) -> int | None:
        """The opposing team to counter now, if any: the one whose posterior clears its bar by the most."""
        best, margin = None, 0.0
        hold = HOLD_BAR if self._baiting(view) else 0.0
        for team in opposing_teams(view.team, view.players):
            miss = 1.0
            for seat in team_seats(team, view.players):
                miss *= 1.0 - self.reader.chance(seat, self._now)
            over = (1.0 - miss) - max(hold, self.counter_bar(view, team))
            if over >= margin:
                best, margin = team, over
        return best

    def counter_bar(self, view: SeatView, team: int) -> float:
        """The posterior at which countering ``team`` pays, against what waiting costs.

        Counter: +1 for us with chance p, else +1 for the accused (R14). Wait: another team counters this hand
        first with chance q (a point for someone else either way), else, with chance p, the holder's partner
        calls (a point for them), else nothing yet. In points for us against the field, countering pays when
        2p - 1 > -q - (1 - q) p, that is p > (1 - q) / (3 - q). The match is won, not the point: a point is weighed
        by what it does to our chance of winning the match (``point_values``: g for ours, l for the accused's, t for
        a third team's), so the bar is p > (1 - q) l / (g + 2 (1 - q) l + q t), the same (1 - q) / (3 - q) when every
        point weighs alike (two teams level), and lower where one of several teams is ours: at eight players and
        level scores our point is worth about three times an opponent's. ``COUNTER_MARGIN`` is added for the estimate's
        own error and for what waiting may still show. q is the chance that a third team counters it if we wait:
        the share of the rounds that ended, not by us, with this team's hand allowing four, that a third team ended
        by countering it (none at four players: the accused is the only other team). Counted per accused team, not
        per counterer: where three teams race to counter, each wins a third of the races, yet waiting loses every
        one of them. The margin
        shrinks with 1 - q: where the others counter every hand the cards allow, waiting shows nothing more (the
        hand is countered at someone else's next look), and any chance of four is a point taken from them.
        """
        reader = self.reader
        q = 0.0
        if team_count(view.players) > 2:  # at four players nobody else can counter
            hits, misses = THIRD_COUNTER_PRIOR
            q = min(0.9, (reader.exposed_countered[team] + hits) / (reader.exposed[team] + hits + misses))
        if q >= RACED_Q:
            return RACED_BAR  # the others counter nearly every such hand: waiting shows nothing, and loses the race
        gain, loss, third = point_values(view.scores, view.target_score, view.team, team)
        if gain + loss <= 0.0:
            return (1.0 - q) / (3.0 - q) + COUNTER_MARGIN * (1.0 - q)  # no score: the match is over or not yet set
        return (1.0 - q) * loss / (gain + 2.0 * (1.0 - q) * loss + q * third) + COUNTER_MARGIN * (1.0 - q)

    def _keyed_swap(self, view: SeatView, swap: a.Swap, four: bool, actions: list[a.Action]) -> list[a.Action]:
        """With a bot partner: the channel changes (taken or released) with a swap exactly when the key says so.
        With a partner that keeps the key too (``_paired``), the swap that makes four breaks the key and the partner
        calls on the break at once; with any other, the swap that makes four shows the team's sign, as the
        documented convention says (the channel kept or taken for it, whatever the key).

        To anyone without the team's sign, a channel changes with about half of our swaps, four or not.
        """
        assert view.sign is not None
        made = self._swaps_made.get(view.seat, 0) + 1
        breaks = four and self._paired and made >= HAND_SIZE - DEALT_MAX
        toggle = keyed_toggle(view.sign, self._deals, view.seat, made) != breaks
        if four and not self._paired:
            if view.channel_held:
                return [swap, a.ChooseEmoji(view.sign)]
            if view.channel_wait_ms > 0:
                return actions + [swap]  # the sign goes up as soon as the channel may be taken (``_channel``)
            return [swap, a.TakeChannel(), a.ChooseEmoji(view.sign)]
        if toggle and view.channel_wait_ms > 0:
            self.look_at(self._now + view.channel_wait_ms / 1000)
            return actions  # the swap waits for the channel: the key must be kept (or broken) with it
        if not toggle:
            return [swap, a.ChooseEmoji(view.sign)] if four and view.channel_held else actions + [swap]
        if view.channel_held:
            return [swap, a.ReleaseChannel()]
        return [swap, a.TakeChannel(), a.ChooseEmoji(view.sign if four else self._any_decoy(view))]

    def _channel(self, view: SeatView, four: bool) -> list[a.Action]:
        """Up from the start, a fresh decoy at every beat; the sign only on four of a kind. With a bot partner the
        channel changes only with swaps (``_keyed_swap``); while held it pulses decoys, and the sign on four."""
        if self._bot_partner:
            if not view.channel_held:
                if four and not self._paired and view.channel_wait_ms <= 0:
                    return [a.TakeChannel(), a.ChooseEmoji(view.sign)]  # the convention: four shows the sign
                return []
            if four:
                return [] if view.channel_sign == view.sign else [a.ChooseEmoji(view.sign)]
            if view.channel_sign is None or view.channel_sign == view.sign or self._decoy_beat != self._beats:
                self._decoy_beat = self._beats
                return [a.ChooseEmoji(self._any_decoy(view))]
            return []
        if not view.channel_held:
            if view.channel_wait_ms > 0:
                return []
            self._decoy_beat = self._beats
            return [a.TakeChannel(), a.ChooseEmoji(view.sign if four else self._any_decoy(view))]
        if four:
            return [] if view.channel_sign == view.sign else [a.ChooseEmoji(view.sign)]
        if view.channel_sign is None or view.channel_sign == view.sign or self._decoy_beat != self._beats:
            self._decoy_beat = self._beats
            return [a.ChooseEmoji(self._any_decoy(view))]
        return []

    def _worth(self, counts: dict[str, int], locked: dict[str, int]) -> float:  # type: ignore[override]
        """How close a hand is to four, by counting where the missing cards of each rank are (``reach``)."""
        reader = self.reader
        if not reader.valid or reader.seat is None:
            return HardBot._worth(counts, locked)
        return sum(HOLD_WORTH[held] * self._reach(rank, held) for rank, held in counts.items() if held)

    def _reach(self, rank: str, held: int) -> float:
        """The chance, by a count over the public cards, of getting the ``4 - held`` cards of ``rank`` we lack.

        Each missing card is in the center (ours for a swap), in a dealt card another seat still hides (it comes
        down when that seat plays it: about even odds, none if that seat visibly collects the rank), or taken by
        another seat (it chose it: it rarely gives it back). The missing cards' reach, over how many are needed,
        capped at one.
        """
        need = HAND_SIZE - held
        if need <= 0:
            return 1.0
        reader = self.reader
        center = sum(1 for card in reader.center if rank_of(card) == rank)
        taken = 0
        collected = False
        for seat, shown in enumerate(reader.shown):
            if seat == reader.seat:
                continue
            mine = sum(1 for card in shown.taken if rank_of(card) == rank)
            taken += mine
            collected = collected or (mine > 0 and reader.collector(seat)[0] == rank)
        hidden = max(0, need - center - taken)
        reach = center + (0.0 if collected else REACH_HIDDEN) * hidden + REACH_TAKEN * taken
        return min(1.0, reach / need)

    def _any_decoy(self, view: SeatView) -> Sign:
        return self.rng.choice([sign for sign in SIGNS if sign != view.sign and sign != view.channel_sign])

    def _best_swap(self, view: SeatView) -> a.Swap | None:
        reader = self.reader
        if not reader.valid or not self._baits_help(view):
            return super()._best_swap(view)
        # Opponents counter. A swap that makes our public cards look like four, without four, is a bait: take the
        # best one there is. Otherwise collect from a lone card (``NormalBot._target``): that way lies a bait.
        counts = rank_counts(view.hand)
        base = self._worth(counts, {})
        best, best_gain = None, -1e9
        for slot, take in enumerate(view.center):
            for give in dict.fromkeys(view.hand):
                if rank_of(give) == rank_of(take):
                    continue
                gain = self._gain(view, counts, base, a.Swap(give, slot, take))
                if gain > best_gain:
                    best, best_gain = a.Swap(give, slot, take), gain
        if best is not None and best_gain >= BAIT_WORTH - HOLD_WORTH[2]:
            return best
        swap = self._deny(view) or self._bait_start(view) or self._collect_swap(view)
        if swap is not None and self._wary(view) and rank_counts(view.hand).get(rank_of(swap.take)) == HAND_SIZE - 1:
            return None  # an opponent counters on the cards: the swap that makes four would hand it the point
        return swap

    def _deny(self, view: SeatView) -> a.Swap | None:
        """Against a table that counters on the cards: take the rank an opponent has begun to collect (it shows
        one card of it, or more, and nothing else), the more so when our own public cards head for a bait of it.

        The opponent's next card of that rank would show a hand that could be four, which the table counters
        (right or wrong, a point for someone else); taken by us, it is the first half of our own bait.
        """
        reader = self.reader
        mine = reader.public.taken
        counts = rank_counts(view.hand)
        best: a.Swap | None = None
        best_key: tuple[bool, int] = (False, 0)
        for seat in range(view.players):
            if team_of(seat, view.players) == view.team:
                continue
            taken = reader.shown[seat].taken
            if not taken or any(rank_of(card) != rank_of(taken[0]) for card in taken):
                continue
            rank = rank_of(taken[0])
            if counts.get(rank, 0) >= DEALT_MAX:
                continue  # two more of it would be four, not a bait
            on_the_way = all(rank_of(card) == rank for card in mine)  # our public cards head for a bait of it
            for slot, card in enumerate(view.center):
                key = (on_the_way, len(taken))
                if rank_of(card) == rank and key > best_key:
                    give = [c for c in view.hand if rank_of(c) != rank]
                    give.sort(key=lambda c: (c in mine, counts[rank_of(c)]))  # a dealt card first, the loneliest
                    if give:
                        best, best_key = a.Swap(give[0], slot, card), key
        return best

    def _bait_start(self, view: SeatView) -> a.Swap | None:
        """The first half of a bait: with nothing taken yet, take a rank the center holds twice (and we hold at most
        one of: two more would be four), so that the swap after shows a hand that could be four."""
        if self.reader.public.taken:
            return None
        counts = rank_counts(view.hand)
        center = rank_counts(view.center)
        ranks = [rank for rank, n in center.items() if n >= 2 and counts.get(rank, 0) < DEALT_MAX]
        if not ranks:
            return None
        rank = self.rng.choice(ranks)
        slot = next(i for i, card in enumerate(view.center) if rank_of(card) == rank)
        give = sorted((c for c in view.hand if rank_of(c) != rank), key=lambda c: counts[rank_of(c)])
        return a.Swap(give[0], slot, view.center[slot]) if give else None

    def _baiting(self, view: SeatView) -> bool:
        """Whether our team's hand is the latest the cards allow, before an opposing team that counters on the cards."""
        latest = self.reader.latest_possible
        return latest is not None and team_of(latest, view.players) == view.team and self._baits_help(view)

    def _baits_help(self, view: SeatView) -> bool:
        """Whether an opposing team counters on the cards (a hand that could be four, not proven): baits draw that."""
        return any(n for team, n in enumerate(self.reader.card_counters) if team != view.team)

    def _wary(self, view: SeatView) -> bool:
        """Whether an opposing team counters on the cards: it did in one of the last ``WARY_ROUNDS`` rounds.

        A player who stopped doing so finds the expert completing its fours again a few rounds later.
        """
        recent = self.reader.card_rounds[-WARY_ROUNDS:]
        return any(team is not None and team != view.team for team in recent)

    def _gain(self, view: SeatView, counts: dict[str, int], base: float, swap: a.Swap) -> float:
        after = dict(counts)
        after[rank_of(swap.give)] -= 1
        after[rank_of(swap.take)] = after.get(rank_of(swap.take), 0) + 1
        gain = self._worth(after, {}) - base
        if max(after.values()) < 4 and self.reader.public_status_after(swap.give, swap.slot, swap.take) != IMPOSSIBLE:
            return gain + BAIT_WORTH
        return -1e9  # not a bait


#: How likely a missing card of a rank reaches us (``ExpertBot._reach``): one hidden among another seat's dealt
#: cards, one taken by another seat.
REACH_HIDDEN = 0.5
REACH_TAKEN = 0.1
#: The share of swaps a channel change goes with, in the keyed convention of two bot partners.
KEYED_SHARE = 0.5
#: The partner's swaps an expert watches before it trusts that the partner keeps the key, and the share of them the
#: key may have missed (a four it made breaks the key; a partner that does not keep it misses half): a partner
#: changing its channel by chance passes with a chance of 2 in 1,000 at 16 swaps, and less with every swap after.
KEY_PROOF = 16
KEY_SLIP = 0.15


def keyed_toggle(sign: Sign, deal: int, seat: int, swap: int) -> bool:
    """Whether, in the keyed convention, ``seat``'s ``swap``-th swap of the ``deal``-th deal goes with a channel change.

    Both partners know their team's sign from the signing (R6), and nobody else does before the summary: a draw
    seeded by it is a key the pair shares and the table cannot read. The swap that makes four breaks it.
    """
    return random.Random(f"{sign}/{deal}/{seat}/{swap}").random() < KEYED_SHARE


_CLASSES: dict[str, type[Bot]] = {
    "random": RandomBot,
    "easy": EasyBot,
    "normal": NormalBot,
    "hard": HardBot,
    "expert": ExpertBot,
}
assert tuple(_CLASSES) == LEVELS, "quatro_shared.levels.LEVELS and the bot classes must list the same levels"

#: What a bot from outside the project must have: the interface the built-in bots present to a room.
BOT_METHODS = ("observe", "decide", "think_time")


def load_bot_class(spec: str) -> Callable[..., Any]:
    """The class named by ``spec`` (``package.module:Class``), checked for the bot interface. Raises ``ValueError``.

    The class is built like the built-in bots, with one argument: a ``random.Random`` for its choices. It is
    handed the seat's events (``observe``) and views (``decide``) and nothing else (H2), and says when it
    wants to look again (``think_time``); subclassing ``Bot`` gives it all three and a person's pace.
    """
    module_name, _, class_name = spec.partition(":")
    if not module_name or not class_name:
        raise ValueError(f"an outside bot is named module:Class, not {spec!r}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"cannot import {module_name!r} for bot {spec!r}: {exc}") from None
    cls: Any = module
    for part in class_name.split("."):
        cls = getattr(cls, part, None)
        if cls is None:
            raise ValueError(f"module {module_name!r} has no {class_name!r}")
    missing = [name for name in BOT_METHODS if not callable(getattr(cls, name, None))]
    if not callable(cls) or missing:
        raise ValueError(
            f"{spec!r} is not a bot: it needs {', '.join(BOT_METHODS)} (subclass quatro_server.games.quatro.bots.Bot)"
        )
    loaded: Callable[..., Any] = cls
    return loaded


def make_bot(level: str = DEFAULT_LEVEL, rng: random.Random | None = None) -> Bot:
    """A bot of ``level``, or of the outside class ``level`` names (``module:Class``). Raises ``ValueError``."""
    if is_outside_bot(level):
        bot: Bot = load_bot_class(level)(rng if rng is not None else random.Random())
        if not isinstance(getattr(bot, "level", None), str) or not bot.level:
            bot.level = level  # reports name it by its class
        return bot
    try:
        return _CLASSES[level](rng)
    except KeyError:
        raise ValueError(f"unknown bot level {level!r} (levels: {', '.join(LEVELS)}, or module:Class)") from None


class QuatroBotGame:
    """Quatro's part of a network bot (``quatro_server.bots.games.BotGame``): its bots decide in microseconds, and
    a view's countdowns run down while no update comes."""

    outside_bots = True

    def make_bot(self, level: str, rng: random.Random | None) -> Bot:
        return make_bot(level, rng)

    def slow(self, bot: object, view: object) -> bool:
        return False

    def aged(self, view: SeatView, seconds: float) -> SeatView:
        if seconds <= 0:
            return view
        ms = int(seconds * 1000)

        def down(value: int | None) -> int | None:
            return None if value is None else max(0, value - ms)

        return dataclasses.replace(
            view,
            phase_ms=down(view.phase_ms),
            swap_wait_ms=down(view.swap_wait_ms) or 0,
            channel_wait_ms=down(view.channel_wait_ms) or 0,
            vote_wait_ms=down(view.vote_wait_ms) or 0,
        )

    def over(self, view: SeatView) -> bool:
        return view.phase is Phase.OVER

    def ended(self, events: Sequence[e.Event]) -> int:
        return sum(isinstance(event, e.RoundEnded) for event in events)


BOT_GAME = QuatroBotGame()
