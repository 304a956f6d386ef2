"""The exact value of each Quarto move, told in a replay (``quatro_server.replay.seat``).

After every give and every placement, the position is judged by the exact solver (``quatro_server.games.quarto.solver``)
for the player to move: won, drawn or lost with best play. A search is allowed ``BUDGET`` positions: an early
position (many empty squares) is beyond it and is said to be so, never guessed. A move that turns a won position
into one that is not, or a drawn one into a lost one, is named a mistake. Players are named as the table names
them: by name, or "seat 2" (seats counted from 1, as the waiting room counts them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from quatro_shared import wording
from quatro_shared.games.quarto import contract as q

from quatro_server.games.quarto import engine
from quatro_server.games.quarto.solver import DRAW, LOSS, WIN, BudgetExceeded, Solver

#: The most positions one judgement may visit (a few tenths of a second at worst).
BUDGET = 20_000
#: A position with more empty squares than this is not searched at all: no budget this small could settle it.
MAX_EMPTY = 11

_WORDS = {WIN: "won", DRAW: "drawn", LOSS: "lost"}


class QuartoCommentary:
    """The solver's verdict on the position after each move."""

    def __init__(self, names: Sequence[str | None], budget: int = BUDGET) -> None:
        self.names = list(names)
        self.solver = Solver(budget=budget)
        self.budget = budget
        #: The last verdict: (the seat to move, its value), or None when unknown.
        self.last: tuple[int, int] | None = None

    def who(self, seat: int) -> str:
        return wording.person(seat, self.names[seat] if seat < len(self.names) else None)

    def value(self, view: q.QuartoView) -> int | None:
        """The exact value of the position for the player to move, None when beyond the budget."""
        empty = sum(piece is None for piece in view.board)
        if empty > MAX_EMPTY:
            return None
        pool = sum(1 << piece for piece in view.pool)
        self.solver.allow(self.budget)
        try:
            if view.step is q.Step.PLACE and view.in_hand is not None:
                return self.solver.place_value(view.board, view.in_hand, pool)
            return self.solver.give_value(view.board, pool)
        except BudgetExceeded:
            return None

    def note(self, table: Any, emits: Sequence[Any]) -> list[str] | None:
        moves = [event for event in emits if isinstance(event, q.PieceGiven | q.PiecePlaced)]
        if not moves:
            if any(isinstance(event, q.GameStarted) for event in emits):
                self.last = None
                return []
            return None
        mover = moves[-1].seat
        what = "gave" if isinstance(moves[-1], q.PieceGiven) else "placed"
        view = engine.view(table, mover, table.now)
        ended = [event for event in emits if isinstance(event, q.GameEnded)]
        if ended or view.phase is not q.Phase.PLAYING or view.turn is None:
            self.last = None
            winner = ended[-1].winner if ended else view.winner
            outcome = "a draw" if winner is None else f"{self.who(winner)} wins"
            return [f"{self.who(mover)} {what}: the game is over, {outcome}"]
        before = self.last
        value = self.value(view)
        to_move = view.turn
        self.last = None if value is None else (to_move, value)
        if value is None:
            return [f"{self.who(mover)} {what}: too deep for the solver to judge (more than {self.budget} positions)"]
        for_mover = value if to_move == mover else -value
        step = "to place" if view.step is q.Step.PLACE else "to give"
        lines = [f"{self.who(mover)} {what}: {self.who(to_move)} {step}, a {_WORDS[value]} position for them"]
        if before is not None:
            was = before[1] if before[0] == mover else -before[1]
            if for_mover < was:
                lines.append(f"a mistake: {self.who(mover)} stood {_WORDS[was]}, now {_WORDS[for_mover]}")
        return lines
