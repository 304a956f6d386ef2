"""The bot levels, from hand-made views and event sequences: what each level does on the table in front of it.

Views are built by hand (``seat_view``) and events fed through ``observe``, exactly what a seat is sent:
no table, no engine. The last tests drive real rooms to check that a bot is never given anything else (H2).
"""

from __future__ import annotations

import ast
import random
from dataclasses import replace
from pathlib import Path

import pytest

from quatro_shared.games.quatro import actions as a
from quatro_shared.games.quatro import events as e
from quatro_shared.games.quatro.actions import PLAYER_ACTIONS
from quatro_shared.games.quatro.events import Event
from quatro_shared.games.quatro.legal import legal
from quatro_shared.games.quatro.signs import SIGNS
from quatro_shared.games.quatro.views import Phase, SeatState, SeatView, VoteState

from helpers.engine import new_table, random_play
from helpers.reactions import answer
from quatro_server.games.quatro import bots
from quatro_server.games.quatro.bots import HardBot, NormalBot, RandomBot, make_bot
from quatro_server.games.quatro.engine import view as engine_view
from quatro_server.tables.room import Room, Seat
from quatro_server.timing import FAST

SIGN = "fox"


def seat_view(
    seat: int = 0,
    players: int = 4,
    hand: tuple[str, ...] = ("KS", "KH", "QS", "JS"),
    center: tuple[str, ...] = ("KD", "AH", "10S", "AC"),
    phase: Phase = Phase.ROUND,
    sign: str | None = SIGN,
    partner_bot: bool = True,
    **fields,
) -> SeatView:
    """A view of ``seat`` in a round, everyone connected and quiet, no cooldowns; ``fields`` override any field."""
    teams = players // 2
    seats = tuple(
        SeatState(
            seat=i,
            team=i % teams,
            bot=partner_bot if i == (seat + teams) % players else True,
            connected=True,
            ready=True,
            channel_held=False,
            last_pulse=None,
            last_pulse_ms=None,
            next_pulse_ms=None,
        )
        for i in range(players)
    )
    base = SeatView(
        seat=seat,
        players=players,
        team=seat % teams,
        partner=(seat + teams) % players,
        phase=phase,
        round=1,
        hand=hand,
        center=center,
        sign=sign,
        seats=seats,
        scores=(0,) * teams,
        target_score=5,
        host=None,
        phase_ms=120_000,
        swap_wait_ms=0,
        channel_wait_ms=0,
        channel_held=False,
        channel_sign=None,
        vote=None,
        vote_wait_ms=0,
        reshuffle_used=False,
        summary=None,
        winners=(),
        pulse_interval_ms=5000,
    )
    return replace(base, **fields)


