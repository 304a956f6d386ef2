"""How fast the exact Quarto search solves positions, and what its symmetry table is worth, in the same run.

    python benchmarks/quarto_solver.py [--sizes 8,9,10,11,12] [--positions 3] [--seed 1] [--json]

For each size (empty squares), ``--positions`` giving positions are drawn by seeded play that never hands over
a winning piece while a safe one exists (the way ``normal`` plays, so the positions are ones games reach), and
each is solved from a fresh solver three times:

1. ``symmetric``: the transposition table keyed by the canonical form under the board's 32 symmetries and the
   attributes' 384 (``quatro_server.quarto_solver``);
2. ``plain``: the same table keyed by the position as it stands;
3. ``none``: no table at all.

Printed per size: the exact values, the time to them (CPU time of this process, which a busy machine disturbs
less than wall time; wall time is in ``--json`` too), the giving positions visited and visited per second, for
each search; then the speed-up of ``symmetric`` over ``plain`` and over ``none``
(time of the other over time of ``symmetric``); and the CPU time of ``perfect``'s whole exact turn (the best
square, then the best piece) on the same boards with a safe piece in hand, which is what "solves N empty squares
within a second per move" means. Figures, not tests: nothing is asserted. Results go to
docs/bots.md by hand.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from quatro_shared import quarto as q  # noqa: E402

from quatro_server.quarto_bots import Cells, PerfectQuartoBot  # noqa: E402
from quatro_server.quarto_solver import EMPTY, Solver, deadly  # noqa: E402

MODES = ("symmetric", "plain", "none")


def _safe(board: list[int | None], pool: int) -> int:
    cells = [EMPTY if p is None else p for p in board]
    occ = sum(1 << s for s, p in enumerate(board) if p is not None)
    return pool & ~deadly(cells, occ)


def position(rng: random.Random, empties: int) -> tuple[list[int | None], int]:
    """A giving position with ``empties`` empty squares, no line, and a safe piece to give."""
    while True:
        board: list[int | None] = [None] * q.SQUARES
        pool = q.ALL_PIECES
        alive = True
        for _ in range(q.SQUARES - empties):
            safe = _safe(board, pool)
            if not safe:
                alive = False
                break
            piece = rng.choice([p for p in range(q.PIECES) if safe >> p & 1])
            pool &= ~(1 << piece)
            square = rng.choice([s for s in range(q.SQUARES) if board[s] is None])
            board[square] = piece
            if q.winning_line(board, square) is not None:
                alive = False
                break
        if alive and _safe(board, pool):
            return board, pool


def decisions(boards: list[tuple[list[int | None], int]], rng: random.Random) -> dict[str, Any]:
    """``perfect``'s whole exact turn (best square, then best piece) with a safe piece in hand on each board, as on
    its placing step: CPU seconds each, from a fresh bot (no table carried over from earlier moves)."""
    seconds = []
    for board, pool in boards:
        piece = rng.choice([p for p in range(q.PIECES) if _safe(board, pool) >> p & 1])
        bot = PerfectQuartoBot(random.Random(0))
        cells = Cells.__new__(Cells)
        cells.cells = [EMPTY if p is None else p for p in board]
        cells.occ = sum(1 << s for s, p in enumerate(board) if p is not None)
        cells.pool = pool & ~(1 << piece)
        start = time.process_time()
        bot.solver.allow(None)
        bot._exact_turn(cells, piece, bot._ranked_turns(cells, piece))
        seconds.append(time.process_time() - start)
    return {"seconds": seconds, "max_seconds": max(seconds)}


def measure(sizes: list[int], positions: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    rows = []
    for size in sizes:
        boards = [position(rng, size) for _ in range(positions)]
        row: dict[str, Any] = {"empty_squares": size, "positions": positions}
        for mode in MODES:
            values, nodes, seconds, wall = [], 0, 0.0, 0.0
            for board, pool in boards:
                solver = Solver(mode)
                start, start_wall = time.process_time(), time.perf_counter()
                values.append(solver.give_value(board, pool))
                seconds += time.process_time() - start
                wall += time.perf_counter() - start_wall
                nodes += solver.nodes
            row[mode] = {
                "values": values,
                "seconds": seconds,
                "seconds_per_position": seconds / positions,
                "wall_seconds": wall,
                "nodes": nodes,
                "nodes_per_second": nodes / seconds if seconds > 0 else 0.0,
            }
        row["decision"] = decisions(boards, random.Random(rng.getrandbits(32)))
        agree = row["symmetric"]["values"] == row["plain"]["values"] == row["none"]["values"]
        row["values_agree"] = agree
        sym = row["symmetric"]["seconds"]
        row["speedup_vs_plain"] = row["plain"]["seconds"] / sym if sym > 0 else 0.0
        row["speedup_vs_none"] = row["none"]["seconds"] / sym if sym > 0 else 0.0
        row["node_ratio_vs_plain"] = row["plain"]["nodes"] / max(1, row["symmetric"]["nodes"])
        rows.append(row)
    return {"seed": seed, "python": sys.version.split()[0], "sizes": rows}


def render(result: dict[str, Any]) -> str:
    lines = [
        f"Quarto exact search, seed {result['seed']}, Python {result['python']} (giving positions reached by safe play)",
        "",
        f"{'empty':>5} {'n':>3} {'values':<14} {'search':<10} {'cpu s/pos':>10} {'positions visited':>18} {'per second':>11}",
    ]
    for row in result["sizes"]:
        for i, mode in enumerate(MODES):
            m = row[mode]
            head = f"{row['empty_squares']:>5} {row['positions']:>3} {' '.join(f'{v:+d}' for v in m['values']):<14}" if i == 0 else " " * 24
            lines.append(f"{head} {mode:<10} {m['seconds_per_position']:>10.3f} {m['nodes']:>18,} {m['nodes_per_second']:>11,.0f}")
        lines.append(f"{'':>24} perfect's exact turn with a piece in hand: at most {row['decision']['max_seconds']:.3f} s CPU")
        lines.append(
            f"{'':>24} symmetric table: {row['speedup_vs_plain']:.2f}x faster than the plain table "
            f"({row['node_ratio_vs_plain']:.2f}x fewer positions), {row['speedup_vs_none']:.2f}x faster than no table"
            + ("" if row["values_agree"] else "  VALUES DISAGREE")
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="8,9,10,11,12", help="empty squares of the positions (default 8,9,10,11,12)")
    parser.add_argument("--positions", type=int, default=3, help="positions per size (default 3)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the positions (default 1)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    args = parser.parse_args(argv)
    try:
        sizes = [int(x) for x in args.sizes.split(",") if x.strip()]
    except ValueError:
        parser.error("--sizes is a list of numbers like 8,9,10")
    if not sizes or any(not 1 <= s <= 15 for s in sizes) or args.positions < 1:
        parser.error("sizes are 1 to 15 empty squares, and at least one position")
    result = measure(sizes, args.positions, args.seed)
    print(json.dumps(result) if args.json else render(result), flush=True)
    return 0 if all(row["values_agree"] for row in result["sizes"]) else 1


if __name__ == "__main__":
    raise SystemExit(main())
