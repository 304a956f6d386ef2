"""The simulator of every game, and the ``quatro-server sim`` command.

``quatro-server sim [--game NAME] [--matches N] [--teams A,B] [--seed S] [--json]`` and the game's own options
(``quatro-server sim --game NAME --help``). ``quatro_server.tools.sim`` plays the matches and knows no game; a game that
counts or seats more than every game does has a ``Simulation`` subclass of its own, listed here. A game not listed
is simulated seat by seat: every seat a side, playing one of its bot levels.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Callable

from quatro_server.game import AnyGame
from quatro_server.games import DEFAULT_GAME, GAMES
from quatro_server.games.quarto.game import QUARTO
from quatro_server.games.quarto.sim import QuartoSimulation
from quatro_server.games.quatro.game import QUATRO
from quatro_server.games.quatro.sim import QuatroSimulation
from quatro_server.tools.sim import Simulation, render, report, simulate

#: The games whose simulation has a part of its own, by name.
SIMULATIONS: dict[str, Callable[[], Simulation]] = {
    QUATRO.name: QuatroSimulation,
    QUARTO.name: QuartoSimulation,
}


def simulation_of(game: AnyGame) -> Simulation:
    """``game``'s simulation: its own subclass where it has one, else every seat a side."""
    own = SIMULATIONS.get(game.name)
    return Simulation(game) if own is None else own()


def game_named(name: str) -> AnyGame:
    game = GAMES.get(name)
    if game is None:
        raise ValueError(f"--game is {' or '.join(GAMES)}, not {name!r}")
    return game


def add_arguments(parser: argparse.ArgumentParser, game: AnyGame | None = None) -> None:
    """The simulator's options, and the options of ``game`` (the default game's when None)."""
    simulation = simulation_of(game or DEFAULT_GAME)
    parser.add_argument(
        "--game",
        default=DEFAULT_GAME.name,
        help=f"the game to simulate: {', '.join(GAMES)} (default {DEFAULT_GAME.name}); "
        "each has options of its own: quatro-server sim --game NAME --help",
    )
    parser.add_argument("--matches", type=int, default=100, help="matches to play (default 100)")
    parser.add_argument("--teams", default=None, help=simulation.teams_help())
    parser.add_argument("--seed", type=int, default=None, help="seed of the whole run (default: a random one, printed)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    simulation.add_arguments(parser)


def parser_for(game: AnyGame) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="quatro-server sim",
        description=f"Play whole {game.title} matches between bots on a virtual clock (no network, no waiting) "
        "and measure them.",
    )
    add_arguments(parser, game)
    return parser


def main(argv: list[str]) -> int:
    """``quatro-server sim ...``: the game is read first (``--game``), then the arguments with that game's options."""
    first = argparse.ArgumentParser(add_help=False)
    first.add_argument("--game", default=DEFAULT_GAME.name)
    known, _ = first.parse_known_args(argv)
    try:
        game = game_named(known.game)
    except ValueError as exc:
        print(f"quatro-server sim: {exc}", file=sys.stderr)
        return 2
    return run(parser_for(game).parse_args(argv))


def run(args: argparse.Namespace) -> int:
    try:
        simulation = simulation_of(game_named(args.game))
        lineup = simulation.lineup(args)
        if args.matches < 1:
            raise ValueError("--matches must be at least 1")
    except ValueError as exc:
        print(f"quatro-server sim: {exc}", file=sys.stderr)
        return 2
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    other = simulation.run(args, lineup, seed)
    if other is not None:
        print(json.dumps(other) if args.json else simulation.render_run(other, seed), flush=True)
        return 0
    tally, wall = simulate(simulation, lineup, args.matches, seed)
    result = report(simulation, tally, wall, seed)
    print(json.dumps(result) if args.json else render(simulation, result), flush=True)
    return 0
