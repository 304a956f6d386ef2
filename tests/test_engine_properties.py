"""Property tests of the rules engine: random legal and illegal play must never break an invariant.

Hypothesis draws a table (4, 6 or 8 players, random bot seats, host and seating order, seed) and a driver
(``tests/helpers/strategies.py``) that sends random actions from random seats at random times: mostly plausible ones,
so that games run through many rounds, reshuffles and up to match over, with stale, illegal and malformed
ones mixed in, and Connect/Disconnect. After every step the ``Checker`` below asserts:

- cards: every card of the deck is exactly once in the hands and the center while a round is in play
  (4 per hand, 4 in the center), and no fresh deal leaves three of a rank in a hand (R2, R3, R4, R16);
- scores never decrease, each round ends at most once, and each end scores what R13, R14, R18, R20 say;
- ``act`` and ``advance`` never raise, and a refused action changes nothing (state and every seat's view);
- views and events never tell a seat another seat's hand or emoji, nor another team's sign, before the reveal (H1);
- ``next_deadline()`` is never in the past, and advancing to it makes progress without an event storm.
"""

from __future__ import annotations

import random
from collections import Counter as Tally
from dataclasses import fields, is_dataclass, replace

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from quatro_shared.games.quatro import actions as a
from quatro_shared.games.quatro import events as e
from quatro_shared.games.quatro.actions import Reason
from quatro_shared.games.quatro.cards import has_three_of_a_rank, is_card, is_four_of_a_kind
from quatro_shared.games.quatro.signs import is_sign
from quatro_shared.games.quatro.views import Phase, SeatState, SeatView
from quatro_shared.tables import Connect, Disconnect

from helpers.strategies import Driver, GameSetup, Mix, Step, game_setups, mixes
from quatro_server.games.quatro.engine import Emit, Table, events_for, view

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
seeds = st.integers(0, 2**32 - 1)

#: Events the engine addresses to one seat or one team (H1); every other event is public.
PRIVATE_TO_SEAT = (e.HandDealt, e.EmojiChosen)
PRIVATE_TO_TEAM = (e.SignChosen,)


# --- the checker ---------------------------------------------------------------------------------


_ATOMS = (int, float, bool, type(None))
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _strings(obj, skip: frozenset[tuple[type, str]] = frozenset()) -> list[str]:
    """Every string anywhere inside ``obj`` (dataclasses, tuples, lists, dicts), however deep,
    leaving out the dataclass fields named in ``skip`` as ``(type, field name)``."""
    out: list[str] = []
    stack = [obj]
    while stack:
        x = stack.pop()
        tp = type(x)
        if tp in _ATOMS:
            continue
        if isinstance(x, str):
            out.append(x)
        elif tp in (tuple, list, set, frozenset):
            stack.extend(x)
        elif isinstance(x, dict):
            stack.extend(x.keys())
            stack.extend(x.values())
        elif is_dataclass(x) and not isinstance(x, type):
            names = _FIELD_NAMES.get(tp)
            if names is None:
                names = _FIELD_NAMES[tp] = tuple(f.name for f in fields(x))
            stack.extend(getattr(x, name) for name in names if (tp, name) not in skip)
        else:
            raise AssertionError(f"a view holds a {tp.__name__}: {x!r}")
    return out


#: The only fields of a view that may name a card or a sign before the reveal: own hand, the center,
#: own team's sign, own chosen emoji, and the emoji each seat's last pulse showed everyone.
_MAY_NAME_CARDS_OR_SIGNS = frozenset(
    {
        (SeatView, "hand"),
        (SeatView, "center"),
        (SeatView, "sign"),
        (SeatView, "channel_sign"),
        (SeatState, "last_pulse"),
    }
)
#: The same, leaving out the public seat states too: they are the same in every seat's view, so they are walked once.
_MAY_NAME_OWN = _MAY_NAME_CARDS_OR_SIGNS | {(SeatView, "seats")}


def fingerprint(t: Table) -> tuple:
    """Every bit of a table's state, to tell whether a refused action changed any of it."""
    seats = tuple(
        (
            s.bot,
            s.order,
            s.connected,
            s.ready,
            tuple(s.hand),
            s.swap_free_at,
            s.channel_free_at,
            s.channel_held,
            s.channel_sign,
            s.next_pulse_at,
            s.last_pulse,
            s.last_pulse_at,
        )
        for s in t._seats
    )
    vote = None if t._vote is None else (t._vote.by, t._vote.voters, t._vote.ends_at, frozenset(t._vote.yes))
    return (
        t.phase,
        t.round,
        tuple(t.center),
        tuple(t.signs),
        tuple(t._previous_signs),
        tuple(t.scores),
        t.phase_ends_at,
        vote,
        t._last_vote_end,
        t.reshuffle_used,
        t.summary,
        t.winners,
        t.now,
        t.host,
        t.rng.getstate(),
        seats,
    )


