"""The Quarto engine against the rules Q1–Q7: arrange a table, act, assert what the rule says."""

from __future__ import annotations

import ast
import dataclasses
import random
from pathlib import Path

import pytest

from quatro_shared.games.quarto import contract as q
from quatro_shared.games.quarto.contract import Give, NextGame, Phase, Place, Reason, Step
from quatro_shared.games.quatro import actions as qa
from quatro_shared.tables import Connect, Disconnect

from quatro_server.games.quarto.engine import MOVE_CLOCK, QuartoTable, view
from quatro_server.games.quarto.game import QUARTO
from quatro_server.timing import FAST, STANDARD, Timing

ROOT = Path(__file__).resolve().parent.parent

#: A full board with no line sharing an attribute (a1..d4 in order): the draw of Q5.
DRAWN_BOARD = "TDRH TLQF TDQH SLQF SDQF SDQH TDQF TLRF TDRF TLRH SLRF SLQH TLQH SDRF SLRH SDRH".split()


def started(seed: int = 1, **kwargs) -> tuple[QuartoTable, list[q.Event]]:
    table = QuartoTable(rng=random.Random(seed), **kwargs)
    return table, table.start(0.0)


def ok(table: QuartoTable, seat: int, action: q.Action, now: float = 0.0) -> list[q.Event]:
    outcome = table.act(seat, action, now)
    assert outcome.ok, (action, outcome.refusal)
    return outcome.events


def refused(table: QuartoTable, seat: int, action: object) -> Reason:
    outcome = table.act(seat, action, 0.0)
    assert outcome.refusal is not None, action
    assert outcome.refusal.message == q.MESSAGES[outcome.refusal.reason]
    return outcome.refusal.reason


def play(table: QuartoTable, placements: list[tuple[int, int]]) -> list[q.Event]:
    """Play ``(square, piece)`` placements in order: each piece is given by the seat to act, then placed."""
    game = table.game
    assert game is not None
    events: list[q.Event] = []
    first_piece = placements[0][1]
    events += ok(table, game.turn, Give(first_piece))
    for i, (square, piece) in enumerate(placements):
        placer = game.turn
        events += ok(table, placer, Place(square))
        if table.phase is not Phase.PLAYING or table.game is not game:
            assert i == len(placements) - 1, "the game ended early"
            break
        if i + 1 < len(placements):
            events += ok(table, placer, Give(placements[i + 1][1]))
    return events


def four_sharing(attribute: int, value: int) -> list[int]:
    """Four pieces sharing ``attribute`` = ``value`` and nothing else."""
    others = [k for k in range(4) if k != attribute]
    pieces = []
    for pattern in (0b000, 0b011, 0b101, 0b110):
        p = value << attribute
        for i, k in enumerate(others):
            p |= (pattern >> i & 1) << k
        pieces.append(p)
    return pieces


# --- Q2: the start -------------------------------------------------------------------------------


def test_q2_the_starting_player_is_drawn_by_lot_from_the_injected_source():
    firsts = {started(seed)[0].first for seed in range(20)}
    assert firsts == {0, 1}
    for seed in range(5):
        assert started(seed)[0].first == started(seed)[0].first == random.Random(seed).randrange(2)


def test_q2_the_starter_begins_by_giving_a_piece():
    table, events = started(3)
    starter = table.first
    assert isinstance(events[0], q.MatchStarted) and events[0].first == starter
    assert isinstance(events[1], q.GameStarted) and events[1].starter == starter
    v = view(table, starter, 0.0)
    assert (v.phase, v.turn, v.step, v.in_hand) == (Phase.PLAYING, starter, Step.GIVE, None)
    assert q.legal(v) == [Give(p) for p in range(16)]
    assert q.legal(view(table, 1 - starter, 0.0)) == []
    assert refused(table, 1 - starter, Give(3)) is Reason.NOT_YOUR_TURN
    assert refused(table, starter, Place(0)) is Reason.WRONG_STEP  # nothing to place yet
    given = ok(table, starter, Give(3))
    assert given == [q.PieceGiven(starter, 3, "TDQH")]


# --- Q3: a turn ----------------------------------------------------------------------------------


