"""How fast the exact Quarto search solves positions beside a plain baseline, and whether ``perfect`` keeps values.

    python benchmarks/quarto_solver.py [--sizes 9,10,11,12] [--positions 3] [--seed 1] [--old FILE]
                                       [--baseline-max 11] [--json]
    python benchmarks/quarto_solver.py --judge 500 [--judge-sizes 6,7,8,9,10,11] [--seed 1] [--progress] [--json]
    python benchmarks/quarto_solver.py --selfplay 200 [--seed 1] [--full] [--progress] [--json]

Speed. For each size (empty squares), ``--positions`` giving positions are drawn by seeded play that never hands
over a winning piece while a safe one exists (the way ``normal`` plays, so the positions are ones games reach), and
each is solved, in the same run, by:

1. ``new``: ``quatro_server.games.quarto.solver.Solver()``, fresh for each position;
2. ``plain``: the baseline written below, apart from the solver: negamax with alpha-beta and the deadly-piece cut
   (never give a piece that completes a line while a safe one exists), no table, no symmetry, no move order;
   run up to ``--baseline-max`` empty squares (at 12 it takes minutes a position);
3. ``old``, with ``--old FILE``: the ``Solver("symmetric")`` of another version of the solver module, loaded from
   ``FILE`` (``git show REV:quatro_server/games/quarto/solver.py > FILE``), up to ``--baseline-max`` as well.

Printed per size and search: the values, the median and the largest CPU time to the value (CPU time of this
process, which a busy machine disturbs less than wall time), positions visited (each search counts its own);
and ``perfect``'s whole exact turn (best square, then best piece) on the same boards with a safe piece in hand,
from a fresh bot, which is what "solves N empty squares within two seconds per move" means. Values that disagree
between the searches are flagged and make the exit status 1.

Judging. ``--judge N`` draws N placing positions (a board reached as above, a piece of the pool in hand), cycling
through ``--judge-sizes``; on each a fresh ``perfect`` decides, and a fresh ``Solver()`` with no budget judges: the
value of the position before the turn against the value of the position the turn leaves. Any value lost is
listed (size, index) and makes the exit status 1. Figures, not tests; results go to docs/quarto.md by hand.

Self-play. ``--selfplay N`` plays N seeded games of ``perfect`` against ``perfect`` from the empty board (a draw with
best play) and judges each, at the first turn a bot plays by its exact search to the end, with the exact search
with no budget: a value other than a draw there is a game one side loses by a heuristic turn (the exact search
keeps values: ``--judge``). ``--full`` plays the games to the end instead. A lost game is listed with its moves in
Q7 and makes the exit status 1. The bots' turns are timed per empty squares (CPU).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import math
import random
import statistics
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from quatro_shared.games.quarto import contract as q  # noqa: E402

from quatro_server.games.quarto.bots import Cells, PerfectQuartoBot  # noqa: E402
from quatro_server.games.quarto.solver import EMPTY, Solver, deadly  # noqa: E402

# --- the plain baseline ------------------------------------------------------------------------------


class Plain:
    """The baseline: the giver's value by negamax with alpha-beta over pieces and squares as they come, the only
    cut the rules' own: a piece that lets the opponent complete a line is given only when every piece does."""

    def __init__(self) -> None:
        self.nodes = 0

    def give_value(self, board: list[int | None], pool: int) -> int:
        cells = [EMPTY if p is None else p for p in board]
        return self._give(cells, sum(1 << s for s, p in enumerate(board) if p is not None), pool, -1, 1)

    def _give(self, cells: list[int], occ: int, pool: int, alpha: int, beta: int) -> int:
        self.nodes += 1
        safe = pool & ~deadly(cells, occ)
        if not safe:
            return -1
        best = -2
        for piece in (p for p in range(16) if safe >> p & 1):
            left = pool & ~(1 << piece)
            reply, o_alpha = -2, -beta
            for s in (s for s in range(16) if not occ >> s & 1):
                cells[s] = piece
                v = (
                    self._give(cells, occ | 1 << s, left, o_alpha, -alpha) if left else 0
                )  # a safe last piece: a draw (Q5)
                cells[s] = EMPTY
                reply = max(reply, v)
                o_alpha = max(o_alpha, v)
                if o_alpha >= -alpha:
                    break
            best = max(best, -reply)
            alpha = max(alpha, -reply)
            if alpha >= beta:
                break
        return best


