"""Quarto's widgets: the 4×4 board, the pool, the piece to place, the turn line, the moves, the status line.

A piece is drawn so that its four attributes read at a glance, in colour or not, in Unicode or in ASCII:

- **height**: a tall piece stands two lines high, a short one a single line;
- **shape**: round pieces sit in round brackets ``(●)``, square ones in square brackets ``[■]``;
- **fill**: solid pieces are filled (``●`` ``■``, or ``#`` in ASCII), hollow ones empty (``○`` ``□``, or a blank);
- **colour**: dark and light pieces take the stylesheet's two piece colours (``.piece--dark``, ``.piece--light``);

and under every piece its four letters in Q7 notation (``TDRH``), which say all four again in any terminal.

The widgets draw from the screen's ``QuartoPicture`` (the view, the cursors, what was typed) and repaint only when
their drawing changed, as the Quatro widgets do.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from rich.style import Style
from rich.text import Text
from textual import events
from textual.message import Message

from quatro_shared.games.quarto import contract as q
from quatro_shared.games.quarto.contract import Phase, QuartoView, Step

from quatro_tui import words
from quatro_tui.games.quarto import words as quarto_words
from quatro_tui.widgets.base import DrawnWidget

#: A square's (and a pool slot's) width in cells: a bracketed glyph, or a piece's four letters, and a margin.
CELL = 5
#: The pool's pieces in a fixed order, so that a piece never moves while the pool empties: the tall ones on the
#: first row, the short on the second; dark before light, round before square, solid before hollow.
POOL_ORDER: tuple[int, ...] = tuple(sorted(range(q.PIECES), key=lambda p: tuple(not p >> bit & 1 for bit in range(4))))
POOL_COLUMNS = 8
POOL_GAP = 1


def is_tall(piece: int) -> bool:
    return bool(piece & 1)


def is_dark(piece: int) -> bool:
    return bool(piece & 2)


def is_round(piece: int) -> bool:
    return bool(piece & 4)


def is_solid(piece: int) -> bool:
    return bool(piece & 8)


def glyph(piece: int, ascii_only: bool) -> str:
    """The piece seen from the side, three cells: its shape by the brackets, its fill by what is inside."""
    left, right = ("(", ")") if is_round(piece) else ("[", "]")
    if ascii_only:
        inside = "#" if is_solid(piece) else " "
    elif is_round(piece):
        inside = "●" if is_solid(piece) else "○"
    else:
        inside = "■" if is_solid(piece) else "□"
    return f"{left}{inside}{right}"


def piece_lines(piece: int, ascii_only: bool) -> tuple[str, str, str]:
    """A piece in three lines of ``CELL`` cells: a tall piece's glyph twice (it stands higher), a short one's once,
    then its four letters."""
    body = f" {glyph(piece, ascii_only)} "
    return (body if is_tall(piece) else " " * CELL, body, f"{q.format_piece(piece):<{CELL}}")


@dataclass
class QuartoPicture:
    """What the Quarto widgets draw: the latest view and the screen's own state around it."""

    view: QuartoView | None = None
    ascii_only: bool = False
    #: A replay's board: nobody moves here, so no cursor shows and no key is offered (``Table.replay``).
    replay: bool = False
    #: The players' names by seat, as the terminal can draw them; one's own seat reads "you".
    names: tuple[str, str] = ("seat 1", "seat 2")
    #: The board's keyboard cursor (a square) while placing, the pool's (an index of ``POOL_ORDER``) while giving.
    board_cursor: int | None = None
    pool_cursor: int | None = None
    #: What was typed so far of a square (``b``) or a piece (``T_R_``), shown in the hint line.
    typed: str = ""
    #: The square the latest piece went to, marked on the board.
    last_square: int | None = None
    #: The latest news (a move, a start, a refusal), one line.
    news: str = ""
    #: The connection's trouble, if any (the status line says it instead of the game number).
    link: str = ""
    #: When the view arrived, on ``clock``: the move clock counts down from there.
    received_at: float = 0.0
    clock: Callable[[], float] = field(default=time.monotonic)

    def name(self, seat: int) -> str:
        if self.view is not None and seat == self.view.seat:
            return "you"
        return self.names[seat] if 0 <= seat < len(self.names) else words.person(seat, None)

    def plain(self, text: str) -> str:
        return words.plain(text, self.ascii_only)

    def left(self, ms: int | None) -> float | None:
        """Seconds left now of a countdown the view gave in milliseconds."""
        if ms is None:
            return None
        return max(0.0, ms / 1000 - max(0.0, self.clock() - self.received_at))

    def placing(self) -> bool:
        """Whether it is this seat's turn to place (the board's cursor shows)."""
        return self._to_move(Step.PLACE)

    def giving(self) -> bool:
        """Whether it is this seat's turn to give (the pool's cursor shows)."""
        return self._to_move(Step.GIVE)

    def _to_move(self, step: Step) -> bool:
        """Whether this seat is to make the move ``step``: never in a replay, whose seat nobody plays live."""
        v = self.view
        return not self.replay and v is not None and v.phase is Phase.PLAYING and v.turn == v.seat and v.step is step


