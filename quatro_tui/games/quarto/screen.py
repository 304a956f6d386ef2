"""The Quarto table: the board on the left; the turn, the piece to place, the pool and the moves on the right.

The screen knows nothing of the network. It is told each new view (``show``) with the events that led to it,
and hands the action a player chose to ``act`` (an action of ``quatro_shared.games.quarto.contract``); it offers only what
``legal(view)`` allows, so a well-behaved server never has to refuse it. One action at a time: after sending,
it waits for the next view before acting again.

Keys: the arrows move the cursor (over the board while placing, over the pool while giving), or a square is
typed (``b3``) or a piece by its four letters in any order (``TDRH``); ``enter`` confirms. A click on a square
places, a click on a piece of the pool gives. ``n`` starts the next game.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer

from quatro_shared.games.quarto import contract as q
from quatro_shared.games.quarto.contract import Phase, QuartoView

from quatro_tui.games.base import WayOn
from quatro_tui.games.quarto import words as quarto_words
from quatro_tui.games.quarto.widgets import (
    POOL_COLUMNS,
    POOL_ORDER,
    QuartoBoard,
    QuartoHand,
    QuartoMoves,
    QuartoNews,
    QuartoPicture,
    QuartoPool,
    QuartoStatus,
    QuartoTurn,
    QuartoWidget,
)
from quatro_tui.guard import KeyGuard
from quatro_tui.screens.watch import WATCH_BINDINGS, WatchBanner

#: The letters that type a piece, each naming one value of one attribute (Q7): attribute index, bit set.
PIECE_LETTERS: dict[str, tuple[int, bool]] = {
    letter: (k, is_set)
    for k, (set_, clear, _, _) in enumerate(q.ATTRIBUTES)
    for letter, is_set in ((set_.lower(), True), (clear.lower(), False))
}
SQUARE_LETTERS = q.COLUMNS + q.ROWS

RULES = (
    "[b]Quarto in short[/b]\n"
    "Sixteen pieces, each tall or short, dark or light, round or square, solid or hollow. On your turn you place "
    "the piece your opponent chose for you on any empty square, then choose the piece your opponent places next. "
    "Whoever completes a row, a column or a long diagonal of four pieces sharing an attribute (all tall, all "
    "hollow, ...) wins the game; a full board without such a line is a draw. The start alternates from game to "
    "game; the match counts wins and draws.\n\n"
    "[b]A hint[/b]: before giving a piece, look at every line with three pieces that share an attribute, and "
    "never give one that completes it."
)

#: How a piece is drawn, for the help: (mark, meaning), in Textual markup.
MARKS_TITLE = "How a piece is drawn"
_LETTERS = "T/S tall/short, D/L dark/light, R/Q round/square, F/H solid/hollow, in that order"
MARKS_UNICODE = (
    ("(●) (●)", "tall: two glyphs high; short: one"),
    ("(●) \\[■]", "round in round brackets, square in square ones"),
    ("● ■ / ○ □", "solid pieces are filled, hollow ones empty"),
    ("colour", "dark and light pieces differ in colour"),
    ("TDRH", f"every piece is also written by its letters: {_LETTERS}"),
    ("b3", "an empty square shows its name: columns a-d, rows 1-4"),
)
MARKS_ASCII = (
    ("(#) (#)", "tall: two glyphs high; short: one"),
    ("(#) \\[#]", "round in round brackets, square in square ones"),
    ("# / blank", "solid pieces are filled, hollow ones empty"),
    ("colour", "dark and light pieces differ in colour"),
    ("TDRH", f"every piece is also written by its letters: {_LETTERS}"),
    ("b3", "an empty square shows its name: columns a-d, rows 1-4"),
)


class QuartoScreen(KeyGuard, Screen[None]):
    """One Quarto table as seat ``view.seat`` sees it. ``act`` receives the actions the player confirms."""

    GUARDED = frozenset({"confirm", "next_game", "way_on"})

    MOUSE_HELP = (
        "as with the keys, choose then confirm: click a square or a piece of the pool to move the cursor "
        "there, click it again (or press enter) to place or give it"
    )
    HELP_RULES = RULES

    BINDINGS = [
        Binding("left", "cursor(-1, 0)", "cursor left", show=False, id="quarto-left"),
        Binding("right", "cursor(1, 0)", "cursor right", show=False, id="quarto-right"),
        Binding("up", "cursor(0, 1)", "cursor up", show=False, id="quarto-up"),
        Binding("down", "cursor(0, -1)", "cursor down", show=False, id="quarto-down"),
        Binding(
            "enter",
            "confirm",
            "confirm",
            tooltip="place on the square, or give the piece, at the cursor",
            id="quarto-confirm",
        ),
        Binding(
            "backspace",
            "untype",
            "undo a letter",
            show=False,
            tooltip="take back the last letter typed",
            id="quarto-untype",
        ),
        Binding("escape", "clear", "clear", show=False, tooltip="forget what was typed", id="quarto-clear"),
        Binding("n", "next_game", "next game", tooltip="ready for the next game (between games)", id="quarto-next"),
        Binding(
            "p",
            "way_on('rematch')",
            "play again",
            tooltip="once the match is over: a new match, same seats (host)",
            id="quarto-rematch",
        ),
        Binding(
            "l",
            "way_on('lobby')",
            "back to the lobby",
            tooltip="once the match is over: leave the table",
            id="quarto-lobby",
        ),
        # Not t, as at Quatro's tables: t types "tall" here.
        Binding("m", "way_on('chat')", "chat", tooltip="say something to the other player", id="quarto-chat"),
    ]

    def __init__(
        self,
        act: Callable[[q.Action], None],
        *,
        names: tuple[str, str] = ("seat 1", "seat 2"),
        ascii_only: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
        replay: bool = False,
    ) -> None:
        super().__init__()
        self.act = act
        self.picture = QuartoPicture(names=names, clock=clock, ascii_only=bool(ascii_only), replay=replay)
        #: Whether this seat hosts the table (a rematch is the host's to ask for).
        self.host = False
        self._ascii_given = ascii_only is not None
        #: An action was handed to ``act`` and its view has not arrived: nothing more is sent until it does.
        self.waiting = False
        #: What was typed of a piece, attribute by attribute (None: not typed yet), and the attributes in the order
        #: they were typed (backspace takes back the latest).
        self._piece_typed: list[bool | None] = [None] * len(q.ATTRIBUTES)
        self._typed_order: list[int] = []
        #: The player put the cursor where it is during this step (a click, the arrows, typing): a click there
        #: confirms, as enter does. The cursor's starting place confirms only by enter.
        self._pointed = False

    # --- building -----------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        if not self._ascii_given:
            game = getattr(self.app, "game", None)
            self.picture.ascii_only = bool(getattr(game, "ascii_only", False))
        p = self.picture
        yield QuartoStatus(p)
        with Horizontal(id="quarto"):
            yield QuartoBoard(p)
            with Vertical(id="quarto-side"):
                yield QuartoTurn(p)
                yield QuartoHand(p)
                yield QuartoPool(p)
                yield QuartoMoves(p)
        yield QuartoNews(p)
        yield Footer()

    @property
    def view(self) -> QuartoView | None:
        return self.picture.view

    def redraw(self) -> None:
        for widget in self.query(QuartoWidget):
            widget.redraw()
        self.refresh_bindings()

    # --- what the table says ------------------------------------------------------------------------

    def show(self, view: QuartoView, events: Sequence[q.Event] = (), received_at: float | None = None) -> None:
        """The table as it is now, and the events since the last view (for the news line and the last move)."""
        p = self.picture
        before = p.view
        p.view = view
        p.received_at = p.clock() if received_at is None else received_at
        self.waiting = False
        for ev in events:
            if isinstance(ev, q.PiecePlaced):
                p.last_square = ev.square
            elif isinstance(ev, q.GameStarted):
                p.last_square = None
            line = quarto_words.event(ev, p.name, view.seat)
            if line:
                p.news = line
        if before is None or before.step is not view.step or before.turn != view.turn or before.phase is not view.phase:
            self._clear_typed()
            self._pointed = False
        self._settle_cursors()
        if self.is_mounted:
            self.redraw()

    def set_names(self, names: tuple[str, str], host: bool | None = None) -> None:
        """The players' names by seat, and whether this seat hosts the table."""
        if names == self.picture.names and (host is None or host == self.host):
            return
        self.picture.names = names
        if host is not None:
            self.host = host
        if self.is_mounted:
            self.redraw()

    def set_link(self, link: str) -> None:
        """The connection's trouble (``""`` when connected), for the status line."""
        if link == self.picture.link:
            return
        self.picture.link = link
        if self.is_mounted:
            self.redraw()

    def refused(self, text: str) -> None:
        """The table refused what was sent (it should not): say why, and let the player act again."""
        self.waiting = False
        self.say(f"Not done: {text}")

    def say(self, line: str) -> None:
        self.picture.news = line
        if self.is_mounted:
            self.redraw()

    def _settle_cursors(self) -> None:
        """The board's cursor starts in the middle; the pool's on the first piece left when it is gone."""
        p, view = self.picture, self.picture.view
        if p.board_cursor is None:
            p.board_cursor = 5  # b2: near the middle, so every square is at most two moves away
        if view is not None and view.pool and (p.pool_cursor is None or POOL_ORDER[p.pool_cursor] not in view.pool):
            start = p.pool_cursor or 0
            for step in range(q.PIECES):
                index = (start + step) % q.PIECES
                if POOL_ORDER[index] in view.pool:
                    p.pool_cursor = index
                    break

    # --- choosing -----------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        allowed = super().check_action(action, parameters)
        if action == "next_game":
            if q.NextGame() not in self._legal():
                return False  # not between games: hidden from the footer
        elif action == "confirm":
            if not (self.picture.placing() or self.picture.giving()):
                return False
        elif action == "way_on" and parameters and parameters[0] in ("rematch", "lobby"):
            view = self.picture.view
            if view is None or view.phase is not Phase.OVER or (parameters[0] == "rematch" and not self.host):
                return False  # once the match is over; a rematch is the host's
        return allowed

    def _legal(self) -> list[q.Action]:
        view = self.picture.view
        return q.legal(view) if view is not None else []

    def _send(self, action: q.Action) -> bool:
        """Hand ``action`` to the table if the rules allow it now; otherwise say why not."""
        if self.waiting:
            return False
        if action not in self._legal():
            self.say(self._why_not(action))
            return False
        self.waiting = True
        self._clear_typed()
        self.act(action)
        if self.is_mounted:
            self.redraw()
        return True

    def _why_not(self, action: q.Action) -> str:
        view = self.picture.view
        if view is None or view.phase is not Phase.PLAYING:
            return "No game is being played right now."
        if view.turn != view.seat:
            return "It is your opponent's turn."
        if isinstance(action, q.Place):
            if view.step is q.Step.GIVE:
                return "You placed already: now choose a piece to give."
            return f"{q.format_square(action.square)} is taken: choose an empty square."
        if isinstance(action, q.Give):
            if view.step is q.Step.PLACE:
                return "First place the piece you were given."
            return f"{q.format_piece(action.piece)} is not in the pool."
        return "Not now."

    def action_confirm(self) -> None:
        p = self.picture
        if p.placing() and p.board_cursor is not None:
            self._send(q.Place(p.board_cursor))
        elif p.giving() and p.pool_cursor is not None:
            self._send(q.Give(POOL_ORDER[p.pool_cursor]))

    def action_next_game(self) -> None:
        self._send(q.NextGame())

    def action_way_on(self, what: str) -> None:
        self.post_message(WayOn(what))

    def action_cursor(self, dx: int, dy: int) -> None:
        p = self.picture
        if p.placing():
            square = p.board_cursor if p.board_cursor is not None else 5
            col, row = square % q.SIZE, square // q.SIZE
            p.board_cursor = ((row + dy) % q.SIZE) * q.SIZE + (col + dx) % q.SIZE
        elif p.giving():
            index = p.pool_cursor or 0
            rows = q.PIECES // POOL_COLUMNS
            col, row = index % POOL_COLUMNS, index // POOL_COLUMNS
            # Up is the first row (the tall pieces): the pool's rows are drawn top to bottom.
            p.pool_cursor = ((row - dy) % rows) * POOL_COLUMNS + (col + dx) % POOL_COLUMNS
        else:
            return
        self._pointed = True
        self._clear_typed()
        self.redraw()

    def on_quarto_board_clicked(self, message: QuartoBoard.Clicked) -> None:
        """A click chooses the square (the cursor goes there); a click on the square chosen confirms it."""
        p = self.picture
        if not p.placing() or (self._pointed and p.board_cursor == message.square):
            self._send(q.Place(message.square))  # placed, or told why not
            return
        p.board_cursor = message.square
        self._point()

    def on_quarto_pool_clicked(self, message: QuartoPool.Clicked) -> None:
        """A click chooses the piece (the cursor goes there); a click on the piece chosen gives it."""
        p, index = self.picture, POOL_ORDER.index(message.piece)
        if not p.giving() or (self._pointed and p.pool_cursor == index):
            self._send(q.Give(message.piece))
            return
        p.pool_cursor = index
        self._point()

    def _point(self) -> None:
        self._pointed = True
        self._clear_typed()
        self.redraw()

    # --- typing a square or a piece ---------------------------------------------------------------

    def on_key(self, event: events.Key) -> None:
        char = (event.character or "").lower()
        if not char or not char.isalnum():
            return
        p = self.picture
        if p.placing() and char in SQUARE_LETTERS:
            event.stop()
            self._type_square(char)
        elif p.giving() and char in PIECE_LETTERS:
            event.stop()
            self._type_piece(char)

    def _type_square(self, char: str) -> None:
        p = self.picture
        if char in q.COLUMNS:
            p.typed = char
        elif p.typed and p.typed in q.COLUMNS:
            square = q.parse_square(p.typed + char)
            p.typed = ""
            p.board_cursor = square
            self._pointed = True
            view = p.view
            if view is not None and view.board[square] is not None:
                p.news = f"{q.format_square(square)} is taken: choose an empty square."
        else:
            p.typed = ""
            p.news = "A square is a column a-d then a row 1-4, like b3."
        self.redraw()

    def _type_piece(self, char: str) -> None:
        p = self.picture
        attribute, is_set = PIECE_LETTERS[char]
        self._piece_typed[attribute] = is_set
        if attribute in self._typed_order:
            self._typed_order.remove(attribute)
        self._typed_order.append(attribute)
        typed = self._piece_typed
        p.typed = self._typed_piece_text()
        if all(value is not None for value in typed):
            piece = sum(1 << k for k, value in enumerate(typed) if value)
            self._clear_typed()
            view = p.view
            if view is not None and piece in view.pool:
                p.pool_cursor = POOL_ORDER.index(piece)
                self._pointed = True
            else:
                p.news = f"{q.format_piece(piece)} is not in the pool."
        self.redraw()

    def _typed_piece_text(self) -> str:
        """What was typed of a piece, in Q7's order, ``_`` for an attribute not typed yet: ``T_R_``."""
        if all(value is None for value in self._piece_typed):
            return ""
        return "".join(
            "_" if value is None else (set_ if value else clear)
            for value, (set_, clear, _, _) in zip(self._piece_typed, q.ATTRIBUTES)
        )

    def action_untype(self) -> None:
        p = self.picture
        if p.giving():
            if self._typed_order:
                self._piece_typed[self._typed_order.pop()] = None
            p.typed = self._typed_piece_text()
        else:
            p.typed = p.typed[:-1]
        self.redraw()

    def action_clear(self) -> None:
        self._clear_typed()
        self.redraw()

    def _clear_typed(self) -> None:
        self.picture.typed = ""
        self._piece_typed = [None] * len(q.ATTRIBUTES)
        self._typed_order = []

    # --- help ---------------------------------------------------------------------------------------

    def help_marks(self, ascii_only: bool) -> tuple[str, list[tuple[str, str]]]:
        return MARKS_TITLE, list(MARKS_ASCII if ascii_only else MARKS_UNICODE)


class QuartoWatchScreen(QuartoScreen, inherit_bindings=False):
    """A Quarto table watched from no seat: the board, the pieces and the moves as the players see them, no move
    key (a view from no seat has no legal move), ``WATCHING`` on top and the watcher's keys."""

    BINDINGS = list(WATCH_BINDINGS)

    def compose(self) -> ComposeResult:
        yield WatchBanner(classes="pad", id="watch-banner")
        yield from super().compose()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return True
