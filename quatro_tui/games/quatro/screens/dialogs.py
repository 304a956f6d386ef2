"""Quatro's dialogs: the R13 reminder before a call, the team to counter (R14), the emoji picker (R11).

A letter means one thing in every dialog, as in the client's others (``quatro_tui.screens.dialogs``;
tests/test_dialog_keys.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from quatro_shared.games.quatro.signs import SIGNS

from quatro_tui import words
from quatro_tui.games.quatro.widgets.signs import SignGrid
from quatro_tui.guard import KeyGuard

if TYPE_CHECKING:
    from textual import getters

    from quatro_tui.app import QuatroApp


class ConfirmCall(KeyGuard, ModalScreen[bool]):
    """R13: a call checks the partner's hand, never one's own. A reminder, not a ban: the partner may hold four too."""

    #: A second press of the call key must not confirm the call it asks about.
    GUARDED = frozenset({"yes"})
    BINDINGS = [
        Binding("y,enter,space", "yes", "call anyway", id="confirm-yes"),
        Binding("n,escape", "no", "don't call", id="confirm-no"),
    ]

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(
                "[b]You hold four of a kind yourself.[/b]\n\n"
                "Quatro! checks your [b]partner's[/b] hand, never yours. If your partner has no four of a kind, "
                "every other team scores.\nTo win with your own four, show your team's sign on your channel (c, then 1) "
                "and let your partner call.\n\n[b]y[/b] call anyway    [b]n[/b] don't call"
            )

    def action_yes(self) -> None:
        self.dismiss(True)

    def action_no(self) -> None:
        self.dismiss(False)


class CounterTeam(KeyGuard, ModalScreen[int | None]):
    """R14 with 6 or 8 players: "Counter!" names the opposing team accused of holding four of a kind."""

    GUARDED = frozenset({"team"})
    BINDINGS = [
        *[
            Binding(letter.lower(), f"team({team})", f"counter team {letter}", id=f"counter-{letter.lower()}")
            for team, letter in enumerate(words.TEAM_LETTERS)
        ],
        Binding("escape", "cancel", "cancel", id="counter-cancel"),
    ]

    def __init__(self, teams: list[int]) -> None:
        super().__init__()
        self.teams = teams

    def compose(self) -> ComposeResult:
        choices = "   ".join(f"[b]{words.team_letter(t).lower()}[/b] team {words.team_letter(t)}" for t in self.teams)
        with Vertical(classes="dialog"):
            yield Static(f"[b]Counter![/b] Which team holds four of a kind?\n\n{choices}\n\n[b]escape[/b] cancel")

    def action_team(self, team: int) -> None:
        if team in self.teams:
            self.dismiss(team)

    def action_cancel(self) -> None:
        self.dismiss(None)


class EmojiPicker(ModalScreen[str | None]):
    """All 24 emojis for one's channel: the true sign or any decoy (R11)."""

    if TYPE_CHECKING:
        app = getters.app(QuatroApp)  # self.app as this client's app, for the type checker

    BINDINGS = [
        Binding("left", "move(-1, 0)", "left", show=False, id="picker-left"),
        Binding("right", "move(1, 0)", "right", show=False, id="picker-right"),
        Binding("up", "move(0, -1)", "up", show=False, id="picker-up"),
        Binding("down", "move(0, 1)", "down", show=False, id="picker-down"),
        Binding("enter,space", "choose", "show this one", id="picker-choose"),
        Binding("escape", "cancel", "cancel", id="picker-cancel"),
    ]

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide"):
            shows = words.plain("Your channel shows…", self.app.game.ascii_only)
            yield Static(f"[b]{shows}[/b]  (arrows, enter; * is your team's sign)")
            yield SignGrid()

    def action_move(self, dx: int, dy: int) -> None:
        self.query_one(SignGrid).move(dx, dy)

    def action_choose(self) -> None:
        self.dismiss(SIGNS[self.query_one(SignGrid).cursor])

    def action_cancel(self) -> None:
        self.dismiss(None)

    def on_sign_grid_picked(self, message: SignGrid.Picked) -> None:
        self.dismiss(message.sign)
