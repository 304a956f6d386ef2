"""The bot simulator: a few real matches of every game on a virtual clock, in real rooms, the same results for the
same seed, a sound interval."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from quatro_server.cli import main
from quatro_server.games import GAMES
from quatro_server.games.quarto.game import QUARTO
from quatro_server.games.quatro import sim as sim_quatro
from quatro_server.tables.room import Room
from quatro_server.tools import sim, simulators


def run_json(capsys, *args: str) -> dict:
    assert main(["sim", "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_few_matches_play_to_the_end_and_are_counted(capsys):
    result = run_json(capsys, "--matches", "3", "--teams", "hard,random", "--seed", "7")
    assert [t["level"] for t in result["teams"]] == ["hard", "random"]
    assert all(0.0 <= t["win_rate"] <= 1.0 for t in result["teams"])
    assert sum(t["wins"] for t in result["teams"]) >= 3  # every match has a winner (several when tied, R20)
    rounds = result["rounds"]
    assert rounds["unfinished_matches"] == 0 and rounds["total"] >= 3 * 5  # 5 points to win, at most one a round (4p)
    ended = rounds["calls_right"] + rounds["calls_wrong"] + rounds["counters_right"] + rounds["counters_wrong"]
    assert ended + rounds["draws"] == rounds["total"]
    assert max(t["points_per_match"] for t in result["teams"]) == 5.0
    assert result["performance"]["decisions"] > 0 and result["performance"]["median_decision_ms"] < 1.0


def test_the_same_seed_gives_the_same_results(capsys):
    args = ("--matches", "2", "--players", "6", "--teams", "hard,normal,random", "--seed", "11")
    first, second = run_json(capsys, *args), run_json(capsys, *args)
    first.pop("performance"), second.pop("performance")  # wall-clock timings: the one part that varies
    assert first == second
    other = run_json(capsys, "--matches", "2", "--players", "6", "--teams", "hard,normal,random", "--seed", "12")
    other.pop("performance")
    assert other != first


def test_eight_players_one_level_per_team_and_a_text_report(capsys):
    assert main(["sim", "--players", "8", "--matches", "1", "--teams", "hard,normal,normal,random", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "8 players" in out and "95% CI" in out and "median decision" in out
    assert [line.split()[1] for line in out.splitlines()[3:7]] == ["hard", "normal", "normal", "random"]


@pytest.mark.parametrize(
    "teams, players, complaint",
    [
        ("hard", "4", "give 2 levels"),
        ("hard,genius", "4", "unknown bot level 'genius'"),
        ("hard,normal", "6", "give 3"),
    ],
)
def test_a_wrong_team_list_is_a_clear_error(capsys, teams, players, complaint):
    assert main(["sim", "--teams", teams, "--players", players]) == 2
    assert complaint in capsys.readouterr().err


def test_the_default_field_is_mixed():
    assert sim_quatro.levels_for(4, None) == ["hard", "normal"]
    assert sim_quatro.levels_for(8, None) == ["hard", "normal", "random", "hard"]


def test_wilson_interval():
    low, high = sim.wilson(5, 10)
    assert low == pytest.approx(0.2366, abs=1e-4) and high == pytest.approx(0.7634, abs=1e-4)
    assert sim.wilson(10, 10)[1] == pytest.approx(1.0) and sim.wilson(10, 10)[0] == pytest.approx(0.7225, abs=1e-4)
    assert sim.wilson(0, 0) == (0.0, 1.0)


@pytest.mark.parametrize("name", list(GAMES))
def test_one_simulator_plays_every_game_through_a_real_room(name, monkeypatch):
    """The same code path for every game of the registry: each match a real ``Room`` of that game, played to its end
    by the room's own bot driving, counted by side."""
    rooms: list[Room] = []
    start = Room.start

    def recorded(room: Room, now: float) -> None:
        rooms.append(room)
        start(room, now)

    monkeypatch.setattr(Room, "start", recorded)
    game = GAMES[name]
    simulation = simulators.simulation_of(game)
    args = simulators.parser_for(game).parse_args(
        ["--game", name, "--teams", "random,random", "--matches", "3", "--seed", "4"]
    )
    tally, _ = sim.simulate(simulation, simulation.lineup(args), 3, seed=4)
    assert len(rooms) == 3 and all(room.game.name == name for room in rooms)
    assert all(room.table is not None and room.game.over(room.table) for room in rooms)
    assert tally.matches == 3 and tally.unfinished == 0 and sum(side.wins for side in tally.sides) >= 3
    result = sim.report(simulation, tally, 0.0, 4)
    assert result["game"] == name and len(result[simulation.side_word + "s"]) == 2
    assert all(times["decisions"] > 0 for times in result["performance"]["by_" + simulation.side_word])
    assert "simulation" in sim.render(simulation, result)


def test_a_game_with_no_simulation_of_its_own_is_simulated_seat_by_seat():
    """A game that says nothing of the simulator gets one: every seat a side, playing the game's bot levels."""
    simulation = sim.Simulation(QUARTO)
    args = simulators.parser_for(QUARTO).parse_args(["--teams", "normal,random", "--matches", "2"])
    lineup = simulation.lineup(args)
    assert lineup.sides == ["normal", "random"] and lineup.seats == 2
    tally, _ = sim.simulate(simulation, lineup, 2, seed=1)
    result = sim.report(simulation, tally, 0.0, 1)
    assert [s["level"] for s in result["seats"]] == ["normal", "random"] and result["matches"] == 2
    assert sum(s["wins"] for s in result["seats"]) >= 2
    assert "won/shared/lost" in sim.render(simulation, result)
    assert result["players"] == 2 and "2 matches, 2 seats," in sim.render(simulation, result)
    with pytest.raises(ValueError, match="unknown Quarto bot level 'genius'"):
        simulation.lineup(simulators.parser_for(QUARTO).parse_args(["--teams", "normal,genius"]))


def test_the_simulator_names_no_game():
    source = (Path(sim.__file__)).read_text()
    assert "quarto" not in source.lower() and "QUATRO" not in source
