"""Help: the rules in short and the keys, listed from the live bindings so the page never drifts from them.

The marks and the keys are two columns: a line too long for the window wraps under its meaning, not under its
mark or key.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.dom import DOMNode
from textual.markup import escape
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from quatro_tui import words

if TYPE_CHECKING:
    from textual import getters

    from quatro_tui.app import QuatroApp

#: A line of the marks or the keys: (the mark or keys, what it means), each in Textual markup.
Row = tuple[str, str]

#: How keys are written on this page.
KEY_NAMES = {
    "question_mark": "?",
    "space": "space",
    "escape": "esc",
    "enter": "enter",
    "left": "←",
    "right": "→",
    "up": "↑",
    "down": "↓",
}


def key_name(key: str, ascii_only: bool = False) -> str:
    """A key as this page writes it; in ASCII mode, arrows are named ("left"), not drawn."""
    name = KEY_NAMES.get(key, key)
    return key if ascii_only and not name.isascii() else name


def _ascii(screen: Screen[Any]) -> bool:
    game = getattr(screen.app, "game", None)
    return bool(game is not None and game.ascii_only)


def _live(node: DOMNode) -> list[tuple[str, Binding]]:
    """(key, binding) pairs of ``node`` as the key map in force has them (Textual applies it on lookup),
    in the order the bindings were declared."""
    declared = [binding.id for bindings in node._bindings.key_to_bindings.values() for binding in bindings]
    bindings_map = node._bindings.copy()
    keymap = node.app._keymap
    if keymap:
        bindings_map.apply_keymap(keymap)
    pairs = [(key, binding) for key, bindings in bindings_map.key_to_bindings.items() for binding in bindings]
    return sorted(pairs, key=lambda pair: declared.index(pair[1].id) if pair[1].id in declared else len(declared))


def _in_force(node: DOMNode, binding: Binding) -> bool:
    """Whether ``node`` takes ``binding``'s action now (the app's replay keys, only while a replay plays)."""
    return node.check_action(binding.action.split("(", 1)[0], ()) is not False


def key_lines(screen: Screen[Any]) -> list[tuple[str, str]]:
    """(keys, what they do) for every binding of ``screen`` and the app that has an id, as remapped.

    Bindings that differ only by a trailing number ("hand card 1" … "hand card 4") share one line.
    """
    ascii_only = _ascii(screen)
    keys_of: dict[str, list[str]] = {}
    by_id: dict[str, Binding] = {}
    for key, binding in _live(screen) + [pair for pair in _live(screen.app) if _in_force(screen.app, pair[1])]:
        if binding.id is None:
            continue  # Textual's own (focus moves): not part of the game
        by_id.setdefault(binding.id, binding)
        keys_of.setdefault(binding.id, []).append(key_name(key, ascii_only))
    lines: list[tuple[str, str]] = []
    group: tuple[str, list[str], list[str]] | None = None  # (description without its number, keys, numbers)
    for binding_id, binding in by_id.items():
        match = re.fullmatch(r"(.*?)\s*(\d+)", binding.description)
        if match:
            base, number = match.groups()
            if group is not None and group[0] == base:
                group[1].extend(keys_of[binding_id])
                group[2].append(number)
                continue
            if group is not None:
                lines.append(_group_line(group))
            group = (base, list(keys_of[binding_id]), [number])
            continue
        if group is not None:
            lines.append(_group_line(group))
            group = None
        lines.append(("/".join(keys_of[binding_id]), binding.tooltip or binding.description))
    if group is not None:
        lines.append(_group_line(group))
    return [(keys, words.plain(what, ascii_only)) for keys, what in lines]


def _group_line(group: tuple[str, list[str], list[str]]) -> tuple[str, str]:
    base, keys, numbers = group
    span = numbers[0] if len(numbers) == 1 else f"{numbers[0]}–{numbers[-1]}"
    return " ".join(keys), f"{base} {span}"


def columns(rows: list[Row], *, right: bool = False) -> Table:
    """``rows`` as two columns, indented: the first as wide as its widest (``right``: aligned right), the second
    taking the rest of the line and wrapping within it."""
    table = Table.grid(padding=(0, 2), pad_edge=True, expand=True)
    table.add_column(no_wrap=True, justify="right" if right else "left")
    table.add_column(ratio=1)
    for mark, what in rows:
        table.add_row(Text.from_markup(mark), Text.from_markup(what))
    return table


def key_rows(screen: Screen[Any]) -> list[Row]:
    # Escaped: keys come from the player's key map, which may name "[" or "]".
    return [(f"[b]{escape(keys)}[/b]", escape(what)) for keys, what in key_lines(screen)]


class HelpScreen(ModalScreen[None]):
    if TYPE_CHECKING:
        app = getters.app(QuatroApp)  # self.app as this client's app, for the type checker

    # Not q: in every other dialog q quits, and a letter means one thing everywhere.
    BINDINGS = [Binding("escape,question_mark,f1", "close", "close help", id="help-close")]

    def __init__(self, under: Screen[Any]) -> None:
        super().__init__()
        self.under = under

    def compose(self) -> ComposeResult:
        ascii_only = _ascii(self.under)
        # A game's own screen brings its rules and marks; any other screen shows those of the table's game.
        game = self.app.client_game()
        rules = getattr(self.under, "HELP_RULES", None) or game.help_rules
        marks = getattr(self.under, "help_marks", None)
        title, rows = marks(ascii_only) if marks is not None else game.help_marks(self.under, ascii_only)
        with VerticalScroll(classes="dialog wide tall"):
            yield Static(words.plain(rules, ascii_only))
            yield Static(f"\n[b]{title}[/b]")
            yield Static(columns(rows), classes="help-columns")
            mouse = getattr(self.under, "MOUSE_HELP", "")
            yield Static("\n[b]Keys here[/b]" + (f" (mouse: {escape(mouse)})" if mouse else ""))
            yield Static(columns(key_rows(self.under), right=True), classes="help-columns")
            yield Static("\n[dim]escape closes this page[/dim]")

    def action_close(self) -> None:
        self.dismiss(None)
