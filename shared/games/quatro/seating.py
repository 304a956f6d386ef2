"""Who sits with whom (R1): the one place the seating rule is written.

Seats are numbered 0 to players-1 around the table. Partners sit across from each other, so with ``teams``
teams (half the players) seat ``s`` plays for team ``s % teams`` and its partner is ``s + teams`` (mod the
seat count). Every other module asks here rather than re-deriving it.
"""

from __future__ import annotations


def team_count(players: int) -> int:
    """Teams at a table of ``players`` (R1: teams of two)."""
    return players // 2


def team_of(seat: int, players: int) -> int:
    """The team of ``seat`` (R1)."""
    return seat % team_count(players)


def partner_of(seat: int, players: int) -> int:
    """The seat across from ``seat``: its partner (R1)."""
    return (seat + team_count(players)) % players


def team_seats(team: int, players: int) -> tuple[int, int]:
    """The two seats of ``team``, in seat order (R1)."""
    return (team, team + team_count(players))


def opposing_teams(team: int, players: int) -> tuple[int, ...]:
    """The teams opposing ``team``, in order round the table from the next one (R1, R14)."""
    teams = team_count(players)
    return tuple((team + step) % teams for step in range(1, teams))
