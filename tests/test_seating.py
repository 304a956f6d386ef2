"""R1, who sits with whom: written once, in quatro_shared.games.quatro.seating, and asked there by everything else."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from quatro_shared.games.quatro.cards import PLAYER_COUNTS
from quatro_shared.games.quatro.seating import opposing_teams, partner_of, team_count, team_of, team_seats

ROOT = Path(__file__).resolve().parent.parent
#: The rule as code re-derives it: ``seat % teams``, ``% self.teams``, ``% n_teams``.
SEATING_RULE = re.compile(r"% *(self\.)?teams|% *n_teams")


def test_r1_the_seating_rule_is_written_in_quatro_shared_seating_alone():
    found = sorted(
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for folder in ("quatro_server", "quatro_tui", "shared")
        for path in (ROOT / folder).rglob("*.py")
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if SEATING_RULE.search(line)
    )
    assert found, "the pattern no longer finds the rule where it is written: fix the test"
    elsewhere = [hit for hit in found if not hit.startswith("shared/games/quatro/seating.py:")]
    assert not elsewhere, "the seating rule (R1) re-derived outside quatro_shared.games.quatro.seating:\n" + "\n".join(
        elsewhere
    )


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_r1_partners_sit_across_and_every_team_has_two_seats(players: int) -> None:
    teams = team_count(players)
    assert teams == players // 2
    for seat in range(players):
        partner = partner_of(seat, players)
        assert partner != seat and partner_of(partner, players) == seat
        assert abs(partner - seat) == players // 2  # across the table
        assert team_of(partner, players) == team_of(seat, players)
        assert seat in team_seats(team_of(seat, players), players)
    assert sorted(s for t in range(teams) for s in team_seats(t, players)) == list(range(players))


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_r14_the_opposing_teams_are_every_other_team_from_the_next_one_round(players: int) -> None:
    teams = team_count(players)
    for team in range(teams):
        others = opposing_teams(team, players)
        assert sorted(others) == [t for t in range(teams) if t != team]
        assert others[0] == (team + 1) % teams
