"""An example of a bot written outside Quatro: collect pairs into four, keep the partner convention, never guess.

Play it against the ladder (``examples/`` must be importable, hence PYTHONPATH):

    PYTHONPATH=examples quatro-server sim --teams pair_bot:PairBot,normal --matches 50
    PYTHONPATH=examples quatro-server sim --gauntlet pair_bot:PairBot --matches 50
    PYTHONPATH=examples quatro-server bot 127.0.0.1 --level pair_bot:PairBot

A bot sees what a player in its seat sees (H2): the events its seat is sent (``observe``) and the seat's view
(``decide``). Subclassing ``Bot`` gives it a person's pace (``reaction``, ``swap_ready``, ``call_ready``),
signing, ready and votes; ``play`` is the rest of the game.
"""

from __future__ import annotations

import random

from quatro_shared.games.quatro import actions as a
from quatro_shared.games.quatro import events as e
from quatro_shared.games.quatro.cards import is_four_of_a_kind, rank_counts, rank_of
from quatro_shared.games.quatro.views import SeatView

from quatro_server.games.quatro.bots import Bot


class PairBot(Bot):
    level = "pair_bot"
    pace = (0.4, 0.9)  # seconds: its reaction time (a look, a call after a pulse, a swap after the cooldown)

    def __init__(self, rng: random.Random | None = None) -> None:
        super().__init__(rng)
        self.pulses: dict[int, str] = {}  # each seat's latest pulse this deal

    def observe(self, events: list[e.Event]) -> None:
        for event in events:
            if isinstance(event, e.Pulse):
                self.pulses[event.seat] = event.sign
            elif isinstance(event, e.ChannelReleased):
                self.pulses.pop(event.seat, None)
            elif isinstance(event, (e.Dealt, e.SigningStarted)):
                self.pulses.clear()

    def play(self, view: SeatView, now: float) -> list[a.Action]:
        if view.sign is not None and self.pulses.get(view.partner) == view.sign:
            return [a.Call()] if self.call_ready(view, now) else []  # the convention: the partner holds four
        if is_four_of_a_kind(view.hand):
            if not view.channel_held:
                return [a.TakeChannel(), a.ChooseEmoji(view.sign)] if view.channel_wait_ms == 0 else []
            return [] if view.channel_sign == view.sign else [a.ChooseEmoji(view.sign)]
        if not self.swap_ready(view, now):
            return []
        counts = rank_counts(view.hand)
        best = max(counts, key=counts.__getitem__)  # the rank held most
        for slot, card in enumerate(view.center):
            if rank_of(card) == best:
                give = min(view.hand, key=lambda c: (counts[rank_of(c)], c))  # the loneliest card
                if rank_of(give) != best:
                    return [a.Swap(give, slot, card)]
        return []