def test_q3_a_player_never_places_a_piece_they_chose():
    table, _ = started(1)
    giver = table.first
    ok(table, giver, Give(q.parse_piece("TDRH")))
    assert refused(table, giver, Place(5)) is Reason.NOT_YOUR_TURN
    v = view(table, 1 - giver, 0.0)
    assert (v.turn, v.step, v.in_hand) == (1 - giver, Step.PLACE, q.parse_piece("TDRH"))
    events = ok(table, 1 - giver, Place(5))
    assert events == [q.PiecePlaced(1 - giver, 5, q.parse_piece("TDRH"), "b2")]  # the piece given, and no other
    assert view(table, giver, 0.0).board[5] == q.parse_piece("TDRH")


def test_q3_place_then_give_and_out_of_step_moves_are_refused():
    table, _ = started(1)
    a = table.first
    b = 1 - a
    ok(table, a, Give(0))
    assert refused(table, b, Give(1)) is Reason.WRONG_STEP  # place first
    ok(table, b, Place(0))
    assert refused(table, b, Place(1)) is Reason.WRONG_STEP  # one placement a turn, then give
    assert refused(table, a, Give(1)) is Reason.NOT_YOUR_TURN
    assert refused(table, a, Place(1)) is Reason.NOT_YOUR_TURN
    assert refused(table, b, Give(0)) is Reason.PIECE_UNAVAILABLE  # on the board (Q1: used once)
    ok(table, b, Give(1))
    assert refused(table, a, Place(0)) is Reason.SQUARE_TAKEN
    ok(table, a, Place(1))
    assert refused(table, a, Give(1)) is Reason.PIECE_UNAVAILABLE
    events = ok(table, a, Give(2))
    assert events == [q.PieceGiven(a, 2, "b1 SDQH")]


@pytest.mark.parametrize(
    "action",
    [Place(16), Place(-1), Place("a1"), Place(True), Give(16), Give(None), "place", qa.Swap(0, 0, 0), NextGame()],  # type: ignore[arg-type]
)
def test_q3_bad_or_foreign_actions_are_refused_and_change_nothing(action):
    table, _ = started(1)
    seat = table.first
    ok(table, seat, Give(4))
    before = view(table, 1 - seat, 0.0)
    reason = refused(table, 1 - seat, action)
    assert reason in (Reason.BAD_ARGUMENT, Reason.UNKNOWN_ACTION, Reason.WRONG_PHASE)
    assert view(table, 1 - seat, 0.0) == before


def test_q3_no_action_before_the_start_after_the_end_or_from_a_missing_seat():
    table = QuartoTable(rng=random.Random(1))
    assert refused(table, 0, Give(0)) is Reason.NOT_STARTED
    table.start(0.0)
    assert refused(table, 2, Give(0)) is Reason.BAD_SEAT
    assert refused(table, -1, Give(0)) is Reason.BAD_SEAT
    table.act(table.first, Disconnect(), 0.0)
    assert refused(table, table.first, Give(0)) is Reason.DISCONNECTED
    assert table.act(table.first, Connect(), 0.0).events == [q.SeatConnected(table.first)]
    ok(table, table.first, Give(0))


# --- Q4: winning ---------------------------------------------------------------------------------


@pytest.mark.parametrize("line", q.LINES, ids=["-".join(q.format_square(s) for s in line) for line in q.LINES])
@pytest.mark.parametrize("attribute", range(4))
@pytest.mark.parametrize("value", (0, 1))
def test_q4_a_completed_line_sharing_any_of_the_eight_values_wins_at_once(line, attribute, value):
    table, _ = started(7, games=1)
    pieces = four_sharing(attribute, value)
    events = play(table, list(zip(line, pieces)))
    ended = [e for e in events if isinstance(e, q.GameEnded)]
    assert len(ended) == 1
    placer = [e for e in events if isinstance(e, q.PiecePlaced)][-1].seat
    name = q.ATTRIBUTES[attribute][3 - value]
    assert ended[0].winner == placer
    assert ended[0].line == line
    assert ended[0].shared == (name,)
    assert ended[0].scores[placer] == 1 and ended[0].draws == 0
    v = view(table, 0, 0.0)
    assert (v.winner, v.line, v.shared) == (placer, line, (name,))
    assert v.phase is Phase.OVER


def test_q4_the_line_may_hold_pieces_of_both_players_and_three_alike_is_not_a_win():
    table, _ = started(2, games=1)
    events = play(table, list(zip((0, 1, 2, 3), four_sharing(0, 1))))
    placed = [e for e in events if isinstance(e, q.PiecePlaced)]
    assert {e.seat for e in placed} == {0, 1}
    ended = [e for e in events if isinstance(e, q.GameEnded)]
    assert len(ended) == 1 and ended[0].winner == placed[-1].seat  # not at three alike: at the fourth


