"""Quarto bots: they decide from the seat's view alone (H2), like Quatro's, and never see the table.

A bot is ``observe(events)`` and ``decide(view, now) -> list[Action]``: on its turn, ``[Place(square), Give(piece)]``
(or one of the two, when the turn is only a give or the placement ends the game); between games, ``NextGame``.
Nothing here imports the rules engine (``quatro_server.games.quarto.engine``); the exact search is ``quatro_server.games.quarto.solver``.

Levels:
- ``random``: any empty square, any piece of the pool.
- ``normal``: takes a win when its piece completes a line; places so that it keeps a safe piece to give where it
  can; never gives a piece that lets the opponent win at once when a safe one exists.
- ``perfect``: all of ``normal``, and: with ``EXACT_EMPTY`` empty squares or fewer it plays the exact search's
  best move, searched to the end however long it takes (a win when there is one, else a draw; in a lost position
  the move that sets the opponent the most traps); up to ``TRY_EXACT_EMPTY`` it tries the exact search within
  ``EXACT_BUDGET`` positions (about a second) and falls back to the heuristic; earlier, the heuristic: the
  placement and piece that leave the opponent the most placements after which every piece it could give loses
  ("traps"). Up to ``GUARD_EMPTY`` empty squares the heuristic's choices are checked by the search, best first,
  within ``GUARD_BUDGET`` positions in all: the first proven not to lose is played; a turn the check could not
  settle is never played while a proven one exists.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from quatro_shared.games.quarto import contract as q
from quatro_shared.games.quarto.contract import Phase, QuartoView, Step

from quatro_server.games.quarto.solver import EMPTY, BudgetExceeded, Solver, deadly, pieces_of

#: The level names live in the shared vocabulary, so that a client can offer them (``add_bot``).
LEVELS: tuple[str, ...] = q.LEVELS
DEFAULT_LEVEL = q.DEFAULT_LEVEL

#: Seconds between a bot's looks at the table (a person's pace: Quarto is not a game of reflexes).
THINK_TIME: tuple[float, float] = (0.6, 1.4)

#: ``perfect`` searches exactly, with no budget, with this many empty squares or fewer: it never gives away a
#: position's value there. The turn takes under a second of one core at the median there, up to about three
#: (docs/quarto.md has the measurements); the server makes these searches in a worker thread (``slow``), so they
#: hold up no other table.
EXACT_EMPTY = 11
#: Up to this many empty squares it tries the exact search within ``EXACT_BUDGET`` positions (about a second: a
#: position counted is one of six empty squares or more, the search below it included).
TRY_EXACT_EMPTY = 12
EXACT_BUDGET = 40_000
#: Up to this many empty squares the heuristic's turns are checked, best first, by a search that only asks
#: "does this lose?", within ``GUARD_BUDGET`` positions in all (about a second), half of it at most for one turn,
#: at most ``GUARD_TURNS`` of them. Measured in self-play (``benchmarks/quarto_solver.py --selfplay``): the turns
#: at 13 empty squares that gave a draw away were refuted by 15,000-20,000 positions, and proving a turn at 13
#: safe takes 300,000 or more, so a check must be able to refute, and need not hope to prove (with 25,000 in all,
#: 6,250 a check, it refuted none of them, and 2 games of 200 were lost).
GUARD_EMPTY = 13
GUARD_BUDGET = 80_000
GUARD_TURNS = 40


class Cells:
    """A view's board in the solver's encoding: the pieces (``EMPTY`` for none), the occupied set, the pool."""

    __slots__ = ("cells", "occ", "pool")

    def __init__(self, view: QuartoView) -> None:
        self.cells = [EMPTY if p is None else p for p in view.board]
        self.occ = sum(1 << s for s, p in enumerate(view.board) if p is not None)
        self.pool = q.pool_of(view)

    def empties(self) -> list[int]:
        return [s for s in range(q.SQUARES) if not self.occ >> s & 1]

    def wins_at(self, piece: int) -> list[int]:
        """The squares where ``piece`` completes a line (Q4)."""
        found = []
        for s in self.empties():
            self.cells[s] = piece
            if q.winning_line([None if p == EMPTY else p for p in self.cells], s) is not None:
                found.append(s)
            self.cells[s] = EMPTY
        return found

    def safe(self) -> int:
        """The pieces of the pool the opponent cannot win with at once, as a bit set."""
        return self.pool & ~deadly(self.cells, self.occ)

    def place(self, s: int, piece: int) -> None:
        self.cells[s] = piece
        self.occ |= 1 << s

    def unplace(self, s: int) -> None:
        self.cells[s] = EMPTY
        self.occ &= ~(1 << s)


class QuartoBot:
    """A seat's Quarto bot. Subclasses choose the placement and the piece."""

    level = "random"
    #: Its decisions may take long enough (a search) that a server makes them off its event loop
    #: (``quatro_server.games.quarto.game.QuartoGame.slow_bot``).
    slow = False

    def __init__(self, rng: random.Random | None = None) -> None:
        self.rng = rng if rng is not None else random.Random()

    def think_time(self) -> float:
        return self.rng.uniform(*THINK_TIME)

    def observe(self, events: list[q.Event]) -> None:
        """Quarto hides nothing: the view holds all a bot needs."""

    def decide(self, view: QuartoView, now: float) -> list[q.Action]:
        """The actions to take now, in order, from the view alone (H2). The caller stops at the first refusal."""
        if view.phase is Phase.BETWEEN:
            return q.legal(view)  # ready for the next game
        if view.phase is not Phase.PLAYING or view.turn != view.seat:
            return []
        board = Cells(view)
        if view.step is Step.GIVE:
            return [q.Give(self.give(board))]
        assert view.in_hand is not None
        square = self.place(board, view.in_hand)
        board.place(square, view.in_hand)
        if not board.pool or _completes(board, square):
            return [q.Place(square)]  # the placement ends the game (Q4, Q5): there is nothing to give
        return [q.Place(square), q.Give(self.give(board))]

    def place(self, board: Cells, piece: int) -> int:
        return self.rng.choice(board.empties())

    def give(self, board: Cells) -> int:
        return self.rng.choice(list(pieces_of(board.pool)))


