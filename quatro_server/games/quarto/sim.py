"""Quarto's part of the bot simulator (``quatro_server.tools.sim``): games within matches, and how ``perfect`` decided.

``quatro-server sim --game quarto --matches 200 --teams perfect,normal [--games 4] [--seed 1] [--json]``

A side is a seat. Beside each seat's matches won, drawn (both seats win, Q6) and lost, it counts the games
(won, drawn, lost), how many of ``perfect``'s turns the exact search decided and how many the heuristic, and
every game ``perfect`` lost to another level, with its moves in Q7 notation, to replay. The table has no move
clock (the standard timing): the virtual clock moves by the bots' think times only.
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from quatro_shared.games.quarto import contract as q

from quatro_server.game import SeatBot
from quatro_server.games.quarto import engine as quarto_engine
from quatro_server.games.quarto.game import QUARTO, QuartoGame
from quatro_server.journal import Opening
from quatro_server.tables.room import Room
from quatro_server.timing import Timing
from quatro_server.tools.sim import Lineup, SideTally, Simulation, Tally, split_teams, wilson
from quatro_server.tools.sim import simulate as simulate_lineup


class QuartoMatch(QuartoGame):
    """Quarto with matches of ``games`` games (``--games``): the rooms the simulator seats."""

    def __init__(self, games: int) -> None:
        self.games = games

    def new_table(self, opening: Opening, timing: Timing, rng: random.Random) -> quarto_engine.QuartoTable:
        return quarto_engine.QuartoTable(timing=timing, rng=opening.rng(rng), bots=opening.bots, games=self.games)


@dataclass
class SeatTally(SideTally):
    game_wins: int = 0
    game_draws: int = 0
    game_losses: int = 0
    exact: int = 0  # perfect's turns decided by the exact search
    heuristic: int = 0  # and by the heuristic


@dataclass
class QuartoTally(Tally):
    games: int = 0
    #: (match seed, game, losing seat, the game's moves) of every game won.
    lost_games: list[tuple[int, int, int, tuple[str, ...]]] = field(default_factory=list)

    @property
    def seats(self) -> list[SeatTally]:
        return [side for side in self.sides if isinstance(side, SeatTally)]


class QuartoSimulation(Simulation):
    def __init__(self, game: QuartoGame = QUARTO) -> None:
        super().__init__(game)

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--games", type=int, default=q.DEFAULT_GAMES, help=f"games per match (default {q.DEFAULT_GAMES})"
        )

    def teams_help(self) -> str:
        return f"the two seats' bot levels, seat 0 first (levels: {', '.join(q.LEVELS)}; default perfect,normal)"

    def lineup(self, args: argparse.Namespace) -> Lineup:
        names = split_teams(args.teams if args.teams is not None else "perfect,normal")
        for name in names:
            self.check_player(name)
        if len(names) != q.SEATS:
            raise ValueError(f"Quarto has two seats: give two levels, not {len(names)}")
        if not 1 <= args.games <= q.MAX_GAMES:
            raise ValueError(f"--games must be 1 to {q.MAX_GAMES}")
        return Lineup(QuartoMatch(args.games), q.SEATS, names, names, options={"games": args.games})

    def tally(self, lineup: Lineup) -> QuartoTally:
        return QuartoTally(lineup, [SeatTally(name) for name in lineup.sides])

    def batch(self, tally: Tally, room: Room, emits: Sequence[Any], now: float) -> None:
        assert isinstance(tally, QuartoTally)
        for event in emits:
            if not isinstance(event, q.GameEnded):
                continue
            tally.games += 1
            if event.winner is None:
                for seat in tally.seats:
                    seat.game_draws += 1
                continue
            tally.seats[event.winner].game_wins += 1
            tally.seats[1 - event.winner].game_losses += 1
            tally.lost_games.append((tally.match_seed, event.game, 1 - event.winner, event.moves))

    def decided(self, tally: Tally, side: int, bot: SeatBot, view: Any, actions: list[Any]) -> None:
        """A turn of ``perfect``: by the exact search, or by the heuristic (``PerfectQuartoBot.last_mode``)."""
        mode = getattr(bot, "last_mode", "")
        if not actions or view.phase is not q.Phase.PLAYING or view.turn != view.seat:
            return
        seat = tally.sides[side]
        assert isinstance(seat, SeatTally)
        if mode == "exact":
            seat.exact += 1
        elif mode == "heuristic":
            seat.heuristic += 1

    def report(self, tally: Tally, result: dict[str, Any]) -> None:
        assert isinstance(tally, QuartoTally)
        n = tally.matches
        result["games_per_match"] = tally.lineup.options["games"]
        result["games"] = tally.games
        for entry, seat in zip(result["seats"], tally.seats):
            won = seat.wins - seat.shared_wins  # a drawn match is both seats' (Q6), and no one's win
            entry.update(
                match_wins=won,
                match_draws=seat.shared_wins,
                match_losses=n - seat.wins,
                match_win_rate=won / n if n else 0.0,
                match_win_rate_ci95=list(wilson(won, n)),
                game_wins=seat.game_wins,
                game_draws=seat.game_draws,
                game_losses=seat.game_losses,
                exact_decisions=seat.exact,
                heuristic_decisions=seat.heuristic,
            )
        seats = tally.seats
        result["perfect_lost_games"] = [
            {"match_seed": ms, "game": game, "loser": seats[loser].name, "moves": list(moves)}
            for ms, game, loser, moves in tally.lost_games
            if seats[loser].name == "perfect" and seats[1 - loser].name != "perfect"
        ]

    def render(self, result: dict[str, Any]) -> list[str]:
        lines = [
            f"Quarto simulation: {result['matches']} matches of {result['games_per_match']} games, seed {result['seed']}",
            "",
            f"{'seat':<5} {'level':<8} {'matches won/drawn/lost':>23}  {'95% CI (won)':<16} {'games won/drawn/lost':>21}  "
            f"{'median turn':>11} {'slowest':>9}",
        ]
        for s, times in zip(result["seats"], result["performance"]["by_seat"]):
            low, high = s["match_win_rate_ci95"]
            lines.append(
                f"{s['seat']:<5} {s['level']:<8} {s['match_wins']:>9} / {s['match_draws']:>4} / {s['match_losses']:<4}  "
                f"[{low:>5.1%}, {high:>5.1%}]  {s['game_wins']:>7} / {s['game_draws']:>4} / {s['game_losses']:<4}  "
                f"{times['median_decision_ms']:>8.1f} ms {times['max_decision_ms']:>6.0f} ms"
            )
            if s["exact_decisions"] or s["heuristic_decisions"]:
                lines.append(
                    f"      turns by exact search {s['exact_decisions']}, by heuristic {s['heuristic_decisions']}"
                )
        lines += ["", f"Games: {result['games']}. Games lost by perfect: {len(result['perfect_lost_games'])}."]
        return lines


def simulate(levels: list[str], matches: int, games: int, seed: int) -> tuple[QuartoTally, float]:
    """Play ``matches`` matches of ``games`` games, seat ``i`` played by ``levels[i]``; the tally and the wall seconds."""
    lineup = Lineup(QuartoMatch(games), q.SEATS, list(levels), list(levels), options={"games": games})
    tally, wall = simulate_lineup(QuartoSimulation(), lineup, matches, seed)
    assert isinstance(tally, QuartoTally)
    return tally, wall