def all_views(t: Table, now: float) -> list:
    return [view(t, seat, now) for seat in range(t.players)]


class Checker:
    """Asserts the invariants on every batch of events and on the table after every step."""

    def __init__(self, table: Table) -> None:
        self.t = table
        self.scores = [0] * table.teams  # as told by RoundEnded events
        self.ended: set[int] = set()  # rounds that ended
        self.round = 0  # as told by SigningStarted events
        self.now = table.now  # the table's clock, as last seen: it never runs backwards
        self.deck = Tally(table.deck)
        # coverage, reported through hypothesis.event
        self.deals = self.reshuffles = self.rounds = self.right_calls = self.refusals = 0
        self.over = False

    # events ------------------------------------------------------------------------------------

    def check_emits(self, emits: list[Emit], span: float | None = None) -> None:
        t = self.t
        n, teams = t.players, t.teams
        assert isinstance(emits, list)
        for emit in emits:
            assert isinstance(emit, Emit) and isinstance(emit.event, e.Event), emit
            ev = emit.event
            if isinstance(ev, PRIVATE_TO_SEAT):
                assert (emit.seat, emit.team) == (ev.seat, None), emit
            elif isinstance(ev, PRIVATE_TO_TEAM):
                assert (emit.seat, emit.team) == (None, ev.team), emit
            else:
                assert (emit.seat, emit.team) == (None, None), emit
        # H1: what each seat is handed
        seen = 0
        for seat in range(n):
            team = seat % teams
            mine = events_for(emits, seat, n)
            seen += len(mine)
            for ev in mine:
                if isinstance(ev, (e.HandDealt, e.EmojiChosen)):
                    assert ev.seat == seat, f"seat {seat} was handed {ev}"
                if isinstance(ev, e.SignChosen):
                    assert ev.team == team, f"seat {seat} of team {team} was handed {ev}"
        assert seen >= len(emits)  # every event reaches someone
        events = [emit.event for emit in emits]
        for i, ev in enumerate(events):
            if isinstance(ev, e.SigningStarted):
                assert ev.round == self.round + 1, (ev, self.round)
                self.round = ev.round
            elif isinstance(ev, e.Dealt):
                self._check_deal(ev, events[i + 1 : i + 1 + n])
                if not any(isinstance(later, (e.Dealt, e.Swapped, e.SigningStarted)) for later in events[i + 1 :]):
                    # nothing moved a card since: the table holds exactly what was dealt
                    assert tuple(t.center) == ev.center
                    assert [t.hand(seat) for seat in range(n)] == [h.hand for h in events[i + 1 : i + 1 + n]]
            elif isinstance(ev, e.RoundEnded):
                self._check_round_end(ev)
            elif isinstance(ev, e.MatchOver):
                top = max(ev.scores)
                assert top >= t.timing.target_score
                assert ev.winners == tuple(k for k, s in enumerate(ev.scores) if s == top)
                assert list(ev.scores) == self.scores
                self.over = True
        if span is not None:  # no event storm: a bounded number of events for the time crossed
            pulses = Tally(ev.seat for ev in events if isinstance(ev, e.Pulse))
            most = 1 + span / t.timing.pulse_interval  # a channel pulses once per interval (R11)
            assert all(count <= most for count in pulses.values()), (pulses, span)
            others = len(events) - sum(pulses.values())
            phases = 2 + span / min(t.timing.break_length, t.timing.sign_window)  # phase changes crossed
            assert others <= phases * (4 * n + 12), (others, span)

    def _check_deal(self, dealt: e.Dealt, following: list[e.Event]) -> None:
        n = self.t.players
        self.deals += 1
        self.reshuffles += dealt.reshuffle
        assert isinstance(dealt.redeals, int) and dealt.redeals >= 0
        assert len(dealt.center) == 4
        assert [type(ev) for ev in following] == [e.HandDealt] * n, following
        assert [ev.seat for ev in following] == list(range(n))
        for ev in following:
            assert len(ev.hand) == 4
            assert not has_three_of_a_rank(ev.hand), f"R4: a fresh deal gave seat {ev.seat} {ev.hand}"
        cards = list(dealt.center) + [c for ev in following for c in ev.hand]
        assert Tally(cards) == self.deck, "a deal lost or duplicated a card"

    def _check_round_end(self, ev: e.RoundEnded) -> None:
        t = self.t
        teams = t.teams
        assert ev.round not in self.ended, f"round {ev.round} ended twice"
        assert ev.round == self.round, (ev.round, self.round)
        self.ended.add(ev.round)
        self.rounds += 1
        # scores never decrease, and grow by exactly the scorers (R20)
        assert len(ev.scores) == teams
        expected = list(self.scores)
        for team in ev.scorers:
            expected[team] += 1
        assert list(ev.scores) == expected, (ev.scores, self.scores, ev.scorers)
        assert all(new >= old for new, old in zip(ev.scores, self.scores))
        self.scores = list(ev.scores)
        # the reveal is whole and consistent
        assert len(ev.hands) == t.players and all(len(h) == 4 for h in ev.hands)
        assert Tally(list(ev.center) + [c for h in ev.hands for c in h]) == self.deck
        assert all(is_sign(s) for s in ev.signs), ev.signs
        assert ev.fours == tuple(i for i, h in enumerate(ev.hands) if is_four_of_a_kind(h))
        if ev.outcome == "call":  # R13: the partner's hand decides
            team = t.team_of(ev.by)
            assert ev.right == is_four_of_a_kind(ev.hands[t.partner_of(ev.by)])
            assert ev.scorers == ((team,) if ev.right else tuple(k for k in range(teams) if k != team))
            self.right_calls += ev.right
        elif ev.outcome == "counter":  # R14: either hand of the accused team
            assert ev.accused != t.team_of(ev.by)
            assert ev.right == any(is_four_of_a_kind(ev.hands[i]) for i in t.team_seats(ev.accused))
            assert ev.scorers == ((t.team_of(ev.by),) if ev.right else (ev.accused,))
        else:  # R18: a draw scores nothing
            assert (ev.outcome, ev.by, ev.accused, ev.right, ev.scorers) == ("draw", None, None, None, ())

    # state -------------------------------------------------------------------------------------

    def check_state(self, now: float, views: bool = True) -> list | None:
        """The table's invariants at ``now``; with ``views``, also every seat's view, returned."""
        t = self.t
        n = t.players
        assert t.now >= self.now, f"the table's clock ran backwards from {self.now} to {t.now}"
        self.now = t.now
        assert list(t.scores) == self.scores, "scores changed without a RoundEnded"
        assert len(t.scores) == t.teams
        if t.phase in (Phase.ROUND, Phase.BREAK) or (t.phase is Phase.OVER and t.round > 0):
            hands = [t.hand(i) for i in range(n)]
            assert all(len(h) == 4 for h in hands), hands
            assert len(t.center) == 4, t.center
            assert Tally(list(t.center) + [c for h in hands for c in h]) == self.deck, "cards not conserved"
        else:
            assert t.center == [] and all(t.hand(i) == () for i in range(n))
        if t.phase is Phase.ROUND:
            assert t.round == self.round and t.round not in self.ended
            assert all(is_sign(s) for s in t.signs)
        deadline = t.next_deadline()
        assert deadline is None or deadline > t.now, (deadline, t.now)
        for seat in range(n):
            own = t.seat_deadline(seat)
            assert own is None or own > t.now
        return self.check_views(now) if views else None

    def check_views(self, now: float) -> list:
        t = self.t
        views = all_views(t, now)
        hidden = t.phase in (Phase.LOBBY, Phase.SIGNING, Phase.ROUND)  # before the reveal
        public = views[0].seats
        assert all(v.seats == public for v in views), "the public seat states differ between seats"
        if hidden:
            strays = [x for x in _strings(public, _MAY_NAME_CARDS_OR_SIGNS) if is_card(x) or is_sign(x)]
            assert not strays, f"the public seat states name {strays}"
        for state, s in zip(public, t._seats):
            assert state.last_pulse == s.last_pulse  # only what a pulse showed everyone
        for seat, v in enumerate(views):
            team = t.team_of(seat)
            assert (v.seat, v.team, v.partner, v.players) == (seat, team, t.partner_of(seat), t.players)
            assert v.phase is t.phase and v.round == t.round
            assert v.hand == t.hand(seat), "a view shows a hand other than its own"
            assert v.center == tuple(t.center)
            assert v.sign == t.signs[team], "a view shows a sign other than its team's"
            assert v.channel_sign == t._seats[seat].channel_sign
            assert v.scores == tuple(t.scores)
            assert len(v.seats) == t.players
            if hidden:
                assert v.summary is None
                # Beyond own hand, center, own sign, own emoji and public pulses, a view names no card and no sign.
                strays = [x for x in _strings(v, _MAY_NAME_OWN) if is_card(x) or is_sign(x)]
                assert not strays, f"seat {seat} sees {strays}"
            else:
                assert v.summary == t.summary
        return views


