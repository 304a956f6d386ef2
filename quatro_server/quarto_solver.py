"""An exact Quarto solver in pure Python: negamax with alpha-beta over bit sets, and a transposition table keyed
by a canonical form under the 32 symmetries of the board and the 384 of the attributes.

Positions and values. The search runs over *giving* positions: a board (the pool is whatever is not on it) and
a player about to choose the piece the opponent places. Its value, for that player, is +1 (a forced win),
0 (a draw with best play) or -1 (a forced loss). A *placing* position (a piece in hand) is worth the best of
its placements: +1 for a placement that completes a line (Q4), 0 when it fills the board (Q5), else the value
of the giving position it leaves.

The encoding. A board is a list of 16 pieces (``-1`` for empty), its occupied squares as a 16-bit int and the
four attribute planes packed in one 64-bit int (plane ``k``, bits ``16k``..``16k+15``: squares whose piece has
attribute ``k`` set). A pool is a 16-bit set of pieces.

The cut that does most of the work: a line holding three pieces that share attribute values makes every piece
with one of those values *deadly* to give (the opponent completes the line at once). The deadly set of a board
is a few ANDs per such line (table ``_WINNERS``); a player who has only deadly pieces to give has lost, and a
player never gives a deadly piece while a safe one exists, so placements never need checking for a win inside
the search.

Symmetries (``SYMMETRIES``). The permutations of the 16 squares that map Quarto's ten lines onto lines are 32:
take a permutation ``p`` of the indices 0–3 that commutes with the reversal ``i -> 3 - i`` (8 of them: the
identity, the reversal, swapping the middle two, swapping the outer two, and their products: the "inner/outer"
swaps), send square (r, c) to (p(r), p(c)) or to (p(r), 3 - p(c)), and optionally transpose: 8 × 2 × 2 = 32
(the dihedral group of the square is 8 of them). The attributes add 4! permutations times 2⁴ complements.
The canonical key of a board is, over the board symmetries giving the smallest occupancy mask, the smallest of:
the mask, then the four attribute planes, each complemented (within the occupied squares) so that the first
occupied square reads 0, then sorted. Complementing fixes the 2⁴ part and sorting the 4! part, so the key is
the same for every board in the orbit of 12,288 transformations, and a position solved once is solved for all.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import permutations

from quatro_shared.quarto import LINES, PIECES, SQUARES

WIN, DRAW, LOSS = 1, 0, -1
EMPTY = -1
FULL = (1 << SQUARES) - 1

# --- precomputed tables --------------------------------------------------------------------------

#: ``_WINNERS[on | off << 4]``: the pieces that share one of the attribute values ``on`` (set) / ``off`` (clear).
_WINNERS: tuple[int, ...] = tuple(
    sum(1 << p for p in range(PIECES) if (p & (c & 15)) or (~p & (c >> 4) & 15)) for c in range(256)
)
#: ``_SPREAD[p] << s``: piece ``p`` on square ``s`` in the packed attribute planes.
_SPREAD: tuple[int, ...] = tuple(sum(((p >> k) & 1) << (16 * k) for k in range(4)) for p in range(PIECES))
_BITS: tuple[tuple[int, ...], ...] = tuple(tuple(i for i in range(16) if m >> i & 1) for m in range(1 << 16))


def _board_symmetries() -> tuple[tuple[int, ...], ...]:
    rev = (3, 2, 1, 0)
    index_maps = [p for p in permutations(range(4)) if all(p[rev[i]] == rev[p[i]] for i in range(4))]
    found: list[tuple[int, ...]] = []
    for p in index_maps:
        for flip in (False, True):
            for transpose in (False, True):
                perm = [0] * SQUARES
                for r in range(4):
                    for c in range(4):
                        rr, cc = p[r], (rev[p[c]] if flip else p[c])
                        if transpose:
                            rr, cc = cc, rr
                        perm[4 * r + c] = 4 * rr + cc
                found.append(tuple(perm))
    line_sets = {frozenset(line) for line in LINES}
    assert len(set(found)) == 32 and all({frozenset(t[s] for s in line) for line in LINES} == line_sets for t in found)
    return tuple(found)


#: The 32 permutations of the squares that keep Quarto's lines: ``t[s]`` is where square ``s`` goes.
SYMMETRIES: tuple[tuple[int, ...], ...] = _board_symmetries()


def _byte_tables(perm: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    low = tuple(sum(1 << perm[i] for i in range(8) if x >> i & 1) for x in range(256))
    high = tuple(sum(1 << perm[i + 8] for i in range(8) if x >> i & 1) for x in range(256))
    return low, high


_SYM_TABLES = tuple(_byte_tables(t) for t in SYMMETRIES)


def _threes_of(occ: int) -> tuple[tuple[int, int, int], ...]:
    """The lines with exactly three occupied squares, as those three squares."""
    found = []
    for line in LINES:
        held = [s for s in line if occ >> s & 1]
        if len(held) == 3:
            found.append((held[0], held[1], held[2]))
    return tuple(found)


#: Marks a canonical key, so that it never equals the key of a position as it stands (both live in one table).
_CANONICAL = 1 << 80

_THREES: dict[int, tuple[tuple[int, int, int], ...]] = {}
_OCC_SYMS: dict[int, tuple[int, tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]]] = {}


def deadly(board: list[int], occ: int) -> int:
    """The pieces that would let the player placing them complete a line at once (Q4), as a bit set."""
    threes = _THREES.get(occ)
    if threes is None:
        threes = _THREES[occ] = _threes_of(occ)
    danger = 0
    for i, j, k in threes:
        x, y, z = board[i], board[j], board[k]
        on = x & y & z
        off = ~(x | y | z) & 15
        if on or off:
            danger |= _WINNERS[on | off << 4]
    return danger


def canonical_key(occ: int, planes: int) -> int:
    """The key of a board under all 12,288 symmetries (see the module's docstring)."""
    entry = _OCC_SYMS.get(occ)
    if entry is None:
        images = [(lo[occ & 255] | hi[occ >> 8], (lo, hi)) for lo, hi in _SYM_TABLES]
        best = min(image for image, _ in images)
        entry = _OCC_SYMS[occ] = (best, tuple(tables for image, tables in images if image == best))
    mask, tables = entry
    first = mask & -mask
    key = -1
    for lo, hi in tables:
        cols = []
        for shift in (0, 16, 32, 48):
            plane = (planes >> shift) & 0xFFFF
            col = lo[plane & 255] | hi[plane >> 8]
            if col & first:
                col ^= mask
            cols.append(col)
        cols.sort()
        k = cols[0] | cols[1] << 16 | cols[2] << 32 | cols[3] << 48
        if key < 0 or k < key:
            key = k
    return mask << 64 | key


class BudgetExceeded(Exception):
    """The search visited more positions than it was allowed."""


class Solver:
    """Exact values of Quarto positions. ``table``: ``"symmetric"`` (canonical keys), ``"plain"`` (the position as
    it stands) or ``"none"``; ``budget``: the most giving positions one call may visit (``BudgetExceeded`` beyond).

    The table survives between calls: values are properties of positions, not of the path to them.
    """

    #: Below this many empty squares a position is cheaper to search than to look up.
    TABLE_MIN_EMPTY = 4
    #: From this many empty squares up the table is keyed by the canonical form; below, by the position as it
    #: stands. Deep in the tree a board with six or more pieces is almost never the image of another reached
    #: in the same search, and the canonical form costs a third of a position's search time (measured by
    #: benchmarks/quarto_solver.py); near the root, where boards are emptier and symmetric, it pays.
    SYMMETRY_MIN_EMPTY = 9
    #: The table is cleared when it grows past this many entries (memory stays within a few hundred MB).
    TABLE_MAX = 2_000_000

    def __init__(self, table: str = "symmetric", budget: int | None = None, symmetry_min_empty: int | None = None) -> None:
        if table not in ("symmetric", "plain", "none"):
            raise ValueError(f"table is symmetric, plain or none, not {table!r}")
        self.mode = table
        if symmetry_min_empty is not None:
            self.SYMMETRY_MIN_EMPTY = symmetry_min_empty
        self.nodes = 0
        self.tt: dict[int, tuple[int, int]] = {}
        self._limit = -1
        self.allow(budget)

    def allow(self, budget: int | None) -> None:
        """Let the calls that follow visit at most ``budget`` giving positions in all (``None``: no limit)."""
        self._limit = -1 if budget is None else self.nodes + budget

    # --- the public entries -------------------------------------------------------------------

    def give_value(self, board: Sequence[int | None], pool: int, alpha: int = LOSS) -> int:
        """The value, for the player about to give, of ``board`` with ``pool`` (bit set) left to give.

        With ``alpha`` above ``LOSS`` the search may stop as soon as the value is known to be ``alpha`` or less
        (and returns such a value); above ``alpha`` the value is exact.
        """
        cells, occ, planes = self._encode(board)
        self._start()
        return self._give(cells, occ, planes, pool, max(alpha, LOSS), WIN)

    def place_value(
        self, board: Sequence[int | None], piece: int, pool: int, alpha: int = LOSS, beta: int = WIN
    ) -> int:
        """The value, for the player about to place ``piece``, of ``board`` with ``pool`` left after it.

        A narrower window is cheaper: the search may stop as soon as the value is known to be ``beta`` or more, or
        ``alpha`` or less (and returns such a value); strictly between them the value is exact.
        """
        cells, occ, planes = self._encode(board)
        self._start()
        return self._place(cells, occ, planes, piece, pool, max(alpha, LOSS), min(beta, WIN))

    def give_values(self, board: Sequence[int | None], pool: int) -> dict[int, int]:
        """For each piece of ``pool``: the value, for the giver, of giving it."""
        cells, occ, planes = self._encode(board)
        self._start()
        return {q: -self._place(cells, occ, planes, q, pool & ~(1 << q), LOSS, WIN) for q in _BITS[pool]}

    # --- the search ---------------------------------------------------------------------------

    @staticmethod
    def _encode(board: Sequence[int | None]) -> tuple[list[int], int, int]:
        cells = [EMPTY if p is None else p for p in board]
        occ = planes = 0
        for s, p in enumerate(cells):
            if p != EMPTY:
                occ |= 1 << s
                planes |= _SPREAD[p] << s
        return cells, occ, planes

    def _start(self) -> None:
        if len(self.tt) > self.TABLE_MAX:
            self.tt.clear()

    def _place(self, cells: list[int], occ: int, planes: int, piece: int, pool: int, alpha: int, beta: int) -> int:
        """Value for the placer of ``piece`` (``pool`` excludes it)."""
        if (1 << piece) & deadly(cells, occ):
            return WIN
        best = LOSS - 1
        for s in _BITS[~occ & FULL]:
            v = self._after_place(cells, occ, planes, piece, s, pool, alpha, beta)
            if v > best:
                best = v
                if v > alpha:
                    alpha = v
                    if alpha >= beta:
                        break
        return best

    def _after_place(
        self, cells: list[int], occ: int, planes: int, piece: int, s: int, pool: int, alpha: int, beta: int
    ) -> int:
        cells[s] = piece
        try:
            occ2 = occ | 1 << s
            if self._wins_at(cells, occ2, s):
                return WIN
            if not pool:
                return DRAW  # Q5: the board is full
            return self._give(cells, occ2, planes | _SPREAD[piece] << s, pool, alpha, beta)
        finally:
            cells[s] = EMPTY

    @staticmethod
    def _wins_at(cells: list[int], occ: int, s: int) -> bool:
        for line in _LINES_THROUGH[s]:
            if occ & line[4] == line[4]:
                a, b, c, d = cells[line[0]], cells[line[1]], cells[line[2]], cells[line[3]]
                if (a & b & c & d) or (~(a | b | c | d) & 15):
                    return True
        return False

    def _give(self, cells: list[int], occ: int, planes: int, pool: int, alpha: int, beta: int) -> int:
        """Value for the player about to give, with ``pool`` (non-empty) to choose from. The heart of the search."""
        self.nodes += 1
        if self.nodes >= self._limit >= 0:
            raise BudgetExceeded
        safe = pool & ~deadly(cells, occ)
        if not safe:
            return LOSS  # every piece left completes a line for the opponent
        empties = _BITS[~occ & FULL]
        key = -1
        alpha0 = alpha
        if self.mode != "none" and len(empties) >= self.TABLE_MIN_EMPTY:
            if self.mode == "symmetric" and len(empties) >= self.SYMMETRY_MIN_EMPTY:
                key = canonical_key(occ, planes) | _CANONICAL
            else:
                key = occ << 64 | planes
            hit = self.tt.get(key)
            if hit is not None:
                lo, hi = hit
                if lo == hi or lo >= beta:
                    return lo
                if hi <= alpha:
                    return hi
                if lo > alpha:
                    alpha = lo
                if hi < beta:
                    beta = hi
        best = LOSS - 1
        rest = pool
        for q in _BITS[safe]:
            left = rest & ~(1 << q)
            # The opponent places q where it suits it best: it needs more than -alpha to matter to us.
            reply = LOSS - 1
            o_alpha, o_beta = -beta, -alpha
            for s in empties:
                cells[s] = q
                occ2 = occ | 1 << s
                if not left:
                    v = DRAW  # q is safe, so the last placement completes no line (Q5)
                else:
                    v = self._give(cells, occ2, planes | _SPREAD[q] << s, left, o_alpha, o_beta)
                cells[s] = EMPTY
                if v > reply:
                    reply = v
                    if v > o_alpha:
                        o_alpha = v
                        if o_alpha >= o_beta:
                            break
            value = -reply
            if value > best:
                best = value
                if value > alpha:
                    alpha = value
                    if alpha >= beta:
                        break
        if key >= 0:
            lo, hi = self.tt.get(key, (LOSS, WIN))
            if best <= alpha0:
                hi = min(hi, best)
            elif best >= beta:
                lo = max(lo, best)
            else:
                lo = hi = best
            self.tt[key] = (lo, hi)
        return best


_LINES_THROUGH: tuple[tuple[tuple[int, int, int, int, int], ...], ...] = tuple(
    tuple((*line, sum(1 << x for x in line)) for line in LINES if s in line) for s in range(SQUARES)
)


def plain_value(board: Sequence[int | None], pool: int) -> int:
    """The giving player's value by plain exhaustive minimax: no deadly-set cut, no pruning, no table.

    The reference the solver is tested against; only usable with few empty squares.
    """
    cells = list(board)
    best = LOSS - 1
    for q in _BITS[pool]:
        left = pool & ~(1 << q)
        reply = LOSS - 1
        for s in range(SQUARES):
            if cells[s] is not None:
                continue
            cells[s] = q
            if _line_through(cells, s):
                v = WIN
            elif not left:
                v = DRAW
            else:
                v = plain_value(cells, left)
            cells[s] = None
            reply = max(reply, v)
        best = max(best, -reply)
    return best


def _line_through(cells: list[int | None], s: int) -> bool:
    for line in LINES:
        if s in line:
            ps = [cells[x] for x in line]
            if None not in ps:
                on, off = 15, 15
                for p in ps:
                    assert p is not None
                    on &= p
                    off &= ~p
                if on or off & 15:
                    return True
    return False


def transform(board: Sequence[int | None], symmetry: tuple[int, ...], order: tuple[int, ...], flip: int) -> list[int | None]:
    """``board`` moved by a board symmetry, its attributes permuted (attribute ``k`` becomes ``order[k]``) and
    complemented by ``flip`` (a 4-bit mask). The value of a position never changes under this (tests use it)."""
    out: list[int | None] = [None] * SQUARES
    for s, p in enumerate(board):
        if p is not None:
            out[symmetry[s]] = remap_piece(p, order, flip)
    return out


def remap_piece(p: int, order: tuple[int, ...], flip: int) -> int:
    return sum(((p >> k) & 1) << order[k] for k in range(4)) ^ flip


def pieces_of(pool: int) -> Iterator[int]:
    return iter(_BITS[pool])
