"""The exact Quarto search: its symmetries are the board's, its values survive every symmetry, it agrees with a
plain exhaustive search and with a plain alpha-beta search written here from the rules alone, and its table keeps
to its size."""

from __future__ import annotations

import random
from itertools import permutations

import pytest

from quatro_shared.games.quarto import contract as q

from helpers.quarto import played_position
from quatro_server.games.quarto.solver import SYMMETRIES, Solver, canonical_key, plain_value, remap_piece, transform

ORDERS = list(permutations(range(4)))
IDENTITY = tuple(range(16))


def reference_value(board: list[int | None], pool: int, alpha: int = -1, beta: int = 1) -> int:
    """The giver's value by negamax with alpha-beta and nothing else: no table, no symmetry, no deadly-set cut, a
    line found by the shared rules' ``winning_line`` (Q4), a winning placement looked for before any other is
    searched. Written apart from the solver, to judge it."""
    empties = [s for s in range(16) if board[s] is None]
    best = -2
    for piece in (p for p in range(16) if pool >> p & 1):
        left = pool & ~(1 << piece)
        if _wins_somewhere(board, piece, empties):
            reply = 1  # the opponent completes a line with it
        else:
            reply, o_alpha = -2, -beta
            for s in empties:
                board[s] = piece
                v = reference_value(board, left, o_alpha, -alpha) if left else 0  # Q5: a full board draws
                board[s] = None
                reply = max(reply, v)
                o_alpha = max(o_alpha, v)
                if o_alpha >= -alpha:
                    break
        best = max(best, -reply)
        alpha = max(alpha, -reply)
        if alpha >= beta:
            break
    return best


def _wins_somewhere(board: list[int | None], piece: int, empties: list[int]) -> bool:
    for s in empties:
        board[s] = piece
        won = q.winning_line(board, s) is not None
        board[s] = None
        if won:
            return True
    return False


def test_the_32_symmetries_are_exactly_the_permutations_that_keep_the_lines():
    lines = {frozenset(line) for line in q.LINES}
    assert len(set(SYMMETRIES)) == 32 and IDENTITY in SYMMETRIES
    for t in SYMMETRIES:
        assert {frozenset(t[s] for s in line) for line in q.LINES} == lines
    # And no other permutation keeps them: count every one by backtracking over the squares, pruned by what a
    # line-keeping permutation must keep: the number of lines through a square, and which squares share a line.
    degree = [sum(s in line for line in q.LINES) for s in range(16)]
    together = [[any(a in line and b in line for line in q.LINES) for b in range(16)] for a in range(16)]
    found = 0
    image = [-1] * 16
    used = [False] * 16

    def extend(k: int) -> None:
        nonlocal found
        if k == 16:
            found += {frozenset(image[s] for s in line) for line in q.LINES} == lines
            return
        for v in range(16):
            if (
                not used[v]
                and degree[v] == degree[k]
                and all(together[j][k] == together[image[j]][v] for j in range(k))
            ):
                image[k], used[v] = v, True
                extend(k + 1)
                image[k], used[v] = -1, False

    extend(0)
    assert found == 32


def test_the_canonical_key_is_the_same_for_every_one_of_the_12288_images_of_a_board():
    board, _ = played_position(random.Random(3), 10)
    keys = set()
    for t in SYMMETRIES:
        for order in ORDERS:
            for flip in range(16):
                moved = transform(board, t, order, flip)
                occ = sum(1 << s for s, p in enumerate(moved) if p is not None)
                planes = 0
                for s, p in enumerate(moved):
                    if p is not None:
                        planes |= sum(((p >> k) & 1) << (16 * k) for k in range(4)) << s
                keys.add(canonical_key(occ, planes))
    assert len(keys) == 1


