"""Chat: one line typed in a small box, sent to the lobby or the table (never during a round: the server says no)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from quatro_shared import messages as m
from quatro_shared.protocol import MAX_CHAT_LEN

if TYPE_CHECKING:
    from textual import getters

    from quatro_tui.app import QuatroApp


class ChatBox(ModalScreen[None]):
    """Type a line; enter sends it, escape drops it."""

    if TYPE_CHECKING:
        app = getters.app(QuatroApp)  # self.app as this client's app, for the type checker

    BINDINGS = [Binding("escape", "close", "cancel", id="chat-cancel")]

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static("[b]Say something[/b] (enter sends, escape cancels)")
            yield Input(placeholder="a line for everyone here", max_length=MAX_CHAT_LEN, id="chat-text")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if text:
            self.app.send(m.Chat(text))
        self.dismiss(None)

    def action_close(self) -> None:
        self.dismiss(None)
