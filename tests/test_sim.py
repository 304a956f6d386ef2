"""The bot simulator: a few real matches on a virtual clock, the same results for the same seed, a sound interval."""

from __future__ import annotations

import json

import pytest

from quatro_server import sim
from quatro_server.cli import main


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
    [("hard", "4", "give 2 levels"), ("hard,genius", "4", "unknown bot level 'genius'"), ("hard,normal", "6", "give 3")],
)
def test_a_wrong_team_list_is_a_clear_error(capsys, teams, players, complaint):
    assert main(["sim", "--teams", teams, "--players", players]) == 2
    assert complaint in capsys.readouterr().err


def test_the_default_field_is_mixed():
    assert sim.levels_for(4, None) == ["hard", "normal"]
    assert sim.levels_for(8, None) == ["hard", "normal", "random", "hard"]


def test_wilson_interval():
    low, high = sim.wilson(5, 10)
    assert low == pytest.approx(0.2366, abs=1e-4) and high == pytest.approx(0.7634, abs=1e-4)
    assert sim.wilson(10, 10)[1] == pytest.approx(1.0) and sim.wilson(10, 10)[0] == pytest.approx(0.7225, abs=1e-4)
    assert sim.wilson(0, 0) == (0.0, 1.0)
