"""The reveal after a round (R17): every hand, every four of a kind, every sign, who called or countered, who scored.

The match end (R20) is the same screen with the winners on top: the last round's reveal stays worth reading.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer

from quatro_shared import messages as m
from quatro_shared.games.quatro import actions as a
from quatro_shared.games.quatro import seating
from quatro_shared.games.quatro.views import Phase

from quatro_tui import words
from quatro_tui.games.quatro import words as quatro_words
from quatro_tui.games.quatro.widgets.base import QuatroWidget
from quatro_tui.guard import KeyGuard
from quatro_tui.widgets import Feed, StatusBar
from quatro_tui.widgets.scoreboard import TEAM_STYLES

if TYPE_CHECKING:
    from textual import getters

    from quatro_tui.app import QuatroApp


class Reveal(QuatroWidget):
    """The round summary as a table: one line per seat, team by team."""

    def draw(self) -> Text:
        game = self.game
        view = game.view
        text = Text()
        if view is None or view.summary is None:
            text.append("Waiting for the reveal…", style="dim")
            return text
        summary = view.summary
        ascii_only = game.ascii_only
        text.append(f"Round {summary.round}: ", style="bold")
        told = quatro_words.outcome(
            summary.outcome, summary.by, summary.accused, summary.right, summary.scorers, game.name
        )
        text.append(words.plain(told, ascii_only), style="bold")
        text.append("\n")
        for team in range(seating.team_count(view.players)):
            scored = team in summary.scorers
            text.append(f"Team {words.team_letter(team)}", style=f"bold {TEAM_STYLES[team]}")
            text.append(f"{' (you)' if team == view.team else ''}  sign ")
            text.append(quatro_words.sign(summary.signs[team], ascii_only, named=True), style="bold")
            text.append(f"  score {view.scores[team]}")
            if scored:
                text.append("  +1", style="bold reverse")
            text.append("\n")
            for seat in seating.team_seats(team, view.players):
                four = seat in summary.fours
                role = ""
                if summary.by == seat:
                    role = "called" if summary.outcome == "call" else "countered"
                text.append(f"  {game.name(seat)[:14]:<15}")
                for card in summary.hands[seat]:
                    text.append(f"{quatro_words.card(card, ascii_only):>4}", style="bold reverse" if four else "bold")
                text.append("  ")
                if four:
                    text.append("FOUR OF A KIND", style="bold reverse")
                if role:
                    text.append(f"  <- {role}", style="bold")
                text.append("\n")
        text.append("Center: ")
        text.append("  ".join(quatro_words.card(card, ascii_only) for card in summary.center), style="bold")
        return text


class BreakHint(QuatroWidget):
    TICK = 0.2

    def draw(self) -> Text:
        game = self.game
        view = game.view
        if view is None:
            return Text("")
        if game.replay:
            return Text(self.told(view.phase, game.left(view.phase_ms) or 0))
        if view.phase is Phase.OVER:
            if view.host == view.seat:
                return Text.assemble(
                    ("p", "bold underline"),
                    " plays again (same seats)   ",
                    ("l", "bold underline"),
                    " back to the lobby   ",
                    ("ctrl+q", "bold underline"),
                    " quit",
                )
            return Text.assemble(
                "The host may play again.   ",
                ("l", "bold underline"),
                " back to the lobby   ",
                ("ctrl+q", "bold underline"),
                " quit",
            )
        left = words.seconds(game.left(view.phase_ms) or 0)
        if view.host == view.seat:
            return Text.assemble(("n", "bold underline"), f" starts the next round now; otherwise it starts in {left}.")
        return Text(f"The next round starts in {left} (or sooner, if the host says so).")

    @staticmethod
    def told(phase: Phase, left: float) -> str:
        """A replay's break, told rather than asked: nobody in a replay can start a round or play again."""
        if phase is Phase.OVER:
            return "The match ended here."
        return f"The next round starts in {words.seconds(left)}."


class Winners(QuatroWidget):
    def draw(self) -> Text:
        view = self.game.view
        if view is None:
            return Text("")
        mine = view.team in view.winners
        text = Text()
        text.append(" MATCH OVER ", style="bold reverse")
        text.append(
            f"  {quatro_words.teams_text(view.winners)} {'wins' if len(view.winners) == 1 else 'win'}! ", style="bold"
        )
        text.append("You won." if mine else "Not your team this time.")
        text.append("\nFinal scores: " + "  ".join(f"{words.team_letter(t)} {s}" for t, s in enumerate(view.scores)))
        return text


class RevealScreen(KeyGuard, Screen[None]):
    if TYPE_CHECKING:
        app = getters.app(QuatroApp)  # self.app as this client's app, for the type checker

    GUARDED = frozenset({"next_round"})
    BINDINGS = [
        Binding("n", "next_round", "next round (host)", id="next-round"),
        Binding("t", "chat", "chat", id="break-chat"),
    ]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        view = self.app.game.view
        if action == "next_round" and (view is None or view.host != view.seat):
            return False  # only the host's keys show the host's actions
        return super().check_action(action, parameters)

    def action_chat(self) -> None:
        from quatro_tui.screens.chat import ChatBox

        self.app.push_screen(ChatBox())

    def compose(self) -> ComposeResult:
        yield StatusBar()
        yield Reveal(classes="pad")
        yield BreakHint(classes="pad")
        yield Feed(classes="pad")
        yield Footer()

    def on_screen_resume(self) -> None:
        self.app.game_changed()

    def action_next_round(self) -> None:
        self.app.send(a.NextRound())


class MatchEndScreen(RevealScreen, inherit_bindings=False):
    """The match is won (R20): the winners, then the last round's reveal, and the ways on."""

    BINDINGS = [
        Binding("p", "rematch", "play again (host)", id="rematch"),
        Binding("l", "app.back_to_lobby", "back to the lobby", id="over-lobby"),
        Binding("t", "chat", "chat", id="over-chat"),
    ]
    GUARDED = frozenset({"rematch"})

    def action_rematch(self) -> None:
        self.app.send(m.Rematch())

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        view = self.app.game.view
        if action == "rematch" and (view is None or view.host != view.seat):
            return False  # only the host's keys show the host's actions
        return KeyGuard.check_action(self, action, parameters)

    def compose(self) -> ComposeResult:
        yield StatusBar()
        yield Winners(classes="pad")
        yield Reveal(classes="pad")
        yield BreakHint(classes="pad")
        yield Feed(classes="pad")
        yield Footer()