# --- positions ---------------------------------------------------------------------------------------


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


def _cells(board: list[int | None], pool: int) -> Cells:
    cells = Cells.__new__(Cells)
    cells.cells = [EMPTY if p is None else p for p in board]
    cells.occ = sum(1 << s for s, p in enumerate(board) if p is not None)
    cells.pool = pool
    return cells


def exact_turn_seconds(board: list[int | None], pool: int, piece: int) -> float:
    """CPU seconds of ``perfect``'s whole exact turn with ``piece`` in hand (``pool`` excludes it), fresh bot."""
    bot = PerfectQuartoBot(random.Random(0))
    cells = _cells(board, pool)
    start = time.process_time()
    bot.solver.allow(None)
    bot._exact_turn(cells, piece, bot._ranked_turns(cells, piece))
    return time.process_time() - start


# --- speed -------------------------------------------------------------------------------------------


def _solve(solver: Any, board: list[int | None], pool: int) -> tuple[int, float, int]:
    start = time.process_time()
    value = solver.give_value(board, pool)
    return value, time.process_time() - start, solver.nodes


def _summary(values: list[int], seconds: list[float], nodes: list[int]) -> dict[str, Any]:
    return {
        "values": values,
        "seconds": seconds,
        "median_seconds": statistics.median(seconds),
        "max_seconds": max(seconds),
        "nodes": nodes,
        "median_nodes": statistics.median(nodes),
    }


def measure(sizes: list[int], positions: int, seed: int, old: ModuleType | None, baseline_max: int) -> dict[str, Any]:
    rng = random.Random(seed)
    rows = []
    for size in sizes:
        boards = [position(rng, size) for _ in range(positions)]
        row: dict[str, Any] = {"empty_squares": size, "positions": positions}
        makers: dict[str, Any] = {"new": Solver}
        if size <= baseline_max:
            makers["plain"] = Plain
            if old is not None:
                makers["old"] = lambda: old.Solver("symmetric")
        peaks = []
        for name, make in makers.items():
            runs = []
            for board, pool in boards:
                solver = make()
                runs.append(_solve(solver, board, pool))
                if name == "new":
                    peaks.append(max(solver.table_peak, len(solver.tt)))
            row[name] = _summary([r[0] for r in runs], [r[1] for r in runs], [r[2] for r in runs])
        row["table_peak"] = max(peaks)
        pick = random.Random(rng.getrandbits(32))
        turns = []
        for board, pool in boards:
            piece = pick.choice([p for p in range(q.PIECES) if _safe(board, pool) >> p & 1])
            turns.append(exact_turn_seconds(board, pool & ~(1 << piece), piece))
        row["exact_turn"] = {"seconds": turns, "median_seconds": statistics.median(turns), "max_seconds": max(turns)}
        row["values_agree"] = all(row[name]["values"] == row["new"]["values"] for name in makers)
        rows.append(row)
    return {"seed": seed, "python": sys.version.split()[0], "sizes": rows}


