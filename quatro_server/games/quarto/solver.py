"""An exact Quarto solver in pure Python: negamax with alpha-beta over bit sets and a bounded transposition table.

Positions and values. The search runs over *giving* positions: a board (the pool is whatever is not on it) and
a player about to choose the piece the opponent places. Its value, for that player, is +1 (a forced win),
0 (a draw with best play) or -1 (a forced loss). A *placing* position (a piece in hand) is worth the best of
its placements: +1 for a placement that completes a line (Q4), 0 when it fills the board (Q5), else the value
of the giving position it leaves.

The encoding. A piece's four attributes are the bits of its number; the search writes a piece on a square as its
*code*, the byte ``p | (15 - p) << 4``: the low nibble the attributes it has, the high nibble those it lacks. The
AND of the codes of a line's pieces is then every attribute value they share, and a line is a quarto exactly when
the AND of its four codes is not zero (Q4). A board is a list of 16 codes (0 for an empty square) and its
occupied squares as a 16-bit set; a pool is a 16-bit set of pieces.

The cut that does most of the work: a line holding three pieces that share attribute values makes every piece
with one of those values *deadly* to give (the opponent completes the line at once). The deadly set of a board is
one AND of three codes and one table look-up (``_WINNERS``) per such line; a player who has only deadly pieces to
give has lost, and a player never gives a deadly piece while a safe one exists, so placements never need checking
for a win inside the search.

Move order, best first: the piece the table remembers as best at this position, then (from 6 empty squares) the
pieces that leave the opponent the fewest safe pieces in all over its placements. The opponent's placements, from 5
empty squares, start with those that leave it the fewest safe pieces to give (placements that leave none lose for
it and are never searched; the tight ones settle soonest: five times fewer positions at 11 empty squares than the
squares as they come). Each node reads its lines once into two bytes per empty square (``_give``), so that the safe
set a placement leaves is one look-up.

The last five empty squares, nine positions in ten of a search, have functions of their own with no table and no
piece order (``_five``, ``_four``, ``_three``): four reads its lines once into what the lines of each set of its
empty squares share, and settles the three left from those values with no square written. ``nodes`` counts the
positions of 6 empty squares or more and those of 5 they lead to.

The table (from 6 empty squares). A dict from the board (occupancy and the 4-bit pieces on it, one int) to a small int holding the
value's bounds and the best piece. It never holds more than ``table_size`` entries: when a store would go past,
the table is emptied and fills again from there (the deep entries that fill it are cheap to search again).
Canonical keys (the symmetries below) are kept as an option, ``Solver("symmetric")``; measured, they do not pay
(``benchmarks/quarto_solver.py``), so the default keys the position as it stands.

Symmetries (``SYMMETRIES``). The permutations of the 16 squares that map Quarto's ten lines onto lines are 32:
take a permutation ``p`` of the indices 0–3 that commutes with the reversal ``i -> 3 - i`` (8 of them: the
identity, the reversal, swapping the middle two, swapping the outer two, and their products: the "inner/outer"
swaps), send square (r, c) to (p(r), p(c)) or to (p(r), 3 - p(c)), and optionally transpose: 8 × 2 × 2 = 32
(the dihedral group of the square is 8 of them). The attributes add 4! permutations times 2⁴ complements.
The canonical key of a board is, over the board symmetries giving the smallest occupancy mask, the smallest of:
the mask, then the four attribute planes, each complemented (within the occupied squares) so that the first
occupied square reads 0, then sorted. Complementing fixes the 2⁴ part and sorting the 4! part, so the key is
the same for every board in the orbit of 12,288 transformations.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import permutations

from quatro_shared.games.quarto.contract import LINES, PIECES, SQUARES

WIN, DRAW, LOSS = 1, 0, -1
EMPTY = -1
FULL = (1 << SQUARES) - 1

#: The most a placement's history counts (below the safe count's place in the order's key, ``1 << 24``).
_HISTORY_CAP = (1 << 24) - 1
#: The most entries the transposition table holds (about 100 bytes each: some 50 MB at the most).
TABLE_SIZE = 500_000

# --- precomputed tables --------------------------------------------------------------------------

#: ``_CODE[p]``: piece ``p`` as the search writes it on a square (its attributes, then their complements).
_CODE: tuple[int, ...] = tuple(p | (15 - p) << 4 for p in range(PIECES))
#: ``_WINNERS[c]``: the pieces sharing one of the attribute values of the code ``c`` (the AND of a line's codes).
_WINNERS: tuple[int, ...] = tuple(sum(1 << p for p in range(PIECES) if _CODE[p] & c) for c in range(256))
#: ``_SPREAD[p] << s``: piece ``p`` on square ``s`` in four attribute planes packed in one int (canonical keys).
_SPREAD: tuple[int, ...] = tuple(sum(((p >> k) & 1) << (16 * k) for k in range(4)) for p in range(PIECES))
_BITS: tuple[tuple[int, ...], ...] = tuple(tuple(i for i in range(16) if m >> i & 1) for m in range(1 << 16))
#: ``_PUT[s][p]``: what piece ``p`` on square ``s`` adds to a board's table key (the occupied bit, the piece).
_PUT: tuple[tuple[int, ...], ...] = tuple(
    tuple(1 << s | p << (16 + 4 * s) for p in range(PIECES)) for s in range(SQUARES)
)


def _threes_of(occ: int) -> tuple[tuple[int, int, int], ...]:
    """The lines with exactly three occupied squares, as those three squares."""
    found = []
    for line in LINES:
        held = [s for s in line if occ >> s & 1]
        if len(held) == 3:
            found.append((held[0], held[1], held[2]))
    return tuple(found)


def _shape_of(occ: int) -> tuple[tuple[tuple[int, int, int, int], ...], tuple[tuple[int, int, int, int], ...]]:
    """The lines of ``occ`` holding three pieces, as their three squares and the empty one, and those holding
    two, as their two squares and the two empty ones."""
    threes = []
    twos = []
    for line in LINES:
        held = [s for s in line if occ >> s & 1]
        free = [s for s in line if not occ >> s & 1]
        if len(held) == 3:
            threes.append((held[0], held[1], held[2], free[0]))
        elif len(held) == 2:
            twos.append((held[0], held[1], free[0], free[1]))
    return tuple(threes), tuple(twos)


#: ``_SHAPES[occ]``: ``_shape_of(occ)``, made on first use.
_SHAPES: list[tuple[tuple[tuple[int, int, int, int], ...], tuple[tuple[int, int, int, int], ...]] | None] = [None] * (
    1 << SQUARES
)
_POPCOUNT: list[int] = [bin(m).count("1") for m in range(1 << PIECES)]
_ZERO16: list[int] = [0] * SQUARES

#: ``_THREES[occ]``: the lines of the occupancy ``occ`` that hold three pieces, made on first use.
_THREES: list[tuple[tuple[int, int, int], ...] | None] = [None] * (1 << SQUARES)


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
_OCC_SYMS: dict[int, tuple[int, tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]]] = {}
#: Marks a canonical key, so that it never equals the key of a position as it stands (both live in one table).
_CANONICAL = 1 << 90


def deadly(board: list[int], occ: int) -> int:
    """The pieces that would let the player placing them complete a line at once (Q4), as a bit set. ``board``:
    16 pieces, ``EMPTY`` for none; ``occ``: its occupied squares."""
    threes = _THREES[occ]
    if threes is None:
        threes = _THREES[occ] = _threes_of(occ)
    danger = 0
    for i, j, k in threes:
        x, y, z = board[i], board[j], board[k]
        common = _CODE[x] & _CODE[y] & _CODE[z]
        if common:
            danger |= _WINNERS[common]
    return danger


def canonical_key(occ: int, planes: int) -> int:
    """The key of a board under all 12,288 symmetries (see the module's docstring). ``planes``: the four attribute
    planes packed in one int (plane ``k``, bits ``16k``..``16k+15``: squares whose piece has attribute ``k``)."""
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
    """Exact values of Quarto positions.

    ``table``: ``"plain"`` (the position as it stands, the default), ``"symmetric"`` (canonical keys from
    ``symmetry_min_empty`` empty squares up) or ``"none"``; ``budget``: the most giving positions the calls may
    visit (``BudgetExceeded`` beyond); ``table_size``: the most entries the table holds.

    The table survives between calls (values are properties of positions, not of the path to them), within its size.
    """

    #: Below this many empty squares a position is cheaper to search than to look up (measured).
    TABLE_MIN_EMPTY = 6
    #: In ``"symmetric"`` mode, canonical keys from this many empty squares up.
    SYMMETRY_MIN_EMPTY = 9

    def __init__(
        self,
        table: str = "plain",
        budget: int | None = None,
        symmetry_min_empty: int | None = None,
        table_size: int = TABLE_SIZE,
    ) -> None:
        if table not in ("symmetric", "plain", "none"):
            raise ValueError(f"table is symmetric, plain or none, not {table!r}")
        if table_size < 1:
            raise ValueError("the table holds at least one entry")
        self.mode = table
        if symmetry_min_empty is not None:
            self.SYMMETRY_MIN_EMPTY = symmetry_min_empty
        self.table_size = table_size
        self._table_min = self.TABLE_MIN_EMPTY if table != "none" else SQUARES + 1
        self._symmetry_min = self.SYMMETRY_MIN_EMPTY if table == "symmetric" else SQUARES + 1
        self.nodes = 0
        #: The most entries the table held when it was emptied for being full (never more than ``table_size``).
        self.table_peak = 0
        self.tt: dict[int, int] = {}
        self._killers = [-1] * (SQUARES + 1)
        #: ``_history[(16 * n + q) * 16 + s]``: how often placing piece ``q`` on ``s`` settled a position of ``n``
        #: empty squares (its placer reached the bound it needed); ties of the placement order go to the higher.
        self._history = [0] * ((SQUARES + 1) * PIECES * SQUARES)
        self.order_min = 5
        self.place_order_min = 5
        self._etc_min = self._table_min if table == "plain" else SQUARES + 1
        self._limit = -1
        self.allow(budget)

    def forget(self) -> None:
        """Empty the table (its memory goes back; the values are found again when asked) and the placements'
        history."""
        self.tt.clear()
        self._history = [0] * len(self._history)

    def allow(self, budget: int | None) -> None:
        """Let the calls that follow visit at most ``budget`` giving positions in all (``None``: no limit)."""
        self._limit = -1 if budget is None else self.nodes + budget

    # --- the public entries -------------------------------------------------------------------

    def give_value(self, board: Sequence[int | None], pool: int, alpha: int = LOSS, beta: int = WIN) -> int:
        """The value, for the player about to give, of ``board`` with ``pool`` (bit set) left to give.

        A narrower window is cheaper: the search may stop as soon as the value is known to be ``beta`` or more, or
        ``alpha`` or less (and returns such a value); strictly between them the value is exact.
        """
        cells, occ, key = self._encode(board)
        return self._give_root(cells, occ, key, pool, max(alpha, LOSS), min(beta, WIN))

    def place_value(
        self, board: Sequence[int | None], piece: int, pool: int, alpha: int = LOSS, beta: int = WIN
    ) -> int:
        """The value, for the player about to place ``piece``, of ``board`` with ``pool`` left after it.

        Windowed like ``give_value``.
        """
        cells, occ, key = self._encode(board)
        alpha, beta = max(alpha, LOSS), min(beta, WIN)
        empties = _BITS[~occ & FULL]
        code = _CODE[piece]
        for s in empties:
            for line in _LINES_THROUGH[s]:
                if occ & line[3] == line[3] and code & cells[line[0]] & cells[line[1]] & cells[line[2]]:
                    return WIN  # Q4
        if not pool:
            return DRAW  # Q5: the board is full
        # As inside the search: the table may know a placement that reaches beta already, and the placements that
        # leave the fewest safe pieces to give come first (those that leave none lose at once).
        if len(empties) > self._etc_min:
            tt = self.tt
            put = _PUT
            for s in empties:
                hit = tt.get(key | put[s][piece])
                if hit is not None and (hit >> 6) - 1 >= beta:
                    return (hit >> 6) - 1
        base, pair = _reading(cells, occ)
        winners = _WINNERS
        places = sorted((_POPCOUNT[pool & ~winners[base[s] | code & pair[s]]], s) for s in empties)
        best = LOSS - 1
        for safe_count, s in places:
            v = self._after_place(cells, occ, key, piece, s, pool, alpha, beta) if safe_count else LOSS
            if v > best:
                best = v
                if v > alpha:
                    alpha = v
                    if alpha >= beta:
                        break
        return best

    def give_values(self, board: Sequence[int | None], pool: int) -> dict[int, int]:
        """For each piece of ``pool``: the value, for the giver, of giving it."""
        return {q: -self.place_value(board, q, pool & ~(1 << q)) for q in _BITS[pool]}

    # --- the search ---------------------------------------------------------------------------

    @staticmethod
    def _encode(board: Sequence[int | None]) -> tuple[list[int], int, int]:
        cells = [0] * SQUARES
        occ = key = 0
        for s, p in enumerate(board):
            if p is not None and p != EMPTY:
                cells[s] = _CODE[p]
                occ |= 1 << s
                key |= _PUT[s][p]
        return cells, occ, key

    def _after_place(
        self, cells: list[int], occ: int, key: int, piece: int, s: int, pool: int, alpha: int, beta: int
    ) -> int:
        code = _CODE[piece]
        for line in _LINES_THROUGH[s]:
            if occ & line[3] == line[3] and code & cells[line[0]] & cells[line[1]] & cells[line[2]]:
                return WIN  # Q4
        if not pool:
            return DRAW  # Q5: the board is full
        cells = cells[:]
        cells[s] = code
        return self._give_root(cells, occ | 1 << s, key | _PUT[s][piece], pool, alpha, beta)

    def _give_root(self, cells: list[int], occ: int, key: int, pool: int, alpha: int, beta: int) -> int:
        if not pool:
            return DRAW
        safe = pool & ~_deadly(cells, occ)
        if not safe:
            return LOSS
        if not pool & (pool - 1):
            return DRAW  # one piece left, and it is safe: the board fills (Q5)
        n = SQUARES - _POPCOUNT[occ]
        if n == 3:
            return _three(cells, occ, pool, safe)
        if n == 4:
            return _four(cells, occ, pool, safe, alpha, beta)
        if n == 5:
            self.nodes += 1
            return _five(cells, occ, pool, safe, alpha, beta)
        return self._give(cells, occ, key, pool, safe, alpha, beta)

    def _store(self, key: int, entry: int) -> None:
        tt = self.tt
        if len(tt) >= self.table_size and key not in tt:
            if len(tt) > self.table_peak:
                self.table_peak = len(tt)
            tt.clear()
        tt[key] = entry

    def _give(self, cells: list[int], occ: int, key: int, pool: int, safe: int, alpha: int, beta: int) -> int:
        """Value for the player about to give from ``pool`` (two pieces or more), ``safe`` (not empty) the pieces
        of it that complete no line. ``cells`` is changed during the search and restored. The heart of the search.

        Before any placement, the node reads its lines once into two bytes per empty square ``s``: ``base[s]``,
        the attribute values shared by the lines of three pieces that ``s`` does not fill, and ``pair[s]``, those
        shared by the lines through ``s`` holding two pieces. A piece of code ``c`` placed on ``s`` then leaves
        as deadly exactly the pieces sharing a value with ``base[s] | c & pair[s]``: one look-up per placement."""
        self.nodes += 1
        if self.nodes >= self._limit >= 0:
            raise BudgetExceeded
        empties = _BITS[~occ & FULL]
        n = len(empties)
        best_first = -1
        alpha0, beta0 = alpha, beta
        tkey = -1
        tt = self.tt
        if n >= self._table_min:
            tkey = key if n < self._symmetry_min else self._canonical(cells, occ)
            hit = tt.get(tkey)
            if hit is not None:
                lo = (hit >> 6) - 1
                hi = ((hit >> 4) & 3) - 1
                if lo == hi or lo >= beta:
                    return lo
                if hi <= alpha:
                    return hi
                if lo > alpha:
                    alpha = lo
                if hi < beta:
                    beta = hi
                best_first = hit & 15
        base, pair = _reading(cells, occ)
        winners = _WINNERS
        codes = _CODE
        popcount = _POPCOUNT
        pieces = _BITS[safe]
        if best_first >= 0 and safe >> best_first & 1:
            if pieces[0] != best_first:
                pieces = (best_first,) + tuple(p for p in pieces if p != best_first)
        elif n >= self.order_min and len(pieces) > 1:
            scored = []
            for q in pieces:
                code = codes[q]
                left = pool ^ (1 << q)
                count = 0
                for s in empties:
                    count += popcount[left & ~winners[base[s] | code & pair[s]]]
                scored.append((count, q))
            scored.sort()
            pieces = tuple(q for _, q in scored)
        killers = self._killers
        history = self._history
        ordered = n >= self.place_order_min
        if not ordered:
            killer = killers[n]
            if killer >= 0 and occ >> killer & 1 == 0 and empties[0] != killer:
                empties = (killer,) + tuple(s for s in empties if s != killer)
        spots = [(s, base[s], pair[s]) for s in empties]
        bits = _BITS
        put = _PUT
        etc = n > self._etc_min
        give = self._give
        five = _five
        best = LOSS - 1
        best_piece = pieces[0]
        leaves = 0
        for q in pieces:
            code = codes[q]
            left = pool ^ (1 << q)
            # The opponent places q where it suits it best: it needs more than -alpha to matter to us. A placement
            # after which every piece it could give completes a line loses for it, and is not searched.
            reply = LOSS - 1
            o_alpha, o_beta = -beta, -alpha
            if etc:
                # The table may already know a placement that refutes q: look before searching any.
                for s in empties:
                    hit = tt.get(key | put[s][q])
                    if hit is not None and (hit >> 6) - 1 >= o_beta:
                        reply = o_beta
                        break
            if reply >= o_beta:
                pass
            elif ordered:
                # The placements that leave the placer the fewest safe pieces to give first: they settle soonest.
                # Among equals, those that settled positions of this size with this piece most often.
                row = (n << 4 | q) << 4
                places = [
                    ((popcount[(safe2 := left & ~winners[b | code & p])] << 24) - history[row + s], s, safe2)
                    for s, b, p in spots
                ]
                places.sort()
                for _, s, safe2 in places:
                    if not safe2:
                        v = LOSS
                    elif n == 6:
                        cells[s] = code
                        v = five(cells, occ | 1 << s, left, safe2, o_alpha, o_beta)
                        cells[s] = 0
                        leaves += 1
                    else:
                        cells[s] = code
                        v = give(cells, occ | 1 << s, key | put[s][q], left, safe2, o_alpha, o_beta)
                        cells[s] = 0
                    if v > reply:
                        reply = v
                        if v > o_alpha:
                            o_alpha = v
                            if v >= o_beta:
                                if history[row + s] < _HISTORY_CAP:
                                    history[row + s] += 1
                                break
            else:
                for s, b, p in spots:
                    safe2 = left & ~winners[b | code & p]
                    if not safe2:
                        v = LOSS
                    elif n == 2:
                        v = DRAW  # one piece left, and it is safe: the board fills (Q5)
                    elif n == 3:
                        cells[s] = code
                        e, f = bits[~(occ | 1 << s) & FULL]
                        x, y = bits[left]
                        v = _two(cells, e, f, x, y, safe2)
                        cells[s] = 0
                    elif n == 4:
                        cells[s] = code
                        v = _three(cells, occ | 1 << s, left, safe2)
                        cells[s] = 0
                        leaves += 1
                    else:
                        cells[s] = code
                        v = give(cells, occ | 1 << s, key | put[s][q], left, safe2, o_alpha, o_beta)
                        cells[s] = 0
                    if v > reply:
                        reply = v
                        if v > o_alpha:
                            o_alpha = v
                            if v >= o_beta:
                                killers[n] = s
                                break
            value = -reply
            if value > best:
                best = value
                best_piece = q
                if value > alpha:
                    alpha = value
                    if value >= beta:
                        break
        self.nodes += leaves
        if tkey >= 0:
            hit = tt.get(tkey)
            lo, hi = (LOSS, WIN) if hit is None else ((hit >> 6) - 1, ((hit >> 4) & 3) - 1)
            if best <= alpha0:
                hi = min(hi, best)
            elif best >= beta0:
                lo = max(lo, best)
            else:
                lo = hi = best
            self._store(tkey, ((lo + 1) << 6) | ((hi + 1) << 4) | best_piece)
        return best

    @staticmethod
    def _canonical(cells: list[int], occ: int) -> int:
        planes = 0
        for s in _BITS[occ]:
            planes |= _SPREAD[cells[s] & 15] << s
        return canonical_key(occ, planes) | _CANONICAL


def _completes(cells: list[int], s: int, code: int) -> bool:
    """Whether the piece of ``code`` on the empty square ``s`` completes a line (an empty square's code is 0)."""
    for i, j, k in _OTHERS[s]:
        if code & cells[i] & cells[j] & cells[k]:
            return True
    return False


def _two(cells: list[int], a: int, b: int, x: int, y: int, safe: int) -> int:
    """The giver's value with the two empty squares ``a``, ``b`` and the two pieces ``x``, ``y`` left, ``safe`` those
    of them it can give: a win when the opponent, wherever it places the piece given, must hand over the other piece
    where it completes a line (Q4); else a draw."""
    for q, r in ((x, y), (y, x)):
        if safe >> q & 1:
            cq, cr = _CODE[q], _CODE[r]
            cells[a] = cq
            first = _completes(cells, b, cr)
            cells[a] = 0
            if first:
                cells[b] = cq
                second = _completes(cells, a, cr)
                cells[b] = 0
                if second:
                    return WIN
    return DRAW


def _reading(cells: list[int], occ: int) -> tuple[list[int], list[int]]:
    """``base`` and ``pair`` of ``Solver._give``: a piece of code ``c`` on the empty square ``s`` leaves as deadly
    the pieces sharing a value with ``base[s] | c & pair[s]``."""
    shape = _SHAPES[occ]
    if shape is None:
        shape = _SHAPES[occ] = _shape_of(occ)
    threes, twos = shape
    pair = [0] * SQUARES
    for i, j, e, f in twos:
        c = cells[i] & cells[j]
        if c:
            pair[e] |= c
            pair[f] |= c
    base = _ZERO16
    if threes:
        found = []
        every = 0
        for i, j, k, e in threes:
            c = cells[i] & cells[j] & cells[k]
            if c:
                every |= c
                found.append((e, c))
        if every:
            base = [every] * SQUARES
            if len(found) == 1:
                base[found[0][0]] = 0
                return base, pair
            for e, _ in found:
                rest = 0
                for f, c in found:
                    if f != e:
                        rest |= c
                base[e] = rest
    return base, pair


def _five(cells: list[int], occ: int, pool: int, safe: int, alpha: int, beta: int) -> int:
    """The giver's value with five empty squares, ``safe`` (not empty) the pieces of ``pool`` it can give: the
    opponent's placements that leave it the fewest safe pieces first (they settle soonest), no table, the pieces as
    they come. Windowed like ``Solver.give_value``."""
    base, pair = _reading(cells, occ)
    winners = _WINNERS
    popcount = _POPCOUNT
    four = _four
    spots = [(s, base[s], pair[s], occ | 1 << s) for s in _BITS[~occ & FULL]]
    best = LOSS - 1
    for q in _BITS[safe]:
        code = _CODE[q]
        left = pool ^ (1 << q)
        places = [(popcount[(safe2 := left & ~winners[b | code & p])], s, safe2, o) for s, b, p, o in spots]
        places.sort()
        reply = LOSS
        o_alpha, o_beta = -beta, -alpha
        for _, s, safe2, o in places:
            if safe2:
                cells[s] = code
                v = four(cells, o, left, safe2, o_alpha, o_beta)
                cells[s] = 0
                if v > reply:
                    reply = v
                    if v > o_alpha:
                        o_alpha = v
                        if v >= o_beta:
                            break
        if -reply > best:
            best = -reply
            if best > alpha:
                alpha = best
                if best >= beta:
                    break
    return best


def _quad_shape(
    occ: int,
) -> tuple[
    tuple[tuple[int, int, int, int, int, int, int, int], ...],
    tuple[tuple[int, int, int, int], ...],
    tuple[tuple[int, int, int], ...],
    tuple[tuple[int, int], ...],
    int,
]:
    """For an occupancy with four empty squares (numbered 0-3 in order): for each of them, the square, its bit
    and the bits of the three others (in order), then its two others' bits paired as ``ab``, ``ac``, ``bc``... see
    ``_four``; and the lines through the empty squares, grouped by how many pieces they hold (3, 2, 1), as the set
    of their empty squares (a 4-bit mask) and their occupied squares; the last, 15 when the four form a line."""
    empties = _BITS[~occ & FULL]
    index = {s: i for i, s in enumerate(empties)}
    held3 = []
    held2 = []
    held1 = []
    full = 0
    for line in LINES:
        mask = sum(1 << index[x] for x in line if not occ >> x & 1)
        held = [x for x in line if occ >> x & 1]
        if not mask:
            continue
        if len(held) == 3:
            held3.append((mask, held[0], held[1], held[2]))
        elif len(held) == 2:
            held2.append((mask, held[0], held[1]))
        elif len(held) == 1:
            held1.append((mask, held[0]))
        else:
            full = 15
    spots = []
    for i, s in enumerate(empties):
        a, b, c = (1 << j for j in range(4) if j != i)
        spots.append((s, 1 << i, a, b, c, a | b, a | c, b | c))
    return tuple(spots), tuple(held3), tuple(held2), tuple(held1), full


#: ``_QUADS[occ]``: ``_quad_shape(occ)``, made on first use.
_QUADS: dict[
    int,
    tuple[
        tuple[tuple[int, int, int, int, int, int, int, int], ...],
        tuple[tuple[int, int, int, int], ...],
        tuple[tuple[int, int, int], ...],
        tuple[tuple[int, int], ...],
        int,
    ],
] = {}


def _four(cells: list[int], occ: int, pool: int, safe: int, alpha: int, beta: int) -> int:
    """The giver's value with four empty squares, ``safe`` (not empty) the pieces of ``pool`` it can give, with no
    table, no move order and no placement written: ``m[e]``, for a set ``e`` of the empty squares, is what the
    pieces of the lines whose empty squares are exactly ``e`` share (all values for a line of four empty squares).
    The opponent's piece ``q`` on one square adds ``q``'s values to the lines through it, and ``_three_of`` takes
    the three squares left from there. Windowed like ``Solver.give_value``."""
    shape = _QUADS.get(occ)
    if shape is None:
        shape = _QUADS[occ] = _quad_shape(occ)
    spots, held3, held2, held1, full = shape
    m = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    for e, i, j, k in held3:
        m[e] |= cells[i] & cells[j] & cells[k]
    for e, i, j in held2:
        m[e] |= cells[i] & cells[j]
    for e, i in held1:
        m[e] |= cells[i]
    if full:
        m[15] = 255
    winners = _WINNERS
    three = _three_of
    best = LOSS - 1
    for q in _BITS[safe]:
        code = _CODE[q]
        left = pool ^ (1 << q)
        reply = LOSS
        o_beta = -alpha
        for _, s, a, b, c, ab, ac, bc in spots:
            wa = m[a] | code & m[a | s]
            wb = m[b] | code & m[b | s]
            wc = m[c] | code & m[c | s]
            safe2 = left & ~winners[wa | wb | wc]
            if safe2:
                v = three(
                    wa,
                    wb,
                    wc,
                    m[ab] | code & m[ab | s],
                    m[ac] | code & m[ac | s],
                    m[bc] | code & m[bc | s],
                    m[ab | c] | code & m[15],
                    left,
                    safe2,
                )
                if v > reply:
                    reply = v
                    if v >= o_beta:
                        break
        if -reply > best:
            best = -reply
            if best > alpha:
                alpha = best
                if best >= beta:
                    break
    return best


def _leaf_shape(
    occ: int,
) -> tuple[int, int, int, tuple[tuple[int, int, int, int], ...], tuple[tuple[int, int, int], ...], int]:
    """For an occupancy with three empty squares ``a < b < c``: the three, the lines holding three pieces (the index
    of their empty square among the three, their three squares), those holding two (the index of their pair of
    empty squares, ``ab``, ``ac`` or ``bc``, and their two squares), and the occupied square of a line through all
    three (-1 for none)."""
    a, b, c = _BITS[~occ & FULL]
    index = {a: 0, b: 1, c: 2}
    pairs = {(0, 1): 0, (0, 2): 1, (1, 2): 2}
    ones = []
    twos = []
    third = -1
    for line in LINES:
        free = sorted(index[x] for x in line if not occ >> x & 1)
        held = [x for x in line if occ >> x & 1]
        if len(free) == 1:
            ones.append((free[0], held[0], held[1], held[2]))
        elif len(free) == 2:
            twos.append((pairs[(free[0], free[1])], held[0], held[1]))
        elif len(free) == 3:
            third = held[0]
    return a, b, c, tuple(ones), tuple(twos), third


#: ``_LEAVES[occ]``: ``_leaf_shape(occ)``, made on first use.
_LEAVES: dict[
    int, tuple[int, int, int, tuple[tuple[int, int, int, int], ...], tuple[tuple[int, int, int], ...], int]
] = {}


def _three(cells: list[int], occ: int, pool: int, safe: int) -> int:
    """The giver's value with three empty squares and the three pieces of ``pool`` left, ``safe`` those of them it
    can give (not empty), by the attribute values the lines share, with no placement written.

    For an empty square ``t``: ``w[t]``, the values shared by the lines through it that hold three pieces (a piece
    with one of them completes a line on ``t``); for two empty squares ``t``, ``u``: ``pr[tu]``, those shared by
    the two pieces of the lines through both that hold two; ``tri``, the piece of a line through all three. The
    opponent places the piece given, ``q``, on ``s`` and must give one of the two others, ``x`` or ``y``, that
    completes no line on the two squares left, ``f`` and ``g`` (if neither, it loses); the giver then wins when,
    wherever the opponent places the one given, the last one completes a line on the last square (Q4)."""
    shape = _LEAVES.get(occ)
    if shape is None:
        shape = _LEAVES[occ] = _leaf_shape(occ)
    _, _, _, ones, twos, third = shape
    w = [0, 0, 0]
    for t, i, j, k in ones:
        w[t] |= cells[i] & cells[j] & cells[k]
    pr = [0, 0, 0]
    for t, i, j in twos:
        pr[t] |= cells[i] & cells[j]
    return _three_of(w[0], w[1], w[2], pr[0], pr[1], pr[2], cells[third] if third >= 0 else 0, pool, safe)


def _three_of(wa: int, wb: int, wc: int, pab: int, pac: int, pbc: int, tri: int, pool: int, safe: int) -> int:
    """``_three`` from what the lines share: ``w``, ``pr`` and ``tri`` there, for the empty squares ``a < b < c``."""
    # s, then f and g: (w[f], w[g], pr[fs], pr[gs], pr[fg])
    spots = ((wb, wc, pab, pac, pbc), (wa, wc, pab, pbc, pac), (wa, wb, pac, pbc, pab))
    codes = _CODE
    best = LOSS
    for q in _BITS[safe]:
        cq = codes[q]
        x, y = _BITS[pool ^ (1 << q)]
        cx, cy = codes[x], codes[y]
        tq = cq & tri
        reply = LOSS
        for wf, wg, pfs, pgs, pfg in spots:
            df = wf | cq & pfs  # a piece sharing one of these completes a line on f
            dg = wg | cq & pgs
            both = df | dg
            v = LOSS
            link = pfg | tq
            if not cx & both:  # the opponent gives x: y comes last, on g or on f
                v = DRAW
                if cy & (dg | cx & link) and cy & (df | cx & link):
                    v = WIN
            if v != WIN and not cy & both:
                v = DRAW
                if cx & (dg | cy & link) and cx & (df | cy & link):
                    v = WIN
            if v > reply:
                reply = v
                if v == WIN:
                    break
        if -reply > best:
            best = -reply
            if best == WIN:
                break
    return best


def _deadly(cells: list[int], occ: int) -> int:
    """``deadly`` over the search's codes."""
    threes = _THREES[occ]
    if threes is None:
        threes = _THREES[occ] = _threes_of(occ)
    danger = 0
    for i, j, k in threes:
        common = cells[i] & cells[j] & cells[k]
        if common:
            danger |= _WINNERS[common]
    return danger


#: ``_OTHERS[s]``: for each line through square ``s``, its three other squares.
_OTHERS: tuple[tuple[tuple[int, int, int], ...], ...] = tuple(
    tuple((a, b, c) for a, b, c in (tuple(x for x in line if x != s) for line in LINES if s in line))
    for s in range(SQUARES)
)

_LINES_THROUGH: tuple[tuple[tuple[int, int, int, int], ...], ...] = tuple(
    tuple((*(x for x in line if x != s), sum(1 << x for x in line if x != s)) for line in LINES if s in line)  # type: ignore[misc]
    for s in range(SQUARES)
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


def transform(
    board: Sequence[int | None], symmetry: tuple[int, ...], order: tuple[int, ...], flip: int
) -> list[int | None]:
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
