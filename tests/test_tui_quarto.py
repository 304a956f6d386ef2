"""The Quarto screen played for real: a Textual app (``App.run_test``) over the pure engine, a bot in the other seat.

Whole matches by keys (typed squares and pieces, and the arrows) and a whole game by the mouse, without a single
refusal from the engine; the screen offers only what ``legal(view)`` allows; the winning line is highlighted and
its shared attribute named; every piece reads in ASCII too.
"""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from rich.style import Style

from quatro_shared.games.quarto import contract as q
from quatro_shared.games.quarto.contract import Phase

from helpers.quarto_tui import (
    NOW,
    PICTURES,
    LocalQuarto,
    open_quarto,
    piece_offset,
    show_picture,
    square_offset,
    won_position,
)
from helpers.tui import run, until
from quatro_tui import words
from quatro_tui.app import QuatroApp
from quatro_tui.games.quarto import words as quarto_words
from quatro_tui.games.quarto.screen import QuartoScreen
from quatro_tui.games.quarto.widgets import (
    POOL_COLUMNS,
    POOL_ORDER,
    QuartoBoard,
    QuartoPool,
    QuartoStatus,
    glyph,
    hint,
    piece_lines,
)
from quatro_tui.screens.help import HelpScreen
from test_tui_ascii import assert_ascii, screen_text
from test_tui_fit import CUT, flat

pytestmark = pytest.mark.timeout(120)

#: Where the right-hand column (turn, piece to place, pool, moves) begins at 80 columns: after the board.
SIDE = 29


async def sent_and_shown(local: LocalQuarto, screen: QuartoScreen, count: int) -> None:
    """Wait until the screen has handed over ``count`` actions and shows the table after the last."""
    await until(
        lambda: len(local.sent) >= count and not screen.waiting and screen.view == local.view(),
        what=f"action {count} shown",
    )


