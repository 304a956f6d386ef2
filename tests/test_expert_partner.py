"""Expert partners anyone: with a bot partner of another level, or an outside bot keeping the documented convention
(the team's sign on the channel means four), it reads the partner by that convention and makes no more wrong calls
than that partner's level makes partnered with itself. Only a partner that shows it keeps expert's own key (another
expert) is read by the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from quatro_server.games.quatro import bots
from quatro_server.games.quatro.sim import simulate

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
#: Matches a pairing plays, against a pair of ``hard``: enough for the old misreading to show (it made about one
#: wrong call in four matches beside ``hard``), few enough for the suite.
MATCHES = 40


@pytest.mark.slow
@pytest.mark.parametrize("level", ["easy", "normal", "hard", "pair_bot:PairBot"])
def test_expert_makes_no_more_wrong_calls_beside_any_partner_than_the_partner_s_level_beside_itself(
    level: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLES))  # the documented outside bot (examples/pair_bot.py)
    mixed, _ = simulate(4, [f"expert/{level}", "hard"], MATCHES, seed=11)
    alone, _ = simulate(4, [f"{level}/{level}", "hard"], MATCHES, seed=11)
    expert_calls, partner_calls = mixed.teams[0].calls_by_player
    own = alone.teams[0].calls_by_player
    assert expert_calls[1] <= max(own[0][1], own[1][1]), (level, expert_calls, own)
    assert expert_calls[0] + partner_calls[0] > 0, "the pair still scores by calls"


@pytest.mark.slow
def test_two_experts_find_their_key_and_only_they_do() -> None:
    """Two expert partners each learn, from the other's swaps, that it keeps the key (``KEY_PROOF``); beside ``hard``
    expert never does."""
    seen: dict[str, list[bool]] = {"expert": [], "hard": []}
    note = bots.ExpertBot._note

    def noting(self: bots.ExpertBot, view: bots.SeatView) -> None:
        note(self, view)
        seen[partner].append(self._paired)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(bots.ExpertBot, "_note", noting)
        for partner in ("expert", "hard"):
            simulate(4, [f"expert/{partner}", "hard"], 5, seed=3)
    assert any(seen["expert"]) and not any(seen["hard"])
