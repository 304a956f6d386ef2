"""``legal``, each game's list of what a seat's view allows now, against its engine over random tables: every action it
offers is taken, and any other action a player might send is refused. Random bots and the soak's players choose
from it, so these tests stand for them too."""

from __future__ import annotations

import copy
import dataclasses
import random

import pytest

from quatro_shared.games.quarto import contract as q
from quatro_shared.games.quatro import actions as a
from quatro_shared.games.quatro.cards import CENTER_SIZE
from quatro_shared.games.quatro.legal import ACCEPTS, legal
from quatro_shared.games.quatro.signs import SIGNS
from quatro_shared.games.quatro.views import Phase
from quatro_shared.tables import Connect, Disconnect

from helpers.engine import FAST, new_table, open_round, random_play
from quatro_server.games.quarto import engine as quarto_engine
from quatro_server.games.quatro.engine import Table, view


def some_action(table: Table, seat: int, rng: random.Random) -> a.Action:
    """Any player action at all for ``seat``: often one the view allows, often not (a card it does not hold, a
    counter of its own team, a vote nobody asked for, a round's action in the break)."""
    hand, center = list(table.hand(seat)), list(table.center)
    cards = hand + center + list(table.deck)
    kind = rng.choice(["swap", "swap", "swap", "take", "release", "emoji", "call", "counter", "ask", "vote",
                       "ready", "sign", "next"])  # fmt: skip
    if kind == "swap":
        slot = rng.randrange(CENTER_SIZE)
        give = rng.choice(hand) if hand and rng.random() < 0.8 else rng.choice(cards)
        take = center[slot] if center and rng.random() < 0.8 else rng.choice(cards)
        return a.Swap(give, slot, take)
    if kind == "emoji":
        return a.ChooseEmoji(rng.choice([None, *SIGNS]))
    if kind == "counter":
        return a.Counter(rng.randrange(table.teams))
    if kind == "vote":
        return a.Vote(rng.random() < 0.5)
    if kind == "sign":
        return a.PickSign(rng.choice(SIGNS))
    return {"take": a.TakeChannel(), "release": a.ReleaseChannel(), "call": a.Call(), "ask": a.AskReshuffle(),
            "ready": a.Ready(), "next": a.NextRound()}[kind]  # fmt: skip


def quatro_tables(players: int, matches: int, steps: int):
    """Random Quatro tables (humans and bots, seats leaving and coming back), at every step: (table, now, rng)."""
    rng = random.Random(players)
    for match in range(matches):
        table = new_table(players, seed=match, bots=range(1, players, 2))
        for now, _ in random_play(table, rng, steps=steps):
            yield table, now, rng
            if table.phase is Phase.OVER:
                break


@pytest.mark.parametrize("players", [4, 6, 8])
def test_r5_to_r19_every_action_legal_offers_is_taken_by_the_engine(players):
    offered: dict[Phase, int] = {}
    for table, now, rng in quatro_tables(players, matches=3, steps=300):
        seat = rng.randrange(players)
        moves = legal(view(table, seat, now))
        for action in rng.sample(moves, min(len(moves), 6)):
            trial = copy.deepcopy(table)
            refusal = trial.act(seat, action, now).refusal
            if refusal is not None and refusal.reason is a.Reason.COOLDOWN and refusal.wait is not None:
                assert refusal.wait < 0.0005, (seat, action, refusal)  # below the view's millisecond
                continue
            assert refusal is None, (table.phase, seat, action, refusal)
            offered[table.phase] = offered.get(table.phase, 0) + 1
    assert offered.get(Phase.SIGNING) and offered.get(Phase.ROUND), offered  # the test saw the phases that matter


@pytest.mark.parametrize("players", [4, 6, 8])
def test_r5_to_r19_every_action_legal_does_not_offer_is_refused_by_the_engine(players):
    refused: dict[Phase, int] = {}
    for table, now, rng in quatro_tables(players, matches=3, steps=300):
        seat = rng.randrange(players)
        moves = set(legal(view(table, seat, now)))
        for _ in range(6):
            action = some_action(table, seat, rng)
            if action in moves:
                continue
            trial = copy.deepcopy(table)
            outcome = trial.act(seat, action, now)
            assert outcome.events == [], (table.phase, seat, action, view(table, seat, now))
            if outcome.refusal is None:  # saying ready again is no news (R7): taken, and nothing changes
                assert isinstance(action, a.Ready) and view(trial, seat, now) == view(table, seat, now), action
                continue
            refused[table.phase] = refused.get(table.phase, 0) + 1
    assert refused.get(Phase.SIGNING) and refused.get(Phase.ROUND) and refused.get(Phase.BREAK), refused


