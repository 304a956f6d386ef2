"""The bot simulator: whole matches between bot teams, headless on a virtual clock, with win rates and timings.

Each match is a real ``Room`` (the server's own table: engine, views, event filter, bot driving) with a bot
in every seat and no connection. Instead of sleeping, the simulator jumps the clock straight to the room's
next wake-up (``room.tick(room.next_wake())``), so a three-minute round costs milliseconds and the bots
run through exactly the code path they run in the server. Same seed, same matches, same results.

``quatro-server sim --players 4 --matches 200 --teams hard,random --seed 1 [--json]``;
``quatro-server sim --gauntlet normal --players 4 --matches 300 [--json]`` plays a level against every scripted
exploiter (``quatro_server.exploiters``). A team may be a bot from outside the project: ``--teams mybots:MyBot,hard``,
or two different players, seat ``t`` first, then its partner: ``--teams newcomer/easy,easy`` (the scripted newcomer
partnered with ``easy``, against two ``easy`` bots).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from quatro_shared import events as e
from quatro_shared.actions import Action
from quatro_shared.cards import PLAYER_COUNTS
from quatro_shared.levels import LEVELS
from quatro_shared.views import SeatView
from quatro_shared.seating import team_count, team_of

from quatro_server.bots import THINK_TIME, Bot, is_outside_bot, load_bot_class, make_bot
from quatro_server.engine import Emit
from quatro_server.exploiters import GAUNTLET, SCRIPTED, is_scripted, make_scripted
from quatro_server.tables.room import Room, Seat
from quatro_server.timing import STANDARD

#: z for a two-sided 95% confidence interval.
Z95 = 1.959963984540054
#: The field of levels a team list is filled from when ``--teams`` is not given: a mixed table.
DEFAULT_FIELD = ("hard", "normal", "random")
#: A match that has not ended after this many virtual hours is stopped (a draw-only table would run for ever:
#: at 5 points to win and at most 3 minutes a round, real matches end within a few hours even when most rounds draw).
MAX_MATCH_SECONDS = 24 * 3600.0
#: Wake-ups at one instant before a room counts as stuck (a deadline that never fires): a bug, reported, not a hang.
#: Every bot waking at once, each acting, is a handful; a thousand is a loop.
STUCK_TICKS = 1000
#: Between the two players of a team given as a pair: ``newcomer/easy`` (seat ``t``, then its partner ``t + n/2``).
PAIR = "/"


def wilson(wins: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion: sound near 0 and 1, where the normal approximation is not."""
    if n == 0:
        return (0.0, 1.0)
    p = wins / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z / denominator * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (max(0.0, centre - half), min(1.0, centre + half))


class _Stopwatch(Bot):
    """Wraps a bot to time its decisions (and its reading of events); the room drives it like any other bot."""

    def __init__(self, bot: Bot, times: list[int], observe_times: list[int]) -> None:
        self.bot = bot
        self.level = bot.level
        self.times = times
        self.observe_times = observe_times

    def think_time(self) -> float:
        return self.bot.think_time()

    def observe(self, events: list[e.Event]) -> None:
        start = time.perf_counter_ns()
        self.bot.observe(events)
        self.observe_times.append(time.perf_counter_ns() - start)

    def decide(self, view: SeatView, now: float) -> list[Action]:
        start = time.perf_counter_ns()
        actions = self.bot.decide(view, now)
        self.times.append(time.perf_counter_ns() - start)
        return actions


@dataclass
class TeamTally:
    """One team's results over all matches."""

    level: str
    wins: int = 0
    shared_wins: int = 0  # matches won together with another team (R20)
    points: int = 0
    calls_right: int = 0
    calls_wrong: int = 0
    counters_right: int = 0
    counters_wrong: int = 0
    reshuffles: int = 0


@dataclass
class Tally:
    """Everything the simulator counts, across matches."""

    players: int
    teams: list[TeamTally]
    matches: int = 0
    rounds: int = 0
    draws: int = 0
    round_seconds: float = 0.0
    unfinished: int = 0
    decision_ns: list[int] = field(default_factory=list)
    observe_ns: list[int] = field(default_factory=list)
    #: Decision times per player name (level, exploiter or outside class): each level's cost per look.
    decision_ns_by_level: dict[str, list[int]] = field(default_factory=dict)