@pytest.mark.parametrize("seed", range(2))
def test_the_exact_value_is_unchanged_under_every_board_symmetry_and_attribute_permutation_and_complement(seed):
    rng = random.Random(seed)
    board, pool = played_position(rng, 7)
    value = Solver("none").give_value(board, pool)

    def moved_value(t, order, flip):
        moved = transform(board, t, order, flip)
        moved_pool = sum(1 << remap_piece(p, order, flip) for p in range(16) if pool >> p & 1)
        return Solver("symmetric", symmetry_min_empty=1).give_value(moved, moved_pool)

    for t in SYMMETRIES:  # every board symmetry
        assert moved_value(t, (0, 1, 2, 3), 0) == value
    for order in ORDERS:  # every attribute permutation
        assert moved_value(IDENTITY, order, 0) == value
    for flip in range(16):  # every set of complemented attributes
        assert moved_value(IDENTITY, (0, 1, 2, 3), flip) == value
    for _ in range(20):  # and mixtures of all three
        assert moved_value(rng.choice(SYMMETRIES), rng.choice(ORDERS), rng.randrange(16)) == value


def test_the_exact_search_matches_a_plain_exhaustive_search_on_positions_with_few_empty_squares():
    rng = random.Random(21)
    values = []
    for i in range(60):
        board, pool = played_position(rng, 2 + i % 4, need_safe=False)
        expected = plain_value(board, pool)
        for solver in (Solver("symmetric", symmetry_min_empty=1), Solver("symmetric"), Solver("plain"), Solver("none")):
            assert solver.give_value(board, pool) == expected, (board, solver.mode)
        values.append(expected)
    assert set(values) == {-1, 0, 1}  # the positions cover wins, draws and losses


def test_placing_values_agree_with_giving_values():
    rng = random.Random(8)
    for _ in range(10):
        board, pool = played_position(rng, 6)
        solver = Solver()
        gives = solver.give_values(board, pool)
        assert max(gives.values()) == solver.give_value(board, pool)
        piece = max(gives, key=gives.get)
        assert solver.place_value(board, piece, pool & ~(1 << piece)) == -gives[piece]


def test_the_table_solves_a_position_once_for_all_its_images():
    board, pool = played_position(random.Random(5), 8)
    solver = Solver("symmetric", symmetry_min_empty=4)
    value = solver.give_value(board, pool)
    nodes = solver.nodes
    moved = transform(board, SYMMETRIES[7], (2, 0, 3, 1), 0b0101)
    moved_pool = sum(1 << remap_piece(p, (2, 0, 3, 1), 0b0101) for p in range(16) if pool >> p & 1)
    assert solver.give_value(moved, moved_pool) == value
    assert solver.nodes - nodes <= 1  # one look-up


def test_a_budget_stops_the_search():
    from quatro_server.games.quarto.solver import BudgetExceeded

    board, pool = played_position(random.Random(6), 10)
    solver = Solver("none", budget=50)
    with pytest.raises(BudgetExceeded):
        solver.give_value(board, pool)
    with pytest.raises(ValueError):
        Solver("magic")


def reference_place_value(board: list[int | None], piece: int, pool: int) -> int:
    """The placer's value: the best of its placements (a line wins, a full board draws, else the value of the giving
    position it leaves, which the placer now holds)."""
    best = -2
    for s in (s for s in range(16) if board[s] is None):
        board[s] = piece
        v = 1 if q.winning_line(board, s) is not None else 0 if not pool else reference_value(board, pool)
        board[s] = None
        best = max(best, v)
    return best


@pytest.mark.parametrize("empties", [6, 7, 8, 9])
def test_the_solver_agrees_with_a_plain_alpha_beta_search_on_positions_reached_by_play(empties):
    rng = random.Random(40 + empties)
    solver = Solver()  # one table for all: values are properties of positions
    for _ in range(2 if empties < 9 else 1):
        board, pool = played_position(rng, empties, need_safe=False)
        assert solver.give_value(board, pool) == reference_value(list(board), pool), board
        if empties < 9:
            piece = next(p for p in range(16) if pool >> p & 1)
            rest = pool & ~(1 << piece)
            assert solver.place_value(board, piece, rest) == reference_place_value(list(board), piece, rest), board


