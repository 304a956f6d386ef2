"""Random tables and random drivers for the property tests of the rules engine.

Hypothesis draws a ``GameSetup`` (player count, bot seats, host, seating order, seed) and a ``Mix``
(how often the driver sends garbage, connects and disconnects, jumps in time). The ``Driver`` then
produces a sequence of ``Step``s from ``random.Random(seed)``: mostly plausible actions (a swap of a
card really in the hand for the card really in the slot, a call when the partner holds four of a
kind, the host ending a break), with stale, illegal and malformed ones mixed in, from random seats,
at random times. Plausible play makes games run through many rounds, reshuffles and up to match over.

The driver reads the whole table (hands included) to make its moves plausible: it is the test's
omniscient player, not a bot, and nothing it reads ever reaches a seat.
"""

from __future__ import annotations

import random
from collections import Counter as Tally
from dataclasses import dataclass

from hypothesis import strategies as st

from quatro_shared.games.quatro import actions as a
from quatro_shared.games.quatro.cards import deck_for, is_four_of_a_kind, rank_of
from quatro_shared.games.quatro.signs import SIGNS
from quatro_shared.games.quatro.views import Phase
from quatro_shared.tables import Connect, Disconnect

from quatro_server.games.quatro.engine import Emit, Table
from quatro_server.timing import FAST

PLAYER_COUNTS = (4, 6, 8)


@dataclass(frozen=True)
class GameSetup:
    players: int
    bots: frozenset[int]
    host: int | None
    seat_order: tuple[int, ...] | None
    seed: int

    def table(self) -> Table:
        return Table(
            self.players,
            timing=FAST,
            rng=random.Random(self.seed),
            bots=self.bots,
            host=self.host,
            seat_order=None if self.seat_order is None else list(self.seat_order),
        )


@dataclass(frozen=True)
class Mix:
    """How a driver behaves: rates are per step, in [0, 1]."""

    garbage: float = 0.08  # malformed actions, non-actions, bad seats
    connection: float = 0.03  # Connect / Disconnect of a random seat
    deadline_jump: float = 0.08  # set ``now`` exactly to ``next_deadline()``
    advance_only: float = 0.05  # a step that only calls ``advance``
    pre_advance: float = 0.85  # call ``advance(now)`` before ``act`` (so a refusal can be checked to change nothing)
    late: float = 0.02  # pass a ``now`` earlier than the table's (a late caller)
    aggression: float = 1.0  # scales how often calls and counters are made


@dataclass(frozen=True)
class Step:
    """One thing the driver does at time ``now``: ``kind`` is ``act``, ``advance`` or ``start``."""

    kind: str
    now: float
    seat: object = None
    action: object = None
    garbage: bool = False  # known to be malformed or impossible: it must be refused
    pre_advance: bool = True

    def play(self, table: Table) -> list[Emit]:
        """An ``advance`` or ``act`` step done to ``table``: the events it produced (an act's own advance first)."""
        if self.kind == "advance":
            return table.advance(self.now)
        emits = table.advance(self.now) if self.pre_advance else []
        return emits + table.act(self.seat, self.action, self.now).events  # type: ignore[arg-type]


@st.composite
def game_setups(draw, players=st.sampled_from(PLAYER_COUNTS)):
    n = draw(players)
    bots = draw(
        st.one_of(
            st.just(frozenset()),
            st.frozensets(st.integers(0, n - 1), max_size=n),
            st.just(frozenset(range(n))),  # a table of bots runs on time alone
        )
    )
    host = draw(st.one_of(st.none(), st.integers(0, n - 1)))
    seat_order = draw(st.one_of(st.none(), st.permutations(range(n)).map(tuple)))
    seed = draw(st.integers(0, 2**32 - 1))
    return GameSetup(n, bots, host, seat_order, seed)


def mixes(
    garbage=st.sampled_from([0.0, 0.05, 0.15]),
    connection=st.sampled_from([0.0, 0.03, 0.1]),
    deadline_jump=st.sampled_from([0.0, 0.08, 0.3]),
) -> st.SearchStrategy[Mix]:
    return st.builds(
        Mix,
        garbage=garbage,
        connection=connection,
        deadline_jump=deadline_jump,
        advance_only=st.sampled_from([0.0, 0.05]),
        pre_advance=st.sampled_from([0.7, 1.0]),
        late=st.sampled_from([0.0, 0.02]),
        aggression=st.sampled_from([0.3, 1.0, 3.0]),
    )


class _Weird:
    """Not an action at all, though it quacks like one."""

    kind = "swap"
    give, slot, take = "AS", 0, "KS"


@dataclass(frozen=True, slots=True)
class _SubSwap(a.Swap):
    """A subclass of a real action: not an action this table knows."""


#: Seats that do not exist (or are not plain ints).
BAD_SEATS: tuple[object, ...] = (-1, 99, True, False, "0", None, 1.0, 0.5, (0,), 10**30)