def _completes(board: Cells, square: int) -> bool:
    return q.winning_line([None if p == EMPTY else p for p in board.cells], square) is not None


class RandomQuartoBot(QuartoBot):
    """Any move ``legal`` offers: any empty square, then any piece of the pool (the baseline)."""

    level = "random"

    def decide(self, view: QuartoView, now: float) -> list[q.Action]:
        """A whole turn at once, each step chosen from ``legal``: the second step from the view after the first."""
        moves = q.legal(view)
        if not moves:
            return []
        first = self.rng.choice(moves)
        rest = q.legal(q.placed(view, first.square)) if isinstance(first, q.Place) else []
        return [first, self.rng.choice(rest)] if rest else [first]


class NormalQuartoBot(QuartoBot):
    """Takes a win; keeps a safe piece to give where it can; never gives a winning piece while a safe one exists."""

    level = "normal"

    def place(self, board: Cells, piece: int) -> int:
        wins = board.wins_at(piece)
        if wins:
            return self.rng.choice(wins)
        empties = board.empties()
        if len(empties) == 1:
            return empties[0]
        keeping = []
        for s in empties:
            board.place(s, piece)
            if board.safe():
                keeping.append(s)
            board.unplace(s)
        return self.rng.choice(keeping or empties)

    def give(self, board: Cells) -> int:
        safe = board.safe()
        return self.rng.choice(list(pieces_of(safe or board.pool)))