class _SimRoom(Room):
    """A room that also reports every batch of events to the simulator's tally."""

    tally: Tally
    opened_at: float = 0.0  # when the current round opened (virtual seconds)
    vote_by: int = 0  # who asked for the running reshuffle vote

    def publish(self, emits: list[Emit], now: float, *args: Any, **kwargs: Any) -> None:
        for emit in emits:
            event = emit.event
            if isinstance(event, e.RoundOpened):
                self.opened_at = now
            elif isinstance(event, e.VoteEnded) and event.passed:
                self.tally.teams[team_of(self.vote_by, self.players)].reshuffles += 1
            elif isinstance(event, e.VoteStarted):
                self.vote_by = event.seat
            elif isinstance(event, e.RoundEnded):
                self._count_round(event, now)
        super().publish(emits, now, *args, **kwargs)

    def _count_round(self, event: e.RoundEnded, now: float) -> None:
        tally = self.tally
        tally.rounds += 1
        tally.round_seconds += now - self.opened_at
        if event.outcome == "draw":
            tally.draws += 1
            return
        assert event.by is not None  # a call or a counter is made by a seat
        team = tally.teams[team_of(event.by, self.players)]
        name = ("calls_" if event.outcome == "call" else "counters_") + ("right" if event.right else "wrong")
        setattr(team, name, getattr(team, name) + 1)


def play_match(players: int, levels: list[str], seed: int, tally: Tally, pace: tuple[float, float] | None = None) -> None:
    """One whole match on a virtual clock: team ``t`` is played by bots of ``levels[t]``; exploiters react at ``pace``."""
    rng = random.Random(seed)
    room = _SimRoom(
        id=1,
        players=players,
        timing_name="standard",
        timing=STANDARD,
        password=None,
        rng=random.Random(rng.getrandbits(64)),
        seats=[Seat() for _ in range(players)],
    )
    room.tally = tally
    for seat in range(players):
        level = seat_player(levels[team_of(seat, players)], seat, players)
        bot = make_player(level, random.Random(rng.getrandbits(64)), pace)
        times = tally.decision_ns_by_level.setdefault(level, [])
        room.sit(seat, None, f"{level}-{seat}", bot=_Stopwatch(bot, times, tally.observe_ns))
    room.start(0.0)
    last, repeats = -1.0, 0
    while (wake := room.next_wake()) is not None and wake < MAX_MATCH_SECONDS:
        repeats = repeats + 1 if wake <= last else 0
        if repeats > STUCK_TICKS:
            raise RuntimeError(f"match seed {seed}: the room keeps asking to wake at {wake:.3f} s and nothing happens")
        last = wake
        room.tick(wake)
    assert room.table is not None
    tally.matches += 1
    if not room.table.winners:
        tally.unfinished += 1
    for t, score in enumerate(room.table.scores):
        tally.teams[t].points += score
    for t in room.table.winners:
        tally.teams[t].wins += 1
        if len(room.table.winners) > 1:
            tally.teams[t].shared_wins += 1


def seat_player(team: str, seat: int, players: int) -> str:
    """The player of ``seat`` in a team named ``team``: one name for both seats, or a pair (``newcomer/easy``)."""
    names = team.split(PAIR)
    return names[0] if len(names) == 1 or seat < players // 2 else names[1]


def make_player(name: str, rng: random.Random, pace: tuple[float, float] | None = None) -> Bot:
    """A bot of a level, a scripted player (an exploiter of the gauntlet reacting at ``pace``, or the newcomer), or an
    outside bot (``module:Class``)."""
    if is_scripted(name):
        return make_scripted(name, rng, pace)
    return make_bot(name, rng)


def simulate(
    players: int, levels: list[str], matches: int, seed: int, pace: tuple[float, float] | None = None
) -> tuple[Tally, float]:
    """Play ``matches`` matches; return the tally and the wall-clock seconds they took."""
    tally = Tally(players, [TeamTally(level) for level in levels])
    seeds = random.Random(seed)
    start = time.perf_counter()
    for _ in range(matches):
        play_match(players, levels, seeds.getrandbits(64), tally, pace)
    for times in tally.decision_ns_by_level.values():
        tally.decision_ns.extend(times)
    return tally, time.perf_counter() - start


