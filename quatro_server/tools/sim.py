"""The bot simulator: whole matches between bots, of any game the server hosts, headless on a virtual clock.

Each match is a real ``Room`` (the server's own table: engine, views, event filter, bot driving) of the game
(``quatro_server.games.GAMES``), with a bot in every seat and no connection. Instead of sleeping, the simulator
jumps the clock straight to the room's next wake-up (``room.tick(room.next_wake())``), so a three-minute round
costs milliseconds and the bots run through exactly the code path they run in the server. Same seed, same
matches, same results.

The simulator knows no game: it asks the game's ``Simulation`` (its subclass for a game that has one, found
through ``quatro_server.tools.simulators``) who sits where, what to count in the events of a match, and how to report it. Every game
gets, from this module alone: each side's wins (a side is a team, or a seat) with a 95% interval, its points,
its bots' decision times, and matches that never ended.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

from quatro_server.game import AnyGame, SeatBot
from quatro_server.tables.room import Room, Seat
from quatro_server.timing import STANDARD, Timing

#: z for a two-sided 95% confidence interval.
Z95 = 1.959963984540054
#: A match that has not ended after this many virtual hours is stopped (a draw-only table would run for ever:
#: real matches end within a few hours even when most rounds draw) and counted as unfinished.
MAX_MATCH_SECONDS = 24 * 3600.0
#: Wake-ups at one instant before a room counts as stuck (a deadline that never fires): a bug, reported, not a hang.
#: Every bot waking at once, each acting, is a handful; a thousand is a loop.
STUCK_TICKS = 1000


def _part(value: object) -> dict[str, object]:
    """A map of a report (``report`` built it: a part missing there is a bug, raised as ``TypeError``)."""
    if not isinstance(value, dict):
        raise TypeError(f"a report's part is a map, not {type(value).__name__}")
    return value


def _list(value: object) -> list[object]:
    """A list of a report (as ``_part``)."""
    if not isinstance(value, list):
        raise TypeError(f"a report's list is a list, not {type(value).__name__}")
    return value


def _parts(value: object) -> list[dict[str, object]]:
    """A list of maps of a report (as ``_part``)."""
    return [_part(item) for item in _list(value)]


def _number(value: object) -> float:
    """A figure of a report (as ``_part``)."""
    if not isinstance(value, (int, float)):
        raise TypeError(f"a report's figure is a number, not {type(value).__name__}")
    return value


def _whole(value: object) -> int:
    """A count of a report (as ``_part``)."""
    if not isinstance(value, int):
        raise TypeError(f"a report's count is a whole number, not {type(value).__name__}")
    return value


def wilson(wins: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion: sound near 0 and 1, where the normal approximation is not."""
    if n == 0:
        return (0.0, 1.0)
    p = wins / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z / denominator * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass
class Lineup:
    """Who plays: the game the rooms seat (``Game``; a simulation may give one with its own match length), the
    seat count, each side's name (``--teams``, side 0 first) and each seat's player (a bot level, or whatever
    name the game's simulation makes a bot of)."""

    game: AnyGame
    seats: int
    sides: list[str]
    players: list[str]
    timing_name: str = "standard"
    timing: Timing = STANDARD
    #: The game's own choices for its players (Quatro's gauntlet: the exploiters' pace). Any: each game reads its
    #: own choices back as the types it put in (quatro_server/games/*/sim.py).
    options: dict[str, Any] = field(default_factory=dict)


@dataclass
class SideTally:
    """One side's results over all matches. A game's simulation may count more in a subclass (``Simulation.side``)."""

    name: str
    wins: int = 0
    shared_wins: int = 0  # matches won together with another side (a tie at the top)
    points: int = 0
    #: Decision times of this side's bots when they acted (a move, not a look that found nothing to do).
    turn_ns: list[int] = field(default_factory=list)


@dataclass
class Tally:
    """Everything the simulator counts, across matches. A game's simulation may count more in a subclass
    (``Simulation.tally``)."""

    lineup: Lineup
    sides: list[SideTally]
    matches: int = 0
    unfinished: int = 0
    decision_ns: list[int] = field(default_factory=list)
    observe_ns: list[int] = field(default_factory=list)
    #: Decision times per player name (a level, an exploiter, an outside class): each one's cost per look.
    decision_ns_by_player: dict[str, list[int]] = field(default_factory=dict)
    #: The seed of the match being played (for a game's report of particular games).
    match_seed: int = 0