# --- driving a table -----------------------------------------------------------------------------


class Game:
    """One table, its driver and its checker; ``log`` keeps every step and what came of it (for replays)."""

    def __init__(self, setup: GameSetup, mix: Mix, driver_seed: int, compare_views: bool = False) -> None:
        self.setup = setup
        #: Also compare every seat's view before and after a refused action (the fingerprint already covers
        #: everything a view reads, so this is a second opinion, paid for in time).
        self.compare_views = compare_views
        self.t = setup.table()
        self.driver = Driver(self.t, random.Random(driver_seed), mix)
        self.check = Checker(self.t)
        self.log: list[tuple[Step, object]] = []

    def play(self, steps: int, lobby_steps: int = 0, after_over: int = 10) -> Checker:
        self.check.check_state(0.0)
        for _ in range(lobby_steps):  # the match has not started: every player action is refused
            self.run(self.driver.step())
        self.run(self.driver.start_step())
        left_after_over = after_over
        for _ in range(steps):
            self.run(self.driver.step())
            if self.t.phase is Phase.OVER:
                left_after_over -= 1
                if left_after_over < 0:
                    break
        return self.check

    def run(self, step: Step) -> None:
        t, check = self.t, self.check
        now = step.now
        if step.kind == "start":
            emits = t.start(now)
            check.check_emits(emits)
            assert t.start(now) == []  # starting twice does nothing
            self.log.append((step, emits))
        elif step.kind == "advance":
            before = t.now
            emits = t.advance(now)
            check.check_emits(emits, span=max(0.0, now - before) if before > float("-inf") else 0.0)
            self.log.append((step, emits))
        else:
            pre: list[Emit] = []
            if step.pre_advance:
                before = t.now
                pre = t.advance(now)
                check.check_emits(pre, span=max(0.0, now - before) if before > float("-inf") else 0.0)
                views_before = check.check_state(now, views=self.compare_views)
                state_before = fingerprint(t)
            before, phase_before = t.now, t.phase
            out = t.act(step.seat, step.action, now)
            assert isinstance(out.events, list)
            check.check_emits(out.events, span=max(0.0, now - before) if before > float("-inf") else 0.0)
            refusal = out.refusal
            if phase_before in (Phase.LOBBY, Phase.OVER) and step.pre_advance:
                if not isinstance(step.action, (Connect, Disconnect)):  # only the server's own actions count
                    assert refusal is not None, f"{phase_before}: accepted {step.action!r}"
            if refusal is not None:
                check.refusals += 1
                assert isinstance(refusal.reason, Reason)
                assert refusal.wait is None or refusal.wait > 0
                assert not out.ok
            if step.garbage:
                assert refusal is not None, f"accepted garbage {step.action!r} from seat {step.seat!r}"
            if not (isinstance(step.seat, int) and not isinstance(step.seat, bool) and 0 <= step.seat < t.players):
                assert refusal == a.Refusal(Reason.BAD_SEAT), refusal
            if refusal is not None and step.pre_advance:
                assert out.events == [], "a refused action emitted events"
                assert fingerprint(t) == state_before, f"refused {step.action!r} ({refusal}) changed the table"
                if self.compare_views:
                    assert all_views(t, now) == views_before
            self.log.append((step, (pre, out)))
        check.check_state(now)

    def report(self) -> None:
        c = self.check
        event(f"{self.setup.players} players")
        event("rounds ended: " + ("0" if c.rounds == 0 else "1-3" if c.rounds < 4 else "4+"))
        if c.over:
            event("match over")
        if c.reshuffles:
            event("reshuffled")
        if c.right_calls:
            event("right call")