def report(tally: Tally, wall: float, seed: int) -> dict[str, Any]:
    """The results as one JSON-ready object. ``performance`` is the only part that varies between runs."""
    n = tally.matches
    teams = []
    for t, team in enumerate(tally.teams):
        low, high = wilson(team.wins, n)
        teams.append(
            {
                "team": t,
                "level": team.level,
                "wins": team.wins,
                "shared_wins": team.shared_wins,
                "win_rate": team.wins / n if n else 0.0,
                "win_rate_ci95": [low, high],
                "points": team.points,
                "points_per_match": team.points / n if n else 0.0,
                "calls_right": team.calls_right,
                "calls_wrong": team.calls_wrong,
                "counters_right": team.counters_right,
                "counters_wrong": team.counters_wrong,
                "reshuffles": team.reshuffles,
            }
        )
    times = sorted(tally.decision_ns)
    observed = sorted(tally.observe_ns)
    by_level = {}
    for level, level_times in tally.decision_ns_by_level.items():
        ordered = sorted(level_times)
        by_level[level] = {
            "decisions": len(ordered),
            "median_decision_ms": statistics.median(ordered) / 1e6 if ordered else 0.0,
            "p99_decision_ms": ordered[int(len(ordered) * 0.99)] / 1e6 if ordered else 0.0,
        }
    return {
        "players": tally.players,
        "matches": n,
        "seed": seed,
        "timing": "standard",
        "teams": teams,
        "rounds": {
            "total": tally.rounds,
            "calls_right": sum(t.calls_right for t in tally.teams),
            "calls_wrong": sum(t.calls_wrong for t in tally.teams),
            "counters_right": sum(t.counters_right for t in tally.teams),
            "counters_wrong": sum(t.counters_wrong for t in tally.teams),
            "draws": tally.draws,
            "reshuffles": sum(t.reshuffles for t in tally.teams),
            "mean_round_seconds": tally.round_seconds / tally.rounds if tally.rounds else 0.0,
            "unfinished_matches": tally.unfinished,
        },
        "performance": {
            "wall_seconds": wall,
            "decisions": len(times),
            "decisions_per_second": len(times) / wall if wall > 0 else 0.0,
            "median_decision_ms": statistics.median(times) / 1e6 if times else 0.0,
            "p99_decision_ms": times[int(len(times) * 0.99)] / 1e6 if times else 0.0,
            "observed_batches": len(observed),
            "median_observe_ms": statistics.median(observed) / 1e6 if observed else 0.0,
            "p99_observe_ms": observed[int(len(observed) * 0.99)] / 1e6 if observed else 0.0,
            "by_level": by_level,
        },
    }


def render(result: dict[str, Any]) -> str:
    """The results as a few lines of text for a terminal."""
    r, perf = result["rounds"], result["performance"]
    width = max([7] + [len(t["level"]) for t in result["teams"]])
    lines = [
        f"Quatro simulation: {result['matches']} matches, {result['players']} players, "
        f"{result['timing']} timing, seed {result['seed']}",
        "",
        f"{'team':<5} {'level':<{width}} {'wins':>5} {'win rate':>9}  {'95% CI':<16} {'points/match':>12}  "
        f"{'calls ok/wrong':>14} {'counters ok/wrong':>17} {'reshuffles':>10}",
    ]
    for t in result["teams"]:
        low, high = t["win_rate_ci95"]
        lines.append(
            f"{t['team']:<5} {t['level']:<{width}} {t['wins']:>5} {t['win_rate']:>8.1%}  "
            f"[{low:>5.1%}, {high:>5.1%}]  {t['points_per_match']:>12.2f}  "
            f"{t['calls_right']:>6} / {t['calls_wrong']:<5} {t['counters_right']:>8} / {t['counters_wrong']:<6} "
            f"{t['reshuffles']:>10}"
        )
    lines += [
        "",
        f"Rounds: {r['total']}, mean length {r['mean_round_seconds']:.1f} s (virtual). "
        f"Calls right {r['calls_right']}, wrong {r['calls_wrong']}; counters right {r['counters_right']}, "
        f"wrong {r['counters_wrong']}; draws {r['draws']}; reshuffles {r['reshuffles']}.",
        f"Decisions: {perf['decisions']} in {perf['wall_seconds']:.1f} s of wall time "
        f"({perf['decisions_per_second']:,.0f} per second); median decision {perf['median_decision_ms'] * 1000:.0f} µs, "
        f"99th percentile {perf['p99_decision_ms'] * 1000:.0f} µs. Reading events: {perf['observed_batches']} batches, "
        f"median {perf['median_observe_ms'] * 1000:.0f} µs, 99th percentile {perf['p99_observe_ms'] * 1000:.0f} µs.",
    ]
    for level, times in perf["by_level"].items():
        lines.append(
            f"  {level}: {times['decisions']} decisions, median {times['median_decision_ms'] * 1000:.0f} µs, "
            f"99th percentile {times['p99_decision_ms'] * 1000:.0f} µs per look"
        )
    if r["unfinished_matches"]:
        lines.append(f"Unfinished matches (stopped after {MAX_MATCH_SECONDS / 3600:.0f} virtual hours): {r['unfinished_matches']}")
    return "\n".join(lines)


