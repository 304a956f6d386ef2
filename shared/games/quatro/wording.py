"""Why Quatro's rules refused an action, in the words both sides say.

The server sends these words as a ``refused`` reply's ``message``; the client words the same refusal the same
way, with the card drawn as its screen draws cards (``Q♥`` or ``QH``). A reason this module does not know
(a lobby reason, or one from a newer server) keeps the server's message.
"""

from __future__ import annotations

from quatro_shared.games.quatro.actions import Reason
from quatro_shared.wording import seconds

#: The words for each reason a rule refuses an action (R6-R18), where the reason's name alone would not do.
REFUSAL_WORDS: dict[str, str] = {
    Reason.TAKEN: "too slow — that card was taken",
    Reason.COOLDOWN: "cooling down",
    Reason.ROUND_OVER: "the round is over",
    Reason.VOTE_PENDING: "a vote is already running",
    Reason.RESHUFFLE_USED: "this round's reshuffle is spent",
    Reason.VOTE_COOLDOWN: "too soon after the last vote",
    Reason.NOT_OPPONENT: "counter an opposing team",
    Reason.TEAM_REQUIRED: "name the team you counter",
    Reason.SIGN_SET: "your team's sign is already chosen",
    Reason.NOT_IN_HAND: "that card is not in your hand",
    Reason.CHANNEL_NOT_HELD: "take your channel first",
    Reason.CHANNEL_HELD: "you already hold your channel",
    Reason.NOT_HOST: "only the host can do that",
}

#: Actions whose cooldown is the swap's (R9); every other cooldown is the channel's (R12).
_SWAP_KINDS = frozenset({"swap"})


def refusal(reason: str, wait: float | None = None, *, action: str | None = None, card: str | None = None) -> str:
    """Why an action was refused, in a few words ("too slow — Q♥ was taken", "swap cooling down — 1.2s left").

    ``wait`` is the seconds left where the rules know it; ``action`` the refused action's kind and ``card`` the
    center card it wanted (as the caller draws it) make the words exact where they matter.
    """
    if reason == Reason.TAKEN and card is not None:
        text = f"too slow — {card} was taken"  # R10: someone was faster
    elif reason == Reason.COOLDOWN and action is not None:
        text = f"{'swap' if action in _SWAP_KINDS else 'channel'} cooling down"  # R9, R12
    else:
        text = REFUSAL_WORDS.get(reason) or str(reason).replace("_", " ")
    if wait is not None:
        text += f" — {seconds(wait)} left"
    return text