def render(result: dict[str, Any]) -> str:
    lines = [
        f"Quarto exact search, seed {result['seed']}, Python {result['python']} (giving positions reached by safe play;"
        " CPU seconds)",
        "",
        f"{'empty':>5} {'n':>3} {'search':<7} {'values':<18} {'median s':>9} {'max s':>8} {'median visited':>15}",
    ]
    for row in result["sizes"]:
        for i, name in enumerate(n for n in ("new", "plain", "old") if n in row):
            m = row[name]
            head = f"{row['empty_squares']:>5} {row['positions']:>3}" if i == 0 else " " * 9
            values = " ".join(f"{v:+d}" for v in m["values"])
            lines.append(
                f"{head} {name:<7} {values:<18} {m['median_seconds']:>9.3f} {m['max_seconds']:>8.3f} {m['median_nodes']:>15,.0f}"
            )
        turn = row["exact_turn"]
        lines.append(
            f"{'':>9} perfect's exact turn with a piece in hand: median {turn['median_seconds']:.3f} s, "
            f"largest {turn['max_seconds']:.3f} s; table at most {row['table_peak']:,} entries"
        )
        if "plain" in row:
            lines.append(
                f"{'':>9} new is {row['plain']['median_seconds'] / max(1e-9, row['new']['median_seconds']):.1f}x"
                " faster than plain (medians)"
                + (
                    f", {row['old']['median_seconds'] / max(1e-9, row['new']['median_seconds']):.1f}x than old"
                    if "old" in row
                    else ""
                )
            )
        if not row["values_agree"]:
            lines.append(f"{'':>9} VALUES DISAGREE")
    return "\n".join(lines)


# --- judging -----------------------------------------------------------------------------------------


def judge(count: int, sizes: list[int], seed: int, progress: bool = False) -> dict[str, Any]:
    rng = random.Random(seed)
    lost: list[dict[str, Any]] = []
    per_size: dict[int, list[float]] = {size: [] for size in sizes}
    for index in range(count):
        size = sizes[index % len(sizes)]
        board, pool = position(rng, size)
        piece = rng.choice([p for p in range(q.PIECES) if pool >> p & 1])
        pool &= ~(1 << piece)
        before = Solver().place_value(board, piece, pool)
        bot = PerfectQuartoBot(random.Random(index))
        start = time.process_time()
        actions = bot.decide(_view(board, pool, piece), 0.0)
        per_size[size].append(time.process_time() - start)
        after = _after(board, pool, piece, actions)
        if progress:
            print(
                f"{index} {size} empty: {before:+d} -> {after:+d}, {per_size[size][-1]:.3f} s",
                file=sys.stderr,
                flush=True,
            )
        if after < before:
            lost.append(
                {"empty_squares": size, "index": index, "before": before, "after": after, "mode": bot.last_mode}
            )
    return {
        "seed": seed,
        "positions": count,
        "lost": lost,
        "sizes": [
            {
                "empty_squares": size,
                "positions": len(t),
                "median_seconds": statistics.median(t),
                "p90_seconds": _p90(t),
                "max_seconds": max(t),
            }
            for size, t in per_size.items()
            if t
        ],
    }


def _p90(seconds: list[float]) -> float:
    ordered = sorted(seconds)
    return ordered[min(len(ordered) - 1, math.ceil(0.9 * len(ordered)) - 1)]


def _view(board: list[int | None], pool: int, piece: int) -> q.QuartoView:
    return q.QuartoView(
        seat=0, phase=q.Phase.PLAYING, turn=0, step=q.Step.PLACE, board=tuple(board),
        pool=tuple(p for p in range(q.PIECES) if pool >> p & 1), in_hand=piece, game=1, games=1, starter=0,
        scores=(0, 0), draws=0, winner=None, line=None, shared=(), moves=(),
        seats=(q.SeatState(0, True, True, True), q.SeatState(1, True, True, True)),
        clock_ms=None, phase_ms=None, winners=(),
    )  # fmt: skip


def _after(board: list[int | None], pool: int, piece: int, actions: list[q.Action]) -> int:
    """The value, for the player who played ``actions``, of the position they leave (exact, no budget)."""
    first = actions[0]
    assert isinstance(first, q.Place)
    moved = list(board)
    moved[first.square] = piece
    if q.winning_line(moved, first.square) is not None:
        return 1
    if len(actions) == 1:
        return 0
    give = actions[1]
    assert isinstance(give, q.Give)
    return -Solver().place_value(moved, give.piece, pool & ~(1 << give.piece))


