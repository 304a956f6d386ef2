"""Quarto's guided first match (``quatro learn --game quarto``): place, give, and "this piece hands them a win",
each checked from the client's state (the view), and what the coach says between games."""

from __future__ import annotations

from quatro_shared.games.quarto import contract as q

from quatro_tui.games.quarto.table import QuartoTable
from quatro_tui.lessons.steps import Keys, Lesson, Step


def _quarto_view(game: QuartoTable) -> q.QuartoView | None:
    view = game.view
    return view if isinstance(view, q.QuartoView) else None


def _my_turns(view: q.QuartoView) -> list[str]:
    """The player's own entries of the game's moves (Q7): the starter gave first, then each took a turn."""
    if view.starter is None:
        return []
    mine = 0 if view.starter == view.seat else 1
    return [move for k, move in enumerate(view.moves) if k % 2 == mine]


def placed_a_piece(game: QuartoTable) -> bool:
    """Place: a piece the player was given stands on the board (a turn of theirs names a square)."""
    view = _quarto_view(game)
    return view is not None and any(move[:1] in q.COLUMNS and move[1:2] in q.ROWS for move in _my_turns(view))


def gave_a_piece(game: QuartoTable) -> bool:
    """Give: the player gave the other a piece (a turn of theirs names one)."""
    view = _quarto_view(game)
    return view is not None and any(len(part) == 4 for move in _my_turns(view) for part in move.split())


def gave_safe_piece(game: QuartoTable) -> bool:
    """This piece hands them a win: with a piece in the pool that would win, the player gave one that does not."""
    view = _quarto_view(game)
    if view is None or view.phase is not q.Phase.PLAYING or view.turn == view.seat or view.in_hand is None:
        return False
    if view.step is not q.Step.PLACE:
        return False
    risky = any(q.winning_squares(view.board, piece) for piece in (*view.pool, view.in_hand))
    return risky and not q.winning_squares(view.board, view.in_hand)


def threat(view: q.QuartoView) -> tuple[tuple[int, ...], tuple[str, ...]] | None:
    """A line of three pieces sharing an attribute, its fourth square empty: the squares, and what they share."""
    for line in q.LINES:
        pieces = [view.board[s] for s in line if view.board[s] is not None]
        if len(pieces) == 3:
            shared = q.shared_attribute_names([p for p in pieces if p is not None])
            if shared:
                return line, shared
    return None


def _typed(text: str) -> str:
    """The keys that type ``text`` on the Quarto screen (a square's or a piece's name, Q7), one by one."""
    return " ".join(f"<{letter.lower()}>" for letter in text)


def _arrows(keys: Keys) -> str:
    """The cursor's keys, as words (the coach asks for the typed name; the arrows are the other way)."""
    return " ".join(keys(f"quarto-{way}").strip("<>") for way in ("left", "right", "up", "down"))


def _safe_pieces(view: q.QuartoView) -> list[int]:
    return [piece for piece in view.pool if not q.winning_squares(view.board, piece)] or list(view.pool)


def _place_words(game: QuartoTable, keys: Keys) -> str:
    view = _quarto_view(game)
    if view is None or view.in_hand is None or view.turn != view.seat or view.step is not q.Step.PLACE:
        return (
            _give_words(game, keys)
            if view is not None and view.turn == view.seat
            else ("Wait for the piece you are given.")
        )
    square = next(s for s, p in enumerate(view.board) if p is None)
    return (
        f"You were given {q.format_piece(view.in_hand)} ({q.describe_piece(view.in_hand)}). Place it: type "
        f"{_typed(q.format_square(square))} for {q.format_square(square)} (or move with {_arrows(keys)}), then "
        f"press {keys('quarto-confirm')}."
    )


def _give_words(game: QuartoTable, keys: Keys) -> str:
    view = _quarto_view(game)
    if view is None or view.turn != view.seat:
        return "Wait for the other player's move."
    if view.step is q.Step.PLACE:
        return _place_words(game, keys)
    piece = _safe_pieces(view)[0]
    return (
        f"Now give a piece of the pool: type {_typed(q.format_piece(piece))} for {q.format_piece(piece)} (or "
        f"move to one with {_arrows(keys)}), then press {keys('quarto-confirm')}."
    )


def _safe_words(game: QuartoTable, keys: Keys) -> str:
    view = _quarto_view(game)
    found = threat(view) if view is not None else None
    if view is None or found is None or view.turn != view.seat or view.step is not q.Step.GIVE:
        return _give_words(game, keys)
    line, shared = found
    squares = " ".join(q.format_square(s) for s in line if view.board[s] is not None)
    piece = _safe_pieces(view)[0]
    either = " or ".join(shared)
    return (
        f"{squares} are all {' and '.join(shared)}: a piece that is {either} too hands them a win. Give one "
        f"that is {'not' if len(shared) == 1 else 'neither' if len(shared) == 2 else 'none of these'}: type {_typed(q.format_piece(piece))} for {q.format_piece(piece)} "
        f"({q.describe_piece(piece)}), then {keys('quarto-confirm')}."
    )


QUARTO_STEPS: tuple[Step[QuartoTable], ...] = (
    Step(
        "Place the piece you were given",
        _place_words,
        "You never choose what you place: the other player does, and you choose what they place.",
        placed_a_piece,
    ),
    Step(
        "Give a piece", _give_words, "Every turn ends with a gift: the piece the other player must place.", gave_a_piece
    ),
    Step(
        "This piece hands them a win",
        _safe_words,
        "Four in a line sharing an attribute wins for whoever places the fourth.",
        gave_safe_piece,
    ),
)


def quarto_between(game: QuartoTable, keys: Keys, step: Step[QuartoTable] | None) -> str:
    """What the coach says between games: why the last one ended."""
    view = _quarto_view(game)
    if view is None or view.phase is not q.Phase.BETWEEN:
        return ""
    if view.winner is not None and view.winner != view.seat and view.line is not None:
        return (
            f"The piece you gave completed {' '.join(q.format_square(s) for s in view.line)}, all "
            f"{' and '.join(view.shared)}: it handed them the win. Press {keys('quarto-next')} to try again."
        )
    return f"Press {keys('quarto-next')} for the next game."


LESSON = Lesson(QUARTO_STEPS, quarto_between)
