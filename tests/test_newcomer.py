"""A newcomer's first match: the scripted newcomer plays as its brief says, and ``easy`` leaves it a real part.

The newcomer is a person still reading the cards (one swap every 6 s, the sign on four, a call 1.5 s after the
partner's sign, never a counter). ``quatro play`` seats ``easy`` by default: partnered with ``easy`` against two
``easy`` bots, such a player must win a fair part of its matches, not watch every round end before it has acted.
Everything runs on the virtual clock a bot is given; nothing sleeps.
"""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path

import pytest

from quatro_shared.games.quatro import actions as a
from quatro_shared.games.quatro import events as e
from quatro_shared.games.quatro.views import SeatView

from quatro_server.cli import main
from quatro_server.games.quatro import bots
from quatro_server.games.quatro import sim as sim_quatro
from quatro_server.games.quatro.exploiters import NEWCOMER_CALL_AFTER, NEWCOMER_SWAP_EVERY, Newcomer
from quatro_server.timing import STANDARD
from test_bots import SIGN, dealt, seat_view

#: Rounding: a view counts milliseconds.
TOLERANCE = 0.002
#: The measured run of docs/bots.md, made small enough for every test run: the same teams and seeds, 24 matches.
MATCHES = 24
SEED = 1


def swap_times(bot: bots.Bot, view: SeatView, until: float, seat: int = 0) -> list[float]:
    """Drive ``bot`` on the virtual clock from a deal at 0 s, as a room would, and return when it swapped."""
    swaps: list[float] = []
    now = 0.0
    center = list(view.center)
    hand = list(view.hand)
    while now < until:
        wait = 0 if not swaps else max(0, round((swaps[-1] + STANDARD.swap_cooldown - now) * 1000))
        looked = replace(view, hand=tuple(hand), center=tuple(center), swap_wait_ms=wait)
        for action in bot.decide(looked, now):
            if isinstance(action, a.Swap):
                swaps.append(now)
                # Put the card back where it was: the table stays as it is, so the bot keeps finding a swap to make.
                bot.observe(
                    [
                        e.Swapped(seat, action.slot, action.give, action.take),
                        e.Swapped(seat, action.slot, action.take, action.give),
                    ]
                )
        now += bot.think_time()
    return swaps


def test_the_newcomer_reads_the_deal_then_swaps_every_six_seconds():
    bot = Newcomer(random.Random(1))
    view = seat_view(hand=("KS", "KH", "QS", "JS"), center=("KD", "AH", "10S", "AC"))
    dealt(bot, 0, view.hand, view.center)
    swaps = swap_times(bot, view, until=40.0)
    assert swaps[0] == pytest.approx(NEWCOMER_SWAP_EVERY, abs=TOLERANCE)  # the first look at the cards is at 0 s
    gaps = [b - a_ for a_, b in zip(swaps, swaps[1:])]
    assert len(gaps) >= 4 and all(gap == pytest.approx(NEWCOMER_SWAP_EVERY, abs=TOLERANCE) for gap in gaps), gaps
    # A reshuffle deals new cards: they are read before the next swap, whenever the last one was.
    bot.observe([e.Dealt(view.center, 0, False), e.HandDealt(0, view.hand)])
    assert not any(isinstance(x, a.Swap) for x in bot.decide(view, 100.0))
    assert not any(isinstance(x, a.Swap) for x in bot.decide(view, 100.0 + NEWCOMER_SWAP_EVERY - 0.1))
    assert any(isinstance(x, a.Swap) for x in bot.decide(view, 100.0 + NEWCOMER_SWAP_EVERY))


def test_a_refused_swap_costs_the_newcomer_nothing():
    """R10: a swap refused (the card was taken a moment earlier) starts no cooldown; the newcomer tries again at once."""
    bot = Newcomer(random.Random(2))
    view = seat_view(hand=("KS", "KH", "QS", "JS"), center=("KD", "AH", "10S", "AC"))
    dealt(bot, 0, view.hand, view.center)
    bot.decide(view, 0.0)
    assert any(isinstance(x, a.Swap) for x in bot.decide(view, NEWCOMER_SWAP_EVERY))  # refused: no Swapped follows
    taken = replace(view, center=("QD", "AH", "10S", "AC"))
    assert any(isinstance(x, a.Swap) for x in bot.decide(taken, NEWCOMER_SWAP_EVERY + 0.25))