def replay(setup: GameSetup, log: list[tuple[Step, object]]) -> list[object]:
    """The same steps on a fresh table of the same setup: what came of each."""
    t = setup.table()
    results: list[object] = []
    for step, _ in log:
        if step.kind == "start":
            results.append(t.start(step.now))
            t.start(step.now)
        elif step.kind == "advance":
            results.append(t.advance(step.now))
        else:
            pre = t.advance(step.now) if step.pre_advance else []
            results.append((pre, t.act(step.seat, step.action, step.now)))
    return results


# --- the properties ------------------------------------------------------------------------------


@settings(max_examples=20, **SETTINGS)
@given(setup=game_setups(), mix=mixes(garbage=st.just(0.05)), driver_seed=seeds)
def test_cards_are_conserved_and_no_deal_holds_three_of_a_rank_under_random_play(setup, mix, driver_seed):
    game = Game(setup, mix, driver_seed)
    game.play(steps=250)
    game.report()


@settings(max_examples=20, **SETTINGS)
@given(
    setup=game_setups(),
    mix=mixes(garbage=st.just(0.02)).map(lambda m: replace(m, aggression=3.0)),
    driver_seed=seeds,
)
def test_scores_never_decrease_and_each_round_ends_at_most_once(setup, mix, driver_seed):
    game = Game(setup, mix, driver_seed)
    check = game.play(steps=250)
    assert check.rounds == len(check.ended)
    if check.over:
        assert game.t.phase is Phase.OVER and max(game.t.scores) >= game.t.timing.target_score
    game.report()


