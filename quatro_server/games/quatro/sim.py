"""Quatro's part of the bot simulator (``quatro_server.tools.sim``): teams, scripted players, rounds and the gauntlet.

``quatro-server sim --players 4 --matches 200 --teams hard,random --seed 1 [--json]``;
``quatro-server sim --gauntlet normal --players 4 --matches 300 [--json]`` plays a level against every scripted
exploiter (``quatro_server.games.quatro.exploiters``). A team may be a bot from outside the project: ``--teams mybots:MyBot,hard``,
or two different players, seat ``t`` first, then its partner: ``--teams newcomer/easy,easy`` (the scripted newcomer
partnered with ``easy``, against two ``easy`` bots).

A side is a team (R1): its two seats' wins, points, calls and counters (right and wrong), and the reshuffles
it asked for; across the table, the rounds, how each ended and how long it lasted (virtual seconds).
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from quatro_shared.games.quatro import events as e
from quatro_shared.games.quatro.cards import PLAYER_COUNTS
from quatro_shared.games.quatro.seating import team_count, team_of
from quatro_shared.levels import LEVELS

from quatro_server.game import AnyGame
from quatro_server.games.quatro.bots import THINK_TIME, Bot, load_bot_class, make_bot
from quatro_server.games.quatro.engine import Emit
from quatro_server.games.quatro.exploiters import EXPLOITERS, SCRIPTED, is_exploiter, is_scripted, make_scripted
from quatro_server.games.quatro.game import QUATRO
from quatro_server.rules import is_outside_bot
from quatro_server.tables.room import Room
from quatro_server.tools.sim import Lineup, SideTally, Simulation, Tally, wilson
from quatro_server.tools.sim import simulate as simulate_lineup

#: The field of levels a team list is filled from when ``--teams`` is not given: a mixed table.
DEFAULT_FIELD = ("hard", "normal", "random")
#: Between the two players of a team given as a pair: ``newcomer/easy`` (seat ``t``, then its partner ``t + n/2``).
PAIR = "/"


@dataclass
class TeamTally(SideTally):
    """One team's results over all matches."""

    calls_right: int = 0
    calls_wrong: int = 0
    counters_right: int = 0
    counters_wrong: int = 0
    reshuffles: int = 0
    #: Calls by the team's first and second player (a pair ``A/B``: A in seat t, B its partner): right, wrong.
    calls_by_player: list[list[int]] = field(default_factory=lambda: [[0, 0], [0, 0]])


@dataclass
class QuatroTally(Tally):
    rounds: int = 0
    draws: int = 0
    round_seconds: float = 0.0
    opened_at: float = 0.0  # when the current round opened (virtual seconds)
    vote_by: int = 0  # who asked for the running reshuffle vote

    @property
    def teams(self) -> list[TeamTally]:
        return [side for side in self.sides if isinstance(side, TeamTally)]