def test_the_newcomer_swaps_toward_four_and_shows_the_sign_on_four():
    bot = Newcomer(random.Random(3))
    view = seat_view(hand=("KS", "KH", "KC", "JS"), center=("KD", "AH", "10S", "AC"))
    dealt(bot, 0, view.hand, view.center)
    bot.decide(view, 0.0)
    assert bot.decide(view, NEWCOMER_SWAP_EVERY) == [a.Swap("JS", 0, "KD")]
    four = replace(view, hand=("KS", "KH", "KC", "KD"), center=("JS", "AH", "10S", "AC"), swap_wait_ms=2000)
    assert bot.decide(four, NEWCOMER_SWAP_EVERY + 0.25) == [a.TakeChannel(), a.ChooseEmoji(SIGN)]
    held = replace(four, channel_held=True, channel_sign=SIGN)
    assert bot.decide(held, NEWCOMER_SWAP_EVERY + 0.5) == []  # four: it waits for its partner's call


def test_the_newcomer_calls_one_and_a_half_seconds_after_its_partners_sign():
    for seed in range(6):
        bot = Newcomer(random.Random(seed))
        view = seat_view(hand=("AS", "AH", "QS", "JS"), center=("KD", "KH", "10S", "JC"))
        dealt(bot, 0, view.hand, view.center)
        bot.observe(
            [e.Swapped(2, 0, "QH", "KD"), e.Swapped(2, 1, "QD", "KH"), e.ChannelTaken(2)]
        )  # two swaps: four is possible
        view = replace(view, center=("QH", "QD", "10S", "JC"), swap_wait_ms=60_000)
        pulse_at = 7.0 + random.Random(seed).random()  # falls between two looks
        now, told, call_at = 0.0, False, None
        while now < pulse_at + 5:
            if now >= pulse_at and not told:
                bot.observe([e.Pulse(2, SIGN)])
                told = True
            seats = tuple(
                replace(s, last_pulse=SIGN, last_pulse_ms=round((now - pulse_at) * 1000)) if told and s.seat == 2 else s
                for s in view.seats
            )
            if a.Call() in bot.decide(replace(view, seats=seats), now):
                call_at = now
                break
            now += bot.think_time()
        assert call_at == pytest.approx(pulse_at + NEWCOMER_CALL_AFTER, abs=TOLERANCE), (seed, call_at, pulse_at)


def test_the_newcomer_never_counters_and_calls_on_its_partners_sign_alone():
    bot = Newcomer(random.Random(4))
    view = seat_view(hand=("AS", "AH", "QS", "JS"), center=("KD", "KH", "10S", "JC"))
    dealt(bot, 0, view.hand, view.center)
    decoy = next(sign for sign in ("owl", "crab") if sign != SIGN)
    now = 0.0
    for beat in range(40):
        # Opponents take channels on cards that could be four and pulse; the partner pulses a decoy.
        bot.observe([e.Swapped(1, 0, "QH", "KD"), e.Swapped(1, 1, "QD", "KH"), e.ChannelTaken(1), e.Pulse(1, SIGN)])
        bot.observe(
            [e.Swapped(2, 2, "10H", "10S"), e.Swapped(2, 2, "10S", "10H"), e.ChannelTaken(2), e.Pulse(2, decoy)]
        )
        seats = tuple(
            replace(s, channel_held=s.seat in (1, 2), last_pulse=decoy if s.seat == 2 else SIGN, last_pulse_ms=0)
            if s.seat in (1, 2)
            else s
            for s in view.seats
        )
        for action in bot.decide(replace(view, seats=seats), now):
            assert not isinstance(action, (a.Counter, a.Call)), (beat, action)
        now += bot.think_time()