def test_q4_a_full_line_sharing_nothing_does_not_win():
    table, _ = started(2, games=1)
    pieces = [0b0000, 0b0111, 0b1011, 0b1101]  # no value shared by all four
    play(table, list(zip((0, 1, 2, 3), pieces)))
    assert table.phase is Phase.PLAYING
    assert view(table, 0, 0.0).step is Step.GIVE


# --- Q5: a draw ----------------------------------------------------------------------------------


def test_q5_a_full_board_without_a_line_is_a_draw():
    table, _ = started(4, games=1)
    placements = [(s, q.parse_piece(text)) for s, text in enumerate(DRAWN_BOARD)]
    events = play(table, placements)
    ended = [e for e in events if isinstance(e, q.GameEnded)]
    assert len(ended) == 1 and ended[0].winner is None and ended[0].line is None
    assert ended[0].draws == 1 and ended[0].scores == (0, 0)
    assert len(ended[0].moves) == 17  # the opening give, 15 whole turns, the last placement
    assert ended[0].moves[-1] == "d4" and ended[0].moves[0] == "TDRH"
    assert isinstance(events[-1], q.MatchOver) and events[-1].winners == (0, 1)


# --- Q6: the match -------------------------------------------------------------------------------


def test_q6_a_match_is_a_fixed_number_of_games_the_start_alternating_the_score_counting_wins_and_draws():
    table, _ = started(6, games=3)
    first = table.first
    line_win = list(zip((0, 1, 2, 3), four_sharing(1, 1)))
    play(table, line_win)  # game 1: a win
    game1_winner = table.winner
    assert table.phase is Phase.BETWEEN
    assert refused(table, 0, Give(0)) is Reason.WRONG_PHASE
    ok(table, 0, NextGame())
    assert refused(table, 0, NextGame()) is Reason.ALREADY_READY
    events = ok(table, 1, NextGame())
    assert q.GameStarted(2, 1 - first) in events  # Q6: the start alternates
    play(table, [(s, q.parse_piece(text)) for s, text in enumerate(DRAWN_BOARD)])  # game 2: a draw
    assert table.scores[game1_winner] == 1 and table.draws == 1
    v = view(table, 0, 0.0)
    assert v.phase is Phase.BETWEEN and v.phase_ms == int(STANDARD.break_length * 1000)
    events = table.advance(STANDARD.break_length)  # the break ends by itself
    assert q.GameStarted(3, first) in events
    play(table, line_win)
    game3_winner = table.winner
    assert table.phase is Phase.OVER
    scores = [0, 0]
    scores[game1_winner] += 1
    scores[game3_winner] += 1
    top = max(scores)
    assert table.winners == tuple(i for i in (0, 1) if scores[i] == top)
    assert refused(table, 0, NextGame()) is Reason.MATCH_OVER


def test_q6_bots_may_fill_the_second_seat_and_are_always_ready():
    table, _ = started(6, games=2, bots={1})
    play(table, list(zip((0, 1, 2, 3), four_sharing(2, 0))))
    assert table.phase is Phase.BETWEEN
    assert view(table, 0, 0.0).seats[1].ready
    events = ok(table, 0, NextGame())
    assert any(isinstance(e, q.GameStarted) for e in events)


def test_q6_the_match_length_is_checked():
    with pytest.raises(ValueError):
        QuartoTable(games=0)
    with pytest.raises(ValueError):
        QuartoTable(games=q.MAX_GAMES + 1)


# --- Q7: notation in events ----------------------------------------------------------------------


def test_q7_events_and_the_view_carry_the_moves_in_notation():
    table, _ = started(1, games=1)
    a = table.first
    assert ok(table, a, Give(q.parse_piece("SLQF")))[0].notation == "SLQF"
    assert ok(table, 1 - a, Place(q.parse_square("b3")))[0].notation == "b3"
    assert view(table, 0, 0.0).moves == ("SLQF", "b3")  # a turn under way shows its placement
    assert ok(table, 1 - a, Give(q.parse_piece("TDRH")))[0].notation == "b3 TDRH"
    assert view(table, 1, 0.0).moves == ("SLQF", "b3 TDRH")


# --- the move clock ------------------------------------------------------------------------------


def test_the_move_clock_is_off_by_default():
    table, _ = started(1)
    assert STANDARD.of(MOVE_CLOCK) == FAST.of(MOVE_CLOCK) == 0
    assert table.next_deadline() is None
    assert view(table, 0, 100.0).clock_ms is None
    assert table.advance(10_000.0) == []