class QuatroSimulation(Simulation):
    side_word = "team"

    def __init__(self, game: AnyGame = QUATRO) -> None:
        super().__init__(game)

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--players", type=int, default=4, choices=PLAYER_COUNTS, help="seats at the table (default 4)"
        )
        parser.add_argument(
            "--gauntlet",
            default=None,
            metavar="LEVEL",
            help="play LEVEL (or module:Class) against every exploiter of the gauntlet and print its win rate against each",
        )
        parser.add_argument(
            "--exploiters",
            default=None,
            metavar="NAMES",
            help=f"with --gauntlet: only these exploiters, comma-separated (default: all of {', '.join(EXPLOITERS)})",
        )

    def teams_help(self) -> str:
        return (
            f"one bot per team, team 0 first: e.g. hard,random (levels: {', '.join(LEVELS)}; an exploiter of the "
            f"gauntlet; {', '.join(SCRIPTED)}; or an outside bot, module:Class; default: a mixed field of hard, normal, "
            "random); two players make a team as A/B (seat t, then its partner): newcomer/easy,easy"
        )

    def lineup(self, args: argparse.Namespace) -> Lineup:
        if args.gauntlet is not None:
            if args.teams is not None:
                raise ValueError("--gauntlet picks the teams: leave out --teams")
            check_player(args.gauntlet)
        if args.exploiters is not None:
            if args.gauntlet is None:
                raise ValueError("--exploiters goes with --gauntlet")
            for name in exploiter_names(args.exploiters):
                if not is_exploiter(name):
                    raise ValueError(f"unknown exploiter {name!r} (exploiters: {', '.join(EXPLOITERS)})")
        return lineup(args.players, levels_for(args.players, args.teams))

    def run(self, args: argparse.Namespace, lineup: Lineup, seed: int) -> dict[str, Any] | None:
        if args.gauntlet is None:
            return None
        names = None if args.exploiters is None else exploiter_names(args.exploiters)
        return gauntlet(args.gauntlet, args.players, args.matches, seed, names)

    def render_run(self, result: dict[str, Any], seed: int) -> str:
        return render_gauntlet(result, seed)

    def side_of(self, seat: int, seats: int) -> int:
        return team_of(seat, seats)

    def player(self, name: str, rng: random.Random, lineup: Lineup) -> Bot:
        return make_player(name, rng, lineup.options.get("pace"))

    def side(self, name: str) -> TeamTally:
        return TeamTally(name)

    def tally(self, lineup: Lineup) -> QuatroTally:
        return QuatroTally(lineup, [self.side(name) for name in lineup.sides])

    def batch(self, tally: Tally, room: Room, emits: Sequence[Emit], now: float) -> None:
        assert isinstance(tally, QuatroTally)
        for emit in emits:
            event = emit.event
            if isinstance(event, e.RoundOpened):
                tally.opened_at = now
            elif isinstance(event, e.VoteEnded) and event.passed:
                tally.teams[team_of(tally.vote_by, room.players)].reshuffles += 1
            elif isinstance(event, e.VoteStarted):
                tally.vote_by = event.seat
            elif isinstance(event, e.RoundEnded):
                self._count_round(tally, room, event, now)

    def _count_round(self, tally: QuatroTally, room: Room, event: e.RoundEnded, now: float) -> None:
        tally.rounds += 1
        tally.round_seconds += now - tally.opened_at
        if event.outcome == "draw":
            tally.draws += 1
            return
        assert event.by is not None  # a call or a counter is made by a seat
        team = tally.teams[team_of(event.by, room.players)]
        name = ("calls_" if event.outcome == "call" else "counters_") + ("right" if event.right else "wrong")
        setattr(team, name, getattr(team, name) + 1)
        if event.outcome == "call":
            team.calls_by_player[0 if event.by < room.players // 2 else 1][0 if event.right else 1] += 1

    def report(self, tally: Tally, result: dict[str, Any]) -> None:
        assert isinstance(tally, QuatroTally)
        result["players"] = tally.lineup.seats
        for entry, team in zip(result["teams"], tally.teams):
            for name in ("calls_right", "calls_wrong", "counters_right", "counters_wrong", "reshuffles"):
                entry[name] = getattr(team, name)
            entry["calls_by_player"] = [list(calls) for calls in team.calls_by_player]
        result["rounds"] = {
            "total": tally.rounds,
            **{
                name: sum(getattr(t, name) for t in tally.teams)
                for name in ("calls_right", "calls_wrong", "counters_right", "counters_wrong")
            },
            "draws": tally.draws,
            "reshuffles": sum(t.reshuffles for t in tally.teams),
            "mean_round_seconds": tally.round_seconds / tally.rounds if tally.rounds else 0.0,
            "unfinished_matches": tally.unfinished,
        }

    def render(self, result: dict[str, Any]) -> list[str]:
        r = result["rounds"]
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
        ]
        return lines


def lineup(players: int, levels: list[str], pace: tuple[float, float] | None = None) -> Lineup:
    """Team ``t`` played by ``levels[t]`` (one name, or a pair ``A/B``); scripted players react at ``pace``."""
    seats = [seat_player(levels[team_of(seat, players)], seat, players) for seat in range(players)]
    return Lineup(QUATRO, players, list(levels), seats, options={"pace": pace})


def simulate(
    players: int, levels: list[str], matches: int, seed: int, pace: tuple[float, float] | None = None
) -> tuple[QuatroTally, float]:
    """Play ``matches`` matches, team ``t`` played by ``levels[t]``; return the tally and the wall-clock seconds."""
    tally, wall = simulate_lineup(QuatroSimulation(), lineup(players, levels, pace), matches, seed)
    assert isinstance(tally, QuatroTally)
    return tally, wall


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
            f"unknown bot level {name!r} (levels: {', '.join(LEVELS)}; exploiters: {', '.join(EXPLOITERS)}; "
            f"scripted: {', '.join(SCRIPTED)}; or an outside bot, module:Class)"
        )


def exploiter_names(arg: str) -> list[str]:
    return [name.strip() for name in arg.split(",") if name.strip()]


def gauntlet(level: str, players: int, matches: int, seed: int, exploiters: list[str] | None = None) -> dict[str, Any]:
    """``level`` (team 0) against every exploiter of the gauntlet (every other team): win rates with 95% intervals."""
    rows = []
    pace = THINK_TIME.get(level, THINK_TIME["hard"])  # the exploiters react as fast as the level: habits alone differ
    for name in exploiters if exploiters is not None else list(EXPLOITERS):
        levels = [level] + [name] * (team_count(players) - 1)
        tally, _ = simulate(players, levels, matches, seed, pace)
        wins = tally.sides[0].wins
        low, high = wilson(wins, tally.matches)
        rows.append(
            {"exploiter": name, "matches": tally.matches, "win_rate": wins / tally.matches, "low": low, "high": high}
        )
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
