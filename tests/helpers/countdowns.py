"""Two views of one seat held against each other, countdowns to within a slack (protocol 3).

Between the updates that carry them, a client runs its countdowns on from the last ones to each update's ``at``;
the server takes them afresh. Both are whole milliseconds: the clock's rounding and the two ``at``s' may add up to
2 ms, the default slack.
"""

from __future__ import annotations

from quatro_shared.games.quatro.apply import without_countdowns
from quatro_shared.games.quatro.views import SeatView


def assert_same_view(state: SeatView, truth: SeatView, slack_ms: int = 2) -> None:
    """Every field equal, and every countdown within ``slack_ms`` (a pulse beat modulo the interval: 0 and a whole
    interval are the same beat)."""
    assert without_countdowns(state) == without_countdowns(truth), (state, truth)
    pairs = [
        (state.phase_ms, truth.phase_ms),
        (state.swap_wait_ms, truth.swap_wait_ms),
        (state.channel_wait_ms, truth.channel_wait_ms),
        (state.vote_wait_ms, truth.vote_wait_ms),
        (
            None if state.vote is None else state.vote.remaining_ms,
            None if truth.vote is None else truth.vote.remaining_ms,
        ),
    ]
    pairs += [(mine.last_pulse_ms, real.last_pulse_ms) for mine, real in zip(state.seats, truth.seats)]
    for got, want in pairs:
        assert (got is None) == (want is None) and (got is None or abs(got - want) <= slack_ms), (
            got,
            want,
            state,
            truth,
        )
    beat = truth.pulse_interval_ms
    for mine, real in zip(state.seats, truth.seats):
        got, want = mine.next_pulse_ms, real.next_pulse_ms
        assert (got is None) == (want is None), (mine, real)
        if got is not None and want is not None:
            assert min((got - want) % beat, (want - got) % beat) <= slack_ms, (mine, real)
