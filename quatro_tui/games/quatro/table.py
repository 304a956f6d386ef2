"""Quatro's picture of its table, beyond what every game keeps (``quatro_tui.table.Table``): the events as they came,
the feed's pulse and four-of-a-kind lines, the team's sign of each round, and the countdowns Quatro's view gives
(a channel's pulse beat, a pulse on show)."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from quatro_shared.games.quatro import events as e
from quatro_shared.games.quatro import seating
from quatro_shared.games.quatro.apply import beat_left
from quatro_shared.games.quatro.cards import is_four_of_a_kind
from quatro_shared.games.quatro.signs import SIGNS, Sign
from quatro_shared.games.quatro.views import Phase, SeatView

from quatro_tui.games.quatro import words
from quatro_tui.table import AnyTable, Table

#: Events kept in memory.
EVENTS_KEPT = 500
#: How long a pulse stays on screen when the server has not said (``pulse_shown`` of its timing).
DEFAULT_PULSE_SHOWN = 1.0


@dataclass
class QuatroTable(Table[SeatView]):
    #: The latest events as they came (what the feed and the tests read).
    events: deque[e.Event] = field(default_factory=lambda: deque(maxlen=EVENTS_KEPT))
    #: The team's sign of each round this client saw, by round.
    signs: dict[int, Sign] = field(default_factory=dict)
    #: The feed's last line if it tells a pulse: as shown, the pulse's own line, and how many times it repeated.
    _pulse_line: tuple[str, str, int] | None = None
    #: The feed's "You hold four of a kind" line while it is true, None otherwise.
    _four_line: str | None = None
    #: A rejoin's ``recent`` events (``recall``), into the feed with the snapshot that follows them.
    _recalled: list[e.Event] = field(default_factory=list)

    # --- arriving state ---------------------------------------------------------------------------

    def apply(self, view: SeatView, events: list[e.Event], received_at: float) -> bool:
        """Take a view and its events. True when the player must not miss it (the bell rings, if asked for):
        the partner showed the team's sign, or one's own hand just became four of a kind."""
        before = self.view
        self.took(view, received_at)
        if self._recalled:
            self._recall_into_feed(view.seat)
        if view.sign is not None:
            self.signs[view.round] = view.sign
        self.events.extend(events)
        if any(isinstance(ev, e.MatchStarted) for ev in events):
            self.feed.clear()  # the waiting room's words stay there: the match starts with a clean feed
        alert = False
        for ev in events:
            if isinstance(ev, e.Pulse):
                # The bell rings once for a signal, not again at each repeat of it.
                fresh = self._feed_pulse(self.pulse_line(ev, view))
                alert = alert or (fresh and self.is_partner_sign(ev, view))
                continue
            if (
                isinstance(ev, e.HostChanged)
                and ev.seat == view.seat
                and before is not None
                and before.host == view.seat
            ):
                continue  # back from a drop with nobody to hand the table to, the host hosts again: no news to them
            line = words.event(ev, self.name, view.seat, self.ascii_only)
            if line:
                self.feed.append(line)
        four = view.phase is Phase.ROUND and len(view.hand) == 4 and is_four_of_a_kind(view.hand)
        had_four = (
            before is not None
            and before.round == view.round
            and before.phase is Phase.ROUND
            and len(before.hand) == 4
            and is_four_of_a_kind(before.hand)
        )
        if four and not had_four:
            self._four_line = f"You hold four of a kind: show {words.YOUR_SIGN.lower()} (1)."
            self.feed.append(self._four_line)
            alert = True
        elif not four and self._four_line is not None:
            # An instruction, not news: once the hand is no longer four of a kind (a swap, the round's end, the next
            # deal) it goes, or round 2 would still read round 1's "You hold four of a kind".
            if self._four_line in self.feed:
                self.feed.remove(self._four_line)
            self._four_line = None
        return alert

    def recall(self, events: list[e.Event]) -> None:
        """The ``recent`` push of a rejoin (protocol 7): the match's latest events this seat saw, told just before
        the snapshot. They go into the feed with that snapshot (``apply``: then the feed knows whose seat is "you"),
        if it holds nothing of the match yet (a client started afresh: ``quatro join`` again, another terminal); a
        client that kept its feed through a reconnect has these lines already. No bell, no state."""
        if not self.events:  # this client saw none of the match
            self._recalled = list(events)

    def _recall_into_feed(self, me: int) -> None:
        events, self._recalled = self._recalled, []
        for ev in events:
            if isinstance(ev, e.MatchStarted):
                self.feed.clear()
            if isinstance(ev, e.Pulse):
                # Plain: the team's sign of an earlier round is not known here, so no "= your sign" on old pulses.
                self._feed_pulse(f"{self.name(ev.seat)} showed {words.sign(ev.sign, self.ascii_only)}.")
                continue
            line = words.event(ev, self.name, me, self.ascii_only)
            if line:
                self.feed.append(line)

    def _feed_pulse(self, line: str) -> bool:
        """A pulse into the feed; False when it repeats the line before. The same channel showing the same emoji
        again, with nothing in between, is counted on its line ("bob showed 🦊. (x3)"): a held channel pulses
        every few seconds, and a line each time would push everything else out of the feed."""
        if (
            self.feed
            and self._pulse_line is not None
            and self.feed[-1] == self._pulse_line[0]
            and line == self._pulse_line[1]
        ):
            count = self._pulse_line[2] + 1
            self.feed[-1] = f"{line} (x{count})"
            self._pulse_line = (self.feed[-1], line, count)
            return False
        self._pulse_line = (line, line, 1)
        self.feed.append(line)
        return True

    @staticmethod
    def is_partner_sign(ev: e.Pulse, view: SeatView) -> bool:
        """The partner pulsed the team's sign: by the convention (and the bots'), four of a kind to call on."""
        return ev.seat == view.partner and view.sign is not None and ev.sign == view.sign

    def pulse_line(self, ev: e.Pulse, view: SeatView) -> str:
        """A pulse in the feed ("bob showed 🦊"): a pulse lasts a moment on screen, the feed keeps it."""
        line = f"{self.name(ev.seat)} showed {words.sign(ev.sign, self.ascii_only)}"
        if self.is_partner_sign(ev, view):
            return f"{line} = {words.YOUR_SIGN}!"
        return line + "."

    # --- reading it -------------------------------------------------------------------------------

    @property
    def phase(self) -> Phase | None:
        """The seat's view's phase; None before the first view."""
        return None if self.view is None else self.view.phase

    @property
    def players(self) -> int:
        return self.view.players if self.view is not None else super().players

    def is_bot(self, seat: int) -> bool:
        if self.view is not None:
            return self.view.seats[seat].bot
        return super().is_bot(seat)

    def is_host(self) -> bool:
        if self.view is not None:
            return self.view.host == self.view.seat
        return super().is_host()

    def team_of(self, seat: int) -> int:
        return seating.team_of(seat, self.players)

    def beat_left(self, ms: int | None) -> float | None:
        """Seconds left now to a held channel's next pulse beat, given in milliseconds by the view: as ``left``, but
        starting again from the table's pulse interval at each beat (R11). A beat that falls with no emoji chosen
        brings no update, so without this the countdown would sit at 0 until the next one."""
        if ms is None:
            return None
        interval = self.view.pulse_interval_ms / 1000 if self.view is not None else 0.0
        return float(beat_left(ms / 1000 - self.elapsed(), interval))

    def pulse_on_show(self, seat: int) -> Sign | None:
        """The emoji of ``seat``'s latest pulse while it is still on show (R11: "for a moment")."""
        if self.view is None or self.view.phase is not Phase.ROUND:
            return None
        state = self.view.seats[seat]
        if state.last_pulse is None or state.last_pulse_ms is None:
            return None
        age = state.last_pulse_ms / 1000 + self.elapsed()
        return state.last_pulse if age < self.timing("pulse_shown", DEFAULT_PULSE_SHOWN) else None

    def last_pulse(self, seat: int) -> tuple[Sign, float] | None:
        """The emoji of ``seat``'s latest pulse this round and its age in seconds, kept until the next one."""
        if self.view is None or self.view.phase is not Phase.ROUND:
            return None
        state = self.view.seats[seat]
        if state.last_pulse is None or state.last_pulse_ms is None:
            return None
        return state.last_pulse, state.last_pulse_ms / 1000 + self.elapsed()

    def fresh_sign(self) -> Sign:
        """A sign for the grid's cursor to start on this round: random, and never last round's sign.

        Enter at signing picks the sign under the cursor; were the cursor to start on the same sign every round,
        a player who just presses Enter would show the same, guessable sign round after round.
        """
        last = self.signs.get(self.view.round - 1) if self.view is not None else None
        return self.rng.choice([sign for sign in SIGNS if sign != last])


def quatro_table(table: AnyTable) -> QuatroTable:
    """The app's table as Quatro's screens read it. A Quatro screen still drawing while the app holds another game's
    table (a screen on its way out as a replay or a new table of another game begins) reads an empty table of
    Quatro's: it draws nothing, and no key of its acts, rather than reading another game's view."""
    if isinstance(table, QuatroTable):
        return table
    return QuatroTable(ascii_only=table.ascii_only, clock=table.clock, kind=table.kind, link=table.link)
