"""Quarto positions for tests: boards reached by play that never gives a winning piece while a safe one exists."""

from __future__ import annotations

import random

from quatro_shared.games.quarto import contract as q
from quatro_shared.games.quarto.contract import Phase, QuartoView, SeatState, Step

from quatro_server.games.quarto.solver import EMPTY, deadly


def occupied(board: list[int | None]) -> int:
    return sum(1 << s for s, p in enumerate(board) if p is not None)


def safe_pieces(board: list[int | None], pool: int) -> int:
    cells = [EMPTY if p is None else p for p in board]
    return pool & ~deadly(cells, occupied(board))


def played_position(rng: random.Random, empties: int, need_safe: bool = True) -> tuple[list[int | None], int]:
    """A board with ``empties`` empty squares and no line, reached by random play that gives safe pieces while it
    can; and its pool (the pieces not on it). With ``need_safe``, the player to give has a safe piece."""
    while True:
        board: list[int | None] = [None] * q.SQUARES
        pool = q.ALL_PIECES
        dead = False
        for _ in range(q.SQUARES - empties):
            safe = safe_pieces(board, pool)
            piece = rng.choice([p for p in range(16) if (safe or pool) >> p & 1])
            pool &= ~(1 << piece)
            square = rng.choice([s for s in range(16) if board[s] is None])
            board[square] = piece
            if q.winning_line(board, square) is not None:
                dead = True
                break
        if dead or (need_safe and not safe_pieces(board, pool)):
            continue
        return board, pool


def placing_view(board: list[int | None], pool: int, in_hand: int, seat: int = 0) -> QuartoView:
    """The view of ``seat`` about to place ``in_hand`` (``pool`` excludes it)."""
    return QuartoView(
        seat=seat,
        phase=Phase.PLAYING,
        turn=seat,
        step=Step.PLACE,
        board=tuple(board),
        pool=tuple(p for p in range(16) if pool >> p & 1),
        in_hand=in_hand,
        game=1,
        games=1,
        starter=seat,
        scores=(0, 0),
        draws=0,
        winner=None,
        line=None,
        shared=(),
        moves=(),
        seats=(SeatState(0, True, True, True), SeatState(1, True, True, True)),
        clock_ms=None,
        phase_ms=None,
        winners=(),
    )