def garbage_actions(table: Table, seat: int, r: random.Random) -> list[object]:
    """Actions that no table may accept from ``seat`` (whatever the phase). Their fields have the right types (the
    wire checks types before the engine sees an action); their values are what the rules refuse."""
    n, teams = table.players, table.teams
    own_team = seat % teams
    foreign = [c for c in deck_for(8) if c not in table.deck]  # cards of a bigger table
    card = r.choice(table.deck)
    return [
        a.Swap(give=card, slot=7, take=card),
        a.Swap(give=card, slot=-1, take=card),
        a.Swap(give="ZZ", slot=0, take=card),
        a.Swap(give=card, slot=0, take="1H"),
        a.Swap(give=r.choice(foreign) if foreign else "XX", slot=0, take=card),
        a.Counter(team=99),
        a.Counter(team=-1),
        a.Counter(team=teams),
        a.Counter(team=own_team),
        a.PickSign("notasign"),
        a.PickSign("🍍"),  # the emoji, not its wire name
        a.ChooseEmoji("nope"),
        None,
        42,
        "swap",
        object(),
        _Weird(),
        a.Action(),
        a.Ready,  # the class, not an instance
        _SubSwap(give=card, slot=0, take=card),
        {"kind": "call"},
        a.Counter(team=None) if teams > 2 else a.Counter(team=own_team),
        a.Swap(give=card, slot=n, take=card) if n >= 4 else a.Swap(give=card, slot=4, take=card),
    ]


