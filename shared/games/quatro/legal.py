"""What each phase of a Quatro table accepts (``ACCEPTS``, the one table the engine consults), and the actions a
seat's view allows now (``legal``), for bots and clients.

``legal`` offers only what the view shows to be possible: the engine may still refuse an offered action because
of something the seat cannot see (another player took the card first, R10), never because of the phase, a
cooldown, the channel or the vote the view shows.
"""

from __future__ import annotations

from quatro_shared.games.quatro import actions as a
from quatro_shared.games.quatro.signs import SIGNS
from quatro_shared.games.quatro.views import Phase, SeatView

#: The actions each phase of a match in play takes from a player (R5–R18); any other is refused ``wrong_phase``, or
#: ``round_over`` for a round's action during the break (R17). Before the match and after it the engine takes no
#: action at all (``not_started``, ``match_over``) and never asks this table. Connect and Disconnect come from the
#: server in every phase.
ACCEPTS: dict[Phase, frozenset[type[a.Action]]] = {
    Phase.SIGNING: frozenset({a.Ready, a.PickSign}),
    Phase.ROUND: frozenset(
        {a.Swap, a.TakeChannel, a.ReleaseChannel, a.ChooseEmoji, a.Call, a.Counter, a.AskReshuffle, a.Vote}
    ),
    Phase.BREAK: frozenset({a.NextRound}),
}


def phase_refusal(phase: Phase, action: type[object]) -> a.Reason | None:
    """Why ``phase`` (signing, the round or the break) refuses an action of this class, by ``ACCEPTS`` (None: it
    takes it)."""
    if action in ACCEPTS[phase]:
        return None
    if phase is Phase.BREAK and action in ACCEPTS[Phase.ROUND]:
        return a.Reason.ROUND_OVER  # R17: too late for this round
    return a.Reason.WRONG_PHASE


def legal(view: SeatView) -> list[a.Action]:
    """The actions seat ``view.seat`` may take now, as far as its view tells."""
    me = view.seats[view.seat]
    if not me.connected:
        return []  # R19: a seat that is gone plays nothing until it comes back
    if view.phase is Phase.SIGNING:
        moves: list[a.Action] = [] if me.ready else [a.Ready()]
        if view.sign is None:
            moves.extend(a.PickSign(sign) for sign in SIGNS)  # R6: the team's first pick stands
        return moves
    if view.phase is Phase.BREAK:
        return [a.NextRound()] if view.host == view.seat else []  # R18: the host may start the next round early
    if view.phase is not Phase.ROUND:
        return []
    moves = [a.Call()]  # R13: a call is always possible, right or wrong
    teams = view.players // 2
    moves.extend(a.Counter(team) for team in range(teams) if team != view.team)  # R14
    if view.swap_wait_ms == 0:  # R9
        moves.extend(
            a.Swap(give, slot, take) for give in dict.fromkeys(view.hand) for slot, take in enumerate(view.center)
        )
    if view.channel_held:
        moves.extend(a.ChooseEmoji(sign) for sign in (None, *SIGNS))
        if view.channel_wait_ms == 0:  # R12
            moves.append(a.ReleaseChannel())
    elif view.channel_wait_ms == 0:
        moves.append(a.TakeChannel())
    vote = view.vote
    if vote is None:
        if not view.reshuffle_used and view.vote_wait_ms == 0:  # R15
            moves.append(a.AskReshuffle())
    elif view.seat in vote.voters and view.seat not in vote.yes:
        moves.extend((a.Vote(True), a.Vote(False)))
    return moves
