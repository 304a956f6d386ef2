"""Quarto's guided first match (``quatro learn --game quarto``): the lesson's bot starts, wins when handed a winning
piece, and builds a line of three sharing an attribute so that the learner must choose what to give
(``quatro_server.games.quatro.lesson`` says how a lesson is hosted)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from quatro_shared.games.quarto import contract as q

from quatro_server.game import LESSON_LEVEL, LESSON_LOOK
from quatro_server.games.quarto.engine import QuartoTable
from quatro_server.games.quarto.game import QuartoGame
from quatro_server.journal import Opening
from quatro_server.timing import Timing

#: The lesson's bot starts (Q2): it gives the learner a piece, so that the lesson begins with a placement.
QUARTO_STARTER = 1


class QuartoDeck(random.Random):
    """Quarto's draw of the first starter (Q2), made the lesson's."""

    def randrange(self, start: int, stop: int | None = None, step: int = 1) -> int:
        if stop is None and start == q.SEATS:
            return QUARTO_STARTER
        return super().randrange(start, stop, step)


def threats(board: Sequence[int | None]) -> int:
    """Lines of three pieces sharing an attribute, their fourth square empty."""
    count = 0
    for line in q.LINES:
        pieces = [board[s] for s in line if board[s] is not None]
        if len(pieces) == 3:
            on, off = q.common_attributes([p for p in pieces if p is not None])
            count += bool(on or off)
    return count


class QuartoLessonBot:
    """The Quarto lesson's other player: it wins when handed a winning piece (to show why it was wrong), builds a
    line of three sharing an attribute as soon as it can (so that the learner must choose what to give), and gives
    the learner pieces that do not win."""

    level = LESSON_LEVEL

    def think_time(self) -> float:
        return LESSON_LOOK * 5  # a move a person can follow

    def observe(self, events: list[Any]) -> None:
        pass

    def decide(self, view: q.QuartoView, now: float) -> Sequence[Any]:
        legal = q.legal(view)
        if not legal:
            return []
        if isinstance(legal[0], q.NextGame):
            return [q.NextGame()]
        if view.step is q.Step.PLACE and view.in_hand is not None:
            squares = [s for s, p in enumerate(view.board) if p is None]
            win = q.winning_squares(view.board, view.in_hand)
            if win:
                return [q.Place(win[0])]

            def build(square: int) -> tuple[int, int]:
                trial = list(view.board)
                trial[square] = view.in_hand
                return threats(trial), -square

            return [q.Place(max(squares, key=build))]
        safe = [p for p in view.pool if not q.winning_squares(view.board, p)]
        return [q.Give((safe or list(view.pool))[0])]


class QuartoLesson(QuartoGame):
    """Quarto as the lesson hosts it: the lesson's bot starts, and plays ``lesson``."""

    levels = (LESSON_LEVEL,)
    default_level = LESSON_LEVEL

    def new_table(self, opening: Opening, timing: Timing, rng: random.Random) -> QuartoTable:
        return self.journal.new_table(opening, timing, QuartoDeck())

    def make_bot(self, level: str, rng: random.Random) -> Any:  # a lesson bot, not a QuartoBot: no search
        if level != LESSON_LEVEL:
            raise ValueError(f"the lesson's bots are {LESSON_LEVEL!r}")
        return QuartoLessonBot()
