"""One other seat at the table: name and team letter, connected or not, channel held or not, its pulses."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.content import Content

from quatro_shared.games.quatro.views import Phase

from quatro_tui import words
from quatro_tui.games.quatro import words as quatro_words
from quatro_tui.games.quatro.widgets.base import QuatroWidget

#: Cells inside a seat box (its width less border and padding): the pulse line never wraps.
PULSE_LINE = 18


class SeatBox(QuatroWidget):
    """A bordered box for ``seat``. A pulse shows its emoji inverted for ``pulse_shown`` seconds, then dimmed until the next."""

    TICK = 0.1

    def __init__(self, seat: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.seat = seat
        self._title: str | None = None
        self._subtitle: str | None = None

    def on_mount(self) -> None:
        super().on_mount()
        self.add_class(f"team-{self.game.team_of(self.seat)}")
        if self.game.view is not None and self.seat == self.game.view.partner:
            self.add_class("partner")
        self._titles()

    def watch_version(self, version: int) -> None:
        self._titles()
        super().watch_version(version)

    def _titles(self) -> None:
        game = self.game
        view = game.view
        team = game.team_of(self.seat)
        title = f"{words.team_letter(team)} {game.raw_name(self.seat)[:14]}"
        subtitle = "partner" if view is not None and self.seat == view.partner else ""
        # Setting a border title repaints the widget even when it is the same: set it only when it changes.
        # A name is another player's text: set as Content, never as a str, which Textual would parse as markup
        # (a name such as "[/]" would crash this client, "[@click=app.quit]x" would run an action).
        if self._title != title:
            self._title = title
            self.border_title = Content(title)
        if self._subtitle != subtitle:
            self._subtitle = subtitle
            self.border_subtitle = Content(subtitle)

    def draw(self) -> Text:
        game = self.game
        view = game.view
        ascii_only = game.ascii_only
        state = view.seats[self.seat] if view is not None else None
        line = Text()
        connected = True if state is None else state.connected
        if connected:
            line.append("on " if ascii_only else "● on ")
        else:
            line.append("AWAY " if ascii_only else "○ AWAY ", style="bold reverse")
        if game.is_bot(self.seat):
            line.append("bot ", style="dim")
        if state is not None and view is not None and view.phase is Phase.SIGNING:
            line.append(
                "ready" if state.ready else words.plain("…", ascii_only), style="bold" if state.ready else "dim"
            )
        elif state is not None and state.channel_held:
            line.append("[CH]" if ascii_only else "◉ CH", style="bold")
        second = Text()
        last = game.last_pulse(self.seat)
        partner_sign = last is not None and view is not None and self.seat == view.partner and last[0] == view.sign
        if last is not None and game.pulse_on_show(self.seat) is not None:
            second.append(f" {quatro_words.sign(last[0], ascii_only)} ", style="bold reverse")
            # The convention (and the bots'): the partner shows the team's sign on four of a kind.
            second.append(
                f" {quatro_words.YOUR_SIGN}" if partner_sign else " pulse", style="bold" if partner_sign else ""
            )
        elif last is not None:
            # The latest pulse stays until the next one, fading: no glance away loses a signal.
            sign_text = quatro_words.sign(last[0], ascii_only)
            if partner_sign:
                second.append(f"{sign_text} {quatro_words.YOUR_SIGN}", style="bold reverse")
            else:
                second.append(f"{sign_text} {int(last[1])}s ago", style="dim")
            if state is not None and state.channel_held and state.next_pulse_ms is not None:
                more = f" next {words.seconds(game.beat_left(state.next_pulse_ms) or 0)}"
                if second.cell_len + len(more) <= PULSE_LINE:
                    second.append(more, style="dim")
        elif state is not None and state.channel_held and state.next_pulse_ms is not None:
            left = game.beat_left(state.next_pulse_ms)
            second.append(f"pulse in {words.seconds(left or 0)}", style="dim")
        return Text("\n").join([line, second])