class PerfectQuartoBot(NormalQuartoBot):
    """The exact search near the end, a trap-setting heuristic before; see the module's docstring."""

    level = "perfect"
    slow = True

    def __init__(
        self,
        rng: random.Random | None = None,
        budget: int = EXACT_BUDGET,
        guard_budget: int | None = None,
        exact_empty: int | None = None,
    ) -> None:
        super().__init__(rng)
        self.solver = Solver()
        self.budget = budget
        self.guard_budget = min(GUARD_BUDGET, 2 * budget) if guard_budget is None else guard_budget
        self.exact_empty = EXACT_EMPTY if exact_empty is None else exact_empty
        self._plan: int | None = None  # the piece to give after the placement just chosen
        #: How the latest decision was made ("exact" or "heuristic"), for the simulator and tests.
        self.last_mode = ""

    def decide(self, view: QuartoView, now: float) -> list[q.Action]:
        """As every bot decides; the search's table is emptied after, so that a bot waiting holds none (a server
        thinks for one bot at a time, and the table, within its size, is the memory a search needs)."""
        try:
            return super().decide(view, now)
        finally:
            self.solver.forget()

    def place(self, board: Cells, piece: int) -> int:
        self._plan = None
        wins = board.wins_at(piece)
        if wins:
            self.last_mode = "exact"
            return wins[0]
        empties = board.empties()
        if len(empties) == 1:
            self.last_mode = "exact"
            return empties[0]
        ranked = self._ranked_turns(board, piece)  # heuristic order: best first
        n = len(empties)
        if n <= max(self.exact_empty, TRY_EXACT_EMPTY):
            self.solver.allow(None if n <= self.exact_empty else self.budget)
            try:
                square, give = self._exact_turn(board, piece, ranked)
                self.last_mode = "exact"
                self._plan = give
                return square
            except BudgetExceeded:
                pass
        self.last_mode = "heuristic"
        square, give = self._guarded(board, piece, ranked) if n <= GUARD_EMPTY else ranked[0][:2]
        self._plan = give
        return square

    def _guarded(self, board: Cells, piece: int, ranked: list[tuple[int, int, float]]) -> tuple[int, int]:
        """The heuristic's best turn that the search proves does not lose: a draw kept is worth more than a trap
        set. Each check gets what is left of ``guard_budget``, at most half of it; a turn whose check runs
        out is unsettled and played only when no turn is proven safe (the heuristic's best of them); when every
        turn tried loses, the heuristic's favourite."""
        solver = self.solver
        left = self.guard_budget
        unsettled: tuple[int, int] | None = None
        for square, give, _ in ranked[:GUARD_TURNS]:
            if left <= 0:
                break
            board.place(square, piece)
            start = solver.nodes
            solver.allow(min(left, max(1, self.guard_budget // 2)))
            try:
                if not board.safe():
                    continue
                # The opponent placing ``give``: can it force a win (a value of 1)? A null window asks just that.
                if solver.place_value(board.cells, give, board.pool & ~(1 << give), alpha=0, beta=1) <= 0:
                    return square, give
            except BudgetExceeded:
                if unsettled is None:
                    unsettled = (square, give)
            finally:
                left -= solver.nodes - start
                board.unplace(square)
        if unsettled is not None:
            return unsettled
        return ranked[0][0], ranked[0][1]

    def give(self, board: Cells) -> int:
        plan, self._plan = self._plan, None
        if plan is not None and board.pool >> plan & 1:
            return plan  # chosen with the placement
        safe = board.safe()
        self.last_mode = "exact"
        if not safe or board.occ == 0:
            return self.rng.choice(list(pieces_of(safe or board.pool)))  # the opening give: every piece is alike
        scored = sorted(((self._traps(board, p), self.rng.random(), p) for p in pieces_of(safe)), reverse=True)
        order = [p for _, _, p in scored]
        n = q.SQUARES - bin(board.occ).count("1")
        if n <= max(self.exact_empty, TRY_EXACT_EMPTY):
            self.solver.allow(None if n <= self.exact_empty else self.budget)
            try:
                return self._exact_give(board, order)
            except BudgetExceeded:
                pass
        self.last_mode = "heuristic"
        return order[0]

    # --- the exact search at the root ---------------------------------------------------------

    def _exact_turn(self, board: Cells, piece: int, ranked: list[tuple[int, int, float]]) -> tuple[int, int]:
        """The best (square, piece to give) by exact value. The turns are tried in the heuristic's order, each with
        the narrowest window that tells whether it beats the best so far, and only a strictly better value replaces
        the best, so that among equal values (a lost position above all) the heuristic's favourite is played. The
        piece comes out of the same searches: no turn is searched twice."""
        solver = self.solver
        best, best_value = ranked[0][:2], -2
        for s, give, _ in ranked:
            board.place(s, piece)
            try:
                if not board.safe():
                    value = -1  # every piece left lets the opponent complete a line
                else:
                    # Giving ``give`` is worth minus the opponent's placing it; it beats ``best_value`` when the
                    # reply is below ``-best_value``: a null window once a turn is known.
                    rest = board.pool & ~(1 << give)
                    value = -solver.place_value(board.cells, give, rest, beta=min(1, -best_value))
            finally:
                board.unplace(s)
            if value > best_value:
                best, best_value = (s, give), value
                if value == 1:
                    break
        return best

    def _exact_give(self, board: Cells, order: list[int]) -> int:
        """The first piece of ``order`` (safe pieces, heuristic order) that wins, else the first that draws, else
        ``order[0]`` (every piece loses), by null windows alone: "can the opponent still win placing it?" until a
        piece draws, then "must the opponent lose with it?" for each. Measured on real 12-empty gives, 1.6-1.9 times
        faster than the value first with a full window and then a null window per piece (the full window proves both bounds
        of the first piece with the whole tree under it)."""
        if not board.safe():
            return order[0] if order else min(pieces_of(board.pool))
        solver = self.solver
        drawing = None
        for p in order:
            if solver.place_value(board.cells, p, board.pool & ~(1 << p), alpha=0, beta=1) <= 0:
                drawing = p
                break
        if drawing is None:
            return order[0]  # every piece loses: the one that sets the most traps
        for p in order:
            if solver.place_value(board.cells, p, board.pool & ~(1 << p), alpha=-1, beta=0) <= -1:
                return p
        return drawing

    # --- the heuristic ------------------------------------------------------------------------

    def _ranked_turns(self, board: Cells, piece: int) -> list[tuple[int, int, float]]:
        """Every (square, piece to give) with its heuristic score, best first; ties in a random order."""
        turns: list[tuple[int, int, float]] = []
        for s in board.empties():
            board.place(s, piece)
            safe = board.safe()
            if not safe:  # every piece left loses: the worst placement
                turns.append((s, min(pieces_of(board.pool)), -1000.0 + self.rng.random()))
            else:
                count = bin(safe).count("1")
                for p in pieces_of(safe):
                    turns.append((s, p, self._traps(board, p) + 0.01 * count + 0.001 * self.rng.random()))
            board.unplace(s)
        turns.sort(key=lambda t: -t[2])
        return turns

    def _traps(self, board: Cells, give: int) -> float:
        """The share of the opponent's placements of ``give`` after which every piece it could give loses."""
        pool = board.pool & ~(1 << give)
        empties = board.empties()
        if not pool or not empties:
            return 0.0
        traps = 0
        for s in empties:
            board.cells[s] = give
            occ = board.occ | 1 << s
            if not pool & ~deadly(board.cells, occ):
                traps += 1
            board.cells[s] = EMPTY
        return traps / len(empties)


_CLASSES: dict[str, type[QuartoBot]] = {
    "random": RandomQuartoBot,
    "normal": NormalQuartoBot,
    "perfect": PerfectQuartoBot,
}


def make_quarto_bot(level: str = DEFAULT_LEVEL, rng: random.Random | None = None) -> QuartoBot:
    """A Quarto bot of ``level``; raises ``ValueError`` for an unknown level."""
    try:
        return _CLASSES[level](rng)
    except KeyError:
        raise ValueError(f"unknown Quarto bot level {level!r} (levels: {', '.join(LEVELS)})") from None


class QuartoBotGame:
    """Quarto's part of a network bot (``quatro_server.bots.games.BotGame``): ``perfect``'s search is slow enough to
    run in a worker thread, and a view is taken as it came (its bots never read its clocks)."""

    outside_bots = False

    def make_bot(self, level: str, rng: random.Random | None) -> QuartoBot:
        return make_quarto_bot(level, rng)

    def slow(self, bot: object, view: object) -> bool:
        return isinstance(bot, QuartoBot) and bot.slow

    def aged(self, view: QuartoView, seconds: float) -> QuartoView:
        return view

    def over(self, view: QuartoView) -> bool:
        return view.phase is Phase.OVER

    def ended(self, events: Sequence[q.Event]) -> int:
        return sum(isinstance(event, q.GameEnded) for event in events)


BOT_GAME = QuartoBotGame()
