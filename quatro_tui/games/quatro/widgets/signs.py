"""The 24 signs in a grid (R5): to pick the team's sign while signing, and the channel's emoji in a round."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import events
from textual.message import Message
from textual.reactive import reactive

from quatro_shared.games.quatro.signs import SIGNS

from quatro_tui.games.quatro import words as quatro_words
from quatro_tui.games.quatro.widgets.base import QuatroWidget

#: Signs a row: four cells of CELL columns fill 76 of an 80-column terminal.
COLUMNS = 4
CELL = 19  # ">🍍 watermelon" and a gap; 4 cells fill 76 columns


class SignGrid(QuatroWidget):
    """The 24 signs, four a row in six rows; the cursor is inverted and bracketed, the team's sign starred."""

    can_focus = True

    cursor: reactive[int] = reactive(0)

    class Picked(Message):
        def __init__(self, sign: str) -> None:
            super().__init__()
            self.sign = sign

    def __init__(self, *, fresh_each_round: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        #: Signing: the cursor starts on a random sign each round (``QuatroTable.fresh_sign``), not on the first.
        self.fresh_each_round = fresh_each_round
        self._cursor_round: int | None = None

    def on_mount(self) -> None:
        super().on_mount()
        self._fresh_start()

    def watch_version(self, version: int) -> None:
        self._fresh_start()
        super().watch_version(version)

    def _fresh_start(self) -> None:
        view = self.game.view
        if not self.fresh_each_round or view is None or view.round == self._cursor_round:
            return
        self._cursor_round = view.round
        self.cursor = SIGNS.index(self.game.fresh_sign())

    def watch_cursor(self, value: int) -> None:
        self.redraw()

    def draw(self) -> Text:
        view = self.game.view
        team_sign = view.sign if view is not None else None
        ascii_only = self.game.ascii_only
        rows = []
        for start in range(0, len(SIGNS), COLUMNS):
            row = Text()
            for i in range(start, start + COLUMNS):
                sign = SIGNS[i]
                at_cursor = i == self.cursor
                mark = "*" if sign == team_sign else " "
                label = sign if ascii_only else f"{quatro_words.sign(sign, False)} {sign}"
                cell = f"{'>' if at_cursor else mark}{label}"
                # Emoji are two cells wide: pad by display width, not by characters.
                width = Text(cell).cell_len
                cell += " " * max(0, CELL - width)
                style = "bold reverse" if at_cursor else ("bold underline" if sign == team_sign else "")
                row.append(cell, style=style)
            rows.append(row)
        return Text("\n").join(rows)

    def move(self, dx: int, dy: int) -> None:
        column, row = self.cursor % COLUMNS, self.cursor // COLUMNS
        column = (column + dx) % COLUMNS
        row = (row + dy) % (len(SIGNS) // COLUMNS)
        self.cursor = row * COLUMNS + column

    def on_click(self, event: events.Click) -> None:
        index = event.y * COLUMNS + event.x // CELL
        if 0 <= event.x < CELL * COLUMNS and 0 <= index < len(SIGNS):
            self.cursor = index
            self.post_message(self.Picked(SIGNS[index]))
