"""A seat's state built from what changed (protocol 2): ``apply(view, events, clock, own) -> view``.

A pure function, no I/O and no clock. The server sends a full ``SeatView`` only in a snapshot; every other
update carries the events the seat may see, the table's countdowns (``Clock``) and the seat's own cooldowns
(``OwnTimers``). Applying them to the seat's last view gives the view the server would have built at the same
instant: every field the events change is changed here by the rules' own effects, and every countdown is taken
from the update. ``without_countdowns`` drops the fields that run with time, for comparisons between instants.
"""

from __future__ import annotations

from dataclasses import replace

from quatro_shared import events as e
from quatro_shared.events import Event
from quatro_shared.views import Clock, OwnTimers, Phase, RoundSummary, SeatState, SeatView, VoteState

#: What an update leaves out when the seat's cooldowns are both free.
NO_WAIT = OwnTimers(0, 0)


class ApplyError(Exception):
    """An event that cannot follow the state it is applied to: the state is out of step (resync)."""


def apply(view: SeatView, events: tuple[Event, ...] | list[Event], clock: Clock | None, own: OwnTimers | None) -> SeatView:
    """``view`` after ``events``, with the countdowns of ``clock`` and ``own`` (``own`` None: both free).

    Raises ``ApplyError`` when an event does not fit the state (a card not in hand, a seat out of range)."""
    try:
        for event in events:
            view = _step(view, event)
    except (ValueError, IndexError, KeyError) as exc:
        raise ApplyError(f"{type(exc).__name__}: {exc}") from None
    if clock is not None:
        view = with_clock(view, clock, own or NO_WAIT)
    return view


def with_clock(view: SeatView, clock: Clock, own: OwnTimers) -> SeatView:
    """``view`` with the countdowns of one instant."""
    if len(clock.next_pulse_ms) != view.players or len(clock.last_pulse_ms) != view.players:
        raise ApplyError(f"a clock for {len(clock.next_pulse_ms)} seats at a table of {view.players}")
    seats = tuple(
        replace(s, next_pulse_ms=clock.next_pulse_ms[i], last_pulse_ms=clock.last_pulse_ms[i])
        for i, s in enumerate(view.seats)
    )
    vote = view.vote
    if vote is not None and clock.vote_ms is not None:
        vote = replace(vote, remaining_ms=clock.vote_ms)
    return replace(
        view,
        seats=seats,
        vote=vote,
        phase_ms=clock.phase_ms,
        vote_wait_ms=clock.vote_wait_ms,
        swap_wait_ms=own.swap_wait_ms,
        channel_wait_ms=own.channel_wait_ms,
    )


def without_countdowns(view: SeatView) -> SeatView:
    """``view`` with every field that runs with time set to 0 or None: what two views of different instants share."""
    seats = tuple(replace(s, next_pulse_ms=None, last_pulse_ms=None) for s in view.seats)
    vote = None if view.vote is None else replace(view.vote, remaining_ms=0)
    return replace(view, seats=seats, vote=vote, phase_ms=None, swap_wait_ms=0, channel_wait_ms=0, vote_wait_ms=0)


def _seat(view: SeatView, seat: int, **changes: object) -> tuple[SeatState, ...]:
    seats = list(view.seats)
    seats[seat] = replace(seats[seat], **changes)  # type: ignore[arg-type]
    return tuple(seats)


def _step(view: SeatView, event: Event) -> SeatView:
    """One event's effect on what the seat sees (the engine's rules, seen from the seat)."""
    me = view.seat
    if isinstance(event, e.Swapped):
        center = list(view.center)
        center[event.slot] = event.put_down
        hand = view.hand
        if event.seat == me:
            cards = list(hand)
            cards[cards.index(event.put_down)] = event.taken
            hand = tuple(cards)
        return replace(view, center=tuple(center), hand=hand)
    if isinstance(event, e.Pulse):
        return replace(view, seats=_seat(view, event.seat, last_pulse=event.sign))
    if isinstance(event, (e.ChannelTaken, e.ChannelReleased)):
        held = isinstance(event, e.ChannelTaken)
        view = replace(view, seats=_seat(view, event.seat, channel_held=held))
        if event.seat == me:
            view = replace(view, channel_held=held, channel_sign=None)
        return view
    if isinstance(event, e.EmojiChosen):
        return replace(view, channel_sign=event.sign) if event.seat == me else view
    if isinstance(event, e.PlayerReady):
        return replace(view, seats=_seat(view, event.seat, ready=True))
    if isinstance(event, e.SignChosen):
        return replace(view, sign=event.sign) if event.team == view.team else view
    if isinstance(event, e.Dealt):
        return replace(view, center=event.center)
    if isinstance(event, e.HandDealt):
        return replace(view, hand=event.hand) if event.seat == me else view
    if isinstance(event, e.VoteStarted):
        return replace(view, vote=VoteState(event.seat, event.voters, (), 0))
    if isinstance(event, e.VoteCast):
        if view.vote is None:
            raise ValueError("a vote cast with no vote running")
        if not event.yes:
            return view
        return replace(view, vote=replace(view.vote, yes=tuple(sorted({*view.vote.yes, event.seat}))))
    if isinstance(event, e.VoteEnded):
        return replace(view, vote=None, reshuffle_used=view.reshuffle_used or event.passed)
    if isinstance(event, e.SigningStarted):
        seats = tuple(
            replace(s, ready=s.bot, channel_held=False, last_pulse=None, last_pulse_ms=None, next_pulse_ms=None)
            for s in view.seats
        )
        return replace(
            view,
            phase=Phase.SIGNING,
            round=event.round,
            seats=seats,
            hand=(),
            center=(),
            sign=None,
            channel_held=False,
            channel_sign=None,
            summary=None,
        )
    if isinstance(event, e.RoundOpened):
        return replace(view, phase=Phase.ROUND, round=event.round, vote=None, reshuffle_used=False)
    if isinstance(event, e.RoundEnded):
        summary = RoundSummary(
            event.round,
            event.outcome,
            event.by,
            event.accused,
            event.right,
            event.scorers,
            event.hands,
            event.center,
            event.signs,
            event.fours,
        )
        seats = tuple(replace(s, channel_held=False) for s in view.seats)
        return replace(
            view, summary=summary, scores=event.scores, seats=seats, channel_held=False, channel_sign=None, vote=None
        )
    if isinstance(event, e.BreakStarted):
        return replace(view, phase=Phase.BREAK)
    if isinstance(event, e.MatchOver):
        return replace(view, phase=Phase.OVER, winners=event.winners, scores=event.scores)
    if isinstance(event, e.MatchStarted):
        return replace(view, target_score=event.target_score)
    if isinstance(event, (e.SeatConnected, e.SeatDisconnected)):
        return replace(view, seats=_seat(view, event.seat, connected=isinstance(event, e.SeatConnected)))
    if isinstance(event, e.HostChanged):
        return replace(view, host=event.seat)
    return view  # an event that changes nothing the seat sees