def test_the_table_never_holds_more_than_its_size():
    board, pool = played_position(random.Random(11), 9)
    small = Solver(table_size=200)
    grown: list[int] = []
    store = small._store

    def watched(key: int, entry: int) -> None:
        store(key, entry)
        grown.append(len(small.tt))

    small._store = watched  # type: ignore[method-assign]
    assert small.give_value(board, pool) == Solver().give_value(board, pool)
    assert grown and max(grown) <= 200 and small.table_peak <= 200
    assert max(grown) == 200  # it filled, and was emptied rather than grown
    with pytest.raises(ValueError):
        Solver(table_size=0)


@pytest.mark.parametrize("empties", [7, 8])
def test_a_narrow_window_bounds_the_value_on_the_right_side(empties):
    rng = random.Random(70 + empties)
    for _ in range(3):
        board, pool = played_position(rng, empties, need_safe=False)
        exact = reference_value(list(board), pool)
        for alpha, beta in ((-1, 0), (0, 1)):
            v = Solver().give_value(board, pool, alpha=alpha, beta=beta)
            if exact <= alpha:
                assert v <= alpha, (board, alpha, beta)
            elif exact >= beta:
                assert v >= beta, (board, alpha, beta)
            else:
                assert v == exact, (board, alpha, beta)


@pytest.mark.parametrize("empties", [7, 8])
def test_a_placing_value_in_a_narrow_window_is_bounded_on_the_right_side_with_a_table_already_filled(empties):
    """``place_value`` orders its placements and may answer from bounds the table holds for the positions they
    leave: asked in every window, one solver for all (its table filled by the questions before), it agrees with
    the plain search."""
    rng = random.Random(90 + empties)
    solver = Solver()
    seen = set()
    for _ in range(3):
        board, pool = played_position(rng, empties, need_safe=False)
        for piece in [p for p in range(16) if pool >> p & 1][:3]:
            rest = pool & ~(1 << piece)
            exact = reference_place_value(list(board), piece, rest)
            seen.add(exact)
            for alpha, beta in ((-1, 0), (0, 1), (-1, 1)):
                v = solver.place_value(board, piece, rest, alpha=alpha, beta=beta)
                if exact <= alpha:
                    assert v <= alpha, (board, piece, alpha, beta)
                elif exact >= beta:
                    assert v >= beta, (board, piece, alpha, beta)
                else:
                    assert v == exact, (board, piece, alpha, beta)
    assert len(seen) >= 2


def test_ten_empty_squares_are_solved_within_thirty_thousand_positions():
    # A drawn position reached by safe play: searching the placements that leave the placer the fewest safe pieces
    # first settles it in about 11,600 positions as the solver counts them (6 empty squares or more, and the 5s
    # they lead to).
    board: list[int | None] = [None, 9, 11, None, 15, None, 3, None, None, 10, None, 7, None, None, None, None]
    pool = 0xFFFF & ~sum(1 << p for p in board if p is not None)
    assert Solver(budget=30_000).give_value(board, pool) == 0


@pytest.mark.parametrize("empties", [3, 4])
def test_the_last_three_and_four_empty_squares_are_solved_as_a_plain_exhaustive_search_solves_them(empties):
    """Near the end the search solves a position by the lines' shared values alone (three empty squares) or with no
    table and no move order (four): on many positions, with wins, draws and losses, in every window."""
    rng = random.Random(300 + empties)
    seen = set()
    for _ in range(150):
        board, pool = played_position(rng, empties, need_safe=False)
        expected = plain_value(board, pool)
        assert Solver().give_value(board, pool) == expected, board
        for alpha, beta in ((-1, 0), (0, 1)):
            v = Solver().give_value(board, pool, alpha=alpha, beta=beta)
            assert (v <= alpha) if expected <= alpha else (v >= beta) if expected >= beta else v == expected, board
        seen.add(expected)
    assert seen == {-1, 0, 1}
