"""Signing (R6, R7): pick the team's sign among the 24, see the partner's pick appear, declare ready."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer

from quatro_shared.games.quatro import actions as a
from quatro_shared.games.quatro.signs import SIGNS

from quatro_tui import words
from quatro_tui.games.quatro import words as quatro_words
from quatro_tui.games.quatro.widgets.base import QuatroWidget
from quatro_tui.games.quatro.widgets.signs import SignGrid
from quatro_tui.guard import KeyGuard
from quatro_tui.widgets import Feed, StatusBar

if TYPE_CHECKING:
    from textual import getters

    from quatro_tui.app import QuatroApp


class SignChoice(QuatroWidget):
    """The team's sign once set, and who set it; until then, how it gets set."""

    def draw(self) -> Text:
        view = self.game.view
        text = Text()
        if view is None:
            return text
        if view.sign is None:
            text.append("Your team has no sign yet: ", style="bold")
            text.append("the first of you and your partner to pick sets it.\n")
            text.append("Nobody outside your team ever sees it before the reveal.", style="dim")
        else:
            text.append("Your team's sign: ", style="bold")
            text.append(quatro_words.sign(view.sign, self.game.ascii_only, named=True), style="bold reverse")
            # One line at 80 columns: the box is two lines high.
            text.append("\nShow it on your channel at four of a kind; call when your partner's shows it.", style="dim")
        return text


#: Columns between two seats on the ready line.
GAP = 3


class ReadyList(QuatroWidget):
    """Who is ready: the round opens when everyone connected is, or when the window closes (R7)."""

    def draw(self) -> Text:
        game = self.game
        view = game.view
        text = Text()
        if view is None:
            return text
        # Lines break between seats, never inside one: at 80 columns 8 seats read "A" at a line's end and
        # "normal-bot-4: ready" on the next.
        width = self.size.width or 80
        line = 0
        for state in view.seats:
            mark = "ready" if state.ready else ("away" if not state.connected else words.plain("…", game.ascii_only))
            who = "you" if state.seat == view.seat else game.raw_name(state.seat)[:12]
            entry = Text(f"{words.team_letter(state.team)} {who}: ", style="bold" if state.seat == view.seat else "")
            entry.append(mark, style="bold" if state.ready else "dim")
            if line and line + GAP + entry.cell_len > width:
                text.append("\n")
                line = 0
            elif line:
                text.append(" " * GAP)
                line += GAP
            text.append_text(entry)
            line += entry.cell_len
        return text


class SigningScreen(KeyGuard, Screen[None]):
    if TYPE_CHECKING:
        app = getters.app(QuatroApp)  # self.app as this client's app, for the type checker

    GUARDED = frozenset({"pick", "ready"})
    MOUSE_HELP = "click a sign to pick it"
    BINDINGS = [
        Binding("left", "move(-1, 0)", "left", show=False, tooltip="move in the signs", id="sign-left"),
        Binding("right", "move(1, 0)", "right", show=False, tooltip="move in the signs", id="sign-right"),
        Binding("up", "move(0, -1)", "up", show=False, tooltip="move in the signs", id="sign-up"),
        Binding("down", "move(0, 1)", "down", show=False, tooltip="move in the signs", id="sign-down"),
        Binding("space", "pick", "pick this sign", tooltip="pick the highlighted sign for your team", id="sign-pick"),
        Binding(
            "enter",
            "ready",
            "ready",
            tooltip="ready (and pick the highlighted sign, if your team has none yet)",
            id="ready",
        ),
    ]

    def compose(self) -> ComposeResult:
        yield StatusBar()
        yield SignChoice(classes="pad")
        yield SignGrid(fresh_each_round=True, classes="pad")
        yield ReadyList(classes="pad")
        yield Feed(classes="pad")
        yield Footer()

    def on_screen_resume(self) -> None:
        self.app.game_changed()

    def action_move(self, dx: int, dy: int) -> None:
        self.query_one(SignGrid).move(dx, dy)

    def action_pick(self) -> None:
        self.pick(SIGNS[self.query_one(SignGrid).cursor])

    def pick(self, sign: str) -> None:
        view = self.app.game.view
        if view is not None and view.sign is None:
            self.app.send(a.PickSign(sign))

    def on_sign_grid_picked(self, message: SignGrid.Picked) -> None:
        self.pick(message.sign)

    def action_ready(self) -> None:
        # Enter also picks the highlighted sign when the team has none: one key from the grid to the round.
        # The cursor starts on a random sign each round, so this is a fresh sign, not the same one every round.
        self.action_pick()
        self.app.send(a.Ready())
