"""A row of four cards, drawn as small boxes under their keys: the center (q w e r) or the hand (a s d f)."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import events
from textual.message import Message
from textual.reactive import reactive

from quatro_shared.games.quatro.cards import is_four_of_a_kind

from quatro_tui.games.quatro import words as quatro_words
from quatro_tui.games.quatro.widgets.base import QuatroWidget

CARD_WIDTH = 6  # box included
CARD_GAP = 1
LABEL_WIDTH = 7  # "center " / "hand   " before the cards
RED_SUITS = ("H", "D")


class CardRow(QuatroWidget):
    """Four cards with their keys above them; the selected one is drawn heavy and inverted."""

    selected: reactive[int | None] = reactive(None)
    cursor: reactive[int | None] = reactive(None)

    class Clicked(Message):
        def __init__(self, row: str, index: int) -> None:
            super().__init__()
            self.row, self.index = row, index

    def __init__(self, row: str, keys: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.row = row  # "center" or "hand"
        self.keys = keys

    def watch_selected(self, value: int | None) -> None:
        self.redraw()

    def watch_cursor(self, value: int | None) -> None:
        self.redraw()

    def cards(self) -> tuple[str, ...]:
        view = self.game.view
        if view is None:
            return ()
        return view.center if self.row == "center" else view.hand

    def draw(self) -> Text:
        ascii_only = self.game.ascii_only
        cards = self.cards()
        four = self.row == "hand" and is_four_of_a_kind(cards)
        title = "center" if self.row == "center" else ("FOUR!" if four else "hand")
        lines = [
            Text(" " * LABEL_WIDTH),
            Text(f"{title:<{LABEL_WIDTH}}", style="bold" if four else ""),
            Text(" " * LABEL_WIDTH),
            Text(" " * LABEL_WIDTH),
        ]
        for i in range(4):
            card = cards[i] if i < len(cards) else None
            chosen = i == self.selected
            at_cursor = i == self.cursor
            key = self.keys[i]
            label = f"[{key}]" if at_cursor else f" {key} "
            lines[0].append(f"{label:^{CARD_WIDTH}}" + " " * CARD_GAP, style="bold" if chosen or at_cursor else "dim")
            if ascii_only:
                top, side, bottom = ("#====#", "#", "#====#") if chosen else ("+----+", "|", "+----+")
            else:
                top, side, bottom = ("┏━━━━┓", "┃", "┗━━━━┛") if chosen else ("╭────╮", "│", "╰────╯")
            face = quatro_words.card(card, ascii_only) if card else ""
            face_style = "bold"
            if card and card[-1] in RED_SUITS:
                face_style += " red"
            if chosen:
                face_style += " reverse"
            border_style = "bold" if chosen else ""
            lines[1].append(top, style=border_style)
            lines[2].append(side, style=border_style)
            lines[2].append(f"{face:^4}", style=face_style)
            lines[2].append(side, style=border_style)
            lines[3].append(bottom, style=border_style)
            for line in lines[1:]:
                line.append(" " * CARD_GAP)
        return Text("\n").join(lines)

    def on_click(self, event: events.Click) -> None:
        x = event.x - LABEL_WIDTH
        if x < 0:
            return
        index = x // (CARD_WIDTH + CARD_GAP)
        if 0 <= index < 4 and x % (CARD_WIDTH + CARD_GAP) < CARD_WIDTH:
            self.post_message(self.Clicked(self.row, index))