def test_the_move_clock_plays_a_step_by_lot_when_it_runs_out():
    table, _ = started(1, timing=Timing().changed(quarto_move_clock=5.0))
    a = table.first
    assert table.next_deadline() == 5.0
    assert view(table, a, 2.0).clock_ms == 3000
    events = table.advance(5.0)
    assert len(events) == 1 and isinstance(events[0], q.PieceGiven) and events[0].by_lot and events[0].seat == a
    assert table.next_deadline() == 10.0
    ok(table, 1 - a, Place(0), now=7.0)
    assert table.next_deadline() == 12.0  # each step has its own clock
    events = table.act(a, Place(1), 7.5).events  # refused, but time has passed
    assert events == []
    events = table.advance(12.0)
    assert isinstance(events[0], q.PieceGiven) and events[0].by_lot and events[0].seat == 1 - a


def test_time_never_runs_backwards():
    table, _ = started(1, timing=Timing().changed(quarto_move_clock=5.0))
    table.advance(3.0)
    assert table.advance(1.0) == []
    assert table.advance(float("nan")) == []
    assert table.next_deadline() == 5.0


# --- views and legality --------------------------------------------------------------------------


def test_quarto_hides_nothing_the_two_views_differ_only_by_seat_and_events_go_to_both():
    table, events = started(9)
    ok(table, table.first, Give(5))
    a, b = view(table, 0, 1.0), view(table, 1, 1.0)
    assert a.seat == 0 and b.seat == 1
    assert dataclasses.replace(a, seat=1) == b
    batch = QUARTO.batch(1, table, events, 1.0)  # what the room tells each seat
    assert batch.seen_by(0, 0) == batch.seen_by(1, 1) == tuple(range(len(events)))


def test_legal_lists_exactly_what_the_engine_accepts_in_random_games():
    rng = random.Random(11)
    for seed in range(6):
        table, _ = started(seed, games=2, bots={0, 1})
        while table.phase is Phase.PLAYING:
            for seat in (0, 1):
                v = view(table, seat, 0.0)
                allowed = set(q.legal(v))
                candidates = [Place(s) for s in range(16)] + [Give(p) for p in range(16)]
                for action in rng.sample(candidates, 6):
                    if action not in allowed:
                        assert not table.act(seat, action, 0.0).ok
                assert all(type(action) in table.accepts() for action in allowed)
            seat = table.game.turn
            ok(table, seat, rng.choice(q.legal(view(table, seat, 0.0))))
        assert table.phase in (Phase.OVER, Phase.PLAYING, Phase.BETWEEN)


def test_one_table_says_what_each_phase_and_step_accepts():
    assert q.ACCEPTS[(Phase.PLAYING, Step.GIVE)] == {Give}
    assert q.ACCEPTS[(Phase.PLAYING, Step.PLACE)] == {Place}
    assert q.ACCEPTS[(Phase.BETWEEN, None)] == {NextGame}
    assert q.ACCEPTS[(Phase.LOBBY, None)] == q.ACCEPTS[(Phase.OVER, None)] == frozenset()


# --- the shape of the code -----------------------------------------------------------------------


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def test_the_quarto_engine_and_solver_import_no_clock_no_network_no_ui():
    forbidden = {"trio", "textual", "socket", "asyncio", "time", "datetime", "msgpack", "threading"}
    for name in ("engine.py", "solver.py", "bots.py"):
        modules = {m.split(".")[0] for m in _imports(ROOT / "quatro_server" / "games" / "quarto" / name)}
        assert not modules & forbidden, (name, modules & forbidden)


def test_quarto_bots_never_import_the_engine():
    assert "quatro_server.games.quarto.engine" not in _imports(ROOT / "quatro_server" / "games" / "quarto" / "bots.py")
    assert "quatro_server.games.quarto.engine" not in _imports(
        ROOT / "quatro_server" / "games" / "quarto" / "solver.py"
    )


def test_the_move_clock_comes_from_a_timing_file_and_is_checked(tmp_path):
    from quatro_server.timing import load_timing

    path = tmp_path / "quarto.toml"
    path.write_text("quarto_move_clock = 20\n")
    assert load_timing(str(path)).of(MOVE_CLOCK) == 20
    for bad in ("-1", "true", '"10"'):
        path.write_text(f"quarto_move_clock = {bad}\n")
        with pytest.raises(ValueError, match="quarto_move_clock"):
            load_timing(str(path))