def dealt(bot: bots.Bot, seat: int, hand: tuple[str, ...], center: tuple[str, ...], players: int = 4) -> None:
    """The events that open a round, as ``seat`` is told them."""
    bot.observe(
        [
            e.MatchStarted(players, 5),
            e.SigningStarted(1),
            e.SignChosen(seat % (players // 2), SIGN, None),
            e.RoundOpened(1),
            e.Dealt(center, 0, False),
            e.HandDealt(seat, hand),
        ]
    )


def kinds(actions: list[a.Action]) -> list[type]:
    return [type(action) for action in actions]


# --- every level ------------------------------------------------------------------------------------


@pytest.mark.parametrize("level", bots.LEVELS)
def test_every_level_makes_only_player_actions_with_its_own_cards(level):
    bot = make_bot(level, random.Random(3))
    view = seat_view()
    dealt(bot, 0, view.hand, view.center)
    for look in range(300):
        for action in bot.decide(view, look * 0.5):
            assert isinstance(action, PLAYER_ACTIONS)
            if isinstance(action, a.Swap):
                assert action.give in view.hand and view.center[action.slot] == action.take


@pytest.mark.parametrize("level", bots.LEVELS)
def test_think_time_is_a_human_reaction_and_longer_while_idle(level):
    bot = make_bot(level, random.Random(1))
    low, high = bots.THINK_TIME[level]
    assert all(low <= bot.think_time() <= high for _ in range(100))
    bot.decide(seat_view(phase=Phase.BREAK, phase_ms=30_000), 0.0)
    assert bot.think_time() >= bots.IDLE_GLANCE  # nothing to play: a glance now and then, no busy looking
    bot.decide(seat_view(phase=Phase.BREAK, phase_ms=100), 0.0)
    assert bot.think_time() <= 0.1 + high  # ...and back as the break ends


@pytest.mark.parametrize("level", ["normal", "hard"])
def test_signing_picks_a_sign_only_beside_a_bot_partner_and_says_ready_when_asked(level):
    bot = make_bot(level, random.Random(2))
    beside_bot = bot.decide(seat_view(phase=Phase.SIGNING, sign=None, partner_bot=True), 0.0)
    assert kinds(beside_bot) == [a.PickSign] and beside_bot[0].sign in SIGNS
    assert bot.decide(seat_view(phase=Phase.SIGNING, sign=None, partner_bot=False), 0.0) == []  # the human picks
    network = seat_view(phase=Phase.SIGNING, sign=None, partner_bot=False)
    network = replace(network, seats=tuple(replace(s, ready=False) if s.seat == 0 else s for s in network.seats))
    assert kinds(bot.decide(network, 0.0)) == [a.Ready]  # seated as a network player: it must say ready (R7)


@pytest.mark.parametrize("level", bots.LEVELS)
def test_a_bot_seated_as_a_player_answers_a_reshuffle_vote(level):
    bot = make_bot(level, random.Random(4))
    view = seat_view(vote=VoteState(by=1, voters=(0, 2), yes=(), remaining_ms=15_000))
    (action,) = bot.decide(view, 0.0)
    assert isinstance(action, a.Vote) and isinstance(action.yes, bool)
    answered = replace(view, vote=VoteState(by=1, voters=(0, 2), yes=(0,), remaining_ms=14_000))
    assert not any(isinstance(x, a.Vote) for x in bot.decide(answered, 0.5))


# --- normal ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("level", ["normal", "hard"])
def test_takes_the_obvious_swap(level):
    bot = make_bot(level, random.Random(5))
    view = seat_view(hand=("KS", "KH", "QS", "JS"), center=("AD", "KD", "10S", "AC"))
    dealt(bot, 0, view.hand, view.center)
    swaps = [x for x in bot.decide(view, 0.0) if isinstance(x, a.Swap)]
    assert len(swaps) == 1
    assert swaps[0].slot == 1 and swaps[0].take == "KD" and swaps[0].give in ("QS", "JS")


@pytest.mark.parametrize("level", ["easy", "normal"])
def test_normal_pairs_a_lone_card_when_its_rank_is_not_in_the_center(level):
    bot = make_bot(level, random.Random(6))
    view = seat_view(hand=("KS", "KH", "QS", "JS"), center=("AD", "QD", "10S", "AC"), channel_held=level == "normal")
    (swap,) = [x for x in bot.decide(view, 0.0) if isinstance(x, a.Swap)]
    assert swap == a.Swap("JS", 1, "QD")  # K K Q Q: two ranks to finish, and the kings are kept


def test_normal_waits_out_its_swap_cooldown():
    view = seat_view(
        hand=("KS", "KH", "QS", "JS"), center=("AD", "KD", "10S", "AC"), swap_wait_ms=800, channel_held=True
    )
    assert NormalBot(random.Random(0)).decide(view, 0.0) == []


@pytest.mark.parametrize("level", ["normal", "hard"])
def test_holding_four_it_shows_the_true_sign_on_its_channel(level):
    bot = make_bot(level, random.Random(7))
    four = ("KS", "KH", "KD", "KC")
    assert bot.decide(seat_view(hand=four), 0.0) == [a.TakeChannel(), a.ChooseEmoji(SIGN)]
    held = seat_view(hand=four, channel_held=True, channel_sign="owl")
    assert bot.decide(held, 0.5) == [a.ChooseEmoji(SIGN)]
    showing = seat_view(hand=four, channel_held=True, channel_sign=SIGN)
    assert bot.decide(showing, 1.0) == []  # keeps the four and the sign up: no swap, no call


@pytest.mark.parametrize("level", ["normal", "hard"])
def test_calls_when_the_partner_pulses_the_team_sign(level):
    bot = make_bot(level, random.Random(8))
    view = seat_view(hand=("AS", "AH", "QS", "JS"), center=("KD", "KH", "10S", "JC"))
    dealt(bot, 0, view.hand, view.center)
    bot.observe([e.Swapped(2, 0, "QH", "KD"), e.Swapped(2, 1, "QD", "KH"), e.ChannelTaken(2), e.Pulse(2, "owl")])
    view = replace(view, center=("QH", "QD", "10S", "JC"))
    assert a.Call() not in bot.decide(view, 0.0)  # a decoy: not our sign
    bot.observe([e.Pulse(2, SIGN)])
    pulsed = replace(
        view, seats=tuple(replace(s, last_pulse=SIGN, last_pulse_ms=2000) if s.seat == 2 else s for s in view.seats)
    )
    assert bot.decide(pulsed, 2.0) == [a.Call()]  # the pulse fell 2 s ago: more than a reaction time


@pytest.mark.parametrize("level", ["normal", "hard"])
def test_a_sign_pulsed_before_the_partner_could_hold_four_is_not_called(level):
    # A reshuffle leaves no hand with three of a rank (R4): a pulse just after one was chosen for the old hand.
    bot = make_bot(level, random.Random(9))
    view = seat_view(hand=("AS", "AH", "QS", "JS"), center=("KD", "10H", "10S", "JC"))
    dealt(bot, 0, view.hand, view.center)
    bot.observe([e.ChannelTaken(2), e.VoteStarted(1, ()), e.VoteEnded(True, "agreed")])
    bot.observe([e.Dealt(view.center, 0, True), e.HandDealt(0, view.hand), e.Pulse(2, SIGN)])
    assert a.Call() not in bot.decide(view, 0.0)


@pytest.mark.parametrize("level", ["normal", "hard"])
def test_never_calls_on_its_own_four_of_a_kind(level):
    bot = make_bot(level, random.Random(10))
    four = ("KS", "KH", "KD", "KC")
    view = seat_view(hand=four, center=("AD", "QD", "10S", "AC"))
    dealt(bot, 0, ("KS", "KH", "QS", "JS"), ("KD", "KC", "10S", "AC"))
    bot.observe([e.Swapped(0, 0, "QS", "KD"), e.Swapped(0, 1, "JS", "KC")])
    for look in range(50):
        view = replace(view, channel_held=look > 0, channel_sign=SIGN if look > 0 else None)
        assert a.Call() not in bot.decide(view, look * 0.5)  # R13 checks the partner's hand, never ours


# --- hard: reading the table ---------------------------------------------------------------------------------


def proven_kings(bot: HardBot, taker: int) -> SeatView:
    """``taker`` takes all four kings from the center, putting down the four cards it was dealt: its hand is proven."""
    view = seat_view(hand=("AS", "QS", "JS", "10S"), center=("KS", "KH", "KD", "KC"))
    dealt(bot, 0, view.hand, view.center)
    bot.observe(
        [
            e.Swapped(taker, 0, "AH", "KS"),
            e.Swapped(taker, 1, "AD", "KH"),
            e.Swapped(taker, 2, "QH", "KD"),
            e.Swapped(taker, 3, "QD", "KC"),
        ]
    )
    return replace(view, center=("AH", "AD", "QH", "QD"))


def test_hard_counters_a_team_whose_four_of_a_kind_its_swaps_prove():
    bot = HardBot(random.Random(11))
    view = proven_kings(bot, taker=1)
    assert bot.reader.status(1) == (bots.PROVEN, "K")
    assert answer(bot, view, 0.0) == [a.Counter(1)]


def test_hard_calls_when_it_can_prove_the_partner_holds_four():
    bot = HardBot(random.Random(12))
    view = proven_kings(bot, taker=2)  # seat 2 is our partner
    assert answer(bot, view, 0.0) == [a.Call()]  # no need to wait for the pulse


def test_hard_names_the_proven_team_at_a_table_of_six():
    bot = HardBot(random.Random(13))
    view = seat_view(players=6, hand=("AS", "QS", "JS", "10S"), center=("KS", "KH", "KD", "KC"))
    dealt(bot, 0, view.hand, view.center, players=6)
    bot.observe([e.Swapped(5, i, c, k) for i, (c, k) in enumerate(zip(("AH", "AD", "QH", "QD"), view.center))])
    assert answer(bot, replace(view, center=("AH", "AD", "QH", "QD")), 0.0) == [a.Counter(2)]  # seat 5 is team 2


def test_hard_proves_a_four_by_elimination():
    # Seat 1 shows three kings and holds one dealt card; every other hand is fully known, so the last king is seat 1's.
    bot = HardBot(random.Random(14))
    view = seat_view(hand=("AS", "QS", "JS", "10S"), center=("KS", "KH", "KD", "AH"))
    dealt(bot, 0, view.hand, view.center)
    bot.observe(
        [
            e.Swapped(1, 0, "AD", "KS"),
            e.Swapped(1, 1, "QH", "KH"),
            e.Swapped(1, 2, "QD", "KD"),
            # seats 2 and 3 swap away all they were dealt, taking what seat 1 put down and back
            e.Swapped(2, 0, "JH", "AD"),
            e.Swapped(2, 1, "JD", "QH"),
            e.Swapped(2, 2, "10H", "QD"),
            e.Swapped(2, 3, "10D", "AH"),
            e.Swapped(3, 0, "AC", "JH"),
            e.Swapped(3, 1, "QC", "JD"),
            e.Swapped(3, 2, "JC", "10H"),
            e.Swapped(3, 3, "10C", "10D"),
        ]
    )
    assert bot.reader.status(1) == (bots.PROVEN, "K")
    assert answer(bot, replace(view, center=("AC", "QC", "JC", "10C")), 0.0) == [a.Counter(1)]


def test_hard_never_counters_a_hand_the_cards_rule_out():
    bot = HardBot(random.Random(15))
    view = seat_view(hand=("AS", "QS", "JS", "10S"), center=("KS", "QH", "AD", "JH"))
    dealt(bot, 0, view.hand, view.center)
    # Seat 1 takes a king and a queen: two ranks in view, four of a kind is impossible, whatever its channel says.
    bot.observe([e.Swapped(1, 0, "AH", "KS"), e.Swapped(1, 1, "10H", "QH"), e.ChannelTaken(1), e.Pulse(1, "owl")])
    assert bot.reader.status(1)[0] == bots.IMPOSSIBLE
    assert not any(isinstance(x, a.Counter) for x in bot.decide(view, 0.0))


def test_hard_counters_a_channel_taken_on_a_hand_that_allows_four():
    # The convention says a channel means four; until the reveals say otherwise, hard believes it.
    bot = HardBot(random.Random(16))
    view = seat_view(hand=("AS", "QS", "JS", "10S"), center=("KS", "KH", "AD", "JH"))
    dealt(bot, 0, view.hand, view.center)
    bot.observe([e.Swapped(1, 0, "AH", "KS"), e.Swapped(1, 1, "10H", "KH")])
    assert not any(isinstance(x, a.Counter) for x in bot.decide(view, 0.0))  # the cards alone are not enough
    bot.observe([e.ChannelTaken(1)])
    assert answer(bot, view, 0.5) == [a.Counter(1)]


def test_hard_learns_from_reveals_that_a_seat_bluffs_with_its_channel():
    bot = HardBot(random.Random(17))
    hand, center = ("AS", "QS", "JS", "10S"), ("KS", "KH", "AD", "JH")
    # At the reveal seat 1 held K K Q J: the channel it took on two kings was a bluff.
    reveal = (hand, ("KS", "KH", "QH", "JD"), ("QD", "QC", "JC", "10C"), ("AC", "KD", "KC", "10D"))
    dealt(bot, 0, hand, center)
    for round_no in (1, 2):
        if round_no > 1:
            bot.observe(
                [e.SigningStarted(round_no), e.RoundOpened(round_no), e.Dealt(center, 0, False), e.HandDealt(0, hand)]
            )
        bot.observe([e.Swapped(1, 0, "AH", "KS"), e.Swapped(1, 1, "10H", "KH"), e.ChannelTaken(1)])
        countered = a.Counter(1) in answer(bot, seat_view(round=round_no, hand=hand, center=center), 0.0)
        assert countered == (round_no == 1)  # believed until a bluff is revealed
        after = ("AH", "10H", "AD", "JH")
        bot.observe(
            [e.RoundEnded(round_no, "counter", 0, 1, False, (1,), (0, round_no), reveal, after, (SIGN, "owl"), ())]
        )


def test_hard_learns_an_opponents_favourite_sign_and_counters_its_pulse():
    bot = HardBot(random.Random(18))
    center = ("KS", "KH", "AD", "JH")
    hands = (("AS", "QS", "JS", "10S"), ("KS", "KH", "KD", "KC"), ("QD", "QC", "JC", "10C"), ("AC", "AH", "QH", "JD"))
    dealt(bot, 0, hands[0], center)
    for round_no in (1, 2, 3):
        bot.observe(
            [
                e.RoundEnded(
                    round_no, "call", 3, None, True, (1,), (0, round_no), hands, center, (SIGN, "whale"), (1,)
                ),
                e.SigningStarted(round_no + 1),
                e.RoundOpened(round_no + 1),
                e.Dealt(center, 0, False),
                e.HandDealt(0, hands[0]),
            ]
        )
    # Round 4: seat 1 holds its channel from the start (no tell), takes two kings, and pulses... its old sign.
    view = seat_view(round=4, hand=hands[0], center=("AH", "10H", "AD", "JH"))
    bot.observe([e.ChannelTaken(1), e.Swapped(1, 0, "AH", "KS"), e.Swapped(1, 1, "10H", "KH")])
    assert not any(isinstance(x, a.Counter) for x in bot.decide(view, 0.0))
    bot.observe([e.Pulse(1, "whale")])
    assert answer(bot, view, 0.5) == [a.Counter(1)]


def test_hard_blocks_the_card_an_opponent_needs_and_never_feeds_it():
    bot = HardBot(random.Random(19))
    view = seat_view(hand=("AS", "AH", "QS", "JS"), center=("KH", "10H", "AD", "KD"))
    dealt(bot, 0, view.hand, ("KH", "10H", "KC", "KD"))
    bot.observe([e.Swapped(1, 2, "QD", "KC")])  # seat 1 shows a king...
    view = replace(view, center=("KH", "10H", "QD", "KD"))
    bot.observe([e.Swapped(1, 0, "JD", "KH")])  # ...and another
    view = replace(view, center=("JD", "10H", "QD", "KD"))
    (swap,) = [x for x in bot.decide(view, 0.0) if isinstance(x, a.Swap)]
    assert swap.take == "KD"  # the king seat 1 wants, though it does nothing for our aces
    bot2 = HardBot(random.Random(19))
    dealt(bot2, 0, ("KS", "AH", "QS", "JS"), ("KH", "10H", "KC", "KD"))
    bot2.observe([e.Swapped(1, 2, "QD", "KC"), e.Swapped(1, 0, "JD", "KH")])
    view2 = seat_view(hand=("KS", "AH", "QS", "JS"), center=("JD", "10H", "QD", "KD"))
    for look in range(20):
        for action in bot2.decide(view2, look * 3.0):
            assert not (isinstance(action, a.Swap) and action.give == "KS")  # never hand seat 1 a king


def test_hard_asks_for_a_reshuffle_when_the_center_is_dead_for_it():
    bot = HardBot(random.Random(20))
    view = seat_view(hand=("AS", "AH", "KS", "KH"), center=("QS", "QH", "JS", "10S"), channel_held=True)
    dealt(bot, 0, view.hand, view.center)
    assert bot.decide(view, 0.0) == []  # nothing worth taking: wait a while first
    assert a.AskReshuffle() not in bot.decide(view, 5.0)
    assert bot.decide(view, 5.0 + bots.DEAD_CENTER_SECONDS) == [a.AskReshuffle()]
    assert a.AskReshuffle() not in bot.decide(replace(view, reshuffle_used=True), 60.0)  # once a round (R15)


@pytest.mark.parametrize("level", ["random", "normal", "hard"])
def test_a_bot_asks_no_more_reshuffles_in_a_round_that_had_a_vote(level):
    """Issue 37: after a failed vote a bot whose center stayed dead asked the table's lone human again after every
    vote gap. A room on the virtual clock plays a long round with a human who never answers (silence is no)."""
    from helpers.lobby_peer import RecordingPeer

    room = Room(
        id=1, players=4, timing_name="fast", timing=FAST.changed(round_length=180.0), password=None,
        rng=random.Random(7), seats=[Seat() for _ in range(4)],
    )  # fmt: skip
    human = RecordingPeer("ann")
    room.sit(0, human, "ann")
    bot = make_bot(level, random.Random(72))
    if level == "random":
        bot.SHARES = (((a.AskReshuffle,), 1.0),)  # a request at every look: nothing but the bound stops it
    seated = {2: bot} | {seat: make_bot("normal", random.Random(70 + seat)) for seat in (1, 3)}
    for seat, each in seated.items():
        room.sit(seat, None, f"bot-{seat}", bot=each)
    room.start(0.0)
    room.act(0, a.PickSign(SIGN), 0.0)
    room.act(0, a.Ready(), 0.0)
    while (wake := room.next_wake()) is not None and room.table.phase is Phase.ROUND:
        room.tick(wake)
    told = [event for message in human.sent for event in message.get("events", ())]
    votes = [event for event in told if event["kind"] == "vote_started"]
    assert len(votes) == 1, votes  # asked once; the vote timed out and the round ran on for minutes
    assert [event["outcome"] for event in told if event["kind"] == "vote_ended"] == ["timeout"]


def test_hard_holds_its_channel_quietly_and_decoys_once_opponents_counter():
    bot = HardBot(random.Random(21))
    view = seat_view(hand=("AS", "AH", "KS", "QH"), center=("JS", "JH", "10S", "10D"))
    dealt(bot, 0, view.hand, view.center)
    assert bot.decide(view, 0.0)[0] == a.TakeChannel()  # taking it early gives nothing away later
    held = replace(view, channel_held=True)
    assert not any(isinstance(x, a.ChooseEmoji) for x in bot.decide(held, 0.5))  # no pulse, no tell
    hands = (view.hand, ("KD", "KC", "QS", "JD"), ("QD", "QC", "JC", "10C"), ("AC", "AD", "10H", "KH"))
    bot.observe([e.RoundEnded(1, "counter", 1, 0, False, (0,), (1, 0), hands, view.center, (SIGN, "owl"), ())])
    bot.observe([e.SigningStarted(2), e.RoundOpened(2), e.Dealt(view.center, 0, False), e.HandDealt(0, view.hand)])
    choices = [x for x in bot.decide(replace(held, round=2), 1.0) if isinstance(x, a.ChooseEmoji)]
    assert choices and choices[0].sign not in (None, SIGN)  # a decoy, never the true sign without four


def test_hard_tracking_gives_up_on_a_missed_event_rather_than_guess():
    bot = HardBot(random.Random(22))
    dealt(bot, 0, ("AS", "QS", "JS", "10S"), ("KS", "KH", "KD", "KC"))
    bot.observe([e.Swapped(1, 0, "AH", "QC")])  # slot 0 held KS: we missed a swap
    assert not bot.reader.valid


# --- random ------------------------------------------------------------------------------------------


def test_random_plays_every_kind_of_action_and_calls_rarely():
    bot = RandomBot(random.Random(23))
    seen: dict[type, int] = {}
    looks = 4000
    for look in range(looks):
        for action in bot.decide(seat_view(channel_held=look % 2 == 1), look * 0.5):
            seen[type(action)] = seen.get(type(action), 0) + 1
    assert {a.Swap, a.TakeChannel, a.ChooseEmoji, a.ReleaseChannel, a.Call, a.Counter, a.AskReshuffle} <= set(seen)
    assert seen[a.Call] < looks * 0.03  # a guess now and then, not whenever it is cooling down


def test_random_takes_only_actions_legal_offers_in_every_phase():
    """Every action the baseline takes is one of ``legal(view)``'s, whatever the table shows (humans' and bots'
    seats, held channels, votes, cooldowns, the break): it never works legality out for itself."""
    rng = random.Random(5)
    looks: dict[Phase, int] = {}
    for players in (4, 6, 8):
        bots = [RandomBot(random.Random(players * 10 + seat)) for seat in range(players)]
        table = new_table(players, seed=players, bots=range(1, players, 2))
        for now, _ in random_play(table, rng, steps=1500):
            for seat, bot in enumerate(bots):
                seat_view = engine_view(table, seat, now)
                moves = legal(seat_view)
                for action in bot.decide(seat_view, now):
                    assert action in moves, (seat_view.phase, action)
                looks[seat_view.phase] = looks.get(seat_view.phase, 0) + 1
    assert looks.get(Phase.SIGNING) and looks.get(Phase.ROUND) and looks.get(Phase.BREAK), looks


# --- H2: a bot is given a view and events, and nothing else --------------------------------------------------


def test_bot_modules_cannot_reach_the_rules_engine():
    root = Path(__file__).resolve().parents[1] / "quatro_server"
    for module in ("games/quatro/bots.py", "bots/netbot.py", "games/quatro/exploiters.py"):
        tree = ast.parse((root / module).read_text())
        imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
        assert not any(name and ("engine" in name or name.endswith("lobby")) for name in imported), (module, imported)


class Inspector(HardBot):
    """A hard bot that checks every argument it is handed."""

    decisions = 0
    batches = 0

    def decide(self, view, now):
        assert type(view) is SeatView and isinstance(now, float)
        assert all(type(s) is SeatState for s in view.seats)
        Inspector.decisions += 1
        return super().decide(view, now)

    def observe(self, events):
        assert type(events) is list and all(isinstance(event, Event) for event in events)
        Inspector.batches += 1
        super().observe(events)


def test_a_room_hands_its_bots_views_and_events_only():
    room = Room(
        id=1, players=4, timing_name="fast", timing=FAST, password=None, rng=random.Random(24),
        seats=[Seat() for _ in range(4)],
    )  # fmt: skip
    for seat in range(4):
        room.sit(seat, None, f"bot-{seat}", bot=Inspector(random.Random(seat)))
    room.start(0.0)
    while (wake := room.next_wake()) is not None and room.table.round < 3:
        room.tick(wake)
    assert Inspector.decisions > 20 and Inspector.batches > 5