class Simulation:
    """A game's part of the simulator: who sits where, what to count, how to report it. This base plays any game
    whose sides are its seats and whose players are its bot levels (``Game.levels``); a game with teams, scripted
    players or figures of its own subclasses it (listed in ``quatro_server.tools.simulators``)."""

    #: What a side is called in the report (``teams``, ``seats`` in the JSON).
    side_word = "seat"

    def __init__(self, game: AnyGame) -> None:
        self.game = game

    # --- the command line -----------------------------------------------------------------------

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """The game's own options, beside ``--matches``, ``--seed``, ``--json`` and ``--teams``."""

    def teams_help(self) -> str:
        return f"one bot level per seat, seat 0 first (levels: {', '.join(self.game.levels)}; default: {self.game.default_level} everywhere)"

    def lineup(self, args: argparse.Namespace) -> Lineup:
        """Who plays, from the arguments; raises ``ValueError`` with the words to show."""
        seats = self.game.seats(None)
        if isinstance(seats, str):
            raise ValueError(seats)
        names = split_teams(args.teams) if args.teams is not None else [self.game.default_level] * seats
        if len(names) != seats:
            raise ValueError(f"a {self.game.title} table has {seats} seats: give {seats} levels, not {len(names)}")
        for name in names:
            self.check_player(name)
        return Lineup(self.game, seats, names, names)

    def check_player(self, name: str) -> None:
        if name not in self.game.levels:
            raise ValueError(f"unknown {self.game.title} bot level {name!r} (levels: {', '.join(self.game.levels)})")

    def run(self, args: argparse.Namespace, lineup: Lineup, seed: int) -> dict[str, object] | None:
        """Another kind of run than ``--matches`` matches of the lineup (Quatro's gauntlet), as its result; None: none."""
        return None

    def render_run(self, result: dict[str, object], seed: int) -> str:
        """``run``'s result as text."""
        return json.dumps(result, indent=2)

    # --- seats -----------------------------------------------------------------------------------

    def side_of(self, seat: int, seats: int) -> int:
        """The side seat ``seat`` plays for."""
        return seat

    def player(self, name: str, rng: random.Random, lineup: Lineup) -> SeatBot:
        """The bot of a seat's player named ``name``."""
        return self.game.make_bot(name, rng)

    # --- counting --------------------------------------------------------------------------------

    def side(self, name: str) -> SideTally:
        return SideTally(name)

    def tally(self, lineup: Lineup) -> Tally:
        return Tally(lineup, [self.side(name) for name in lineup.sides])

    def match_started(self, tally: Tally, room: Room) -> None:
        """A match is about to start in ``room``."""

    def batch(self, tally: Tally, room: Room, emits: Sequence[Any], now: float) -> None:
        """One batch of the table's events (the engine's, before the room tells each seat its share)."""

    def decided(self, tally: Tally, side: int, bot: SeatBot, view: Any, actions: list[Any]) -> None:
        """A bot of ``side`` decided ``actions`` on ``view``."""

    def match_over(self, tally: Tally, room: Room) -> None:
        """The match in ``room`` has ended (or was stopped unfinished)."""

    # --- reporting -------------------------------------------------------------------------------

    def report(self, tally: Tally, result: dict[str, object]) -> None:
        """Add the game's own figures to the generic ``result`` (and to each side's entry)."""

    def render(self, result: dict[str, object]) -> list[str]:
        """The report's heading and its table of sides, as lines of text; the simulator adds the decision times."""
        n = result["matches"]
        word = self.side_word
        sides = _parts(result[word + "s"])
        width = max([7] + [len(str(s["level"])) for s in sides])
        lines = [
            f"{self.game.title} simulation: {n} matches, {result['players']} seats, {result['timing']} timing, seed {result['seed']}",
            "",
            f"{word:<5} {'level':<{width}} {'won/shared/lost':>17}  {'95% CI (won)':<16} {'points/match':>12}",
        ]
        for s in sides:
            low, high = (_number(bound) for bound in _list(s["win_rate_ci95"]))
            lines.append(
                f"{s[word]:<5} {s['level']:<{width}} {_whole(s['wins']) - _whole(s['shared_wins']):>7} / {s['shared_wins']:>3} / {s['losses']:<3}  "
                f"[{low:>5.1%}, {high:>5.1%}]  {s['points_per_match']:>12.2f}"
            )
        return lines