def test_easy_reads_a_fresh_deal_and_every_swap_at_a_new_players_pace():
    """``easy``: its first swap a reaction and a reading time after the deal; then the cooldown (R9), a reaction
    and a reading time between two swaps."""
    low, high = bots.THINK_TIME["easy"]
    read_low, read_high = bots.READING_TIME["easy"]
    cooldown = STANDARD.swap_cooldown
    firsts = []
    for seed in range(6):
        bot = bots.make_bot("easy", random.Random(seed))
        view = seat_view(hand=("KS", "KH", "QS", "JS"), center=("KD", "AH", "10S", "AC"))
        dealt(bot, 0, view.hand, view.center)
        swaps = swap_times(bot, view, until=60.0)
        firsts.append(swaps[0])
        assert low + read_low - TOLERANCE <= swaps[0] <= high + read_high + TOLERANCE, swaps[0]
        gaps = [b - a_ for a_, b in zip(swaps, swaps[1:])]
        assert all(
            cooldown + low + read_low - TOLERANCE <= gap <= cooldown + high + read_high + TOLERANCE for gap in gaps
        ), gaps
    assert max(firsts) - min(firsts) > (high - low) / 4  # drawn afresh


def test_the_sim_seats_a_pair_as_one_team(capsys):
    assert main(["sim", "--json", "--teams", "newcomer/easy, easy", "--matches", "1", "--seed", "3"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert [t["level"] for t in result["teams"]] == ["newcomer/easy", "easy"]
    assert set(result["performance"]["by_level"]) == {"newcomer", "easy"}
    assert (
        sim_quatro.seat_player("newcomer/easy", 0, 4) == "newcomer"
        and sim_quatro.seat_player("newcomer/easy", 2, 4) == "easy"
    )
    assert sim_quatro.seat_player("newcomer/easy", 3, 6) == "easy" and sim_quatro.seat_player("hard", 3, 6) == "hard"
    for teams, complaint in (
        ("newcomer/easy/hard,easy", "a team is two players"),
        ("newcomer/genius,easy", "unknown bot level 'genius'"),
    ):
        assert main(["sim", "--teams", teams, "--matches", "1"]) == 2
        assert complaint in capsys.readouterr().err


def test_a_newcomer_partnered_with_easy_is_not_hopeless():
    """The measured run of docs/bots.md, small: the newcomer's team wins a fair part of the rounds and matches.

    With ``easy`` swapping every 2.9-3.8 s from the deal on, the newcomer's team took a third of the rounds and
    about one match in six: rounds ended before the newcomer had read its cards.
    """
    tally, _ = sim_quatro.simulate(4, ["newcomer/easy", "easy"], MATCHES, SEED)
    newcomers, field = tally.teams
    assert tally.unfinished == 0 and newcomers.calls_wrong == field.calls_wrong == 0
    assert newcomers.points / (newcomers.points + field.points) >= 0.42, (newcomers.points, field.points)
    assert newcomers.wins >= 0.35 * MATCHES, newcomers.wins


def test_normal_stays_a_step_up_from_easy():
    """``normal`` beats ``easy`` (quicker, and it counters the channel ``easy`` takes on four), and partnered with it
    the newcomer wins less than with ``easy``: the next step is a step."""
    tally, _ = sim_quatro.simulate(4, ["normal", "easy"], 6, SEED)
    assert tally.teams[0].wins == 6
    easy, _ = sim_quatro.simulate(4, ["newcomer/easy", "easy"], 12, SEED)
    normal, _ = sim_quatro.simulate(4, ["newcomer/normal", "normal"], 12, SEED)
    assert normal.teams[0].wins < easy.teams[0].wins, (normal.teams[0].wins, easy.teams[0].wins)


def test_the_newcomer_is_named_in_the_sims_errors(capsys):
    assert main(["sim", "--teams", "genius,easy", "--matches", "1"]) == 2
    assert "newcomer" in capsys.readouterr().err


def test_the_figure_is_documented_with_the_command_that_measures_it():
    """docs/bots.md gives the newcomer's figure with a command anyone can rerun, and easy's pace as the code has it."""
    docs = (Path(__file__).resolve().parents[1] / "docs" / "bots.md").read_text()
    assert "quatro-server sim --players 4 --matches 300 --teams newcomer/easy,easy --seed 1" in docs
    (low, high), (read_low, read_high) = bots.THINK_TIME["easy"], bots.READING_TIME["easy"]
    gap = f"{STANDARD.swap_cooldown + low + read_low:.1f}–{STANDARD.swap_cooldown + high + read_high:.1f} s"
    first = f"{low + read_low:.1f}–{high + read_high:.1f} s"
    assert f"a swap every {gap}" in docs and f"first {first}" in docs, (gap, first)
