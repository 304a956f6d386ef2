"""Ratings: where a player stands, updated from each finished match's places.

Plackett-Luce, as ``openskill`` implements it (Weng and Lin's Bayesian approximation, the model behind Board Game
Arena-like team ratings): a rating is a belief, a mean ``mu`` and an uncertainty ``sigma``; a team is the sum of its
players; a match ranks any number of teams at once (two to four teams of a team game, two seats of a duel), ties included. What
a leaderboard shows is the rating one can be fairly sure of, ``mu - 3 sigma`` (``shown``), so that a newcomer with one
lucky win does not top the board.

A person who sits in more than one seat of one side of a match (a bot level at both seats of a team, a player in
two) is rated from each of those seats as if they were different players, and keeps the mean of what the seats would
give them. A person on more than one side played against themselves: the records keep nothing of that match for them
(``quatro_server.records.store.against_themselves``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from openskill.models import PlackettLuce as PlackettLuceModel

#: A new person's rating (openskill's defaults: mu 25, sigma 25/3).
MU = 25.0
SIGMA = 25.0 / 3.0


@dataclass(frozen=True, slots=True)
class Rating:
    mu: float = MU
    sigma: float = SIGMA

    @property
    def shown(self) -> float:
        """The rating a leaderboard shows and ranks by: ``mu - 3 sigma``, zero for a newcomer."""
        return self.mu - 3 * self.sigma


@cache
def _model() -> PlackettLuceModel:
    # Loaded with the first rated match: a server that never rates one never pays for the import.
    from openskill.models import PlackettLuce

    return PlackettLuce(mu=MU, sigma=SIGMA)


def rate(teams: Sequence[Sequence[Rating]], places: Sequence[int]) -> list[list[Rating]]:
    """The ratings after a match: ``teams[t]`` are the ratings of team t's players, ``places[t]`` its place (1 first;
    equal places are ties). Returns the new ratings in the same shape."""
    model = _model()
    given = [[model.create_rating([r.mu, r.sigma]) for r in team] for team in teams]
    result = model.rate(given, ranks=[float(place) for place in places])
    return [[Rating(float(r.mu), float(r.sigma)) for r in team] for team in result]


def merged(ratings: Sequence[Rating]) -> Rating:
    """One person's rating from what each of their seats gave them: the mean."""
    n = len(ratings)
    return Rating(sum(r.mu for r in ratings) / n, sum(r.sigma for r in ratings) / n)