@settings(max_examples=15, **SETTINGS)
@given(
    setup=game_setups(),
    mix=mixes(garbage=st.sampled_from([0.3, 0.6]), connection=st.sampled_from([0.05, 0.15])),
    driver_seed=seeds,
    lobby_steps=st.integers(0, 5),
)
def test_act_and_advance_never_raise_and_refusals_change_nothing(setup, mix, driver_seed, lobby_steps):
    game = Game(setup, replace(mix, pre_advance=1.0), driver_seed, compare_views=True)
    game.play(steps=150, lobby_steps=lobby_steps)
    assert game.check.refusals > 0
    game.report()


@settings(max_examples=20, **SETTINGS)
@given(setup=game_setups(), mix=mixes(connection=st.sampled_from([0.03, 0.1])), driver_seed=seeds)
def test_views_and_events_never_leak_hands_emojis_or_signs_before_the_reveal(setup, mix, driver_seed):
    game = Game(setup, mix, driver_seed)
    game.play(steps=200)
    game.report()


@settings(max_examples=15, **SETTINGS)
@given(setup=game_setups(), mix=mixes(deadline_jump=st.sampled_from([0.5, 0.9])), driver_seed=seeds)
def test_next_deadline_is_never_past_and_advancing_to_it_makes_progress(setup, mix, driver_seed):
    game = Game(setup, mix, driver_seed)
    game.play(steps=150)
    # then let time alone run the table: each deadline fires a bounded batch and the next one lies later
    t, check = game.t, game.check
    for _ in range(60):
        deadline = t.next_deadline()
        if deadline is None:
            assert t.phase is Phase.OVER  # every other phase has a clock running
            break
        assert deadline > t.now
        emits = t.advance(deadline)
        assert emits, f"advancing to the deadline {deadline} fired nothing"
        check.check_emits(emits, span=0.0)
        check.check_state(deadline)
        later = t.next_deadline()
        assert later is None or later > deadline
    game.report()


@settings(max_examples=8, **SETTINGS)
@given(setup=game_setups(), mix=mixes(), driver_seed=seeds)
def test_same_seed_and_actions_replay_the_same_events(setup, mix, driver_seed):
    game = Game(setup, mix, driver_seed)
    game.play(steps=150, lobby_steps=2)
    assert replay(setup, game.log) == [result for _, result in game.log]


@pytest.mark.parametrize("players", [4, 6, 8])
def test_random_play_reaches_match_over_through_many_rounds(players):
    """The driver is strong enough to play whole matches, so the properties above see every phase."""
    overs = rounds = reshuffles = 0
    for seed in range(4):
        setup = GameSetup(players, frozenset({1}), 0, None, seed)
        game = Game(setup, Mix(garbage=0.05, connection=0.0, aggression=2.0), driver_seed=1000 + seed)
        check = game.play(steps=600)
        overs += check.over
        rounds += check.rounds
        reshuffles += check.reshuffles
    assert overs == 4, overs
    assert rounds >= 20, rounds
    assert reshuffles >= 1, reshuffles