def quarto_tables(matches: int):
    """Random Quarto tables (seat 1 leaving and coming back now and then), at every step: (table, now, rng)."""
    rng = random.Random(3)
    for match in range(matches):
        table = quarto_engine.QuartoTable(rng=random.Random(match), bots={0}, games=3)
        now = 0.0
        table.start(now)
        while table.phase is not q.Phase.OVER:
            yield table, now, rng
            now += 0.5
            away = not quarto_engine.view(table, 1, now).seats[1].connected
            if rng.random() < (0.3 if away else 0.05):
                table.act(1, Connect() if away else Disconnect(), now)
            seat = rng.randrange(q.SEATS)
            moves = q.legal(quarto_engine.view(table, seat, now))
            if moves:
                assert table.act(seat, rng.choice(moves), now).ok
            else:
                table.advance(now)


def some_quarto_action(rng: random.Random) -> q.Action:
    return rng.choice([q.Place(rng.randrange(q.SQUARES)), q.Give(rng.randrange(q.PIECES)), q.NextGame()])


def test_q1_to_q6_every_action_legal_offers_is_taken_and_every_other_refused():
    seen: dict[tuple[q.Phase, bool], int] = {}
    for table, now, rng in quarto_tables(matches=4):
        seat = rng.randrange(q.SEATS)
        seat_view = quarto_engine.view(table, seat, now)
        moves = q.legal(seat_view)
        for action in moves:
            assert copy.deepcopy(table).act(seat, action, now).ok, (seat_view, action)
        for _ in range(4):
            action = some_quarto_action(rng)
            if action not in moves:
                outcome = copy.deepcopy(table).act(seat, action, now)
                assert outcome.refusal is not None and outcome.events == [], (seat_view, action)
        key = (table.phase, seat_view.seats[seat].connected)
        seen[key] = seen.get(key, 0) + 1
    assert {(q.Phase.PLAYING, True), (q.Phase.PLAYING, False), (q.Phase.BETWEEN, True)} <= set(seen), seen


def test_q3_the_give_after_a_placement_is_legal_of_the_placed_view():
    """``placed``: the second step of a turn, as the view tells it before the table answers; it agrees with the
    view the table shows after the placement, and offers nothing once the placement ended the game."""
    checked = ended = 0
    for table, now, rng in quarto_tables(matches=4):
        seat_view = quarto_engine.view(table, table.game.turn if table.game else 0, now)
        if seat_view.step is not q.Step.PLACE or not seat_view.seats[seat_view.seat].connected:
            continue
        square = rng.choice(q.legal(seat_view)).square
        after = q.placed(seat_view, square)
        trial = copy.deepcopy(table)
        assert trial.act(seat_view.seat, q.Place(square), now).ok
        told = quarto_engine.view(trial, seat_view.seat, now)
        if told.phase is q.Phase.PLAYING and told.game == seat_view.game:
            assert (after.board, after.in_hand, after.turn, after.step) == (
                told.board,
                told.in_hand,
                told.turn,
                told.step,
            )
            assert q.legal(after) == q.legal(told)
            checked += 1
        else:
            assert after.board[square] == seat_view.in_hand and after.in_hand is None and q.legal(after) == []
            ended += 1
    assert checked > 20 and ended > 0, (checked, ended)
    with pytest.raises(ValueError):
        q.placed(seat_view, 0)  # not a placing view (the last one seen above was a give or a break)


#: One of every player action, values that the rules would refuse included.
_EVERY_ACTION = [
    a.Ready(),
    a.PickSign("no-such-sign"),
    a.Swap("AS", 9, "KS"),
    a.TakeChannel(),
    a.ReleaseChannel(),
    a.ChooseEmoji("no-such-sign"),
    a.Call(),
    a.Counter(99),
    a.AskReshuffle(),
    a.Vote(True),
    a.NextRound(),
]


def test_r20_before_and_after_the_match_every_action_is_refused_whatever_its_values():
    """No phase table is asked before the match (``not_started``) or once it is over (``match_over``, R20): the
    reason comes before the action's own values are judged, and the table holds only the phases in play."""
    assert set(ACCEPTS) == {Phase.SIGNING, Phase.ROUND, Phase.BREAK}
    assert {type(action) for action in _EVERY_ACTION} == set(a.PLAYER_ACTIONS)
    waiting = new_table(4, seed=1)
    assert waiting.phase is Phase.LOBBY
    over = new_table(4, seed=1, timing=dataclasses.replace(FAST, target_score=1))
    open_round(over)
    assert over.act(0, a.Call(), 0.1).refusal is None  # right or wrong, a team reaches 1
    assert over.phase is Phase.OVER
    for action in _EVERY_ACTION:
        assert waiting.act(0, action, 1.0).refusal == a.Refusal(a.Reason.NOT_STARTED), action
        assert over.act(0, action, over.now).refusal == a.Refusal(a.Reason.MATCH_OVER), action