def render_judged(result: dict[str, Any]) -> str:
    lines = [
        f"perfect judged by the exact search with no budget: {result['positions']} positions, seed {result['seed']}",
        "",
    ]
    for row in result["sizes"]:
        lines.append(
            f"{row['empty_squares']:>3} empty squares: {row['positions']:>4} positions, turn median "
            f"{row['median_seconds']:.3f} s, p90 {row['p90_seconds']:.3f} s, largest {row['max_seconds']:.3f} s CPU"
        )
    lines.append("")
    lines.append(f"values kept: {result['positions'] - len(result['lost'])}, values lost: {len(result['lost'])}")
    lines.extend(f"  {lost}" for lost in result["lost"])
    return "\n".join(lines)


# --- self-play ---------------------------------------------------------------------------------------


def _giving_view(board: list[int | None], pool: int) -> q.QuartoView:
    return dataclasses.replace(_view(board, pool, 0), step=q.Step.GIVE, in_hand=None)


def self_play_game(seed: int, full: bool = False, exact_empty: int | None = None) -> dict[str, Any]:
    """One game of ``perfect`` against ``perfect`` (each seat its own bot, seeded from ``seed``), from the empty
    board. Unless ``full``, it stops at the first turn a bot plays by its exact search to the end (``exact_empty``
    empty squares or fewer, the bot's own by default) and the exact search with no budget judges the position there
    for the player to move: the empty board is a draw (Quarto is a draw with best play), and the exact search keeps
    values (``--judge``), so a value other than 0 there is a value a heuristic turn gave away, and the game one side
    would lose. ``full`` plays the game to its end instead. Moves in Q7; CPU seconds per turn by empty squares."""
    rng = random.Random(seed)
    bots = [PerfectQuartoBot(random.Random(rng.getrandbits(32)), exact_empty=exact_empty) for _ in range(q.SEATS)]
    board: list[int | None] = [None] * q.SQUARES
    pool = q.ALL_PIECES
    turn = rng.randrange(q.SEATS)
    moves: list[str] = []
    modes: list[str] = []
    seconds: dict[int, list[float]] = {}
    (give,) = bots[turn].decide(_giving_view(board, pool), 0.0)
    assert isinstance(give, q.Give)
    piece = give.piece
    pool &= ~(1 << piece)
    moves.append(q.format_piece(piece))
    result: dict[str, Any] = {"seed": seed, "winner": None, "horizon": None, "horizon_value": None}
    while True:
        turn = 1 - turn
        empty = board.count(None)
        if not full and empty <= bots[turn].exact_empty:
            result["horizon"] = empty
            result["horizon_value"] = Solver().place_value(board, piece, pool)
            break
        start = time.process_time()
        actions = bots[turn].decide(_view(board, pool, piece), 0.0)
        seconds.setdefault(empty, []).append(time.process_time() - start)
        modes.append(bots[turn].last_mode)
        place = actions[0]
        assert isinstance(place, q.Place)
        board[place.square] = piece
        if len(actions) == 1:
            moves.append(q.format_square(place.square))
            if q.winning_line(board, place.square) is not None:
                result["winner"] = turn
            break
        give = actions[1]
        assert isinstance(give, q.Give)
        piece = give.piece
        pool &= ~(1 << piece)
        moves.append(f"{q.format_square(place.square)} {q.format_piece(piece)}")
    result.update(moves=moves, modes=modes, seconds={str(k): v for k, v in sorted(seconds.items())})
    return result