def keys_for(action: q.Action, screen: QuartoScreen, by_arrows: bool, rng: random.Random) -> list[str]:
    """The keys a player presses for ``action``: typed (a square, or a piece's letters in any order), or arrows."""
    p = screen.picture
    if isinstance(action, q.NextGame):
        return ["n"]
    if isinstance(action, q.Place):
        if not by_arrows:
            return [*q.format_square(action.square), "enter"]
        start = p.board_cursor if p.board_cursor is not None else 5
        dx = (action.square % 4 - start % 4) % 4
        dy = (action.square // 4 - start // 4) % 4
        return ["right"] * dx + ["up"] * dy + ["enter"]
    assert isinstance(action, q.Give)
    if not by_arrows:
        letters = list(q.format_piece(action.piece).lower())
        rng.shuffle(letters)  # each letter names its attribute: any order types the piece
        return [*letters, "enter"]
    start = p.pool_cursor if p.pool_cursor is not None else 0
    target = POOL_ORDER.index(action.piece)
    dx = (target % POOL_COLUMNS - start % POOL_COLUMNS) % POOL_COLUMNS
    dy = (target // POOL_COLUMNS - start // POOL_COLUMNS) % 2
    return ["right"] * dx + ["down"] * dy + ["enter"]


@pytest.mark.parametrize("seed", [3, 8])
def test_a_whole_match_by_keys(seed):
    async def body():
        app = QuatroApp()
        local = LocalQuarto(seed=seed, games=2)
        rng = random.Random(seed)
        async with app.run_test(size=(80, 24)) as pilot:
            screen = await open_quarto(app, local)
            await pilot.pause()
            moves = 0
            while local.view().phase is not Phase.OVER:
                legal = q.legal(screen.view)
                assert legal, f"nothing to do in {screen.view}"
                action = rng.choice(legal)
                await pilot.press(*keys_for(action, screen, by_arrows=moves % 2 == 1, rng=rng))
                moves += 1
                await sent_and_shown(local, screen, moves)
                assert local.sent[-1] == action
            assert not local.refusals, local.refusals
            text = screen_text(app)
            assert "Match over" in text
            assert local.view().game == 2
            for move in local.view().moves[-3:]:
                assert move in text  # the move list in Q7 notation

    run(body)


def test_a_whole_game_by_mouse():
    async def body():
        app = QuatroApp()
        local = LocalQuarto(seed=5, games=1)
        rng = random.Random(5)
        async with app.run_test(size=(80, 24)) as pilot:
            screen = await open_quarto(app, local)
            await pilot.pause()
            clicks = 0
            while local.view().phase is Phase.PLAYING:
                action = rng.choice(q.legal(screen.view))
                if isinstance(action, q.Place):
                    where = (QuartoBoard, square_offset(action.square))
                else:
                    assert isinstance(action, q.Give)
                    where = (QuartoPool, piece_offset(action.piece))
                # As with the keys, choose then confirm: the first click moves the cursor, the second confirms.
                await pilot.click(where[0], offset=where[1])
                await pilot.pause()
                assert len(local.sent) == clicks, "one click sent a move"
                if isinstance(action, q.Place):
                    assert screen.picture.board_cursor == action.square
                else:
                    assert POOL_ORDER[screen.picture.pool_cursor] == action.piece
                await pilot.click(where[0], offset=where[1])
                clicks += 1
                await sent_and_shown(local, screen, clicks)
                assert local.sent[-1] == action
            assert not local.refusals, local.refusals
            assert local.view().phase is Phase.OVER

    run(body)


def test_only_legal_moves_are_offered():
    """A taken square, a piece already played, a give while placing, the next game mid-game: nothing is sent."""

    async def body():
        app = QuatroApp()
        local = LocalQuarto(seed=3, games=2)
        async with app.run_test(size=(80, 24)) as pilot:
            screen = await open_quarto(app, local)
            await pilot.pause()
            # Seed 3: this seat starts, and gives.
            assert screen.picture.giving()
            await pilot.press(*"tdrf", "enter")
            await sent_and_shown(local, screen, 1)
            assert screen.picture.placing()
            taken = next(s for s, p in enumerate(local.view().board) if p is not None)
            await pilot.press(*q.format_square(taken), "enter")
            await pilot.pause()
            assert len(local.sent) == 1 and "is taken" in screen.picture.news
            gone = next(p for p in range(16) if p not in local.view().pool and p != local.view().in_hand)
            await pilot.click(QuartoPool, offset=piece_offset(local.view().pool[0]))
            await pilot.pause()
            assert len(local.sent) == 1 and "First place" in screen.picture.news
            await pilot.press("n")
            await pilot.pause()
            assert len(local.sent) == 1
            # Now place, then try to give a piece that is gone.
            free = next(s for s, p in enumerate(local.view().board) if p is None)
            await pilot.click(QuartoBoard, offset=square_offset(free))
            await pilot.pause()
            assert len(local.sent) == 1
            await pilot.press("enter")  # a clicked square, confirmed by the key
            await sent_and_shown(local, screen, 2)
            if screen.picture.giving():
                await pilot.press(*q.format_piece(gone).lower())
                await pilot.pause()
                assert "not in the pool" in screen.picture.news
                await pilot.press("enter")  # the cursor stayed on a piece of the pool: this one is legal
                await sent_and_shown(local, screen, 3)
            assert not local.refusals

    run(body)


def test_the_opponents_turn_offers_nothing():
    async def body():
        app = QuatroApp()
        local = LocalQuarto(seed=3, games=2)
        async with app.run_test(size=(80, 24)) as pilot:
            screen = await open_quarto(app, local, start=False)
            local.start()
            # A view as the opponent's turn shows it: this seat waits.
            other = q.QuartoView(**{**{f: getattr(local.view(), f) for f in q.QuartoView.__slots__}, "turn": 1})
            screen.show(other)
            await pilot.pause()
            await pilot.press("enter", "a", "1", "enter", "t", "d", "r", "f", "enter", "n")
            await pilot.click(QuartoBoard, offset=square_offset(0))
            await pilot.pause()
            assert local.sent == []
            assert "opponent's turn" in screen.picture.news

    run(body)


def style_at(widget, x: int, y: int) -> Style:
    """The style the widget's drawing gives the cell (x, y)."""
    line = widget.render().split("\n")[y]
    return line.get_style_at_offset(widget.app.console, x)


def test_the_winning_line_is_highlighted_and_its_attribute_named():
    async def body():
        local = won_position()
        app = QuatroApp()
        async with app.run_test(size=(80, 24)) as pilot:
            screen = await open_quarto(app, local, start=False)
            await pilot.pause()
            view = local.view()
            assert view.phase is Phase.BETWEEN and view.line is not None
            text = screen_text(app)
            squares = " ".join(q.format_square(s) for s in view.line)
            shared = " and ".join(view.shared)
            assert f"game 1: {squares}, all {shared}." in " ".join(text.split())
            board = screen.query_one(QuartoBoard)
            win = board.get_component_rich_style("square--win", partial=True)
            for square in range(16):
                x, y = square_offset(square)
                marked = style_at(board, x, y).bgcolor == win.bgcolor
                assert marked == (square in view.line), q.format_square(square)
            # Under each piece of the line, the letter of what the four share stands out (in reverse).
            names = [name for _, _, set_name, clear_name in q.ATTRIBUTES for name in (set_name, clear_name)]
            shared_attributes = {names.index(name) // 2 for name in view.shared}
            for square in view.line:
                x, y = square_offset(square)
                left = x - 2  # the cell's first column: its letters start there
                for k in range(4):
                    reverse = bool(style_at(board, left + k, y + 1).reverse)
                    assert reverse == (k in shared_attributes), (q.format_square(square), k)
            # Between games: n starts the next one.
            assert "n starts the next game" in text
            await pilot.press("n")
            await sent_and_shown(local, screen, 1)
            assert local.sent == [q.NextGame()] and local.view().game == 2

    run(body)


def test_every_piece_shows_its_four_attributes():
    """Tall pieces stand two lines high, short ones one; round and square brackets; solid filled, hollow empty;
    dark and light in the two piece colours; and the four letters under each, in Unicode and in ASCII."""
    for ascii_only in (False, True):
        drawn = {piece: piece_lines(piece, ascii_only) for piece in range(16)}
        assert len({lines for lines in drawn.values()}) == 16
        for piece, (top, middle, letters) in drawn.items():
            assert letters.strip() == q.format_piece(piece)
            assert (top.strip() != "") == bool(piece & 1)  # tall
            assert middle.strip()[0] == ("(" if piece & 4 else "[")  # round
            filled = glyph(piece, ascii_only)[1] not in (" ", "○", "□")
            assert filled == bool(piece & 8)  # solid
            if ascii_only:
                assert all(line.isascii() for line in (top, middle, letters))


def test_dark_and_light_pieces_differ_in_colour():
    async def body():
        app = QuatroApp()
        local = LocalQuarto(seed=3)
        async with app.run_test(size=(80, 24)) as pilot:
            await open_quarto(app, local)
            await pilot.pause()
            pool = app.screen.query_one(QuartoPool)
            dark = pool.get_component_rich_style("piece--dark", partial=True)
            light = pool.get_component_rich_style("piece--light", partial=True)
            assert dark.color != light.color
            # In the pool, TDRF (dark) is the first slot and TLRF (light) the fifth.
            assert style_at(pool, 2, 2).color == dark.color
            assert style_at(pool, 4 * 6 + 2, 2).color == light.color

    run(body)


@pytest.mark.parametrize("ascii_only", [False, True])
def test_the_help_explains_quarto(ascii_only):
    async def body():
        app = QuatroApp(ascii_only=ascii_only)
        local = LocalQuarto(seed=3)
        async with app.run_test(size=(100, 40)) as pilot:
            await open_quarto(app, local)
            await pilot.pause()
            await pilot.press("question_mark")
            await until(lambda: isinstance(app.screen, HelpScreen), what="the help")
            await pilot.pause()
            text = screen_text(app) if not ascii_only else assert_ascii(app, "the Quarto help")
            assert "Quarto in short" in text and "T/S tall/short" in text and "Quatro!" not in text

    run(body)


def test_the_quarto_screen_is_ascii():
    async def body():
        local = won_position()
        app = QuatroApp(ascii_only=True)
        async with app.run_test(size=(80, 24)) as pilot:
            await open_quarto(app, local, start=False)
            await pilot.pause()
            text = assert_ascii(app, "the Quarto screen")
            assert "+-----+" in text and "|" in text

    run(body)


@pytest.mark.parametrize("ascii_only", [False, True], ids=["unicode", "ascii"])
@pytest.mark.parametrize("name", PICTURES)
def test_nothing_is_cut_at_80x24(name, ascii_only):
    """Every square, every piece of the pool with its letters, the whole turn sentence, the news and the keys of the
    moment show at 80x24; nothing runs into an ellipsis."""

    async def body():
        app = QuatroApp(ascii_only=ascii_only)
        async with app.run_test(size=(80, 24)) as pilot:
            screen = await show_picture(app, name)
            await pilot.pause()
            await pilot.pause()
            text = assert_ascii(app, name) if ascii_only else screen_text(app)
            assert not CUT.findall(text), text
            view = screen.view
            assert view is not None
            for square, piece in enumerate(view.board):
                shown = q.format_square(square) if piece is None else q.format_piece(piece)
                assert shown in text, f"{shown} is missing:\n{text}"
            for piece in view.pool:
                assert q.format_piece(piece) in text, f"{q.format_piece(piece)} is missing from the pool:\n{text}"
            # The turn sentence wraps in the right-hand column, beside the board.
            side = "\n".join(line[SIDE:] for line in text.splitlines())
            turn = quarto_words.turn(view, screen.picture.name)
            assert " ".join(words.plain(turn, ascii_only).split()) in flat(side), f"{turn!r}:\n{text}"
            for sentence in [screen.picture.news, hint(screen.picture), quarto_words.score(view, screen.picture.name)]:
                assert " ".join(words.plain(sentence, ascii_only).split()) in flat(text), f"{sentence!r}:\n{text}"
            for move in view.moves:
                assert move in text

    run(body)


def test_the_move_clock_counts_down_between_views():
    """With the move clock on, the status line shows the seconds left, counted down locally from the view."""

    async def body():
        now = [NOW]
        local = LocalQuarto(seed=3)
        local.start()
        app = QuatroApp()
        async with app.run_test(size=(80, 24)) as pilot:
            screen = local.screen_for(clock=lambda: now[0])
            screen.guard = 0.0
            await app.push_screen(screen)
            screen.show(replace(local.view(), clock_ms=30_000), [], received_at=NOW)
            await pilot.pause()
            status = screen.query_one(QuartoStatus)
            assert "move clock 30s" in str(status.render())
            now[0] += 12.0
            await until(lambda: "move clock 18s" in str(status.render()), what="the clock at 18 s")
            now[0] += 30.0
            await until(lambda: "move clock 0.0s" in str(status.render()), what="the clock at 0")
            screen.show(local.view(), [], received_at=now[0])  # the clock off: nothing shown
            await until(lambda: "clock" not in str(status.render()), what="no clock")

    run(body)


def test_the_keys_wait_a_moment_when_the_screen_replaces_another():
    """A late enter meant for the screen before does nothing; the guard lifts by itself (guard.py)."""

    async def body():
        local = LocalQuarto(seed=3)
        local.start()
        app = QuatroApp()
        async with app.run_test(size=(80, 24)) as pilot:
            screen = local.screen_for()
            screen.guard = 0.5
            await app.push_screen(screen)
            screen.show(local.view())
            await pilot.press("enter")
            await pilot.pause()
            assert local.sent == []
            await until(screen.armed, what="the keys")
            await pilot.press("enter")
            await until(lambda: local.sent, what="a give")
            assert isinstance(local.sent[0], q.Give) and not local.refusals

    run(body)


def test_typing_can_be_taken_back():
    """Backspace takes back the latest letter (of a piece, or of a square), escape forgets what was typed."""

    async def body():
        app = QuatroApp()
        local = LocalQuarto(seed=3)
        async with app.run_test(size=(80, 24)) as pilot:
            screen = await open_quarto(app, local)
            await pilot.pause()
            assert screen.picture.giving()
            await pilot.press("r", "t", "h")
            assert screen.picture.typed == "T_RH"
            await pilot.press("backspace")
            assert screen.picture.typed == "T_R_"  # the h, typed last, not the attribute written last
            await pilot.press("escape")
            assert screen.picture.typed == ""
            start = screen.picture.pool_cursor
            await pilot.press("s", "l", "q", "backspace", "f", "h")  # the fill typed twice: the latest counts
            assert screen.picture.typed == "SL_H"
            await pilot.press("q")
            assert screen.picture.typed == ""  # complete: the cursor went to SLQH
            assert POOL_ORDER[screen.picture.pool_cursor] == q.parse_piece("SLQH") != POOL_ORDER[start]
            assert local.sent == []  # typing chooses; only enter acts

    run(body)
