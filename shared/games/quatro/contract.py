"""Quatro, the card game, as the contract describes it (``quatro_shared.game.GameContract``).

Its vocabulary lives in its own modules: the actions (``quatro_shared.games.quatro.actions``), the events
(``quatro_shared.games.quatro.events``), the seat's view (``quatro_shared.games.quatro.views``), the update (``quatro_shared.games.quatro.update.Update``,
protocol 3's deltas), what each phase accepts and the moves a view allows (``quatro_shared.games.quatro.legal``), the bot levels
(``quatro_shared.levels``) and how a client builds a seat's state from its updates (``quatro_shared.games.quatro.apply``). This
module gathers them into one ``CONTRACT``.
"""

from __future__ import annotations

from quatro_shared import protocol as p
from quatro_shared.framing import Message
from quatro_shared.game import FollowError, GameContract, WireCheck
from quatro_shared.games.quatro import actions as a
from quatro_shared.games.quatro import events as e
from quatro_shared.games.quatro.apply import ApplyError, Tracker, apply, without_countdowns
from quatro_shared.games.quatro.cards import PLAYER_COUNTS, is_card
from quatro_shared.games.quatro.legal import ACCEPTS, legal
from quatro_shared.games.quatro.signs import is_sign
from quatro_shared.games.quatro.update import Update
from quatro_shared.games.quatro.views import Clock, OwnTimers, Phase, RoundSummary, SeatState, SeatView, VoteState
from quatro_shared.levels import DEFAULT_LEVEL, LEVELS
from quatro_shared.tables import Connect, Disconnect


class Follower:
    """A Quatro seat across its updates: a snapshot's view, then each delta applied with its countdowns
    (``quatro_shared.games.quatro.apply.Tracker``; protocol 3 sends a full view only in a snapshot)."""

    __slots__ = ("view", "_tracker")

    def __init__(self, snapshot: Update) -> None:
        if snapshot.view is None:
            raise FollowError("a snapshot without a view")
        self.view: SeatView = snapshot.view
        self._tracker = Tracker(snapshot.view, snapshot.at)

    def advance(self, update: Update) -> SeatView:
        try:
            self.view = self._tracker.update(update.events, update.clock, update.own, update.at)
        except ApplyError as exc:
            raise FollowError(f"an update that does not follow the seat's state ({exc})") from None
        return self.view

    def agrees(self, snapshot: Update) -> bool:
        if snapshot.view is None:
            return False
        try:
            built = apply(self.view, snapshot.events, None, None)
        except ApplyError:
            return False
        return without_countdowns(built) == without_countdowns(snapshot.view)


def _quick_swap(frame: Message) -> a.Swap | None:
    """The hot request, checked as the general walk would (no other key, a card, an int, a card) without the walk;
    anything else about it, even a refusal, goes the general way."""
    if len(frame) == 5:
        give, slot, take = frame.get("give"), frame.get("slot"), frame.get("take")
        if type(slot) is int and is_card(give) and is_card(take):
            return a.Swap(give, slot, take)
    return None


def _event_classes() -> tuple[type[e.Event], ...]:
    """Every event declared in quatro_shared.games.quatro.events, in declaration order."""
    return tuple(
        obj
        for obj in vars(e).values()
        if isinstance(obj, type) and issubclass(obj, e.Event) and obj is not e.Event and obj.__module__ == e.__name__
    )


CONTRACT: GameContract[a.Action, e.Event, SeatView, Update] = GameContract(
    name=p.QUATRO,
    title="Quatro",
    seats=PLAYER_COUNTS,
    actions=a.PLAYER_ACTIONS,
    events=_event_classes(),
    view=SeatView,
    update=Update,
    accepts=ACCEPTS,
    legal=legal,
    levels=LEVELS,
    default_level=DEFAULT_LEVEL,
    follow=Follower,
    view_parts=(SeatView, SeatState, VoteState, RoundSummary, Clock, OwnTimers),
    view_kind="view",
    server_actions=(Connect, Disconnect),
    quick_requests={a.Swap.kind: _quick_swap},
    wire_names={
        "Card": WireCheck(is_card, 'a card such as "QH"'),
        "Sign": WireCheck(is_sign, 'a sign such as "pineapple"'),
        "Phase": Phase,
        "Reason": a.Reason,
        "SeatState": SeatState,
        "VoteState": VoteState,
        "RoundSummary": RoundSummary,
        "SeatView": SeatView,
        "Clock": Clock,
        "OwnTimers": OwnTimers,
    },
)
