"""The truth of a Quatro round, told after its reveal in a replay (``quatro_server.replay.seat``).

During a round a seat sees its own hand, its team's sign and everyone's pulses, never which pulses meant anything.
The reveal (R17, ``RoundEnded``) shows every hand and sign; read with the round's pulses, which the commentary has
counted from the whole record, it says who held four of a kind, and for each seat whose pulses showed its team's
real sign and whose were decoys (any other emoji, R12).

It speaks as the table does, for the truth shows beside the table: players by name (or "seat 3", seats counted
from 1 as the waiting room counts them), cards drawn as the table draws them (``Q♦``, ``quatro_shared.games.quatro.cards``) and
signs by their emoji (``quatro_shared.games.quatro.signs``). A terminal without Unicode spells those out as its table does
(``quatro_tui.words.plain``: ``QD``, ``fox``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from quatro_shared import wording
from quatro_shared.games.quatro import cards, seating, signs
from quatro_shared.games.quatro import events as e

from quatro_server.games.quatro.engine import Emit


def team_letter(team: int) -> str:
    """A team as the screens name it: A, B, C, D."""
    return chr(ord("A") + team)


class QuatroCommentary:
    """Counts each round's pulses, and after the reveal says what they were."""

    def __init__(self, names: Sequence[str | None]) -> None:
        self.names = list(names)
        self.players = len(self.names)
        self.pulses: dict[int, list[str]] = {}

    def who(self, seat: int) -> str:
        return wording.person(seat, self.names[seat] if seat < len(self.names) else None)

    def note(self, table: Any, emits: Sequence[Emit]) -> list[str] | None:
        said: list[str] | None = None
        truth: list[str] | None = None
        for emit in emits:
            event = emit.event
            if isinstance(event, e.SigningStarted):
                self.pulses = {}
                said = []  # a new round: last round's truth is done with
            elif isinstance(event, e.Pulse):
                self.pulses.setdefault(event.seat, []).append(event.sign)
            elif isinstance(event, e.RoundEnded):
                truth = self.truth(event)
        return said if truth is None else truth  # a reveal is never lost to the next round told with it

    def truth(self, ended: e.RoundEnded) -> list[str]:
        lines = [f"The truth of round {ended.round}"]
        if ended.fours:
            for seat in ended.fours:
                lines.append(f"{self.who(seat)} held four: {' '.join(map(cards.display, ended.hands[seat]))}")
        else:
            lines.append("nobody held four of a kind")
        shown_signs = ", ".join(
            f"team {team_letter(team)} {signs.display(sign) if sign else '-'}" for team, sign in enumerate(ended.signs)
        )
        lines.append(f"signs: {shown_signs}")
        for seat in range(self.players):
            team = seating.team_of(seat, self.players)
            shown = self.pulses.get(seat, [])
            real = sum(sign == ended.signs[team] for sign in shown)
            decoys = sorted({sign for sign in shown if sign != ended.signs[team]})
            if not shown:
                lines.append(f"{self.who(seat)}: no pulse")
                continue
            parts = []
            if real:
                parts.append(f"{real} real sign{'s' if real > 1 else ''}")
            if decoys:
                count = len(shown) - real
                parts.append(f"{count} decoy{'s' if count > 1 else ''} ({' '.join(map(signs.display, decoys))})")
            lines.append(f"{self.who(seat)}: {', '.join(parts)}")
        return lines