class Driver:
    """Produces plausible and implausible steps for one table from one random source."""

    def __init__(self, table: Table, rng: random.Random, mix: Mix = Mix()) -> None:
        self.t = table
        self.r = rng
        self.mix = mix
        self.now = 0.0

    # --- time ----------------------------------------------------------------------------------

    def _tick(self) -> float:
        r = self.r
        deadline = self.t.next_deadline()
        if deadline is not None and r.random() < self.mix.deadline_jump:
            # near deadlines (pulses, votes, the sign window) often; the end of the round seldom
            if deadline - self.now <= 2.0 or r.random() < 0.1:
                self.now = max(self.now, deadline)
                return self.now
        x = r.random()
        if x < 0.4:
            dt = 0.0  # simultaneous arrivals
        elif x < 0.9:
            dt = r.uniform(0.0, 0.25)  # within cooldowns and pulses
        elif x < 0.98:
            dt = r.uniform(0.25, 2.0)
        elif x < 0.995:
            dt = r.uniform(2.0, 8.0)  # crosses sign windows, votes, breaks
        else:
            dt = r.uniform(8.0, 40.0)  # crosses whole rounds
        self.now += dt
        return self.now

    # --- steps ---------------------------------------------------------------------------------

    def start_step(self) -> Step:
        return Step("start", self._tick())

    def step(self) -> Step:
        r, mix = self.r, self.mix
        now = self._tick()
        if r.random() < mix.advance_only:
            return Step("advance", now)
        pre = r.random() < mix.pre_advance
        if r.random() < mix.late and self.t.now > 0:
            now = self.t.now - r.uniform(0.0, 1.0)  # the caller is late; the table keeps its own time
        n = self.t.players
        x = r.random()
        if x < mix.garbage:
            if r.random() < 0.25:
                seat = r.choice(BAD_SEATS + (n, n + 1))
                action = r.choice([self._plausible(r.randrange(n)), Connect(), Disconnect()])
                return Step("act", now, seat, action, True, pre)
            seat = r.randrange(n)
            return Step("act", now, seat, r.choice(garbage_actions(self.t, seat, r)), True, pre)
        if x < mix.garbage + mix.connection:
            seat = r.randrange(n)
            action = Connect() if r.random() < 0.5 else Disconnect()
            return Step("act", now, seat, action, False, pre)
        redirected = self._redirect()
        if redirected is not None:
            return Step("act", now, *redirected, False, pre)
        seat = self._seat()
        return Step("act", now, seat, self._plausible(seat), False, pre)

    def _redirect(self) -> tuple[int, object] | None:
        """Now and then, the one seat whose move keeps the game going: a voter answering, the host ending a
        break, a human declaring ready, a partner calling or an opponent countering a four of a kind."""
        t, r = self.t, self.r
        if t.phase is Phase.ROUND:
            vote = t._vote
            if vote is not None and r.random() < 0.6:
                waiting = [i for i in vote.voters if i not in vote.yes]
                if waiting:  # voters answer, mostly yes, so that some reshuffles pass
                    return r.choice(waiting), a.Vote(yes=r.random() < 0.9)
            fours = [i for i in range(t.players) if is_four_of_a_kind(t.hand(i))]
            if fours and r.random() < 0.3 * self.mix.aggression:
                holder = r.choice(fours)
                if r.random() < 0.6:
                    return t.partner_of(holder), a.Call()  # a right call (if that partner is connected)
                opponents = [i for i in range(t.players) if t.team_of(i) != t.team_of(holder)]
                return r.choice(opponents), a.Counter(team=t.team_of(holder))  # a right counter
        elif t.phase is Phase.BREAK:
            if t.host is not None and r.random() < 0.2:
                return t.host, a.NextRound()
        elif t.phase is Phase.SIGNING:
            unready = [i for i in range(t.players) if t.is_connected(i) and not t._seats[i].ready]
            if unready and r.random() < 0.3:
                return r.choice(unready), a.Ready()
        return None

    def _seat(self) -> int:
        """Mostly connected seats (they are the ones who can act)."""
        t, r = self.t, self.r
        live = [i for i in range(t.players) if t.is_connected(i)]
        if live and r.random() < 0.9:
            return r.choice(live)
        return r.randrange(t.players)

    def _plausible(self, seat: int) -> object:
        t, r = self.t, self.r
        phase = t.phase
        if phase is Phase.SIGNING:
            x = r.random()
            if x < 0.5:
                return a.Ready()
            if x < 0.85:
                return a.PickSign(r.choice(SIGNS))
            return self._any(seat)
        if phase is Phase.ROUND:
            return self._round_action(seat)
        if phase is Phase.BREAK:
            x = r.random()
            if x < 0.3:
                return a.NextRound()
            if x < 0.4 and t.host is not None:
                return a.NextRound()  # from anyone: only the host's is accepted
            return self._any(seat)
        return self._any(seat)

    def _any(self, seat: int) -> object:
        r = self.r
        choice = r.randrange(11)
        if choice == 0:
            return a.Ready()
        if choice == 1:
            return a.PickSign(r.choice(SIGNS))
        if choice == 2:
            return self._swap(seat)
        if choice == 3:
            return a.TakeChannel()
        if choice == 4:
            return a.ReleaseChannel()
        if choice == 5:
            return a.ChooseEmoji(r.choice((None,) + SIGNS))
        if choice == 6:
            return a.Call()
        if choice == 7:
            return self._counter(seat)
        if choice == 8:
            return a.AskReshuffle()
        if choice == 9:
            return a.Vote(yes=r.random() < 0.8)
        return a.NextRound()

    def _round_action(self, seat: int) -> object:
        t, r = self.t, self.r
        k = self.mix.aggression
        options = [
            (4.0, lambda: self._swap(seat)),
            (12.0, lambda: self._greedy_swap(seat)),
            (1.0, lambda: self._stale_swap(seat)),
            (0.5, lambda: a.Swap(give=r.choice(t.deck), slot=r.randrange(4), take=r.choice(t.deck))),
            (1.5, a.TakeChannel),
            (1.0, a.ReleaseChannel),
            (2.0, lambda: a.ChooseEmoji(r.choice((None,) + SIGNS))),
            (0.4 * k, a.Call),
            (0.4 * k, lambda: self._counter(seat)),
            (0.6, a.AskReshuffle),
            (2.0, lambda: a.Vote(yes=r.random() < 0.85)),
            (0.3, lambda: self._any(seat)),
        ]
        make = r.choices([f for _, f in options], weights=[w for w, _ in options])[0]
        return make()

    def _counter(self, seat: int) -> a.Counter:
        t, r = self.t, self.r
        own = t.team_of(seat)
        opponents = [team for team in range(t.teams) if team != own]
        if t.teams == 2 and r.random() < 0.5:
            return a.Counter()
        return a.Counter(team=r.choice(opponents))

    def _swap(self, seat: int) -> object:
        """A swap of a card in the hand for the card in the slot: legal but for cooldowns and phase."""
        t, r = self.t, self.r
        hand = t.hand(seat)
        if not hand or len(t.center) != 4:
            card = r.choice(t.deck)
            return a.Swap(give=card, slot=r.randrange(4), take=r.choice(t.deck))
        slot = r.randrange(4)
        return a.Swap(give=r.choice(hand), slot=slot, take=t.center[slot])

    def _stale_swap(self, seat: int) -> object:
        """A swap expecting a card no longer in the slot (R10)."""
        t, r = self.t, self.r
        hand = t.hand(seat)
        if not hand or len(t.center) != 4:
            return self._swap(seat)
        slot = r.randrange(4)
        others = [c for c in t.deck if c != t.center[slot]]
        return a.Swap(give=r.choice(hand), slot=slot, take=r.choice(others))

    def _greedy_swap(self, seat: int) -> object:
        """Collect the hand's most common rank from the center: drives hands toward four of a kind."""
        t, r = self.t, self.r
        hand = t.hand(seat)
        if not hand or len(t.center) != 4:
            return self._swap(seat)
        tally = Tally(rank_of(c) for c in hand)
        best = max(tally.values())
        rank = r.choice(sorted(rk for rk, count in tally.items() if count == best))
        slots = [i for i, c in enumerate(t.center) if rank_of(c) == rank]
        gives = [c for c in hand if rank_of(c) != rank]
        if not slots or not gives:
            return self._swap(seat)
        slot = r.choice(slots)
        return a.Swap(give=r.choice(gives), slot=slot, take=t.center[slot])
