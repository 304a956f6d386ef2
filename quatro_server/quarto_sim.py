"""The Quarto simulator: whole matches between two bots on the pure engine, with records and decision timings.

``quatro-server sim --game quarto --matches 200 --teams perfect,normal [--games 4] [--seed 1] [--json]``

Each match is a ``QuartoTable`` with a bot in both seats, driven through the same doors as the server drives
it: each bot is shown its seat's view and its actions go through ``table.act``; a refusal is a bug and stops
the run. Quarto has no clock unless the timing profile sets one, so no time needs to pass: the virtual clock
only moves by the bots' think times. Same seed, same matches, same results (the ``performance`` part of
``--json`` aside).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from quatro_shared import quarto as q
from quatro_shared.quarto import Phase

from quatro_server.quarto import QuartoTable, view
from quatro_server.quarto_bots import LEVELS, PerfectQuartoBot, QuartoBot, make_quarto_bot
from quatro_server.sim import wilson

#: Decisions in one match before it counts as stuck (a bot returning nothing on its turn): a bug, reported.
STUCK_DECISIONS = 1000


@dataclass
class SeatTally:
    level: str
    match_wins: int = 0
    match_draws: int = 0
    match_losses: int = 0
    game_wins: int = 0
    game_losses: int = 0
    game_draws: int = 0
    decision_ns: list[int] = field(default_factory=list)
    exact: int = 0  # perfect's decisions by the exact search
    heuristic: int = 0  # and by the heuristic


@dataclass
class Tally:
    seats: list[SeatTally]
    games_per_match: int
    matches: int = 0
    games: int = 0
    lost_games: list[tuple[int, int, int, tuple[str, ...]]] = field(default_factory=list)  # (match seed, game, loser, moves)


def play_match(levels: list[str], games: int, seed: int, tally: Tally) -> None:
    """One match: seat ``i`` is a bot of ``levels[i]``."""
    rng = random.Random(seed)
    table = QuartoTable(rng=random.Random(rng.getrandbits(64)), bots={0, 1}, games=games)
    bots: list[QuartoBot] = [make_quarto_bot(level, random.Random(rng.getrandbits(64))) for level in levels]
    now = 0.0
    events = table.start(now)
    decisions = 0
    while table.phase is not Phase.OVER:
        for event in events:
            if isinstance(event, q.GameEnded):
                _count_game(tally, event, seed)
        v = view(table, 0, now)
        seat = v.turn
        if seat is None:
            raise RuntimeError(f"match seed {seed}: phase {v.phase} with no seat to act")
        bot = bots[seat]
        for b in bots:
            b.observe(events)
        start = time.perf_counter_ns()
        actions = bot.decide(view(table, seat, now), now)
        tally.seats[seat].decision_ns.append(time.perf_counter_ns() - start)
        if isinstance(bot, PerfectQuartoBot):
            if bot.last_mode == "exact":
                tally.seats[seat].exact += 1
            elif bot.last_mode == "heuristic":
                tally.seats[seat].heuristic += 1
        decisions += 1
        if not actions or decisions > STUCK_DECISIONS:
            raise RuntimeError(f"match seed {seed}: seat {seat} ({bot.level}) did nothing on its turn")
        now += bot.think_time()
        events = []
        for action in actions:
            outcome = table.act(seat, action, now)
            events += outcome.events
            if outcome.refusal is not None:
                raise RuntimeError(f"match seed {seed}: {bot.level} bot's {action} refused: {outcome.refusal.message}")
    for event in events:
        if isinstance(event, q.GameEnded):
            _count_game(tally, event, seed)
    tally.matches += 1
    winners = table.winners
    for i, s in enumerate(tally.seats):
        if len(winners) == 2:
            s.match_draws += 1
        elif i in winners:
            s.match_wins += 1
        else:
            s.match_losses += 1


def _count_game(tally: Tally, event: q.GameEnded, seed: int) -> None:
    tally.games += 1
    if event.winner is None:
        for s in tally.seats:
            s.game_draws += 1
        return
    tally.seats[event.winner].game_wins += 1
    tally.seats[1 - event.winner].game_losses += 1
    tally.lost_games.append((seed, event.game, 1 - event.winner, event.moves))


def simulate(levels: list[str], matches: int, games: int, seed: int) -> tuple[Tally, float]:
    tally = Tally([SeatTally(level) for level in levels], games)
    seeds = random.Random(seed)
    start = time.perf_counter()
    for _ in range(matches):
        play_match(levels, games, seeds.getrandbits(64), tally)
    return tally, time.perf_counter() - start


def report(tally: Tally, wall: float, seed: int) -> dict[str, Any]:
    n, g = tally.matches, tally.games
    seats = []
    for i, s in enumerate(tally.seats):
        low, high = wilson(s.match_wins, n)
        times = sorted(s.decision_ns)
        seats.append(
            {
                "seat": i,
                "level": s.level,
                "match_wins": s.match_wins,
                "match_draws": s.match_draws,
                "match_losses": s.match_losses,
                "match_win_rate": s.match_wins / n if n else 0.0,
                "match_win_rate_ci95": [low, high],
                "game_wins": s.game_wins,
                "game_draws": s.game_draws,
                "game_losses": s.game_losses,
                "decisions": len(times),
                "exact_decisions": s.exact,
                "heuristic_decisions": s.heuristic,
                "median_decision_ms": statistics.median(times) / 1e6 if times else 0.0,
                "max_decision_ms": times[-1] / 1e6 if times else 0.0,
            }
        )
    return {
        "game": "quarto",
        "matches": n,
        "games_per_match": tally.games_per_match,
        "games": g,
        "seed": seed,
        "seats": seats,
        "perfect_lost_games": [
            {"match_seed": ms, "game": game, "loser": tally.seats[loser].level, "moves": list(moves)}
            for ms, game, loser, moves in tally.lost_games
            if tally.seats[loser].level != tally.seats[1 - loser].level and tally.seats[loser].level == "perfect"
        ],
        "performance": {"wall_seconds": wall},
    }


def render(result: dict[str, Any]) -> str:
    lines = [
        f"Quarto simulation: {result['matches']} matches of {result['games_per_match']} games, seed {result['seed']}",
        "",
        f"{'seat':<5} {'level':<8} {'matches won/drawn/lost':>23}  {'95% CI (won)':<16} {'games won/drawn/lost':>21}  "
        f"{'median decision':>15} {'slowest':>9}",
    ]
    for s in result["seats"]:
        low, high = s["match_win_rate_ci95"]
        lines.append(
            f"{s['seat']:<5} {s['level']:<8} {s['match_wins']:>9} / {s['match_draws']:>4} / {s['match_losses']:<4}  "
            f"[{low:>5.1%}, {high:>5.1%}]  {s['game_wins']:>7} / {s['game_draws']:>4} / {s['game_losses']:<4}  "
            f"{s['median_decision_ms']:>12.1f} ms {s['max_decision_ms']:>6.0f} ms"
        )
        if s["exact_decisions"] or s["heuristic_decisions"]:
            lines.append(f"      decisions by exact search {s['exact_decisions']}, by heuristic {s['heuristic_decisions']}")
    lines.append("")
    lines.append(f"Games lost by perfect: {len(result['perfect_lost_games'])}. Wall time {result['performance']['wall_seconds']:.1f} s.")
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--matches", type=int, default=100, help="matches to play (default 100)")
    parser.add_argument(
        "--teams", default="perfect,normal", help=f"the two seats' bot levels, seat 0 first (levels: {', '.join(LEVELS)})"
    )
    parser.add_argument("--games", type=int, default=q.DEFAULT_GAMES, help=f"games per match (default {q.DEFAULT_GAMES})")
    parser.add_argument("--seed", type=int, default=None, help="seed of the whole run (default: a random one, printed)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")


def run(args: argparse.Namespace) -> int:
    levels = [level.strip() for level in args.teams.split(",") if level.strip()]
    unknown = [level for level in levels if level not in LEVELS]
    if unknown:
        print(f"quatro-server sim: unknown Quarto bot level {unknown[0]!r} (levels: {', '.join(LEVELS)})", file=sys.stderr)
        return 2
    if len(levels) != q.SEATS:
        print(f"quatro-server sim: Quarto has two seats: give two levels, not {len(levels)}", file=sys.stderr)
        return 2
    if args.matches < 1 or not 1 <= args.games <= q.MAX_GAMES:
        print(f"quatro-server sim: --matches must be at least 1 and --games 1 to {q.MAX_GAMES}", file=sys.stderr)
        return 2
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    tally, wall = simulate(levels, args.matches, args.games, seed)
    result = report(tally, wall, seed)
    print(json.dumps(result) if args.json else render(result), flush=True)
    return 0


def main(argv: list[str]) -> int:
    """``quatro-server sim --game quarto ...``: the arguments after the game's name."""
    parser = argparse.ArgumentParser(
        prog="quatro-server sim --game quarto",
        description="Play whole Quarto matches between two bots on the pure engine and measure them.",
    )
    add_arguments(parser)
    return run(parser.parse_args(argv))
