"""How the client words Quatro: its cards and signs (in emoji or in ASCII), its events in the feed, a round's outcome, a
refused swap's card, and its symbols' ASCII stand-ins. What every game shares (seats, teams, waits) is
``quatro_tui.words``'."""

from __future__ import annotations

from collections.abc import Callable

from quatro_shared.games.quatro import cards, signs, wording
from quatro_shared.games.quatro import events as e
from quatro_shared.games.quatro.actions import Swap
from quatro_shared.games.quatro.signs import Sign
from quatro_shared.messages import Refused, Reply, RequestBody

from quatro_tui import words

#: Quatro's symbols beyond ASCII and their stand-ins (``quatro_tui.words.plain``): the suits' letters, the signs' names.
ASCII_STAND_INS: dict[str, str] = {symbol: letter for letter, symbol in cards.SUIT_SYMBOLS.items()} | {
    emoji: name for name, emoji in signs.EMOJI.items()
}


def refusal(request: RequestBody, reply: Reply, ascii_only: bool) -> str:
    """A refused request in words: a rule's refusal in the server's words (``quatro_shared.games.quatro.wording``),
    a swap's with the card it asked for drawn as this screen draws cards ("too slow — Q♥ was taken"); anything
    else in the platform's (``quatro_tui.words.refusal``)."""
    if not isinstance(reply, Refused) or str(reply.reason) not in wording.REFUSAL_WORDS:
        return words.refusal(request, reply)
    take = request.take if isinstance(request, Swap) else None
    return wording.refusal(
        str(reply.reason),
        reply.wait_ms / 1000 if reply.wait_ms is not None else None,
        action=getattr(request, "kind", None),
        card=card(take, ascii_only) if take is not None else None,
    )


#: How the partner's pulse of the team's sign is marked, in the feed and on the partner's seat.
YOUR_SIGN = "YOUR SIGN"


def card(value: str, ascii_only: bool) -> str:
    return cards.display(value, ascii_only)


def sign(value: Sign | None, ascii_only: bool, named: bool = False) -> str:
    """An emoji (with its name when ``named``), or its ASCII name."""
    if value is None:
        return "-"
    if ascii_only:
        return value
    return f"{signs.EMOJI[value]} {value}" if named else signs.EMOJI[value]


def teams_text(teams: tuple[int, ...] | list[int]) -> str:
    letters = [words.team_letter(t) for t in teams]
    if not letters:
        return "nobody"
    if len(letters) == 1:
        return f"team {letters[0]}"
    return "teams " + ", ".join(letters[:-1]) + " and " + letters[-1]


def outcome(
    kind: str,
    by: int | None,
    accused: int | None,
    right: bool | None,
    scorers: tuple[int, ...],
    name: Callable[[int], str],
) -> str:
    """How a round ended, in one line (R13, R14, R18)."""
    if kind == "draw" or by is None:
        return "Nobody spoke in time: a draw, no points."
    verdict = "right" if right else "wrong"
    scored = f"{teams_text(scorers)} {'scores' if len(scorers) == 1 else 'score'}"
    if kind == "call":
        return f"{name(by)} called Quatro! — {verdict}: {scored}."
    return f"{name(by)} countered team {words.team_letter(accused or 0)} — {verdict}: {scored}."


#: The feed's first line of a match (a lesson says its own in its place).
MATCH_STARTS = "The match starts: "


def event(ev: e.Event, name: Callable[[int], str], me: int, ascii_only: bool) -> str | None:
    """One feed line for a public event, or None for events the screen shows elsewhere."""

    def c(value: str) -> str:
        return card(value, ascii_only)

    if isinstance(ev, e.MatchStarted):
        return f"{MATCH_STARTS}first team to {ev.target_score} points wins."
    if isinstance(ev, e.SigningStarted):
        return f"Round {ev.round}: pick your team's sign."
    if isinstance(ev, e.SignChosen):
        who = "drawn by lot" if ev.seat is None else f"picked by {name(ev.seat)}"
        return f"Your team's sign: {sign(ev.sign, ascii_only, named=True)} ({who})."
    if isinstance(ev, e.RoundOpened):
        return f"Round {ev.round} opens: swap!"
    if isinstance(ev, e.Dealt):
        if ev.reshuffle:
            return "Reshuffled: a fresh deal for everyone."
        if ev.redeals:
            return f"A hand held three of a rank: redealt ({ev.redeals}×)."
        return None
    if isinstance(ev, e.Swapped):
        return f"{name(ev.seat)} put down {c(ev.put_down)}, took {c(ev.taken)}."
    if isinstance(ev, e.ChannelTaken):
        return f"{name(ev.seat)} took the channel."
    if isinstance(ev, e.ChannelReleased):
        return f"{name(ev.seat)} released the channel."
    if isinstance(ev, e.VoteStarted):
        asks = "ask" if ev.seat == me else "asks"
        if me in ev.voters:
            return f"{name(ev.seat)} {asks} for a reshuffle: y / n?"
        return f"{name(ev.seat)} {asks} for a reshuffle."
    if isinstance(ev, e.VoteCast):
        return f"{name(ev.seat)} {'vote' if ev.seat == me else 'votes'} {'yes' if ev.yes else 'no'}."
    if isinstance(ev, e.VoteEnded):
        return {
            "agreed": "Reshuffle agreed.",
            "refused": "Reshuffle refused.",
            "timeout": "Reshuffle vote timed out: no.",
            "voter_left": "A voter left: no reshuffle.",
            "round_over": "The round ended before the vote did.",
        }.get(ev.outcome, f"Vote over: {ev.outcome}.")
    if isinstance(ev, e.RoundEnded):
        return outcome(ev.outcome, ev.by, ev.accused, ev.right, ev.scorers, name)
    if isinstance(ev, e.MatchOver):
        return f"{teams_text(ev.winners)} {'wins' if len(ev.winners) == 1 else 'win'} the match!"
    if isinstance(ev, e.SeatConnected):
        return None if ev.seat == me else f"{name(ev.seat)} is back."  # one's own return: the app says it once
    if isinstance(ev, e.SeatDisconnected):
        return f"{name(ev.seat)} dropped out."
    if isinstance(ev, e.HostChanged):
        if ev.seat is None:
            return None
        return "You host now." if ev.seat == me else f"{name(ev.seat)} hosts now."
    return None  # ready marks, hands, own emoji choice, pulses: drawn on the seats themselves