def split_teams(teams: str) -> list[str]:
    """``--teams`` as a list of names, side 0 first: ``"perfect, normal"`` -> ``["perfect", "normal"]``."""
    return [name.strip() for name in teams.split(",") if name.strip()]


class _Stopwatch:
    """Wraps a bot to time its decisions (and its reading of events); the room drives it like any other bot."""

    def __init__(self, bot: SeatBot, side: int, name: str, simulation: Simulation, tally: Tally) -> None:
        self.bot = bot
        self.level = bot.level
        self.side, self.simulation, self.tally = side, simulation, tally
        self.times = tally.decision_ns_by_player.setdefault(name, [])

    def think_time(self) -> float:
        return self.bot.think_time()

    def observe(self, events: list[Any]) -> None:
        start = time.perf_counter_ns()
        self.bot.observe(events)
        self.tally.observe_ns.append(time.perf_counter_ns() - start)

    def decide(self, view: Any, now: float) -> list[Any]:
        start = time.perf_counter_ns()
        actions = list(self.bot.decide(view, now))
        spent = time.perf_counter_ns() - start
        self.times.append(spent)
        if actions:
            self.tally.sides[self.side].turn_ns.append(spent)
        self.simulation.decided(self.tally, self.side, self.bot, view, actions)
        return actions


class _SimRoom(Room):
    """A room that also shows every batch of its table's events to the game's simulation."""

    simulation: Simulation
    sim_tally: Tally

    def publish(self, emits: list[Any], now: float, snapshot_for: int | None = None) -> None:
        self.simulation.batch(self.sim_tally, self, emits, now)
        super().publish(emits, now, snapshot_for)


def play_match(simulation: Simulation, lineup: Lineup, seed: int, tally: Tally) -> None:
    """One whole match of ``lineup`` on a virtual clock, in a real room, counted into ``tally``."""
    rng = random.Random(seed)
    seats = lineup.seats
    room = _SimRoom(
        id=1,
        players=seats,
        timing_name=lineup.timing_name,
        timing=lineup.timing,
        password=None,
        rng=random.Random(rng.getrandbits(64)),
        seats=[Seat() for _ in range(seats)],
        game=lineup.game,
    )
    room.simulation, room.sim_tally = simulation, tally
    tally.match_seed = seed
    for seat in range(seats):
        name = lineup.players[seat]
        bot = simulation.player(name, random.Random(rng.getrandbits(64)), lineup)
        side = simulation.side_of(seat, seats)
        room.sit(seat, None, f"{name}-{seat}", bot=_Stopwatch(bot, side, name, simulation, tally))
    simulation.match_started(tally, room)
    room.start(0.0)
    last, repeats = -1.0, 0
    while (wake := room.next_wake()) is not None and wake < MAX_MATCH_SECONDS:
        repeats = repeats + 1 if wake <= last else 0
        if repeats > STUCK_TICKS:
            raise RuntimeError(f"match seed {seed}: the room keeps asking to wake at {wake:.3f} s and nothing happens")
        last = wake
        room.tick(wake)
    table = room.table
    assert table is not None
    tally.matches += 1
    winners: tuple[int, ...] = tuple(table.winners)
    if not winners:
        tally.unfinished += 1
    for side, score in enumerate(table.scores):
        tally.sides[side].points += score
    for side in winners:
        tally.sides[side].wins += 1
        if len(winners) > 1:
            tally.sides[side].shared_wins += 1
    simulation.match_over(tally, room)


def simulate(simulation: Simulation, lineup: Lineup, matches: int, seed: int) -> tuple[Tally, float]:
    """Play ``matches`` matches of ``lineup``; return the tally and the wall-clock seconds they took."""
    tally = simulation.tally(lineup)
    seeds = random.Random(seed)
    start = time.perf_counter()
    for _ in range(matches):
        play_match(simulation, lineup, seeds.getrandbits(64), tally)
    for times in tally.decision_ns_by_player.values():
        tally.decision_ns.extend(times)
    return tally, time.perf_counter() - start