class QuartoWidget(DrawnWidget):
    """A widget drawn from the screen's ``QuartoPicture``; subclasses implement ``draw``."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "piece--dark",
        "piece--light",
        "square--empty",
        "square--cursor",
        "square--win",
        "square--shared",
        "square--last",
        "quarto--title",
    }

    def __init__(self, picture: QuartoPicture, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.picture = picture

    def style(self, name: str) -> Style:
        return self.get_component_rich_style(name, partial=True)

    def piece_style(self, piece: int) -> Style:
        return self.style("piece--dark" if is_dark(piece) else "piece--light")

    def cell(self, piece: int | None, empty: str, extra: Style | None = None) -> list[Text]:
        """A square or a pool slot, three lines of ``CELL`` cells: the piece, or ``empty`` (dimmed) in the middle."""
        if piece is None:
            lines = [Text(" " * CELL), Text(f"{empty:^{CELL}}", style=self.style("square--empty")), Text(" " * CELL)]
        else:
            style = self.piece_style(piece)
            lines = [Text(line, style=style) for line in piece_lines(piece, self.picture.ascii_only)]
        if extra is not None:
            for line in lines:
                line.stylize(extra)
        return lines


class QuartoBoard(QuartoWidget):
    """The 4×4 board, row 4 at the top as on a chess board; empty squares show their names."""

    #: Columns before the first square: the row number and the left border.
    LEFT = 3
    #: Lines before the first row of squares: the column letters and the top border.
    TOP = 2

    class Clicked(Message):
        def __init__(self, square: int) -> None:
            super().__init__()
            self.square = square

    def borders(self) -> dict[str, str]:
        if self.picture.ascii_only:
            return dict(h="-", v="|", tl="+", tm="+", tr="+", ml="+", mm="+", mr="+", bl="+", bm="+", br="+")
        return dict(h="─", v="│", tl="┌", tm="┬", tr="┐", ml="├", mm="┼", mr="┤", bl="└", bm="┴", br="┘")

    def draw(self) -> Text:
        picture, view = self.picture, self.picture.view
        b = self.borders()
        board = view.board if view is not None else (None,) * q.SQUARES
        won = set(view.line or ()) if view is not None and view.phase in (Phase.BETWEEN, Phase.OVER) else set()
        # The letters of what the winning line shares (its attribute values), marked in each of its pieces.
        on, off = q.common_attributes([p for p in (board[s] for s in won) if p is not None]) if won else (0, 0)
        shared = [k for k in range(len(q.ATTRIBUTES)) if (on | off) >> k & 1]
        cursor = picture.board_cursor if picture.placing() else None
        header = Text(" " * self.LEFT)
        for letter in q.COLUMNS:
            header.append(f"{letter:^{CELL}} ", style=self.style("quarto--title"))
        lines = [header]
        bar = b["h"] * CELL

        def rule(left: str, mid: str, right: str) -> Text:
            return Text("  " + left + mid.join([bar] * q.SIZE) + right)

        lines.append(rule(b["tl"], b["tm"], b["tr"]))
        for shown in range(q.SIZE):
            row = q.SIZE - 1 - shown
            cells = []
            for col in range(q.SIZE):
                square = row * q.SIZE + col
                extra = None
                if square == cursor:
                    extra = self.style("square--cursor")
                elif square in won:
                    extra = self.style("square--win")
                elif square == picture.last_square:
                    extra = self.style("square--last")
                cell = self.cell(board[square], q.format_square(square), extra)
                if square in won:
                    for k in shared:
                        cell[2].stylize(self.style("square--shared"), k, k + 1)
                cells.append(cell)
            for k in range(3):
                label = q.ROWS[row] if k == 1 else " "
                line = Text(f"{label} {b['v']}")
                for c in cells:
                    line.append_text(c[k])
                    line.append(b["v"])
                lines.append(line)
            if shown < q.SIZE - 1:
                lines.append(rule(b["ml"], b["mm"], b["mr"]))
        lines.append(rule(b["bl"], b["bm"], b["br"]))
        return Text("\n").join(lines)

    def square_at(self, x: int, y: int) -> int | None:
        """The square under the point (x, y) of the widget, or None for a border or a label."""
        x, y = x - self.LEFT, y - self.TOP
        if x < 0 or y < 0 or x % (CELL + 1) == CELL or y % 4 == 3:
            return None
        col, shown = x // (CELL + 1), y // 4
        if col >= q.SIZE or shown >= q.SIZE:
            return None
        return (q.SIZE - 1 - shown) * q.SIZE + col

    def on_click(self, event: events.Click) -> None:
        square = self.square_at(event.x, event.y)
        if square is not None:
            self.post_message(self.Clicked(square))


class QuartoPool(QuartoWidget):
    """The pieces not yet played, each in its fixed slot (``POOL_ORDER``); a played piece leaves a dot."""

    class Clicked(Message):
        def __init__(self, piece: int) -> None:
            super().__init__()
            self.piece = piece

    def draw(self) -> Text:
        picture, view = self.picture, self.picture.view
        pool = set(view.pool) if view is not None else set()
        title = Text(f"pool: {len(pool)} piece{'' if len(pool) == 1 else 's'}", style=self.style("quarto--title"))
        if picture.giving():
            title.append("  choose one to give")
        lines = [title]
        cursor = picture.pool_cursor if picture.giving() else None
        dot = "." if picture.ascii_only else "·"
        for start in range(0, q.PIECES, POOL_COLUMNS):
            rows = [Text(), Text(), Text()]
            for index in range(start, start + POOL_COLUMNS):
                piece = POOL_ORDER[index]
                cells = self.cell(
                    piece if piece in pool else None, dot, self.style("square--cursor") if index == cursor else None
                )
                for k in range(3):
                    rows[k].append_text(cells[k])
                    rows[k].append(" " * POOL_GAP)
            lines.extend(rows)
        return Text("\n").join(lines)

    def piece_at(self, x: int, y: int) -> int | None:
        """The piece of the pool under (x, y), or None (a gap, the title, a slot already played)."""
        y -= 1
        if x < 0 or y < 0 or x % (CELL + POOL_GAP) >= CELL:
            return None
        index = (y // 3) * POOL_COLUMNS + x // (CELL + POOL_GAP)
        if x // (CELL + POOL_GAP) >= POOL_COLUMNS or index >= q.PIECES:
            return None
        piece = POOL_ORDER[index]
        view = self.picture.view
        return piece if view is not None and piece in view.pool else None

    def on_click(self, event: events.Click) -> None:
        piece = self.piece_at(event.x, event.y)
        if piece is not None:
            self.post_message(self.Clicked(piece))


class QuartoHand(QuartoWidget):
    """The piece waiting to be placed: the one given to you, or the one you gave."""

    def draw(self) -> Text:
        picture, view = self.picture, self.picture.view
        if view is None or view.in_hand is None or view.phase is not Phase.PLAYING:
            return Text("")
        piece = view.in_hand
        cells = self.cell(piece, "")
        mine = view.turn == view.seat
        label = "yours to place:" if mine else f"{picture.plain(picture.name(view.turn or 0))} places:"
        texts = [Text(f"  {label}"), Text(f"  {q.describe_piece(piece)}"), Text("")]
        lines = []
        for k in range(3):
            line = cells[k].copy()
            line.append_text(texts[k])
            lines.append(line)
        return Text("\n").join(lines)


class QuartoTurn(QuartoWidget):
    """Whose turn it is and which step (Q3), or how the game ended (Q4, Q5) and the match (Q6)."""

    def draw(self) -> Text:
        picture, view = self.picture, self.picture.view
        if view is None:
            return Text("")
        text = quarto_words.turn(view, picture.name, live=not picture.replay)
        style = "bold" if view.turn == view.seat or view.phase is not Phase.PLAYING else ""
        return Text(picture.plain(text), style=style)


class QuartoMoves(QuartoWidget):
    """The game's turns in Q7 notation (``b3 SLQF``), numbered, as many lines as fit (the latest kept)."""

    ENTRY = 12

    def draw(self) -> Text:
        view = self.picture.view
        title = Text("moves", style=self.style("quarto--title"))
        if view is None or not view.moves:
            return title
        width = max(self.ENTRY, self.content_size.width or 48)
        per_line = max(1, width // self.ENTRY)
        entries = [f"{i + 1:>2} {move:<{self.ENTRY - 3}}" for i, move in enumerate(view.moves)]
        rows = ["".join(entries[i : i + per_line]).rstrip() for i in range(0, len(entries), per_line)]
        room = max(1, (self.content_size.height or 6) - 1)
        if len(rows) > room:
            rows = rows[-room:]  # the earliest turns give way: the latest always shows
        starter = view.starter
        title.append(
            f"  game {view.game}"
            + (f", {self.picture.plain(self.picture.name(starter))} started" if starter is not None else ""),
            style="dim",
        )
        return Text("\n").join([title, *(Text(row) for row in rows)])


class QuartoNews(QuartoWidget):
    """The latest news (a move, a start, a refusal) and, under it, the keys for this moment."""

    def draw(self) -> Text:
        picture = self.picture
        news = Text(picture.plain(picture.news), style="bold" if picture.news.startswith("!") else "")
        return Text("\n").join([news, Text(picture.plain(hint(picture)), style="dim")])


def hint(picture: QuartoPicture) -> str:
    """The keys (and clicks) that act now."""
    view = picture.view
    if view is None:
        return ""
    if picture.replay:
        return ""  # a replay's keys are on its own bar: nothing here acts
    typed = f"  typed: {picture.typed}" if picture.typed else ""
    if picture.placing():
        return f"arrows, b3 or a click choose; enter or a second click places{typed}"
    if picture.giving():
        return f"arrows, TDRH or a click choose; enter or a second click gives{typed}"
    if view.seat not in (0, 1):  # a watcher's: no move of its own
        return "watching: j takes a free seat between matches, q goes back to the lobby"
    if view.phase is Phase.BETWEEN:
        me = view.seats[view.seat] if view.seat < len(view.seats) else None
        if me is not None and me.ready:
            return "ready: the next game starts when your opponent is"
        return "n starts the next game"
    if view.phase is Phase.PLAYING:
        return "your opponent's move"
    if view.phase is Phase.OVER:
        return "the match is over"
    return "waiting for the match to start"


class QuartoStatus(QuartoWidget):
    """The top line: the game's name, the game number and the match score, and a clock when one runs."""

    TICK = 0.1

    def draw(self) -> Text:
        picture, view = self.picture, self.picture.view
        text = Text()
        text.append(" QUARTO ", style="bold reverse")
        if picture.link:
            text.append(f" {picture.plain(picture.link)} ", style="bold reverse")
            return text
        if view is None:
            return text
        if view.game:
            text.append(f"  game {view.game} of {view.games}")
        text.append("   ")
        text.append(picture.plain(quarto_words.score(view, picture.name)), style="bold")
        clock = ""
        if view.phase is Phase.PLAYING and view.clock_ms is not None:
            clock = f"move clock {words.seconds(picture.left(view.clock_ms) or 0.0)}"
        elif view.phase is Phase.BETWEEN and view.phase_ms is not None:
            clock = f"next game in {words.seconds(picture.left(view.phase_ms) or 0.0)}"
        if clock:
            pad = max(2, (self.content_size.width or 80) - text.cell_len - len(clock) - 1)
            text.append(" " * pad)
            text.append(clock, style="bold")
        return text
