"""A seat's state built from what changed: ``apply(view, events, clock, own) -> view`` and ``Tracker``.

Pure code, no I/O and no clock. The server sends a full ``SeatView`` only in a snapshot; every other update carries
the events the seat may see, and, when a countdown changed otherwise than by time passing, the table's countdowns
(``Clock``) and the seat's own cooldowns (``OwnTimers``) at that instant (protocol 3). ``apply`` gives the view
after the events, with the countdowns it is handed. ``Tracker`` keeps a seat's state across updates: it holds each
countdown as the instant it runs to, in milliseconds on the server's clock (every update says when it was built:
``at``), so that an update without a clock has its countdowns run on from the last ones (a held channel's pulse
beat included) and is the view the server held for the seat when it built the update, to within the rounding of
milliseconds. ``without_countdowns`` drops the fields that run with time, for comparisons between instants.
"""

from __future__ import annotations

from dataclasses import replace

from quatro_shared.games.quatro import events as e
from quatro_shared.games.quatro.events import Event
from quatro_shared.games.quatro.views import Clock, OwnTimers, Phase, RoundSummary, SeatState, SeatView, VoteState

#: What an update leaves out when the seat's cooldowns are both free.
NO_WAIT = OwnTimers(0, 0)


class ApplyError(Exception):
    """An event that cannot follow the state it is applied to: the state is out of step (resync)."""


def apply(
    view: SeatView, events: tuple[Event, ...] | list[Event], clock: Clock | None, own: OwnTimers | None
) -> SeatView:
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


def _check_clock(view: SeatView, clock: Clock) -> None:
    if len(clock.next_pulse_ms) != view.players or len(clock.last_pulse_ms) != view.players:
        raise ApplyError(f"a clock for {len(clock.next_pulse_ms)} seats at a table of {view.players}")


def with_clock(view: SeatView, clock: Clock, own: OwnTimers) -> SeatView:
    """``view`` with the countdowns of one instant."""
    _check_clock(view, clock)
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
        # A new match (the first, or a rematch at the same seats): nothing of the last one carries over.
        return replace(
            view,
            target_score=event.target_score,
            scores=(0,) * len(view.scores),
            winners=(),
            summary=None,
            vote=None,
            reshuffle_used=False,
        )
    if isinstance(event, (e.SeatConnected, e.SeatDisconnected)):
        return replace(view, seats=_seat(view, event.seat, connected=isinstance(event, e.SeatConnected)))
    if isinstance(event, e.HostChanged):
        return replace(view, host=event.seat)
    return view  # an event that changes nothing the seat sees


# --- countdowns that run on between clocks (protocol 3) ---------------------------------------------------


def beat_left(left: float, interval: float) -> float:
    """Time to a held channel's next pulse beat, given the time ``left`` to one of its beats (negative once that one
    has fallen) and the pulse interval, in any one unit: beats fall every interval from there on (R11)."""
    if left >= 0 or interval <= 0:
        return max(0, left)
    return interval - (-left) % interval


def _until(at: int | None, now: int) -> int | None:
    """Milliseconds from ``now`` to ``at`` (None stays None), never negative."""
    return None if at is None else max(0, at - now)


class Tracker:
    """One seat's state across updates (protocol 3): its view, and every countdown as the instant it runs to.

    ``Tracker(snapshot_view, at)`` starts from a snapshot built at ``at``; ``update(events, clock, own, at)``
    applies one delta and returns the view at its ``at`` (milliseconds on the server's clock, from the update). An
    update with a ``clock`` sets the table's countdowns and the seat's cooldowns (``own`` None there: both free).
    One without runs them on from before: a countdown falls to 0 and stays there, ``last_pulse_ms`` grows, a held
    channel's ``next_pulse_ms`` starts again at the view's ``pulse_interval_ms`` each beat, a ``pulse`` event
    restarts its seat's ``last_pulse_ms`` from the beat it fell on (the nearest: the server sends a clock instead
    when a pulse came half an interval late or more), and an ``own`` (the seat's cooldowns after its own swap)
    replaces the cooldowns. Instants, not remaining times, are kept, so rounding never adds up over updates.
    Raises ``ApplyError`` as ``apply`` does, and leaves the state as it was."""

    __slots__ = ("view", "_phase", "_next", "_last", "_vote", "_vote_free", "_swap_free", "_channel_free", "_pulse")

    def __init__(self, view: SeatView, at: int) -> None:
        self.view = view
        self._pulse = view.pulse_interval_ms
        self._table(
            Clock(
                view.phase_ms,
                tuple(s.next_pulse_ms for s in view.seats),
                tuple(s.last_pulse_ms for s in view.seats),
                None if view.vote is None else view.vote.remaining_ms,
                view.vote_wait_ms,
            ),
            at,
        )
        self._own(OwnTimers(view.swap_wait_ms, view.channel_wait_ms), at)

    def _table(self, clock: Clock, at: int) -> None:
        self._phase = None if clock.phase_ms is None else at + clock.phase_ms
        self._next = [None if ms is None else at + ms for ms in clock.next_pulse_ms]
        self._last = [None if ms is None else at - ms for ms in clock.last_pulse_ms]
        self._vote = None if clock.vote_ms is None else at + clock.vote_ms
        self._vote_free = at + clock.vote_wait_ms

    def _own(self, own: OwnTimers, at: int) -> None:
        self._swap_free = at + own.swap_wait_ms
        self._channel_free = at + own.channel_wait_ms

    def _beat(self, seat: int, now: int) -> int | None:
        """Milliseconds to ``seat``'s next pulse beat at ``now``: the engine's own count, a beat every interval."""
        at = self._next[seat]
        return None if at is None else int(beat_left(at - now, self._pulse))

    def _pulsed(self, seat: int, now: int) -> None:
        """``seat`` pulsed in an update built at ``now`` without a clock: on its beat nearest ``now``."""
        at, interval = self._next[seat], self._pulse
        if at is None or interval <= 0:
            self._last[seat] = now  # a beat this state never knew of: it fell just now
            return
        beat = at + interval * ((now - at + interval // 2) // interval)
        self._last[seat] = min(beat, now)

    def clock(self, now: int) -> Clock:
        """The table's countdowns at ``now``."""
        return Clock(
            _until(self._phase, now),
            tuple(self._beat(i, now) for i in range(len(self._next))),
            tuple(None if at is None else max(0, now - at) for at in self._last),
            _until(self._vote, now),
            max(0, self._vote_free - now),
        )

    def own(self, now: int) -> OwnTimers:
        """The seat's own cooldowns at ``now``."""
        return OwnTimers(max(0, self._swap_free - now), max(0, self._channel_free - now))

    def update(
        self, events: tuple[Event, ...] | list[Event], clock: Clock | None, own: OwnTimers | None, at: int
    ) -> SeatView:
        """The seat's view after one update that is not a snapshot, built at ``at``."""
        view = apply(self.view, events, None, None)
        if clock is not None:
            _check_clock(view, clock)  # before anything changes
            self._table(clock, at)
            self._own(own or NO_WAIT, at)
        else:
            for event in events:
                if isinstance(event, e.Pulse) and 0 <= event.seat < len(self._last):
                    self._pulsed(event.seat, at)
            if own is not None:
                self._own(own, at)
        self.view = view = with_clock(view, self.clock(at), self.own(at))
        return view