def self_play(games: int, seed: int, full: bool = False, progress: bool = False) -> dict[str, Any]:
    """``games`` games of ``self_play_game``, game ``i`` seeded ``seed * 1_000_003 + i``; a game is lost when one
    side won it (``full``) or its horizon is not a draw."""
    played = []
    for i in range(games):
        game = self_play_game(seed * 1_000_003 + i, full)
        played.append(game)
        if progress:
            print(
                f"{i} seed {game['seed']}: winner {game['winner']}, horizon {game['horizon']} value"
                f" {game['horizon_value']}",
                file=sys.stderr,
                flush=True,
            )
    lost = [g for g in played if g["winner"] is not None or g["horizon_value"] not in (None, 0)]
    per_size: dict[int, list[float]] = {}
    for g in played:
        for size, times in g["seconds"].items():
            per_size.setdefault(int(size), []).extend(times)
    return {
        "seed": seed,
        "games": games,
        "full": full,
        "lost": [{"seed": g["seed"], "winner": g["winner"], "horizon_value": g["horizon_value"],
                  "moves": g["moves"], "modes": g["modes"]} for g in lost],
        "sizes": [
            {"empty_squares": size, "turns": len(t), "median_seconds": statistics.median(t), "max_seconds": max(t)}
            for size, t in sorted(per_size.items(), reverse=True)
        ],
    }  # fmt: skip


def render_self_play(result: dict[str, Any]) -> str:
    how = "played to the end" if result["full"] else "judged exactly at the exact search's horizon"
    lines = [f"perfect against perfect: {result['games']} games, seed {result['seed']}, {how}", ""]
    for row in result["sizes"]:
        lines.append(
            f"{row['empty_squares']:>3} empty squares: {row['turns']:>5} turns, median {row['median_seconds']:.3f} s,"
            f" largest {row['max_seconds']:.3f} s CPU"
        )
    lines.append("")
    lines.append(f"games drawn: {result['games'] - len(result['lost'])}, games lost: {len(result['lost'])}")
    for lost in result["lost"]:
        lines.append(f"  seed {lost['seed']}: {', '.join(lost['moves'])} (horizon value {lost['horizon_value']})")
    return "\n".join(lines)


def _load(path: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location("quarto_solver_old", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _sizes(text: str, parser: argparse.ArgumentParser) -> list[int]:
    try:
        sizes = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        parser.error("sizes are a list of numbers like 9,10,11")
    if not sizes or any(not 2 <= s <= 15 for s in sizes):
        parser.error("sizes are 2 to 15 empty squares")
    return sizes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--sizes", default="9,10,11,12", help="empty squares of the positions (default 9,10,11,12)")
    parser.add_argument("--positions", type=int, default=3, help="positions per size (default 3)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the positions (default 1)")
    parser.add_argument(
        "--old", metavar="FILE", help="another version of quatro_server/games/quarto/solver.py to compare"
    )
    parser.add_argument("--baseline-max", type=int, default=11, help="largest size for plain and old (default 11)")
    parser.add_argument("--judge", type=int, metavar="N", help="judge perfect's turns on N positions instead")
    parser.add_argument("--judge-sizes", default="6,7,8,9,10,11", help="sizes judged, in turn (default 6 to 11)")
    parser.add_argument("--progress", action="store_true", help="judging: a line per position on stderr as it goes")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    parser.add_argument("--selfplay", type=int, metavar="N", help="play N seeded games of perfect against perfect")
    parser.add_argument("--full", action="store_true", help="self-play: play the games to the end")
    args = parser.parse_args(argv)
    if args.selfplay is not None:
        if args.selfplay < 1:
            parser.error("play at least one game")
        played = self_play(args.selfplay, args.seed, args.full, args.progress)
        print(json.dumps(played) if args.json else render_self_play(played), flush=True)
        return 1 if played["lost"] else 0
    if args.judge is not None:
        if args.judge < 1:
            parser.error("judge at least one position")
        judged = judge(args.judge, _sizes(args.judge_sizes, parser), args.seed, args.progress)
        print(json.dumps(judged) if args.json else render_judged(judged), flush=True)
        return 1 if judged["lost"] else 0
    if args.positions < 1:
        parser.error("at least one position")
    old = _load(args.old) if args.old else None
    result = measure(_sizes(args.sizes, parser), args.positions, args.seed, old, args.baseline_max)
    print(json.dumps(result) if args.json else render(result), flush=True)
    return 0 if all(row["values_agree"] for row in result["sizes"]) else 1


if __name__ == "__main__":
    raise SystemExit(main())