def _ms(ns: list[int], at: float) -> float:
    """The quantile ``at`` of sorted nanoseconds, in milliseconds (0 for none)."""
    return ns[min(len(ns) - 1, int(len(ns) * at))] / 1e6 if ns else 0.0


def report(simulation: Simulation, tally: Tally, wall: float, seed: int) -> dict[str, object]:
    """The results as one JSON-ready object. ``performance`` is the only part that varies between runs."""
    n = tally.matches
    word = simulation.side_word
    sides, by_side = [], []
    for i, side in enumerate(tally.sides):
        low, high = wilson(side.wins, n)
        turns = sorted(side.turn_ns)
        sides.append(
            {
                word: i,
                "level": side.name,
                "wins": side.wins,
                "shared_wins": side.shared_wins,
                "losses": n - side.wins,
                "win_rate": side.wins / n if n else 0.0,
                "win_rate_ci95": [low, high],
                "points": side.points,
                "points_per_match": side.points / n if n else 0.0,
            }
        )
        by_side.append(
            {
                "decisions": len(turns),
                "median_decision_ms": statistics.median(turns) / 1e6 if turns else 0.0,
                "max_decision_ms": turns[-1] / 1e6 if turns else 0.0,
            }
        )
    times = sorted(tally.decision_ns)
    observed = sorted(tally.observe_ns)
    by_level = {}
    for name, player_times in tally.decision_ns_by_player.items():
        ordered = sorted(player_times)
        by_level[name] = {
            "decisions": len(ordered),
            "median_decision_ms": statistics.median(ordered) / 1e6 if ordered else 0.0,
            "p99_decision_ms": _ms(ordered, 0.99),
        }
    result: dict[str, object] = {
        "game": simulation.game.name,
        "matches": n,
        "players": tally.lineup.seats,  # not "seats": a game whose sides are seats lists them under that key
        "seed": seed,
        "timing": tally.lineup.timing_name,
        word + "s": sides,
        "unfinished_matches": tally.unfinished,
        "performance": {
            "wall_seconds": wall,
            "decisions": len(times),
            "decisions_per_second": len(times) / wall if wall > 0 else 0.0,
            "median_decision_ms": statistics.median(times) / 1e6 if times else 0.0,
            "p99_decision_ms": _ms(times, 0.99),
            "observed_batches": len(observed),
            "median_observe_ms": statistics.median(observed) / 1e6 if observed else 0.0,
            "p99_observe_ms": _ms(observed, 0.99),
            "by_level": by_level,
            # Per side, the decisions that acted (a move, not a look that found nothing to do).
            "by_" + word: by_side,
        },
    }
    simulation.report(tally, result)
    return result


def _took(ms: float) -> str:
    """A decision's time for people: microseconds below 10 ms, milliseconds above."""
    return f"{ms * 1000:.0f} µs" if ms < 10 else f"{ms:,.0f} ms"


def render(simulation: Simulation, result: dict[str, object]) -> str:
    """The results as a few lines of text for a terminal: the game's table, then how long the bots took."""
    perf = _part(result["performance"])
    lines = simulation.render(result)
    lines += [
        f"Decisions: {perf['decisions']} in {perf['wall_seconds']:.1f} s of wall time "
        f"({perf['decisions_per_second']:,.0f} per second); median decision {_took(_number(perf['median_decision_ms']))}, "
        f"99th percentile {_took(_number(perf['p99_decision_ms']))}. Reading events: {perf['observed_batches']} batches, "
        f"median {_took(_number(perf['median_observe_ms']))}, 99th percentile {_took(_number(perf['p99_observe_ms']))}.",
    ]
    for name, times in _part(perf["by_level"]).items():
        looks = _part(times)
        lines.append(
            f"  {name}: {looks['decisions']} decisions, median {_took(_number(looks['median_decision_ms']))}, "
            f"99th percentile {_took(_number(looks['p99_decision_ms']))} per look"
        )
    if result["unfinished_matches"]:
        lines.append(
            f"Unfinished matches (stopped after {MAX_MATCH_SECONDS / 3600:.0f} virtual hours): {result['unfinished_matches']}"
        )
    return "\n".join(lines)
