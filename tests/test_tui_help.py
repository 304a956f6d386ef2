"""The help page: its marks and keys in two columns (a long line wraps under its meaning), every mark drawn in
ASCII too, and words a player knows (no rule IDs). Quarto's says that a click chooses and a second confirms."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from helpers.quarto_tui import LocalQuarto, open_quarto
from helpers.snapshot_games import room_game, round_game
from helpers.tui import run, until
from quatro_tui.app import QuatroApp
from quatro_tui.games.quarto.table import QuartoTable
from quatro_tui.screens.help import HelpScreen
from quatro_tui.screens.room import RoomScreen
from test_tui_ascii import screen_text

pytestmark = pytest.mark.timeout(60)

#: Tall enough for the whole page without scrolling; 80 columns, where lines wrap.
SIZE = (80, 60)


async def help_text(app: QuatroApp, pilot) -> list[str]:
    await pilot.pause()
    await pilot.press("question_mark")
    await until(lambda: isinstance(app.screen, HelpScreen), what="the help")
    await pilot.pause()
    return screen_text(app).split("\n")


def continuation(lines: list[str], start: str) -> tuple[int, str]:
    """The column where the meaning beginning ``start`` is written, and the next line of the page."""
    for row, line in enumerate(lines):
        column = line.find(start)
        if column >= 0:
            return column, lines[row + 1]
    raise AssertionError(f"{start!r} is not on the page:\n" + "\n".join(lines))


BORDERS = "|│┃"


def indent(line: str) -> int:
    inner = line.strip(BORDERS + " ")
    return line.find(inner) if inner else -1


@pytest.mark.parametrize("ascii_only", [False, True])
def test_the_marks_and_keys_wrap_under_their_meaning_and_every_mark_is_drawn(ascii_only):
    async def body():
        app = QuatroApp(game=round_game(4), ascii_only=ascii_only)
        app.send = lambda body: None
        async with app.run_test(size=SIZE) as pilot:
            lines = await help_text(app, pilot)
            # Wrapped at 80 columns: the second line starts under the first line's meaning.
            for meaning in ("your partner showed your team's sign", "show your team's sign on your channel"):
                column, following = continuation(lines, meaning)
                assert indent(following) == column, f"{meaning!r} wraps to column {indent(following)}:\n{following}"
            # The channel mark, in ASCII as in Unicode, beside its meaning.
            held = "[CH]" if ascii_only else "◉ CH"
            assert any(re.search(rf"{re.escape(held)}\s+the seat holds its channel", line) for line in lines), lines
            await pilot.press("escape")

    run(body)


@pytest.mark.parametrize("ascii_only", [False, True])
def test_the_quarto_help_names_no_rule_and_says_how_the_mouse_confirms(ascii_only):
    async def body():
        app = QuatroApp(ascii_only=ascii_only)
        async with app.run_test(size=SIZE) as pilot:
            await open_quarto(app, LocalQuarto(seed=3, games=2))
            text = "\n".join(await help_text(app, pilot))
            assert not re.search(r"\b[QRH]\d+\b", text), f"a rule ID on the help page:\n{text}"
            assert "click it again (or press enter)" in " ".join(re.sub(f"[{BORDERS}]", " ", text).split())
            column, following = continuation(text.split("\n"), "every piece is also written by its letters")
            assert indent(following) == column
            square = "[#]" if ascii_only else "[■]"
            assert square in text, "the square piece's mark is missing"

    run(body)


@pytest.mark.parametrize("game", ["quatro", "quarto"])
def test_the_help_of_a_table_s_room_tells_the_rules_of_its_game(game):
    """The waiting room is every game's: its help is the table's game's, rules and marks."""

    async def body():
        waiting = room_game(4) if game == "quatro" else room_game(2)
        if game == "quarto":
            assert waiting.seating is not None
            waiting = waiting.moved_to(QuartoTable, "quarto")
            waiting.seat(replace(waiting.seating, game="quarto"))
        app = QuatroApp(game=waiting)
        async with app.run_test(size=SIZE) as pilot:
            await until(lambda: isinstance(app.screen, RoomScreen), what="the room")
            text = " ".join("\n".join(await help_text(app, pilot)).split())
            own, other = (
                ("Quatro in short", "Quarto in short") if game == "quatro" else ("Quarto in short", "Quatro in short")
            )
            assert own in text and other not in text, text
            marks = "the seat holds its channel" if game == "quatro" else "every piece is also written by its letters"
            assert marks in text, text

    run(body)
