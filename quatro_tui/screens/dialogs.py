"""Small dialogs of every game: taking over one's own seat, a server's address, leaving a running match, and a
newcomer's name (the browser door's first screen). A game's own dialogs are in its folder (Quatro's:
``quatro_tui.games.quatro.screens.dialogs``).

A letter means one thing in every dialog: ``y`` is yes (do what the question asks), ``n`` is no (nothing
changes: the same as escape), and no other letter answers two questions differently (tests/test_dialog_keys.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from quatro_shared.protocol import MAX_NAME_LEN, printable
from quatro_shared.tls import Endpoint, parse_endpoint

from quatro_tui import words
from quatro_tui.local_server import minutes

if TYPE_CHECKING:
    from textual import getters

    from quatro_tui.app import QuatroApp


class TakeOver(ModalScreen[bool]):
    """R19: the seat ``quatro join`` came back to is played from another connection. Asked, never taken unasked,
    and named: under one account, "your seat" could be anyone's."""

    if TYPE_CHECKING:
        app = getters.app(QuatroApp)  # self.app as this client's app, for the type checker

    BINDINGS = [
        Binding("y", "yes", "take it over", id="takeover-yes"),
        Binding("n,escape", "no", "leave it", id="takeover-no"),
    ]

    def __init__(self, table: int, player: str, seat: int | None = None) -> None:
        super().__init__()
        self.table, self.player, self.seat = table, player, seat

    def question(self) -> str:
        """In plain words (the player's name is theirs, not markup): whose seat, where, and what taking it does."""
        seat = (
            f"Seat {self.seat + 1} at table {self.table}" if self.seat is not None else f"A seat at table {self.table}"
        )
        return (
            f"{seat}, {self.player}'s, is in play from another terminal.\n\n"
            f"Take it over as {self.player}? The other terminal leaves the table.\n\n"
            "y take it over    n leave it"
        )

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Content(words.plain(self.question(), self.app.game.ascii_only)))

    def action_yes(self) -> None:
        self.dismiss(True)

    def action_no(self) -> None:
        self.dismiss(False)


class AskName(ModalScreen[str]):
    """The name to play under: ``quatro join`` without ``--name`` (``name``: the login name, to keep with enter), or a
    visitor who came through the browser door, the first time (remembered after)."""

    def __init__(self, name: str = "") -> None:
        super().__init__()
        self.name_given = name

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static("[b]Welcome to Quatro![/b]\n\nYour name at the tables (enter to go on):")
            yield Input(value=self.name_given, placeholder="your name", max_length=MAX_NAME_LEN, id="ask-name")
            yield Static("", id="ask-name-note")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        name = event.value.strip()
        if name and printable(name):
            self.dismiss(name)
        else:
            self.query_one("#ask-name-note", Static).update("A name needs something printable.")


class AskAddress(ModalScreen[Endpoint | None]):
    """Another server to join (its host and port), when the one played on has shut down."""

    BINDINGS = [Binding("escape", "cancel", "cancel", id="ask-address-cancel")]

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(
                "[b]Join another server[/b]\n\nIts address, HOST or HOST:PORT, tls://HOST for TLS "
                "(enter joins, escape cancels):"
            )
            yield Input(placeholder="HOST[:PORT]", max_length=300, id="ask-address")
            yield Static("", id="ask-address-note")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        try:
            self.dismiss(parse_endpoint(event.value.strip()))
        except ValueError as exc:
            self.query_one("#ask-address-note", Static).update(Content(words.sentence(str(exc))))

    def action_cancel(self) -> None:
        self.dismiss(None)


#: What the opener of ``quatro play --open N`` chose: quit and leave the table running, or quit and stop it.
LEAVE, STOP = "leave", "stop"


class LeaveRunning(ModalScreen[str | None]):
    """The opener of ``quatro play --open N`` quits while others play on its private server. Quitting leaves
    the table running for them (ctrl+q again does too: a group's match never ends by a key pressed twice);
    stopping it for everyone takes a letter of its own. Answers ``LEAVE``, ``STOP``, or None (stay)."""

    BINDINGS = [
        Binding("y", "yes", "quit, the table runs on", id="leave-running-yes"),
        Binding("n,escape", "no", "stay", id="leave-running-no"),
        Binding("s", "stop", "quit and stop the table for everyone", id="leave-running-stop"),
    ]

    def __init__(self, others: int, quiet_stop: float) -> None:
        super().__init__()
        self.others = others
        #: Seconds the server goes on with nobody connected before it stops by itself.
        self.quiet_stop = quiet_stop

    def compose(self) -> ComposeResult:
        who = "1 other is" if self.others == 1 else f"{self.others} others are"
        with Vertical(classes="dialog"):
            yield Static(
                f"[b]{who} still playing. Quit and leave the table running for them? y/n[/b]\n\n"
                "[b]y[/b] (or [b]ctrl+q[/b] again): quit; the table goes on without you, and [b]quatro join[/b] "
                "brings you back to your seat. The server stops once the match is over and everyone has gone, "
                f"or {minutes(self.quiet_stop)} after the last one left.\n"
                "[b]n[/b] or [b]escape[/b]: stay\n"
                "[b]s[/b]: quit and stop the table for everyone"
            )

    def action_yes(self) -> None:
        self.dismiss(LEAVE)

    def action_no(self) -> None:
        self.dismiss(None)

    def action_stop(self) -> None:
        self.dismiss(STOP)