def levels_for(players: int, teams_arg: str | None) -> list[str]:
    """One level per team, from ``--teams`` (``hard,random``) or the default mixed field. Raises ``ValueError``."""
    count = team_count(players)
    if teams_arg is None:
        return [DEFAULT_FIELD[t % len(DEFAULT_FIELD)] for t in range(count)]
    levels = [PAIR.join(name.strip() for name in team.split(PAIR)) for team in teams_arg.split(",") if team.strip()]
    for team in levels:
        names = team.split(PAIR)
        if len(names) > 2:
            raise ValueError(f"a team is two players: {team!r} names {len(names)}")
        for name in names:
            check_player(name)
    if len(levels) != count:
        raise ValueError(f"{players} players make {count} teams: give {count} levels, not {len(levels)}")
    return levels


def check_player(name: str) -> None:
    """Raise ``ValueError`` unless ``name`` is a level, an exploiter, or an outside bot that loads."""
    if is_outside_bot(name):
        load_bot_class(name)
    elif name not in LEVELS and not is_scripted(name):
        raise ValueError(
            f"unknown bot level {name!r} (levels: {', '.join(LEVELS)}; exploiters: {', '.join(GAUNTLET)}; "
            f"scripted: {', '.join(SCRIPTED)}; or an outside bot, module:Class)"
        )


def gauntlet(level: str, players: int, matches: int, seed: int, exploiters: list[str] | None = None) -> dict[str, Any]:
    """``level`` (team 0) against every exploiter of the gauntlet (every other team): win rates with 95% intervals."""
    rows = []
    pace = THINK_TIME.get(level, THINK_TIME["hard"])  # the exploiters react as fast as the level: habits alone differ
    for name in exploiters if exploiters is not None else list(GAUNTLET):
        levels = [level] + [name] * (team_count(players) - 1)
        tally, _ = simulate(players, levels, matches, seed, pace)
        wins = tally.teams[0].wins
        low, high = wilson(wins, tally.matches)
        rows.append({"exploiter": name, "matches": tally.matches, "win_rate": wins / tally.matches, "low": low, "high": high})
    return {"level": level, "players": players, "rows": rows}


def render_gauntlet(result: dict[str, Any], seed: int) -> str:
    lines = [
        f"Gauntlet of {result['level']}: {result['players']} players, seed {seed}; "
        f"{result['level']}'s win rate against each exploiter",
        "",
        f"{'exploiter':<24} {'matches':>7} {'win rate':>9}  95% CI",
    ]
    for row in result["rows"]:
        lines.append(
            f"{row['exploiter']:<24} {row['matches']:>7} {row['win_rate']:>8.1%}  [{row['low']:>5.1%}, {row['high']:>5.1%}]"
        )
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--players", type=int, default=4, choices=PLAYER_COUNTS, help="seats at the table (default 4)")
    parser.add_argument("--matches", type=int, default=100, help="matches to play (default 100)")
    parser.add_argument(
        "--teams",
        default=None,
        help=f"one bot per team, team 0 first: e.g. hard,random (levels: {', '.join(LEVELS)}; an exploiter of the "
        f"gauntlet; {', '.join(SCRIPTED)}; or an outside bot, module:Class; default: a mixed field of hard, normal, "
        "random); two players make a team as A/B (seat t, then its partner): newcomer/easy,easy",
    )
    parser.add_argument(
        "--gauntlet",
        default=None,
        metavar="LEVEL",
        help="play LEVEL (or module:Class) against every exploiter of the gauntlet and print its win rate against each",
    )
    parser.add_argument("--seed", type=int, default=None, help="seed of the whole run (default: a random one, printed)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")


def run(args: argparse.Namespace) -> int:
    try:
        if args.gauntlet is not None:
            if args.teams is not None:
                raise ValueError("--gauntlet picks the teams: leave out --teams")
            check_player(args.gauntlet)
        levels = levels_for(args.players, args.teams)
    except ValueError as exc:
        print(f"quatro-server sim: {exc}", file=sys.stderr)
        return 2
    if args.matches < 1:
        print("quatro-server sim: --matches must be at least 1", file=sys.stderr)
        return 2
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    if args.gauntlet is not None:
        result = gauntlet(args.gauntlet, args.players, args.matches, seed)
        print(json.dumps(result) if args.json else render_gauntlet(result, seed), flush=True)
        return 0
    tally, wall = simulate(args.players, levels, args.matches, seed)
    result = report(tally, wall, seed)
    print(json.dumps(result) if args.json else render(result), flush=True)
    return 0
