"""Help: the rules in short and the keys, listed from the live bindings so the page never drifts from them."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

RULES = """\
[b]Quatro in short[/b]
Everyone swaps at once: one card of your hand for one card of the center, then a short wait.
Collect four of a kind. Never say so: show your team's secret sign on your channel, and let your
partner shout [b]Quatro![/b] — a call checks your [b]partner's[/b] hand, never yours.
Opponents watch the channels too: [b]Counter![/b] accuses a team of holding four of a kind.
Right scores for your team; wrong scores for the others. First team to the target wins.

[b]Bots[/b] show the team sign when they hold four of a kind, and call when your channel shows the team sign.
"""


def key_label(binding: Binding) -> str:
    keys = []
    for key in binding.key.split(","):
        key = key.strip()
        keys.append({"question_mark": "?", "space": "space", "escape": "esc"}.get(key, key))
    return "/".join(keys)


def keys_text(screen: Screen, app_bindings: list[Binding]) -> str:
    """One line per binding of ``screen`` and the app, grouped where keys only differ by a number."""
    lines = []
    seen = set()
    bindings = [b for _, b in screen._bindings.key_to_bindings.items() for b in b] + list(app_bindings)
    for binding in bindings:
        if binding.id in seen:
            continue
        seen.add(binding.id)
        lines.append(f"  [b]{key_label(binding):>9}[/b]  {binding.description}")
    return "\n".join(lines)


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,question_mark,f1,q", "close", "close help", id="help-close")]

    def __init__(self, under: Screen) -> None:
        super().__init__()
        self.under = under

    def compose(self) -> ComposeResult:
        from quatro_tui.app import QuatroApp

        app_bindings = [b for b in QuatroApp.BINDINGS if isinstance(b, Binding)]
        with VerticalScroll(classes="dialog wide tall"):
            yield Static(RULES)
            yield Static("[b]Keys here[/b] (mouse: click a card, then a slot)\n" + keys_text(self.under, app_bindings))
            yield Static("\n[dim]escape closes this page[/dim]")

    def action_close(self) -> None:
        self.dismiss(None)
